-- Append-only audit log of admin writes: who (admin token id; NULL for the CLI), what, and
-- before/after for publishes and token changes. Rows are never updated or deleted.
CREATE TABLE audit_log (
  id              bigserial PRIMARY KEY,
  at              timestamptz NOT NULL DEFAULT now(),
  admin_token_id  integer REFERENCES admin_tokens (id),
  actor           text NOT NULL,
  action          text NOT NULL,
  target_type     text NOT NULL,
  target_id       text,
  status          integer NOT NULL,
  request_id      text,
  fields          text[] NOT NULL DEFAULT '{}',
  before          jsonb,
  after           jsonb
);

CREATE INDEX audit_log_target ON audit_log (target_type, target_id, id DESC);
CREATE INDEX audit_log_token ON audit_log (admin_token_id, id DESC);

CREATE FUNCTION audit_log_append_only() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  RAISE EXCEPTION 'audit_log is append-only';
END;
$$;

CREATE TRIGGER audit_log_append_only BEFORE UPDATE OR DELETE ON audit_log
  FOR EACH ROW EXECUTE FUNCTION audit_log_append_only();

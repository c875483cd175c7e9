-- Marketplace statements: per booked reservation (campaign) and month, computed from the ad
-- server's delivery figures (the billing reference), frozen once issued. A later pull that changes
-- the figures adds an adjustment; nothing issued is ever rewritten.

CREATE TABLE market_statements (
  id              text PRIMARY KEY,
  reservation_id  text NOT NULL REFERENCES market_reservations(id),
  advertiser_id   text NOT NULL REFERENCES market_advertisers(id),
  month           char(7) NOT NULL,
  currency        char(3) NOT NULL,
  total           numeric(18,2) NOT NULL,
  issued_at       timestamptz NOT NULL,
  issued_by       text NOT NULL,
  UNIQUE (reservation_id, month)
);
CREATE INDEX market_statements_issued ON market_statements (issued_at DESC);

-- One row per reservation line of the month, as issued.
CREATE TABLE market_statement_lines (
  statement_id   text NOT NULL REFERENCES market_statements(id),
  line_no        integer NOT NULL,
  product_id     text NOT NULL,
  geo            char(2) NOT NULL,
  line_item_id   text,
  pricing        text NOT NULL CHECK (pricing IN ('cpm', 'flat')),
  price          numeric(16,4) NOT NULL,
  impressions    bigint NOT NULL,
  clicks         bigint NOT NULL,
  days_ran       integer NOT NULL,
  days_in_month  integer NOT NULL,
  amount         numeric(18,2) NOT NULL,
  PRIMARY KEY (statement_id, line_no)
);

-- A correction of one line: the change in figures and in amount since what was issued and
-- adjusted before.
CREATE TABLE market_statement_adjustments (
  id                 bigserial PRIMARY KEY,
  statement_id       text NOT NULL REFERENCES market_statements(id),
  line_no            integer NOT NULL,
  at                 timestamptz NOT NULL,
  impressions_delta  bigint NOT NULL,
  clicks_delta       bigint NOT NULL,
  days_ran_delta     integer NOT NULL,
  amount_delta       numeric(18,2) NOT NULL,
  reason             text NOT NULL
);
CREATE INDEX market_statement_adjustments_of ON market_statement_adjustments (statement_id, id);

CREATE FUNCTION market_statements_frozen() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  RAISE EXCEPTION '% is frozen once issued: add an adjustment', TG_TABLE_NAME;
END;
$$;

CREATE TRIGGER market_statements_frozen BEFORE UPDATE OR DELETE ON market_statements
  FOR EACH ROW EXECUTE FUNCTION market_statements_frozen();
CREATE TRIGGER market_statement_lines_frozen BEFORE UPDATE OR DELETE ON market_statement_lines
  FOR EACH ROW EXECUTE FUNCTION market_statements_frozen();
CREATE TRIGGER market_statement_adjustments_frozen BEFORE UPDATE OR DELETE ON market_statement_adjustments
  FOR EACH ROW EXECUTE FUNCTION market_statements_frozen();

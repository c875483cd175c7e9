-- Affiliate tracking: programmes, clicks and impressions, postbacks and conversions.

-- One operator affiliate programme. Its slug is the {program} segment of the postback URL.
CREATE TABLE affiliate_programs (
  id                   serial PRIMARY KEY,
  slug                 text NOT NULL UNIQUE,
  name                 text NOT NULL,
  -- Our account id at the operator, the {affiliate_id} macro.
  affiliate_id         text NOT NULL DEFAULT '',
  -- Query-string template appended to a tracker's landing URL, e.g. 'btag={affiliate_id}_{click_id}'.
  landing_params       text NOT NULL DEFAULT '',
  -- The programme's own postback parameter names: canonical field -> their name.
  param_map            jsonb NOT NULL DEFAULT '{}',
  -- SHA-256 of the postback token; the token itself is shown once.
  postback_token_hash  bytea NOT NULL,
  postback_token_hint  text NOT NULL,
  timezone             text NOT NULL DEFAULT 'UTC',
  currency             char(3) NOT NULL DEFAULT 'EUR',
  created_at           timestamptz NOT NULL DEFAULT now(),
  updated_at           timestamptz NOT NULL DEFAULT now()
);

-- Which programme pays for a tracker's traffic (a tracker belongs to at most one programme).
CREATE TABLE program_trackers (
  tracker_id  integer PRIMARY KEY REFERENCES trackers(id) ON DELETE CASCADE,
  program_id  integer NOT NULL REFERENCES affiliate_programs(id) ON DELETE CASCADE
);
CREATE INDEX program_trackers_program ON program_trackers(program_id);

-- Clicks (/go) and impressions (/imp), written in group-committed batches. The ids are ULIDs.
-- Attribution columns are copied at click time so later catalog edits don't rewrite history.
CREATE TABLE clicks (
  id          text PRIMARY KEY,
  kind        text NOT NULL CHECK (kind IN ('click', 'impression')),
  at          timestamptz NOT NULL,
  link_id     integer NOT NULL,
  tracker_id  integer NOT NULL,
  offer_id    integer,
  brand_id    integer,
  site_id     integer,
  toplist_id  integer,
  position    integer,
  program_id  integer,
  sub_id      text,
  referrer    text,
  user_agent  text,
  country     char(2),
  -- NULL counts; 'head', 'prefetch' or 'bot' are recorded but not counted.
  flag        text CHECK (flag IN ('head', 'prefetch', 'bot'))
);
CREATE INDEX clicks_at ON clicks(at);

-- Every inbound postback, written before it is looked at. Append-only: no UPDATE, no DELETE.
CREATE TABLE postback_log (
  id            bigserial PRIMARY KEY,
  received_at   timestamptz NOT NULL DEFAULT now(),
  program       text NOT NULL,
  method        text NOT NULL,
  content_type  text,
  -- Query and body with secrets removed and player ids pseudonymised.
  query         jsonb NOT NULL,
  body          text,
  remote_ip     text
);

-- The outcome of each logged postback, also append-only.
CREATE TABLE postback_outcomes (
  log_id         bigint PRIMARY KEY REFERENCES postback_log(id),
  status         integer NOT NULL,
  code           text NOT NULL,
  conversion_id  text,
  duplicate      boolean NOT NULL DEFAULT false,
  decided_at     timestamptz NOT NULL DEFAULT now()
);

CREATE FUNCTION tracking_append_only() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  RAISE EXCEPTION '% is append-only', TG_TABLE_NAME;
END $$;
CREATE TRIGGER postback_log_append_only BEFORE UPDATE OR DELETE ON postback_log
  FOR EACH ROW EXECUTE FUNCTION tracking_append_only();
CREATE TRIGGER postback_outcomes_append_only BEFORE UPDATE OR DELETE ON postback_outcomes
  FOR EACH ROW EXECUTE FUNCTION tracking_append_only();

-- One conversion per (programme, transaction_id): the unique key makes duplicate storms harmless.
CREATE TABLE conversions (
  id              text PRIMARY KEY,
  program_id      integer NOT NULL REFERENCES affiliate_programs(id),
  transaction_id  text NOT NULL,
  event           text NOT NULL,
  amount          numeric(18,4),
  currency        char(3),
  -- HMAC-SHA256 of the operator's player id: joinable, not reversible.
  player_ref      text,
  click_id        text,
  attributed      boolean NOT NULL,
  tracker_id      integer,
  offer_id        integer,
  brand_id        integer,
  site_id         integer,
  toplist_id      integer,
  position        integer,
  log_id          bigint NOT NULL REFERENCES postback_log(id),
  received_at     timestamptz NOT NULL DEFAULT now(),
  UNIQUE (program_id, transaction_id)
);
CREATE INDEX conversions_received ON conversions(received_at);

-- Generated keys the tracking module needs and nobody configured (the pseudonymisation key).
CREATE TABLE tracking_keys (
  name   text PRIMARY KEY,
  value  bytea NOT NULL
);

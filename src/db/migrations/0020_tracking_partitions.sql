-- Tracking data at scale: clicks (and impressions), the postback log with its outcomes, and
-- conversions become range-partitioned by time, one partition per UTC month. Existing rows are
-- copied into the partitioned tables with their ids; nothing is dropped before it is copied.
--
-- On a partitioned table a unique key must hold the partition key, so:
--   * clicks, conversions: PRIMARY KEY (id, time) plus an index on id (click ids stay resolvable);
--   * postback_log keeps its bigserial sequence (ids continue where they were);
--   * exactly-once conversions per (programme, transaction_id) move to `conversion_keys`, a
--     narrow non-partitioned table whose primary key is that pair.

-- Creates the missing monthly partitions of `parent` covering [lo, hi). Serialised by an
-- advisory lock so concurrent callers (the job runner, an insert meeting a missing month) agree.
CREATE FUNCTION tracking_ensure_partitions(parent text, lo timestamptz, hi timestamptz) RETURNS integer
LANGUAGE plpgsql AS $$
DECLARE
  m timestamp := date_trunc('month', lo AT TIME ZONE 'UTC');
  made integer := 0;
  part text;
BEGIN
  IF parent NOT IN ('clicks', 'conversions', 'postback_log', 'postback_outcomes') THEN
    RAISE EXCEPTION 'not a partitioned tracking table: %', parent;
  END IF;
  PERFORM pg_advisory_xact_lock(7301978);
  WHILE (m AT TIME ZONE 'UTC') < hi LOOP
    part := parent || '_p' || to_char(m, 'YYYYMM');
    IF to_regclass(quote_ident(part)) IS NULL THEN
      EXECUTE format('CREATE TABLE %I PARTITION OF %I FOR VALUES FROM (%L) TO (%L)', part, parent,
                     to_char(m, 'YYYY-MM-DD') || ' 00:00:00+00',
                     to_char(m + interval '1 month', 'YYYY-MM-DD') || ' 00:00:00+00');
      made := made + 1;
    END IF;
    m := m + interval '1 month';
  END LOOP;
  RETURN made;
END $$;

-- Clicks and impressions.
ALTER TABLE clicks RENAME TO clicks_plain;
ALTER INDEX clicks_pkey RENAME TO clicks_plain_pkey;
DROP INDEX clicks_at;
DROP INDEX clicks_program_at;
CREATE TABLE clicks (
  id          text NOT NULL,
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
  flag        text CHECK (flag IN ('head', 'prefetch', 'bot')),
  PRIMARY KEY (id, at)
) PARTITION BY RANGE (at);
-- Attribution looks clicks up by id alone: one index probe per partition.
CREATE INDEX clicks_id ON clicks(id);
CREATE INDEX clicks_at ON clicks(at);
CREATE INDEX clicks_program_at ON clicks(program_id, at);

-- The postback log and its outcomes. The foreign keys into the log cannot survive (a partitioned
-- table's unique key holds its partition key); the three rows of a postback are written in one
-- transaction, which is what the keys were checking.
ALTER TABLE postback_outcomes DROP CONSTRAINT postback_outcomes_log_id_fkey;
ALTER TABLE conversions DROP CONSTRAINT conversions_log_id_fkey;
ALTER TABLE postback_log RENAME TO postback_log_plain;
ALTER INDEX postback_log_pkey RENAME TO postback_log_plain_pkey;
ALTER SEQUENCE postback_log_id_seq OWNED BY NONE;
CREATE TABLE postback_log (
  id            bigint NOT NULL DEFAULT nextval('postback_log_id_seq'),
  received_at   timestamptz NOT NULL DEFAULT now(),
  program       text NOT NULL,
  method        text NOT NULL,
  content_type  text,
  query         jsonb NOT NULL,
  body          text,
  remote_ip     text,
  PRIMARY KEY (id, received_at)
) PARTITION BY RANGE (received_at);
ALTER SEQUENCE postback_log_id_seq OWNED BY postback_log.id;

ALTER TABLE postback_outcomes RENAME TO postback_outcomes_plain;
ALTER INDEX postback_outcomes_pkey RENAME TO postback_outcomes_plain_pkey;
CREATE TABLE postback_outcomes (
  log_id         bigint NOT NULL,
  status         integer NOT NULL,
  code           text NOT NULL,
  conversion_id  text,
  duplicate      boolean NOT NULL DEFAULT false,
  decided_at     timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (log_id, decided_at)
) PARTITION BY RANGE (decided_at);

-- Conversions.
ALTER TABLE conversions RENAME TO conversions_plain;
ALTER INDEX conversions_pkey RENAME TO conversions_plain_pkey;
ALTER TABLE conversions_plain DROP CONSTRAINT conversions_program_id_transaction_id_key;
DROP INDEX conversions_received;
DROP INDEX conversions_program_received;
CREATE TABLE conversions (
  id              text NOT NULL,
  program_id      integer NOT NULL,
  transaction_id  text NOT NULL,
  event           text NOT NULL,
  amount          numeric(18,4),
  currency        char(3),
  player_ref      text,
  click_id        text,
  attributed      boolean NOT NULL,
  tracker_id      integer,
  offer_id        integer,
  brand_id        integer,
  site_id         integer,
  toplist_id      integer,
  position        integer,
  log_id          bigint NOT NULL,
  received_at     timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (id, received_at)
) PARTITION BY RANGE (received_at);
CREATE INDEX conversions_id ON conversions(id);
CREATE INDEX conversions_received ON conversions(received_at);
CREATE INDEX conversions_program_received ON conversions(program_id, received_at);

-- One row per (programme, transaction id): the exactly-once key of conversions, never partitioned.
CREATE TABLE conversion_keys (
  program_id      integer NOT NULL REFERENCES affiliate_programs(id),
  transaction_id  text NOT NULL,
  conversion_id   text NOT NULL,
  attributed      boolean NOT NULL,
  received_at     timestamptz NOT NULL,
  PRIMARY KEY (program_id, transaction_id)
);

-- Partitions for every month holding rows, and the months around now.
SELECT tracking_ensure_partitions('clicks', least(min(at), now() - interval '1 month'), now() + interval '3 months')
FROM clicks_plain;
SELECT tracking_ensure_partitions('postback_log', least(min(received_at), now() - interval '1 month'),
                                  now() + interval '3 months')
FROM postback_log_plain;
SELECT tracking_ensure_partitions('postback_outcomes', least(min(decided_at), now() - interval '1 month'),
                                  now() + interval '3 months')
FROM postback_outcomes_plain;
SELECT tracking_ensure_partitions('conversions', least(min(received_at), now() - interval '1 month'),
                                  now() + interval '3 months')
FROM conversions_plain;

-- Rows move with their ids; the plain tables go only once everything is copied (one transaction).
INSERT INTO clicks SELECT * FROM clicks_plain;
INSERT INTO postback_log SELECT * FROM postback_log_plain;
INSERT INTO postback_outcomes SELECT * FROM postback_outcomes_plain;
INSERT INTO conversions SELECT * FROM conversions_plain;
INSERT INTO conversion_keys (program_id, transaction_id, conversion_id, attributed, received_at)
  SELECT program_id, transaction_id, id, attributed, received_at FROM conversions_plain;
DROP TABLE clicks_plain;
DROP TABLE postback_outcomes_plain;
DROP TABLE postback_log_plain;
DROP TABLE conversions_plain;

-- Still append-only (row triggers on a partitioned table reach every partition). Retention
-- detaches and drops whole partitions, which no row trigger sees.
CREATE TRIGGER postback_log_append_only BEFORE UPDATE OR DELETE ON postback_log
  FOR EACH ROW EXECUTE FUNCTION tracking_append_only();
CREATE TRIGGER postback_outcomes_append_only BEFORE UPDATE OR DELETE ON postback_outcomes
  FOR EACH ROW EXECUTE FUNCTION tracking_append_only();

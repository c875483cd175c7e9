-- Operator daily aggregates: each programme's optional report endpoint, every pull attempt,
-- and the rows of the latest successful pull per day.

-- Base URL of the operator's report API; GET {report_url}/api/reports/affiliate-daily is called.
ALTER TABLE affiliate_programs ADD COLUMN report_url text;
-- The report credential sealed with AES-256-GCM (src/lib/seal.ts), the programme id as associated data.
ALTER TABLE affiliate_programs ADD COLUMN report_key_sealed text;
-- Where the figures sit in an operator's answer when it differs from the documented shape.
ALTER TABLE affiliate_programs ADD COLUMN report_mapping jsonb NOT NULL DEFAULT '{}';

-- One row per pull of one programme and day: ok with the rows stored, or failed with the reason.
CREATE TABLE aggregate_pulls (
  id           bigserial PRIMARY KEY,
  program_id   integer NOT NULL REFERENCES affiliate_programs(id) ON DELETE CASCADE,
  day          date NOT NULL,
  trigger      text NOT NULL CHECK (trigger IN ('schedule', 'backfill')),
  status       text NOT NULL CHECK (status IN ('ok', 'failed')),
  reason       text,
  http_status  integer,
  calls        integer NOT NULL,
  pages        integer NOT NULL DEFAULT 0,
  rows         integer NOT NULL DEFAULT 0,
  started_at   timestamptz NOT NULL,
  finished_at  timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX aggregate_pulls_program_day ON aggregate_pulls(program_id, day, id);

-- The operator's figures per programme, day and campaign/tracker, from the latest ok pull of that day.
CREATE TABLE operator_aggregates (
  program_id     integer NOT NULL REFERENCES affiliate_programs(id) ON DELETE CASCADE,
  day            date NOT NULL,
  tracker        text NOT NULL,
  campaign       text NOT NULL,
  clicks         integer NOT NULL,
  registrations  integer NOT NULL,
  ftds           integer NOT NULL,
  deposits       numeric(18,4) NOT NULL,
  commission     numeric(18,4) NOT NULL,
  currency       char(3),
  pull_id        bigint NOT NULL REFERENCES aggregate_pulls(id),
  PRIMARY KEY (program_id, day, tracker, campaign)
);

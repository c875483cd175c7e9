-- The affiliate manager's tools: replayed postbacks, the postback log by programme, and operator
-- report backfills requested over the admin API and run by the server's job runner.

-- A replay appends a new outcome to the same log row (the log itself is never written again);
-- the original outcome stays. Existing rows are original outcomes.
ALTER TABLE postback_outcomes ADD COLUMN replay boolean NOT NULL DEFAULT false;

-- The raw log is listed per programme (the slug as received) within a time window.
CREATE INDEX postback_log_program_received ON postback_log(program, received_at);

-- A requested backfill of a programme's operator daily aggregates: queued by the admin API,
-- claimed by one process's job runner (owner and lease; an expired lease is taken over and
-- resumes after the days already done), one pull per day recorded in aggregate_pulls.
CREATE TABLE aggregate_backfills (
  id           bigserial PRIMARY KEY,
  program_id   integer NOT NULL REFERENCES affiliate_programs(id) ON DELETE CASCADE,
  from_day     date NOT NULL,
  to_day       date NOT NULL,
  status       text NOT NULL DEFAULT 'queued' CHECK (status IN ('queued', 'running', 'done', 'failed')),
  days_total   integer NOT NULL,
  days_done    integer NOT NULL DEFAULT 0,
  days_failed  integer NOT NULL DEFAULT 0,
  error        text,
  owner        text,
  lease_until  timestamptz,
  created_at   timestamptz NOT NULL DEFAULT now(),
  started_at   timestamptz,
  finished_at  timestamptz,
  CHECK (to_day >= from_day)
);
CREATE INDEX aggregate_backfills_program ON aggregate_backfills(program_id, id);
CREATE INDEX aggregate_backfills_open ON aggregate_backfills(id) WHERE status IN ('queued', 'running');

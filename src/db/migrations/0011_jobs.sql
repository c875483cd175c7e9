-- Scheduled job runs. One row per job and time slot: the unique key is how a fleet of
-- processes agrees that exactly one of them runs a slot.
CREATE TABLE job_runs (
  id           bigserial PRIMARY KEY,
  job          text NOT NULL,
  slot         bigint NOT NULL,
  owner        text NOT NULL,
  status       text NOT NULL CHECK (status IN ('running', 'succeeded', 'failed', 'interrupted')),
  started_at   timestamptz NOT NULL DEFAULT now(),
  finished_at  timestamptz,
  error        text,
  UNIQUE (job, slot)
);

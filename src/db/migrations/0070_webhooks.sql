-- Change webhooks: endpoints, the outbox of events, one delivery per (event, endpoint) and a log
-- of every attempt. A delivery row is the outbox entry a fleet of processes claims with
-- FOR UPDATE SKIP LOCKED and a lease, so each event reaches each endpoint once.

CREATE TABLE webhook_endpoints (
  id                        text PRIMARY KEY,
  -- NULL: workspace-wide (every site's events).
  site_id                   integer REFERENCES sites(id) ON DELETE CASCADE,
  url                       text NOT NULL,
  events                    text[] NOT NULL,
  description               text NOT NULL DEFAULT '',
  -- AES-256-GCM sealed `whsec_…` (src/lib/seal.ts), bound to the endpoint id.
  secret_sealed             text NOT NULL,
  secret_hint               text NOT NULL,
  -- The secret replaced by the last rotation; deliveries are signed with both until it expires.
  previous_secret_sealed    text,
  previous_secret_expires_at timestamptz,
  enabled                   boolean NOT NULL DEFAULT true,
  disabled_at               timestamptz,
  disabled_reason           text,
  created_at                timestamptz NOT NULL DEFAULT now(),
  updated_at                timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX webhook_endpoints_site ON webhook_endpoints(site_id);

CREATE TABLE webhook_events (
  id          text PRIMARY KEY,
  -- Deduplication key: the same change recorded twice (two processes, a re-run job) is one event.
  event_key   text NOT NULL UNIQUE,
  type        text NOT NULL,
  site_id     integer,
  payload     text NOT NULL,
  created_at  timestamptz NOT NULL
);

CREATE TABLE webhook_deliveries (
  id              text PRIMARY KEY,
  event_id        text NOT NULL REFERENCES webhook_events(id) ON DELETE CASCADE,
  endpoint_id     text NOT NULL REFERENCES webhook_endpoints(id) ON DELETE CASCADE,
  status          text NOT NULL CHECK (status IN ('pending', 'succeeded', 'failed')),
  attempts        integer NOT NULL DEFAULT 0,
  max_attempts    integer NOT NULL,
  next_attempt_at timestamptz,
  -- Lease of the process sending it; an expired lease (crash) lets another process retry.
  locked_until    timestamptz,
  last_error      text,
  created_at      timestamptz NOT NULL,
  completed_at    timestamptz,
  UNIQUE (event_id, endpoint_id)
);
CREATE INDEX webhook_deliveries_due ON webhook_deliveries(next_attempt_at) WHERE status = 'pending';
CREATE INDEX webhook_deliveries_endpoint ON webhook_deliveries(endpoint_id, created_at DESC);

CREATE TABLE webhook_attempts (
  id              bigserial PRIMARY KEY,
  delivery_id     text NOT NULL REFERENCES webhook_deliveries(id) ON DELETE CASCADE,
  attempt         integer NOT NULL,
  started_at      timestamptz NOT NULL,
  succeeded       boolean NOT NULL,
  http_status     integer,
  latency_ms      integer NOT NULL,
  error           text,
  next_attempt_at timestamptz,
  UNIQUE (delivery_id, attempt)
);

-- Ad-server integration (marketplace side): connections to publishers' ad servers, their
-- inventory as last synced, and the mapping of marketplace placements to inventory slots.

-- One per publisher and environment. The API key is sealed (AES-256-GCM, this row's id as
-- associated data); capabilities are 'confirmed' or 'not_verified'.
CREATE TABLE adserver_connections (
  id                 text PRIMARY KEY,
  publisher          text NOT NULL,
  environment        text NOT NULL CHECK (environment IN ('production', 'sandbox')),
  base_url           text NOT NULL,
  api_key_sealed     text NOT NULL,
  account_id         text,
  account_name       text,
  timezone           text,
  currency           char(3),
  -- capabilities.forecast as /health declared it (false: never call POST /forecast).
  forecast_declared  boolean,
  cap_inventory_read text NOT NULL DEFAULT 'not_verified' CHECK (cap_inventory_read IN ('confirmed', 'not_verified')),
  cap_forecast       text NOT NULL DEFAULT 'not_verified' CHECK (cap_forecast IN ('confirmed', 'not_verified')),
  cap_reporting      text NOT NULL DEFAULT 'not_verified' CHECK (cap_reporting IN ('confirmed', 'not_verified')),
  cap_draft_booking  text NOT NULL DEFAULT 'not_verified' CHECK (cap_draft_booking IN ('confirmed', 'not_verified')),
  status             text NOT NULL DEFAULT 'error' CHECK (status IN ('connected', 'error')),
  -- Last classification: connected, auth_error, forbidden, unreachable, invalid_response.
  state              text NOT NULL DEFAULT 'unverified',
  last_error         text,
  verified_at        timestamptz,
  created_at         timestamptz NOT NULL DEFAULT now(),
  updated_at         timestamptz NOT NULL DEFAULT now(),
  UNIQUE (publisher, environment)
);

-- Slots as the last inventory sync saw them; a slot missing from a later full walk is kept
-- (ids are never recycled) and marked by `seen_at` staying behind.
CREATE TABLE adserver_inventory (
  connection_id  text NOT NULL REFERENCES adserver_connections(id) ON DELETE CASCADE,
  inventory_id   text NOT NULL,
  name           text NOT NULL,
  sizes          text[] NOT NULL,
  format         text,
  status         text NOT NULL CHECK (status IN ('active', 'archived')),
  seen_at        timestamptz NOT NULL,
  PRIMARY KEY (connection_id, inventory_id)
);

CREATE TABLE adserver_syncs (
  id             bigserial PRIMARY KEY,
  connection_id  text NOT NULL REFERENCES adserver_connections(id) ON DELETE CASCADE,
  finished_at    timestamptz NOT NULL DEFAULT now(),
  ok             boolean NOT NULL,
  pages          integer NOT NULL,
  slots          integer NOT NULL,
  problems       jsonb NOT NULL DEFAULT '[]'
);
CREATE INDEX adserver_syncs_connection ON adserver_syncs(connection_id, id DESC);

-- What the marketplace sells on a publisher's site, and the slot it is booked into per connection.
CREATE TABLE adserver_placements (
  id          serial PRIMARY KEY,
  publisher   text NOT NULL,
  name        text NOT NULL,
  sizes       text[] NOT NULL,
  created_at  timestamptz NOT NULL DEFAULT now(),
  UNIQUE (publisher, name)
);

CREATE TABLE adserver_placement_slots (
  placement_id   integer NOT NULL REFERENCES adserver_placements(id) ON DELETE CASCADE,
  connection_id  text NOT NULL REFERENCES adserver_connections(id) ON DELETE CASCADE,
  inventory_id   text NOT NULL,
  mapped_at      timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (placement_id, connection_id)
);

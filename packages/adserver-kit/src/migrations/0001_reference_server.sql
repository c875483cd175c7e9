-- Reference ad server: accounts, API keys, inventory, advertisers, orders, line items,
-- idempotency records. Ids are text so they stay opaque on the wire.
CREATE TABLE accounts (
  id text PRIMARY KEY,
  name text NOT NULL,
  timezone text NOT NULL,
  currency text NOT NULL,
  forecast_enabled boolean NOT NULL DEFAULT true,
  traffic_seed integer NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE api_keys (
  id text PRIMARY KEY,
  account_id text NOT NULL REFERENCES accounts(id),
  key_hash bytea NOT NULL UNIQUE,
  hint text NOT NULL,
  label text NOT NULL DEFAULT '',
  scopes text[] NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now(),
  expires_at timestamptz,
  revoked_at timestamptz
);

CREATE TABLE slots (
  account_id text NOT NULL REFERENCES accounts(id),
  id text NOT NULL,
  name text NOT NULL,
  sizes text[] NOT NULL,
  format text NOT NULL DEFAULT 'display',
  status text NOT NULL DEFAULT 'active' CHECK (status IN ('active', 'archived')),
  daily_impressions integer NOT NULL CHECK (daily_impressions >= 0),
  forecastable boolean NOT NULL DEFAULT true,
  PRIMARY KEY (account_id, id)
);

CREATE TABLE advertisers (
  id text PRIMARY KEY,
  account_id text NOT NULL REFERENCES accounts(id),
  name text NOT NULL,
  external_ref text,
  UNIQUE (account_id, name)
);

CREATE TABLE orders (
  id text PRIMARY KEY,
  account_id text NOT NULL REFERENCES accounts(id),
  external_ref text NOT NULL,
  advertiser_id text NOT NULL REFERENCES advertisers(id),
  name text NOT NULL,
  status text NOT NULL DEFAULT 'DRAFT' CHECK (status IN ('DRAFT', 'LIVE')),
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now(),
  UNIQUE (account_id, external_ref)
);

CREATE TABLE line_items (
  id text PRIMARY KEY,
  order_id text NOT NULL REFERENCES orders(id),
  external_ref text NOT NULL,
  slot_id text NOT NULL,
  start_date date NOT NULL,
  end_date date NOT NULL,
  goal_impressions bigint NOT NULL,
  geo text[] NOT NULL,
  sizes text[] NOT NULL,
  creatives jsonb NOT NULL,
  status text NOT NULL DEFAULT 'DRAFT' CHECK (status IN ('DRAFT', 'LIVE')),
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now(),
  UNIQUE (order_id, external_ref)
);
CREATE INDEX line_items_slot ON line_items (slot_id, start_date, end_date);

-- One row per (account, Idempotency-Key): the request's canonical hash is stored with the
-- claim, the response once the order is applied. Claim and order share one transaction.
CREATE TABLE idempotency_keys (
  account_id text NOT NULL REFERENCES accounts(id),
  key text NOT NULL,
  request_hash bytea NOT NULL,
  status_code integer NOT NULL,
  response jsonb NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (account_id, key)
);

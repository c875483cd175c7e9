-- Ad-server integration: bookings pushed as draft orders, and every push with its
-- idempotency key and exact body (retries resend these bytes under the same key).

-- One campaign on one connection; `external_ref` is order.external_ref for the campaign's life.
-- `revision` moves on each change; `pushed_revision` is the last one the ad server accepted.
CREATE TABLE adserver_bookings (
  id               text PRIMARY KEY,
  connection_id    text NOT NULL REFERENCES adserver_connections(id),
  external_ref     text NOT NULL,
  advertiser_name  text NOT NULL,
  advertiser_ref   text,
  campaign_name    text NOT NULL,
  currency         char(3) NOT NULL,
  revision         integer NOT NULL DEFAULT 1,
  pushed_revision  integer,
  order_id         text,
  last_push_error  text,
  created_at       timestamptz NOT NULL DEFAULT now(),
  updated_at       timestamptz NOT NULL DEFAULT now(),
  UNIQUE (connection_id, external_ref)
);

-- One booked line: a slot x geo x month. The tracking codes found in its creatives (/go/{code},
-- /imp/{code}) are what delivery is compared with.
CREATE TABLE adserver_booking_lines (
  booking_id        text NOT NULL REFERENCES adserver_bookings(id) ON DELETE CASCADE,
  line_no           integer NOT NULL,
  connection_id     text NOT NULL REFERENCES adserver_connections(id),
  external_ref      text NOT NULL,
  placement_id      integer NOT NULL REFERENCES adserver_placements(id),
  inventory_id      text NOT NULL,
  month             char(7) NOT NULL,
  start_date        date NOT NULL,
  end_date          date NOT NULL,
  geo               text[] NOT NULL DEFAULT '{}',
  goal_impressions  bigint NOT NULL CHECK (goal_impressions > 0),
  sizes             text[] NOT NULL,
  creatives         jsonb NOT NULL DEFAULT '[]',
  click_codes       text[] NOT NULL DEFAULT '{}',
  impression_codes  text[] NOT NULL DEFAULT '{}',
  line_item_id      text,
  PRIMARY KEY (booking_id, line_no),
  UNIQUE (connection_id, external_ref),
  UNIQUE (connection_id, line_item_id)
);

CREATE TABLE adserver_pushes (
  idempotency_key  text PRIMARY KEY,
  booking_id       text NOT NULL REFERENCES adserver_bookings(id) ON DELETE CASCADE,
  revision         integer NOT NULL,
  body             text NOT NULL,
  status           text NOT NULL CHECK (status IN ('pending', 'succeeded', 'failed', 'conflict')),
  http_status      integer,
  calls            integer NOT NULL DEFAULT 0,
  error            text,
  created_at       timestamptz NOT NULL DEFAULT now(),
  finished_at      timestamptz
);
CREATE INDEX adserver_pushes_booking ON adserver_pushes(booking_id, revision);

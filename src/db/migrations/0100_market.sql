-- The marketplace around the ad-server contract: advertisers, products with prices, the
-- availability of each product x geo x month with its holds and bookings, and reservations.

-- An organisation that buys: people will belong to it (accounts work). Its currency is the one
-- of the publisher account it buys from, copied when it is created.
CREATE TABLE market_advertisers (
  id          text PRIMARY KEY,
  publisher   text NOT NULL,
  name        text NOT NULL,
  currency    char(3) NOT NULL,
  contacts    jsonb NOT NULL DEFAULT '[]',
  created_at  timestamptz NOT NULL DEFAULT now(),
  updated_at  timestamptz NOT NULL DEFAULT now(),
  UNIQUE (publisher, name)
);

-- A placement's slot on one connection, offered for some countries over a range of months, at a
-- CPM or a flat monthly fee in the account currency (exact decimals).
CREATE TABLE market_products (
  id             text PRIMARY KEY,
  connection_id  text NOT NULL REFERENCES adserver_connections(id),
  placement_id   integer NOT NULL REFERENCES adserver_placements(id),
  name           text NOT NULL,
  geos           text[] NOT NULL,
  first_month    char(7) NOT NULL,
  last_month     char(7) NOT NULL CHECK (last_month >= first_month),
  pricing        text NOT NULL CHECK (pricing IN ('cpm', 'flat')),
  price          numeric(16,4) NOT NULL CHECK (price >= 0),
  currency       char(3) NOT NULL,
  status         text NOT NULL DEFAULT 'active' CHECK (status IN ('active', 'withdrawn')),
  created_at     timestamptz NOT NULL DEFAULT now(),
  updated_at     timestamptz NOT NULL DEFAULT now(),
  UNIQUE (connection_id, name)
);

-- One row per product x geo x month: the figure sold against and what is held and booked on it.
-- A hold is taken by one conditional UPDATE on this row (held + booked + n <= available), so
-- concurrent requests from any number of processes never sell more than the figure. No CHECK ties
-- held to available: a forecast that drops below what is held puts the lines at risk, never cuts them.
-- source: forecast (the ad server's available_impressions), listed (the publisher's figure, the
-- connection declares no forecast), none (the slot answered 501: no limit, booking proceeds),
-- pending (never fetched, or the fetch failed before any figure arrived).
-- booked: impressions booked since the figure was taken (a new forecast counts them itself).
CREATE TABLE market_capacity (
  product_id   text NOT NULL REFERENCES market_products(id) ON DELETE CASCADE,
  geo          char(2) NOT NULL,
  month        char(7) NOT NULL,
  source       text NOT NULL DEFAULT 'pending' CHECK (source IN ('forecast', 'listed', 'none', 'pending')),
  available    bigint CHECK (available >= 0),
  forecasted   bigint,
  listed       bigint CHECK (listed >= 0),
  held         bigint NOT NULL DEFAULT 0 CHECK (held >= 0),
  booked       bigint NOT NULL DEFAULT 0 CHECK (booked >= 0),
  fetched_at   timestamptz,
  last_error   text,
  PRIMARY KEY (product_id, geo, month)
);

-- held -> approving -> booked; held -> rejected | expired. `approving` is never expired: its push
-- is in flight (a failed push puts it back to held).
CREATE TABLE market_reservations (
  id              text PRIMARY KEY,
  advertiser_id   text NOT NULL REFERENCES market_advertisers(id),
  connection_id   text NOT NULL REFERENCES adserver_connections(id),
  campaign_name   text NOT NULL,
  currency        char(3) NOT NULL,
  status          text NOT NULL CHECK (status IN ('held', 'approving', 'booked', 'rejected', 'expired')),
  expires_at      timestamptz NOT NULL,
  approving_since timestamptz,
  booking_id      text REFERENCES adserver_bookings(id),
  reason          text,
  last_error      text,
  created_at      timestamptz NOT NULL DEFAULT now(),
  updated_at      timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX market_reservations_due ON market_reservations (expires_at) WHERE status = 'held';
CREATE INDEX market_reservations_list ON market_reservations (created_at DESC, id DESC);

-- The price is the product's at the time of the request (the quote the advertiser saw).
CREATE TABLE market_reservation_lines (
  reservation_id  text NOT NULL REFERENCES market_reservations(id) ON DELETE CASCADE,
  line_no         integer NOT NULL,
  product_id      text NOT NULL,
  geo             char(2) NOT NULL,
  month           char(7) NOT NULL,
  impressions     bigint NOT NULL CHECK (impressions > 0),
  pricing         text NOT NULL CHECK (pricing IN ('cpm', 'flat')),
  price           numeric(16,4) NOT NULL,
  PRIMARY KEY (reservation_id, line_no),
  FOREIGN KEY (product_id, geo, month) REFERENCES market_capacity (product_id, geo, month)
);
CREATE INDEX market_reservation_lines_capacity ON market_reservation_lines (product_id, geo, month);

-- The timeline of a reservation: every state change, who made it and what came with it.
CREATE TABLE market_reservation_events (
  id              bigserial PRIMARY KEY,
  reservation_id  text NOT NULL REFERENCES market_reservations(id) ON DELETE CASCADE,
  at              timestamptz NOT NULL,
  kind            text NOT NULL,
  actor           text NOT NULL,
  detail          jsonb NOT NULL DEFAULT '{}'
);
CREATE INDEX market_reservation_events_of ON market_reservation_events (reservation_id, id);

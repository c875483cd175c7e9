-- The notices an advertiser is owed when a reservation is booked, rejected or expires: written in the
-- transaction that changes the status, sent by the market-notices job (mail to the advertiser's
-- contacts), so a notice survives a crash between the commit and the send.
CREATE TABLE market_notices (
  id              bigserial PRIMARY KEY,
  reservation_id  text NOT NULL REFERENCES market_reservations(id) ON DELETE CASCADE,
  kind            text NOT NULL CHECK (kind IN ('booked', 'rejected', 'expired')),
  created_at      timestamptz NOT NULL,
  due_at          timestamptz NOT NULL,
  attempts        integer NOT NULL DEFAULT 0,
  done_at         timestamptz,
  outcome         text CHECK (outcome IN ('mailed', 'logged', 'no_contacts', 'failed')),
  last_error      text,
  UNIQUE (reservation_id, kind)
);
CREATE INDEX market_notices_due ON market_notices (due_at) WHERE done_at IS NULL;

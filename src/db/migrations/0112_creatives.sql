-- Creatives hosted by the marketplace (issue 56): images uploaded for a booked line, moderated,
-- stored once per content hash and served at immutable URLs.

-- One upload for one booking line. pending -> approving -> approved; pending -> rejected; an
-- approved creative becomes replaced when another of the same size is approved for the line (one
-- approved per line and size). `approving`: its line is being rewritten; one per line at a time,
-- so two approvals of one line never interleave their writes (from any number of processes).
CREATE TABLE creatives (
  id           text PRIMARY KEY,
  booking_id   text NOT NULL,
  line_no      integer NOT NULL,
  sha256       char(64) NOT NULL CHECK (sha256 ~ '^[0-9a-f]{64}$'),
  format       text NOT NULL CHECK (format IN ('png', 'jpeg', 'gif', 'webp')),
  bytes        integer NOT NULL CHECK (bytes > 0),
  width        integer NOT NULL CHECK (width BETWEEN 1 AND 4000),
  height       integer NOT NULL CHECK (height BETWEEN 1 AND 4000),
  name         text NOT NULL,
  landing_url  text NOT NULL,
  status       text NOT NULL DEFAULT 'pending' CHECK (status IN ('pending', 'approving', 'approved', 'rejected', 'replaced')),
  reason       text,
  uploaded_by  text NOT NULL,
  decided_by   text,
  decided_at   timestamptz,
  created_at   timestamptz NOT NULL DEFAULT now(),
  updated_at   timestamptz NOT NULL DEFAULT now(),
  FOREIGN KEY (booking_id, line_no) REFERENCES adserver_booking_lines (booking_id, line_no),
  CHECK ((status = 'rejected') = (reason IS NOT NULL))
);
CREATE INDEX creatives_line ON creatives (booking_id, line_no, created_at DESC);
CREATE INDEX creatives_status ON creatives (status, created_at);
CREATE INDEX creatives_sha ON creatives (sha256);
CREATE UNIQUE INDEX creatives_one_approved ON creatives (booking_id, line_no, width, height)
  WHERE status = 'approved';
CREATE UNIQUE INDEX creatives_one_approving ON creatives (booking_id, line_no) WHERE status = 'approving';

-- The bytes when the store is the database (PODIUM_CREATIVE_STORE=database, the default with
-- DATABASE_URL): one row per content hash, written in the transaction that records the upload.
CREATE TABLE creative_blobs (
  sha256      char(64) PRIMARY KEY,
  content     bytea NOT NULL,
  created_at  timestamptz NOT NULL DEFAULT now()
);

-- Bookings whose line changed by a creative approval and whose follow-up POST /orders (contract
-- rules 4 and 5) is still to be sent; the push job drains it, a failure stays with its error.
CREATE TABLE creative_followups (
  booking_id  text PRIMARY KEY REFERENCES adserver_bookings(id),
  queued_at   timestamptz NOT NULL DEFAULT now(),
  attempts    integer NOT NULL DEFAULT 0,
  last_error  text
);

-- Moderating creatives is its own scope; ad-ops, who runs the marketplace, moderates.
UPDATE roles SET scopes = scopes || '{creatives:moderate}', updated_at = now()
WHERE built_in AND name = 'ad-ops' AND NOT scopes @> '{creatives:moderate}';

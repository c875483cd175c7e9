-- Creatives for a reservation line before approval (issue 56): uploaded and moderated while the
-- reservation awaits the publisher. On approval the same rows are attached to the booking line the
-- reservation line becomes (booking_id, line_no set, reservation_id kept as where they came from).
ALTER TABLE creatives ALTER COLUMN booking_id DROP NOT NULL;
ALTER TABLE creatives ALTER COLUMN line_no DROP NOT NULL;
ALTER TABLE creatives ADD COLUMN reservation_id text;
ALTER TABLE creatives ADD COLUMN reservation_line_no integer;
-- The buyer's own id of a creative synced by the sales agent (AdCP creative_id), per advertiser.
ALTER TABLE creatives ADD COLUMN buyer_creative_id text;
ALTER TABLE creatives ADD CONSTRAINT creatives_reservation_line
  FOREIGN KEY (reservation_id, reservation_line_no) REFERENCES market_reservation_lines (reservation_id, line_no);
ALTER TABLE creatives ADD CONSTRAINT creatives_booking_pair CHECK ((booking_id IS NULL) = (line_no IS NULL));
ALTER TABLE creatives ADD CONSTRAINT creatives_reservation_pair
  CHECK ((reservation_id IS NULL) = (reservation_line_no IS NULL));
ALTER TABLE creatives ADD CONSTRAINT creatives_has_line CHECK (booking_id IS NOT NULL OR reservation_id IS NOT NULL);
ALTER TABLE creatives ADD CONSTRAINT creatives_buyer_id CHECK (buyer_creative_id IS NULL OR reservation_id IS NOT NULL);
CREATE INDEX creatives_reservation ON creatives (reservation_id, reservation_line_no, created_at DESC)
  WHERE reservation_id IS NOT NULL;
-- One approved per reservation line and size until the line is booked (then creatives_one_approved holds).
CREATE UNIQUE INDEX creatives_one_approved_held ON creatives (reservation_id, reservation_line_no, width, height)
  WHERE status = 'approved' AND booking_id IS NULL;

-- Banner tracking: each booked line's creative gets its own code, answered by /go/{code}
-- (redirect to the creative's landing page), /imp/{code} (pixel) and /ad/{code} (the frame the
-- third-party tag loads: the current approved image, its click link and the pixel).

-- A banner link shares the id space of tracking_links (same sequence), so a hit's link_id names
-- exactly one link of either table. Codes are 24 characters; toplist slugs are 12, so the two
-- never collide. `owner` is the marketplace's opaque name of the line and creative.
CREATE TABLE banner_links (
  id           integer PRIMARY KEY DEFAULT nextval('tracking_links_id_seq'),
  code         text NOT NULL UNIQUE,
  owner        text NOT NULL UNIQUE,
  site_id      integer REFERENCES sites(id),
  landing_url  text NOT NULL,
  image_url    text NOT NULL,
  width        integer NOT NULL CHECK (width BETWEEN 1 AND 4000),
  height       integer NOT NULL CHECK (height BETWEEN 1 AND 4000),
  created_at   timestamptz NOT NULL DEFAULT now(),
  updated_at   timestamptz NOT NULL DEFAULT now()
);

-- A banner hit has no tracker (it is paid by the booking, not by an affiliate programme).
ALTER TABLE clicks ALTER COLUMN tracker_id DROP NOT NULL;

-- The site a placement is on: its lines' codes are bound to it.
ALTER TABLE adserver_placements ADD COLUMN site_id integer REFERENCES sites(id);

-- The approved creatives of a line as entered (image, landing page, size); `creatives` keeps
-- the tags generated from them, pushed exactly as stored.
ALTER TABLE adserver_booking_lines ADD COLUMN approved_creatives jsonb NOT NULL DEFAULT '[]';

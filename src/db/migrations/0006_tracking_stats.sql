-- Stats: each site's reporting time zone (stats can cut days in it), and indexes for the
-- per-programme day scans of stats and reconciliation.

-- A site's reporting time zone; a site without a row reports in UTC.
CREATE TABLE tracking_sites (
  site_id     integer PRIMARY KEY REFERENCES sites(id) ON DELETE CASCADE,
  timezone    text NOT NULL,
  updated_at  timestamptz NOT NULL DEFAULT now()
);

CREATE INDEX clicks_program_at ON clicks(program_id, at);
CREATE INDEX conversions_program_received ON conversions(program_id, received_at);

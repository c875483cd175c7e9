-- Daily rollups: the 15-minute rollups summed per local day of each report zone, so a 30-day
-- report reads 30 rows per dimension instead of 2 880 buckets and cuts no day at read time.
-- Kept in the same statement as each batch (with the 15-minute rows). link_id is not a key:
-- reports by day group by site, toplist, position, brand and programme (the per-link counts
-- read the 15-minute rollups).
--
-- rollup_zones lists the zones maintained: UTC and every tracking site's and programme's zone.
-- A zone's daily rows are read only once it is `ready`: built exactly from the 15-minute
-- rollups (the migration below; later zones by the rollup-zones job). Until then, and for any
-- other zone, reports cut days from the 15-minute buckets.

CREATE TABLE rollup_zones (
  zone   text PRIMARY KEY,
  ready  boolean NOT NULL DEFAULT false
);

CREATE TABLE click_daily_rollups (
  zone        text NOT NULL,
  day         date NOT NULL,
  kind        text NOT NULL,
  site_id     integer,
  toplist_id  integer,
  position    integer,
  brand_id    integer,
  program_id  integer,
  n           bigint NOT NULL,
  CONSTRAINT click_daily_rollups_key UNIQUE NULLS NOT DISTINCT
    (zone, day, kind, site_id, toplist_id, position, brand_id, program_id)
);

CREATE TABLE conversion_daily_rollups (
  zone        text NOT NULL,
  day         date NOT NULL,
  event       text NOT NULL,
  currency    char(3),
  site_id     integer,
  toplist_id  integer,
  position    integer,
  brand_id    integer,
  program_id  integer NOT NULL,
  n           bigint NOT NULL,
  amount      numeric NOT NULL DEFAULT 0,
  CONSTRAINT conversion_daily_rollups_key UNIQUE NULLS NOT DISTINCT
    (zone, day, event, currency, site_id, toplist_id, position, brand_id, program_id)
);

-- Writers of the previous release wait until the rows below are built, so none is missed.
LOCK TABLE click_rollups, conversion_rollups IN SHARE MODE;

INSERT INTO rollup_zones (zone, ready)
SELECT 'UTC', true
UNION SELECT timezone, true FROM tracking_sites
UNION SELECT timezone, true FROM affiliate_programs;

INSERT INTO click_daily_rollups (zone, day, kind, site_id, toplist_id, position, brand_id, program_id, n)
SELECT z.zone, (c.bucket AT TIME ZONE z.zone)::date, c.kind, c.site_id, c.toplist_id, c.position, c.brand_id,
       c.program_id, sum(c.n)
FROM click_rollups c CROSS JOIN rollup_zones z
GROUP BY 1, 2, 3, 4, 5, 6, 7, 8;

INSERT INTO conversion_daily_rollups (zone, day, event, currency, site_id, toplist_id, position, brand_id,
                                      program_id, n, amount)
SELECT z.zone, (v.bucket AT TIME ZONE z.zone)::date, v.event, v.currency, v.site_id, v.toplist_id, v.position,
       v.brand_id, v.program_id, sum(v.n), sum(v.amount)
FROM conversion_rollups v CROSS JOIN rollup_zones z
GROUP BY 1, 2, 3, 4, 5, 6, 7, 8, 9;

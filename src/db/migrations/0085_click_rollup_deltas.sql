-- Click rollup deltas. Every click batch upserted one 15-minute rollup row per key it held: an
-- index probe, a row lock and a new row version each, ~11 µs a key on PGlite and ~10 on
-- PostgreSQL, a fifth of a batch's statement (bench/README.md, session 20).
--
-- A batch now appends its counts, one row per key, to click_rollup_deltas: no index, no conflict,
-- no lock on a hot row. The click writer moves the deltas into the rollup rows (now the table
-- click_rollups_base) every 2 000 deltas or minute, in one transaction that deletes the deltas it
-- adds; any process may do it, and two at once never move a delta twice.
--
-- Stop every process of an earlier version before this runs: click_rollups is a view from here on,
-- and their batches' upserts into it would fail.
--
-- click_rollups becomes a view of both, so everything that reads the 15-minute rollups (reports,
-- the daily fold, zone builds) reads every committed batch whether or not its deltas were moved
-- yet, and a move changes no sum it reads. The daily fold and the zone barrier lock both tables
-- (base, then deltas), so they still hold the batches back while they run.

ALTER TABLE click_rollups RENAME TO click_rollups_base;

-- The rollup rows' columns, their types and NOT NULLs, without the lane and without an index.
CREATE TABLE click_rollup_deltas (LIKE click_rollups_base);
ALTER TABLE click_rollup_deltas DROP COLUMN lane;

CREATE VIEW click_rollups AS
  SELECT bucket, kind, site_id, toplist_id, position, brand_id, program_id, link_id, n, lane
  FROM click_rollups_base
  UNION ALL
  SELECT bucket, kind, site_id, toplist_id, position, brand_id, program_id, link_id, n, 0::smallint
  FROM click_rollup_deltas;

-- Lanes: the group commit writes up to four click batches at once on PostgreSQL, and each batch
-- adds its counts to the same hot rollup rows (this quarter hour, today, the same links). With one
-- row per key, every concurrent batch waited on the row locks of the one before it until that one
-- had committed, so the batches' commits (and their WAL flushes) ran one after another and /go
-- was bound by commit latency. Each in-flight batch now writes its own lane's row of a key;
-- readers already sum `n` per key, so a key's count is the sum over its lanes. Conversions keep
-- one row per key: their batches rarely meet on a key.

ALTER TABLE click_rollups ADD COLUMN lane smallint NOT NULL DEFAULT 0;
ALTER TABLE click_rollups DROP CONSTRAINT click_rollups_key;
ALTER TABLE click_rollups ADD CONSTRAINT click_rollups_key UNIQUE NULLS NOT DISTINCT
  (bucket, kind, site_id, toplist_id, position, brand_id, program_id, link_id, lane);

ALTER TABLE click_daily_rollups ADD COLUMN lane smallint NOT NULL DEFAULT 0;
ALTER TABLE click_daily_rollups DROP CONSTRAINT click_daily_rollups_key;
ALTER TABLE click_daily_rollups ADD CONSTRAINT click_daily_rollups_key UNIQUE NULLS NOT DISTINCT
  (zone, day, kind, site_id, toplist_id, position, brand_id, program_id, lane);

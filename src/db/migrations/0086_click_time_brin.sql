-- The raw clicks lose their two secondary B-tree indexes, clicks_at (at) and clicks_program_at
-- (program_id, at), for one BRIN index on at. Every click and impression paid an insert into
-- both: ~6 µs of a click each on PGlite (300–380 µs of a 50-click batch's statement), 5 % of a
-- /go request's CPU together (bench/README.md, session 21). Reports count from the rollups; only
-- by=sub_id reads raw rows, by time (≤ 31 days), which is what a BRIN index answers: rows are
-- appended in time order, so each 128-page range holds a narrow span of times, and the index is a
-- few pages per month. A range is used once it is summarised (VACUUM on PostgreSQL; the hourly
-- partitions job on both databases, as the embedded one runs no VACUUM); until then a scan reads
-- it whole. At 3 million clicks a 30-day by=sub_id report of one programme took 220 ms instead of
-- 182, of all programmes 1.05 s instead of 1.19, and the raw clicks a quarter less disk.
--
-- The BRIN index is built by one pass over the clicks, holding their writes back meanwhile.

DROP INDEX clicks_program_at;
DROP INDEX clicks_at;
CREATE INDEX clicks_at ON clicks USING brin (at);

-- Folded daily click rollups. Until now every click batch added its counts to the daily rows of
-- every maintained zone: one upsert per zone and key, about 30 % of a batch's statement on PGlite
-- with three zones, and growing with each zone a site or programme brings in.
--
-- A ready zone's click daily rows now hold exactly the 15-minute click rollups whose bucket is
-- before its `clicks_folded_to`. The rollup-zones job moves that instant forward to the last
-- quarter hour that ended at least two minutes ago, adding the buckets in between under a SHARE
-- lock on click_rollups (no batch writes meanwhile), so a batch adds to the daily rows only the
-- rows older than it (late clicks), usually none. Reports read the daily rows, plus the 15-minute
-- rollups from `clicks_folded_to` on, cut into days.
--
-- 'infinity' keeps the rule of migration 0082: batches maintain every day. Existing zones, and
-- each new zone until it is built, start there; the job's first fold of a ready zone sets its
-- instant (never before another zone's: instants only move forward) and recounts its daily rows
-- from that instant's local day on from the quarter hours before it.
-- Conversions keep the 0082 rule: their batches are smaller and rarer.

ALTER TABLE rollup_zones ADD COLUMN clicks_folded_to timestamptz NOT NULL DEFAULT 'infinity';

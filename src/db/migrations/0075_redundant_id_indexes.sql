-- The primary keys of the partitioned clicks and conversions are (id, at) and (id, received_at):
-- their btree answers a lookup by id alone as well as a separate index on id did, so that index
-- only cost one more insert per row on the hottest write path (/go, /imp, postbacks).
DROP INDEX IF EXISTS clicks_id;
DROP INDEX IF EXISTS conversions_id;

-- The click journal of the embedded database (0087) is gone: a click on PGlite is now answered
-- once its group-commit batch is committed and flushed, as on PostgreSQL. 0087 never shipped in a
-- release; this drops its mark table from development data directories that applied it.
DROP TABLE IF EXISTS click_journal;

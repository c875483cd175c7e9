-- Time zones used to be checked against Node's ICU data only, so a name ICU knows and
-- PostgreSQL does not (`US/Pacific-New`) could be saved and then failed every stats query.
-- Zones are now checked against pg_timezone_names as well; any unknown one already stored
-- falls back to UTC, the default.
UPDATE affiliate_programs SET timezone = 'UTC'
 WHERE timezone <> 'UTC' AND NOT EXISTS (SELECT 1 FROM pg_timezone_names z WHERE z.name = timezone);
UPDATE tracking_sites SET timezone = 'UTC'
 WHERE timezone <> 'UTC' AND NOT EXISTS (SELECT 1 FROM pg_timezone_names z WHERE z.name = timezone);

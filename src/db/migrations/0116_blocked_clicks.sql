-- Clicks the compliance click guard kept from the operator are counted in the tracking stats from
-- the raw clicks (they are rare and never in the rollups): this index finds them by time.
CREATE INDEX clicks_blocked_at ON clicks (at) WHERE flag = 'blocked';

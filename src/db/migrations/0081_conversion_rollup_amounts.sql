-- Money in the rollups: the sum of conversion amounts per rollup row (its currency is already
-- part of the key). Unbounded numeric, so a sum of many numeric(18,4) amounts never overflows;
-- a conversion without an amount adds 0. Existing rows are recomputed from the raw conversions
-- so installs that already hold data report exact money from the start.

ALTER TABLE conversion_rollups ADD COLUMN amount numeric NOT NULL DEFAULT 0;

UPDATE conversion_rollups r SET amount = s.amount
FROM (
  SELECT date_bin('15 minutes', received_at, timestamptz '2000-01-01 00:00:00+00') AS bucket, event, currency,
         site_id, toplist_id, position, brand_id, program_id, coalesce(sum(amount), 0) AS amount
  FROM conversions
  GROUP BY 1, 2, 3, 4, 5, 6, 7, 8
) s
WHERE r.bucket = s.bucket AND r.event = s.event AND r.currency IS NOT DISTINCT FROM s.currency
  AND r.site_id IS NOT DISTINCT FROM s.site_id AND r.toplist_id IS NOT DISTINCT FROM s.toplist_id
  AND r.position IS NOT DISTINCT FROM s.position AND r.brand_id IS NOT DISTINCT FROM s.brand_id
  AND r.program_id = s.program_id AND s.amount <> 0;

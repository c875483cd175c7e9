-- Rollups: what reports read instead of raw rows. Counted hits and conversions per 15-minute
-- bucket (UTC-aligned) and dimension, kept up to date in the same statement that writes each
-- batch. Every current UTC offset is a multiple of 15 minutes, so every instant of a bucket
-- falls on the same local day in any zone: days cut from buckets are exact.
-- Adding a money figure is one column: conversion_rollups is already keyed by currency.

CREATE TABLE click_rollups (
  bucket      timestamptz NOT NULL,
  kind        text NOT NULL,
  site_id     integer,
  toplist_id  integer,
  position    integer,
  brand_id    integer,
  program_id  integer,
  link_id     integer NOT NULL,
  n           bigint NOT NULL,
  CONSTRAINT click_rollups_key UNIQUE NULLS NOT DISTINCT
    (bucket, kind, site_id, toplist_id, position, brand_id, program_id, link_id)
);
CREATE INDEX click_rollups_program ON click_rollups(program_id, bucket);

CREATE TABLE conversion_rollups (
  bucket      timestamptz NOT NULL,
  event       text NOT NULL,
  currency    char(3),
  site_id     integer,
  toplist_id  integer,
  position    integer,
  brand_id    integer,
  program_id  integer NOT NULL,
  n           bigint NOT NULL,
  CONSTRAINT conversion_rollups_key UNIQUE NULLS NOT DISTINCT
    (bucket, event, currency, site_id, toplist_id, position, brand_id, program_id)
);
CREATE INDEX conversion_rollups_program ON conversion_rollups(program_id, bucket);

-- Rows already recorded (flagged hits are not counted, so they have no rollup).
INSERT INTO click_rollups (bucket, kind, site_id, toplist_id, position, brand_id, program_id, link_id, n)
SELECT date_bin('15 minutes', at, timestamptz '2000-01-01 00:00:00+00'), kind, site_id, toplist_id, position,
       brand_id, program_id, link_id, count(*)
FROM clicks WHERE flag IS NULL
GROUP BY 1, 2, 3, 4, 5, 6, 7, 8;

INSERT INTO conversion_rollups (bucket, event, currency, site_id, toplist_id, position, brand_id, program_id, n)
SELECT date_bin('15 minutes', received_at, timestamptz '2000-01-01 00:00:00+00'), event, currency, site_id,
       toplist_id, position, brand_id, program_id, count(*)
FROM conversions
GROUP BY 1, 2, 3, 4, 5, 6, 7, 8;

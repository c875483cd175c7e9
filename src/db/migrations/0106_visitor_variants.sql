-- Visitor-level serving (issue 53): a global edition reached through the geo cascade by a visitor
-- of a country where one of its brands may not be advertised is served without those items. Each
-- row is one precomputed variant of a live edition: the items it withholds (`item_key`, the sorted
-- item ids), the visitor countries that get it, why (`withheld`, one entry per item and country)
-- and its stored document. Reads answer these bytes; `rev` grows when the document is re-rendered
-- (a new tracking domain), so the variant's ETag changes with it.
CREATE TABLE edition_variants (
  id          serial PRIMARY KEY,
  edition_id  integer NOT NULL REFERENCES editions(id) ON DELETE CASCADE,
  item_key    text NOT NULL,
  countries   text[] NOT NULL,
  withheld    jsonb NOT NULL,
  document    text NOT NULL,
  rev         integer NOT NULL DEFAULT 0,
  created_at  timestamptz NOT NULL DEFAULT now(),
  UNIQUE (edition_id, item_key)
);

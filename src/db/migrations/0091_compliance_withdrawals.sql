-- Serving guard (issue 53): a rule changed after a publish withholds the items it now forbids
-- from the live edition. `document` stays what is served; the document as published is kept
-- beside it while items are withheld (NULL: nothing withheld, `document` is the published one),
-- so lifting the rule serves the item again. `withheld` lists what is withheld and why.
ALTER TABLE editions ADD COLUMN published_document text;
ALTER TABLE editions ADD COLUMN withheld jsonb NOT NULL DEFAULT '[]';

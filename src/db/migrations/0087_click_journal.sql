-- How far the embedded database's click journal is loaded (src/modules/tracking/click-journal.ts).
-- On PGlite a click is answered once its row is flushed to an append-only journal file; the rows
-- reach `clicks` behind, in statements of up to a thousand, each of which moves this mark in the
-- same statement. A restart loads what lies past the mark, so no row is loaded twice or lost.
-- `segment` numbers the journal file, `position` is the byte offset in it up to which every row
-- (and every row of earlier segments) is in the database. PostgreSQL servers keep no journal.
CREATE TABLE click_journal (
  only_row boolean PRIMARY KEY DEFAULT true CHECK (only_row),
  segment  bigint NOT NULL,
  position bigint NOT NULL
);
INSERT INTO click_journal (segment, position) VALUES (0, 0);

import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { type Db, openDb, type Queryable } from '../src/db/index.ts';
import { migrate } from '../src/db/migrate.ts';
import {
  ClickJournal,
  type ClickJournalOptions,
  JOURNAL_DIR,
  journalLine,
  MAX_REFUSED_IN_A_ROW,
  parseJournalLine,
  REFUSED_FILE,
  segmentName,
} from '../src/modules/tracking/click-journal.ts';
import { TrackingRepository } from '../src/modules/tracking/repository.ts';
import type { HitContext } from '../src/modules/tracking/service.ts';
import type { ClickRow } from '../src/modules/tracking/types.ts';
import type { Services } from '../src/services.ts';
import { servicesOn } from './helpers.ts';
import { trackingFixture } from './tracking-fixture.ts';

const ctx: HitContext = {
  method: 'GET',
  userAgent: 'Mozilla/5.0 (X11; Linux x86_64) Firefox/120.0',
  referrer: 'https://casinos.example/best',
  country: 'DE',
  prefetch: false,
  subId: 'journal',
};

const dirs: string[] = [];
const dbs: Db[] = [];
afterAll(async () => {
  for (const db of dbs) await db.close().catch(() => {});
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

async function openOn(dir: string): Promise<Db> {
  const db = await openDb({ dataDir: dir });
  dbs.push(db);
  await migrate(db);
  return db;
}

/** A migrated PGlite data directory with the tracking fixture, its database closed. */
async function seeded(): Promise<{ dir: string; slug: string }> {
  const dir = mkdtempSync(join(tmpdir(), 'podium-journal-'));
  dirs.push(dir);
  const db = await openOn(dir);
  const fx = await trackingFixture(await servicesOn(db), db);
  await db.close();
  return { dir, slug: fx.slugs[0] as string };
}

/** The journal of `db` with its own options, loading through a plain repository (no partition check). */
function journalOn(
  db: Db,
  dir: string,
  opts: ClickJournalOptions,
  gotRaw: (raw: Queryable) => void = () => {},
): Promise<ClickJournal> {
  return ClickJournal.on(
    db as Db & Required<Pick<Db, 'writeBehind'>>,
    join(dir, JOURNAL_DIR),
    (raw) => {
      gotRaw(raw);
      const repo = new TrackingRepository(raw);
      return {
        load: (rows, loadedTo) => repo.insertClicks(rows, 0, loadedTo),
        mark: () => repo.journalMark(),
        setMark: (mark) => repo.setJournalMark(mark),
      };
    },
    opts,
  );
}

/** A seeded database with a journal of its own, and the handle its loader runs statements on. */
async function journalWithLoaderHandle() {
  const { dir } = await seeded();
  const db = await openOn(dir);
  let raw: Queryable | undefined;
  const opts = {
    loadBatch: 1000,
    loadDelayMs: 60_000,
    segmentBytes: 1 << 20,
    maxBacklog: 100,
    warn: () => {},
  };
  const journal = await journalOn(db, dir, opts, (q) => {
    raw = q;
  });
  return { dir, db, journal, raw: raw! };
}

const markOf = (db: Db) =>
  db
    .query<{ segment: number; position: number }>('SELECT segment::int, position::int FROM click_journal')
    .then((r) => r[0]!);

const refusedLines = (dir: string) => {
  try {
    return readFileSync(join(dir, JOURNAL_DIR, REFUSED_FILE), 'utf8')
      .trim()
      .split('\n');
  } catch {
    return [];
  }
};

const counts = (db: Db) =>
  db
    .query<{ raw: number; rolled: number | null }>(
      `SELECT (SELECT count(*)::int FROM clicks WHERE flag IS NULL) AS raw,
              (SELECT sum(n)::int FROM click_rollups) AS rolled`,
    )
    .then((r) => r[0]!);

const segments = (dir: string) =>
  readdirSync(join(dir, JOURNAL_DIR))
    .filter((f) => f.startsWith('clicks-'))
    .sort();

function row(id: string, at: Date, extra: Partial<ClickRow> = {}): ClickRow {
  return {
    id,
    kind: 'click',
    at,
    linkId: 1,
    trackerId: 1,
    offerId: 1,
    brandId: 1,
    siteId: 1,
    toplistId: 1,
    position: 1,
    programId: null,
    subId: 'sub "quoted"\nline',
    referrer: null,
    userAgent: 'ü-agent',
    country: 'DE',
    flag: null,
    ...extra,
  };
}

describe('click journal lines', () => {
  it('read back what they hold and refuse torn or foreign lines', () => {
    const r = row('01J0000000000000000000000A', new Date('2026-11-29T01:02:03.456Z'), { flag: 'bot' });
    const line = journalLine(r);
    expect(line.endsWith('\n')).toBe(true);
    // A newline inside a field is escaped: one row is one line.
    expect(line.indexOf('\n')).toBe(line.length - 1);
    expect(parseJournalLine(line)).toEqual(r);
    expect(parseJournalLine(line.slice(0, -10))).toBeUndefined();
    expect(parseJournalLine('["x","click"]\n')).toBeUndefined();
    expect(parseJournalLine(line.replace('"click"', '"view"'))).toBeUndefined();
    expect(parseJournalLine(line.replace('"DE"', '42'))).toBeUndefined();
  });
});

describe('click journal on PGlite on disk', () => {
  it('answers clicks from the journal, and every later statement sees them loaded', async () => {
    const { dir, slug } = await seeded();
    const db = await openOn(dir);
    const services: Services = await servicesOn(db);
    const n = 300;
    await Promise.all(Array.from({ length: n }, () => services.tracking.click(slug, ctx)));
    // Answered from the journal: the rows are in its file, most not loaded yet.
    const lines = segments(dir).flatMap((f) =>
      readFileSync(join(dir, JOURNAL_DIR, f), 'utf8')
        .split('\n')
        .filter(Boolean),
    );
    expect(lines).toHaveLength(n);
    // The first statement after them waits for their load: every click counted, raw and rolled up.
    expect(await counts(db)).toEqual({ raw: n, rolled: n });
    expect(services.tracking.pendingHits).toBe(0);
    const last = segments(dir).at(-1)!;
    const atEnd = () => ({
      segment: Number(last.slice(7, 23)),
      position: readFileSync(join(dir, JOURNAL_DIR, last)).length,
    });
    expect(await markOf(db)).toEqual(atEnd());
    // Clicks answered just before a shutdown: the stop loads them (the database is then read
    // without the journal's services, so nothing is loaded at open).
    await Promise.all(Array.from({ length: n }, () => services.tracking.click(slug, ctx)));
    await services.close();
    await db.close();
    const plain = await openOn(dir);
    expect(await counts(plain)).toEqual({ raw: 2 * n, rolled: 2 * n });
    expect(await markOf(plain)).toEqual(atEnd());
    await plain.close();
  }, 60_000);

  it('loads at start what a stopped process answered past the mark, once; drops a torn last line', async () => {
    const { dir } = await seeded();
    const at = new Date();
    const rows = Array.from({ length: 5 }, (_, i) => row(`01J00000000000000000000R${i}0`, at));
    const text = rows.map(journalLine).join('');
    const firstTwo = Buffer.byteLength(rows.slice(0, 2).map(journalLine).join(''));
    const { mkdirSync } = await import('node:fs');
    mkdirSync(join(dir, JOURNAL_DIR), { recursive: true });
    // Segment 3: the first two rows already loaded (the mark is past them); a torn sixth line.
    writeFileSync(join(dir, JOURNAL_DIR, segmentName(3)), `${text}${journalLine(rows[0]!).slice(0, 20)}`);
    // Segment 2 is wholly before the mark: deleted unread.
    writeFileSync(join(dir, JOURNAL_DIR, segmentName(2)), journalLine(row('01J0000000000000000000OLD0', at)));
    let db = await openOn(dir);
    await new TrackingRepository(db).insertClicks(rows.slice(0, 2), 0, { segment: 3, position: firstTwo });
    await db.close();

    db = await openOn(dir);
    const services = await servicesOn(db);
    const ids = await db.query<{ id: string }>('SELECT id FROM clicks ORDER BY id');
    expect(ids.map((r) => r.id)).toEqual(rows.map((r) => r.id));
    expect(await counts(db)).toEqual({ raw: 5, rolled: 5 });
    expect(segments(dir)).toEqual([segmentName(3)]);
    // The mark is past the five whole lines, short of the torn one, which is not kept aside.
    const whole = { segment: 3, position: Buffer.byteLength(text) };
    expect(await markOf(db)).toEqual(whole);
    expect(refusedLines(dir)).toEqual([]);
    await services.close();
    await db.close();

    // A third start finds nothing past the mark: nothing is loaded twice, nothing refused.
    db = await openOn(dir);
    await servicesOn(db);
    expect(await counts(db)).toEqual({ raw: 5, rolled: 5 });
    expect(await markOf(db)).toEqual(whole);
    expect(refusedLines(dir)).toEqual([]);
    await db.close();
  }, 60_000);

  it('at start keeps a damaged line and a refused row aside and loads the rows around them', async () => {
    const { dir } = await seeded();
    const at = new Date();
    const [a, b, c] = ['A', 'B', 'C'].map((k) => row(`01J00000000000000000000DM${k}`, at));
    const bad = row('01J00000000000000000000DMX', at, { country: 'DEU' });
    const { mkdirSync } = await import('node:fs');
    mkdirSync(join(dir, JOURNAL_DIR), { recursive: true });
    const text = [
      journalLine(a!),
      'not json at all\n',
      journalLine(b!),
      journalLine(bad),
      journalLine(c!),
    ].join('');
    writeFileSync(join(dir, JOURNAL_DIR, segmentName(1)), text);
    const db = await openOn(dir);
    await servicesOn(db);
    const ids = await db.query<{ id: string }>('SELECT id FROM clicks ORDER BY id');
    expect(ids.map((r) => r.id)).toEqual([a!.id, b!.id, c!.id]);
    const kept = readFileSync(join(dir, JOURNAL_DIR, REFUSED_FILE), 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as { error: string; line: string });
    expect(kept.map((k) => k.line)).toEqual(['not json at all', journalLine(bad).trimEnd()]);
    expect(kept[0]!.error).toMatch(/unreadable line in clicks-0000000000000001\.jsonl at byte \d+/);
    expect(await markOf(db)).toEqual({ segment: 1, position: Buffer.byteLength(text) });
    await db.close();
  }, 60_000);

  it('keeps a row the database refuses aside, with its error, and loads the rest', async () => {
    const { dir } = await seeded();
    const db = await openOn(dir);
    const warnings: string[] = [];
    const journal = await journalOn(db, dir, {
      loadBatch: 1000,
      loadDelayMs: 60_000,
      segmentBytes: 1 << 20,
      maxBacklog: 10_000,
      warn: (m) => warnings.push(m),
    });
    const at = new Date();
    const good = ['G', 'H', 'I'].map((k) => row(`01J000000000000000000000${k}0`, at));
    // A country of three letters does not fit char(2); the second refused row is the last one.
    const bad = ['X', 'Y'].map((k) => row(`01J000000000000000000000${k}0`, at, { country: 'DEU' }));
    await journal.append([good[0]!, bad[0]!, good[1]!]);
    await journal.append([good[2]!, bad[1]!]);
    expect(journal.backlog).toBe(5);
    const ids = await db.query<{ id: string }>('SELECT id FROM clicks ORDER BY id');
    expect(ids.map((r) => r.id)).toEqual(good.map((r) => r.id));
    expect(journal.backlog).toBe(0);
    const kept = refusedLines(dir).map((l) => JSON.parse(l) as { error: string; line: string });
    expect(kept.map((k) => parseJournalLine(k.line))).toEqual(bad);
    for (const k of kept) expect(k.error).toMatch(/too long/);
    expect(warnings.some((w) => w.includes(REFUSED_FILE))).toBe(true);
    // The mark is past every row, the refused last one too: a restart loads none of them again.
    const file = segments(dir).at(-1)!;
    expect(await markOf(db)).toEqual({
      segment: Number(file.slice(7, 23)),
      position: readFileSync(join(dir, JOURNAL_DIR, file)).length,
    });
    await journal.drain();
    await db.close();
  }, 60_000);

  it('keeps rows waiting, not aside, while the database fails every load, and loads them after', async () => {
    const { dir, db, journal, raw } = await journalWithLoaderHandle();
    // A failure of the database, not of a row: the mark's table is gone.
    await raw.exec('ALTER TABLE click_journal RENAME TO click_journal_away');
    const at = new Date();
    await journal.append([row('01J000000000000000000000W0', at), row('01J000000000000000000000W1', at)]);
    await expect(db.query('SELECT 1')).rejects.toThrow(/click_journal/);
    expect(journal.backlog).toBe(2);
    expect(refusedLines(dir)).toEqual([]);
    await raw.exec('ALTER TABLE click_journal_away RENAME TO click_journal');
    expect(await counts(db)).toEqual({ raw: 2, rolled: 2 });
    expect(journal.backlog).toBe(0);
    await journal.drain();
    await db.close();
  }, 60_000);

  it('takes rows refused one after another for a failure of the statement: sets aside a few, keeps the rest', async () => {
    const { dir, db, journal, raw } = await journalWithLoaderHandle();
    // Every row's daily rollup now fails (22023, a data exception) whatever the row holds.
    await raw.query(`INSERT INTO rollup_zones (zone) VALUES ('Not/AZone')`);
    const at = new Date();
    const rows = Array.from({ length: 15 }, (_, i) =>
      row(`01J00000000000000000000Z${String(i).padStart(2, '0')}`, at),
    );
    await journal.append(rows);
    await expect(db.query('SELECT 1')).rejects.toThrow(/10 rows refused in a row/);
    expect(refusedLines(dir)).toHaveLength(MAX_REFUSED_IN_A_ROW);
    expect(journal.backlog).toBe(15 - MAX_REFUSED_IN_A_ROW);
    await raw.query(`DELETE FROM rollup_zones WHERE zone = 'Not/AZone'`);
    expect(await counts(db)).toEqual({ raw: 5, rolled: 5 });
    await journal.drain();
    await db.close();
  }, 60_000);

  it('starts a new segment past its size and deletes the old ones once loaded', async () => {
    const { dir } = await seeded();
    const lineBytes = Buffer.byteLength(journalLine(row('01J000000000000000000000S0', new Date())));
    const db = await openOn(dir);
    // Every segment takes two appends of a row.
    const opts = {
      loadBatch: 1000,
      loadDelayMs: 60_000,
      segmentBytes: 2 * lineBytes,
      maxBacklog: 4,
      warn: () => {},
    };
    const journal = await journalOn(db, dir, opts);
    const at = new Date();
    for (let i = 0; i < 4; i++) await journal.append([row(`01J000000000000000000000S${i}`, at)]);
    expect(segments(dir)).toHaveLength(2);
    // The backlog is bounded: the fifth row waits for none and is refused.
    await expect(journal.append([row('01J000000000000000000000S9', at)])).rejects.toThrow(/buffer full/);
    expect(await counts(db)).toEqual({ raw: 4, rolled: 4 });
    // The mark is in the second segment: the first is gone.
    expect(segments(dir)).toEqual([segmentName(2)]);
    await journal.drain();
    await db.close();
  }, 60_000);
});

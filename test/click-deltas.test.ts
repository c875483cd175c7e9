import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { migrate } from '../src/db/migrate.ts';
import { ulid } from '../src/lib/ids.ts';
import { ClickDeltaRepository } from '../src/modules/reporting/click-delta-repository.ts';
import { ClickDeltaMover } from '../src/modules/reporting/click-deltas.ts';
import { RollupZoneRepository } from '../src/modules/reporting/rollup-zone-repository.ts';
import { RollupZones } from '../src/modules/reporting/rollup-zones.ts';
import { quarterStart, TrackingRepository } from '../src/modules/tracking/repository.ts';
import type { ClickRow, HitFlag } from '../src/modules/tracking/types.ts';
import { click, DB_KIND, dbBefore, eventually, type TestDb, testDb } from './helpers.ts';

/** `count` clicks on links 1..`links` in turn, at `at`; every 10th flagged when `flagged`. */
function clicks(count: number, links: number, at = new Date(), flagged = false): ClickRow[] {
  return Array.from({ length: count }, (_, i) => {
    const link = (i % links) + 1;
    const flag: HitFlag | null = flagged && i % 10 === 9 ? 'bot' : null;
    return click(ulid(), at.toISOString(), { linkId: link, siteId: 1, toplistId: 1, position: link, flag });
  });
}

interface Totals {
  base: number;
  deltas: number;
  delta_rows: number;
  view: number;
  raw: number;
}

describe(`click rollup deltas (${DB_KIND})`, () => {
  let t: TestDb;
  let repo: TrackingRepository;
  let deltas: ClickDeltaRepository;
  beforeAll(async () => {
    t = await testDb();
    repo = new TrackingRepository(t.db);
    deltas = new ClickDeltaRepository(t.db);
  });
  afterAll(() => t.close());
  beforeEach(() => t.db.exec('TRUNCATE clicks, click_rollups_base, click_rollup_deltas'));

  const totals = async (): Promise<Totals> =>
    (
      await t.db.query<Totals>(
        `SELECT (SELECT coalesce(sum(n), 0)::int FROM click_rollups_base) AS base,
                (SELECT coalesce(sum(n), 0)::int FROM click_rollup_deltas) AS deltas,
                (SELECT count(*)::int FROM click_rollup_deltas) AS delta_rows,
                (SELECT coalesce(sum(n), 0)::int FROM click_rollups) AS view,
                (SELECT count(*)::int FROM clicks WHERE flag IS NULL) AS raw`,
      )
    )[0] as Totals;

  /** Per link: the count the rollups (view) give and the unflagged raw rows, where they differ. */
  const mismatches = () =>
    t.db.query(
      `SELECT coalesce(r.link_id, c.link_id) AS link_id, r.n AS rolled, c.n AS raw
       FROM (SELECT link_id, sum(n)::int AS n FROM click_rollups GROUP BY 1) r
       FULL JOIN (SELECT link_id, count(*)::int AS n FROM clicks WHERE flag IS NULL GROUP BY 1) c
         ON c.link_id = r.link_id
       WHERE r.n IS DISTINCT FROM c.n`,
    );

  it('a batch appends one delta per key, counted at once; a move sums them into the rollup rows', async () => {
    expect(await repo.insertClicks(clicks(30, 3, new Date(), true))).toBe(3);
    expect(await totals()).toEqual({ base: 0, deltas: 27, delta_rows: 3, view: 27, raw: 27 });
    expect(await repo.insertClicks(clicks(12, 3))).toBe(3);
    expect(await totals()).toEqual({ base: 0, deltas: 39, delta_rows: 6, view: 39, raw: 39 });
    expect(await mismatches()).toEqual([]);

    expect(await deltas.move()).toBe(6);
    expect(await totals()).toEqual({ base: 39, deltas: 0, delta_rows: 0, view: 39, raw: 39 });
    expect(await t.db.query('SELECT link_id, n FROM click_rollups_base ORDER BY link_id')).toEqual([
      { link_id: 1, n: 13 },
      { link_id: 2, n: 13 },
      { link_id: 3, n: 13 },
    ]);
    expect(await deltas.move()).toBe(0);

    // Later deltas add to the same rows.
    await repo.insertClicks(clicks(3, 3));
    expect(await deltas.move()).toBe(3);
    expect(await totals()).toMatchObject({ base: 42, deltas: 0, view: 42, raw: 42 });
    expect(await mismatches()).toEqual([]);
  });

  it('moves running beside batches and each other neither lose a delta nor move one twice', async () => {
    const work: Promise<unknown>[] = [];
    for (let i = 0; i < 24; i++) {
      work.push(repo.insertClicks(clicks(10, 5), i % 4));
      if (i % 3 === 0) work.push(deltas.move());
    }
    await Promise.all(work);
    await deltas.move();
    expect(await totals()).toEqual({ base: 240, deltas: 0, delta_rows: 0, view: 240, raw: 240 });
    expect(await mismatches()).toEqual([]);
  });

  it('the mover moves within its interval, at once past its bound, and not after it stopped', async () => {
    const errors: unknown[] = [];
    const soon = new ClickDeltaMover(deltas, { everyMs: 30, maxDeltas: 1_000 }, (err) => errors.push(err));
    soon.appended(await repo.insertClicks(clicks(8, 4)));
    expect((await totals()).delta_rows).toBe(4);
    expect(await eventually(async () => (await totals()).delta_rows === 0, 3000)).toBe(true);
    await soon.stop();

    // An interval that never comes: only the bound can start this move.
    const bound = new ClickDeltaMover(deltas, { everyMs: 600_000, maxDeltas: 5 }, (err) => errors.push(err));
    bound.appended(await repo.insertClicks(clicks(4, 4)));
    await new Promise((r) => setTimeout(r, 50));
    expect((await totals()).delta_rows).toBe(4);
    bound.appended(await repo.insertClicks(clicks(2, 2)));
    expect(await eventually(async () => (await totals()).delta_rows === 0, 3000)).toBe(true);
    await bound.stop();

    bound.appended(await repo.insertClicks(clicks(10, 10)));
    await new Promise((r) => setTimeout(r, 50));
    expect((await totals()).delta_rows).toBe(10);
    expect(errors).toEqual([]);
    expect(await mismatches()).toEqual([]);
  });

  it('stopping moves what was appended since the last move', async () => {
    const errors: unknown[] = [];
    const mover = new ClickDeltaMover(deltas, { everyMs: 600_000, maxDeltas: 1_000 }, (err) =>
      errors.push(err),
    );
    mover.appended(await repo.insertClicks(clicks(6, 3)));
    expect((await totals()).delta_rows).toBe(3);
    await mover.stop();
    expect(await totals()).toMatchObject({ base: 6, delta_rows: 0, view: 6, raw: 6 });
    expect(errors).toEqual([]);
  });

  it('moves now what nobody told it of (a bulk history write), also while a move is under way', async () => {
    const errors: unknown[] = [];
    const mover = new ClickDeltaMover(deltas, { everyMs: 600_000, maxDeltas: 4 }, (err) => errors.push(err));
    mover.appended(await repo.insertClicks(clicks(8, 4)));
    // Written behind the mover's back while its move (past the bound) runs.
    await repo.insertClicks(clicks(6, 3));
    await mover.moveNow();
    expect(await totals()).toMatchObject({ base: 14, delta_rows: 0, view: 14, raw: 14 });
    await mover.stop();
    expect(errors).toEqual([]);
  });

  it('moves beside the daily fold and the zone barrier, which lock the same tables', async () => {
    const zones = new RollupZoneRepository(t.db);
    await new RollupZones(zones).sync();
    const work: Promise<unknown>[] = [];
    for (let i = 0; i < 16; i++) {
      work.push(repo.insertClicks(clicks(10, 5), i % 4), deltas.move(), zones.barrier());
      if (i % 4 === 0) work.push(zones.fold(new Date(quarterStart(Date.now()))));
    }
    await Promise.all(work);
    await deltas.move();
    expect(await totals()).toEqual({ base: 160, deltas: 0, delta_rows: 0, view: 160, raw: 160 });
    expect(await mismatches()).toEqual([]);
  });

  it('reports a move that failed and moves again after the next batch', async () => {
    const errors: unknown[] = [];
    let failing = true;
    const flaky = {
      move: () => (failing ? Promise.reject(new Error('disk full')) : deltas.move()),
    } as ClickDeltaRepository;
    const mover = new ClickDeltaMover(flaky, { everyMs: 10, maxDeltas: 1_000 }, (err) => errors.push(err));
    mover.appended(await repo.insertClicks(clicks(3, 3)));
    expect(await eventually(async () => errors.length === 1, 3000)).toBe(true);
    expect((errors[0] as Error).message).toBe('disk full');
    expect((await totals()).view).toBe(3);
    failing = false;
    mover.appended(await repo.insertClicks(clicks(2, 2)));
    expect(await eventually(async () => (await totals()).delta_rows === 0, 3000)).toBe(true);
    expect(await totals()).toMatchObject({ base: 5, view: 5, raw: 5 });
    await mover.stop();
  });
});

describe(`migration 0085 on an installation with rollups (${DB_KIND})`, () => {
  let t: TestDb;
  beforeAll(async () => {
    t = await dbBefore('0085');
  });
  afterAll(() => t.close());

  it('keeps the 15-minute rollups, read through click_rollups as before', async () => {
    await t.db.exec(
      `INSERT INTO click_rollups (bucket, kind, site_id, toplist_id, position, brand_id, program_id, link_id, n, lane)
       VALUES ('2026-11-01 10:00+00', 'click', 1, 2, 3, 4, NULL, 7, 5, 0),
              ('2026-11-01 10:00+00', 'click', 1, 2, 3, 4, NULL, 7, 2, 1),
              ('2026-11-01 10:15+00', 'impression', NULL, NULL, NULL, NULL, NULL, 8, 9, 0)`,
    );
    await migrate(t.db);
    const read = `SELECT bucket, kind, link_id, sum(n)::int AS n FROM click_rollups GROUP BY 1, 2, 3 ORDER BY 1, 2, 3`;
    expect(await t.db.query(read)).toEqual([
      { bucket: new Date('2026-11-01T10:00:00Z'), kind: 'click', link_id: 7, n: 7 },
      { bucket: new Date('2026-11-01T10:15:00Z'), kind: 'impression', link_id: 8, n: 9 },
    ]);
    const repo = new TrackingRepository(t.db);
    await repo.insertClicks(clicks(2, 1, new Date('2026-11-01T10:05:00Z')).map((c) => ({ ...c, linkId: 7 })));
    await new ClickDeltaRepository(t.db).move();
    expect(await t.db.query(`SELECT sum(n)::int AS n FROM click_rollups_base WHERE link_id = 7`)).toEqual([
      { n: 9 },
    ]);
  });
});

import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type FreezePolicy, idleDatabasesToFreeze, PGLITE_FREEZING, PgliteFreezer } from './freeze.ts';
import { type Db, openDb } from './index.ts';

const NEVER = Number.MAX_SAFE_INTEGER;

describe('freezing PGlite (a single-user backend has no autovacuum)', { timeout: 120_000 }, () => {
  const dir = mkdtempSync(join(tmpdir(), 'podium-freeze-'));
  const dataDir = join(dir, 'data');
  let db: Db;
  beforeAll(async () => {
    db = await openDb({ dataDir });
    await db.exec(
      'CREATE TABLE grows (id bigserial PRIMARY KEY, pad text); CREATE TABLE still (id int PRIMARY KEY)',
    );
    await db.exec('INSERT INTO still VALUES (1)');
  });
  afterAll(async () => {
    await db.close();
    rmSync(dir, { recursive: true, force: true });
  });

  /** Transactions since the table's oldest unfrozen row (what PostgreSQL's stop counts). */
  const tableAge = async (name: string) =>
    (
      await db.query<{ age: number }>('SELECT age(relfrozenxid) AS age FROM pg_class WHERE relname = $1', [
        name,
      ])
    )[0]!.age;
  const databaseAges = async () =>
    Object.fromEntries(
      (
        await db.query<{ name: string; age: number }>(
          'SELECT datname AS name, age(datfrozenxid) AS age FROM pg_database',
        )
      ).map((d) => [d.name, d.age]),
    );
  /** Commits `n` transactions, each taking a transaction id. */
  const burn = async (n: number) => {
    for (let i = 0; i < n; i++) await db.exec('UPDATE still SET id = id');
  };
  const policy = (p: Partial<FreezePolicy>): FreezePolicy => ({
    growthPages: 1,
    maxTableAge: NEVER,
    maxIdleDatabaseAge: NEVER,
    warnIdleDatabaseAge: NEVER,
    fullPassEvery: 1,
    ...p,
  });

  it('freezes a table once it grew since the last pass, and only then', async () => {
    const freezer = new PgliteFreezer(db, policy({}));
    expect((await freezer.pass()).frozen).toEqual([]);
    await db.exec(`INSERT INTO grows (pad) SELECT repeat('x', 200) FROM generate_series(1, 2000)`);
    await burn(30);
    expect(await tableAge('grows')).toBeGreaterThanOrEqual(30);
    expect((await freezer.pass()).frozen).toEqual(['public.grows']);
    // Frozen, not just vacuumed: a plain VACUUM leaves the table as old as its insert.
    expect(await tableAge('grows')).toBeLessThan(5);
    expect(await tableAge('still')).toBeGreaterThanOrEqual(30);
    expect((await freezer.pass()).frozen).toEqual([]);
  });

  it('freezes the tables and catalogs whose oldest unfrozen row is maxTableAge old, grown or not', async () => {
    await burn(20);
    const before = await databaseAges();
    const pass = await new PgliteFreezer(db, policy({ maxTableAge: 10 })).pass();
    expect(pass.frozen).toContain('public.still');
    expect(pass.frozen).toContain('pg_catalog.pg_class');
    expect(await tableAge('still')).toBeLessThan(5);
    const after = await databaseAges();
    expect(before.postgres).toBeGreaterThanOrEqual(20);
    expect(after.postgres).toBeLessThan(5);
    // The template databases are frozen only by opening the directory (below).
    expect(after.template1).toBeGreaterThanOrEqual(before.template1!);
    expect(pass.idleDatabaseAge).toBe(Math.max(after.template0!, after.template1!));
    expect(pass.oldestAge).toBe(pass.idleDatabaseAge);
  });

  it('between full passes, watches the files of the tables it listed and leaves ages to the next full one', async () => {
    const freezer = new PgliteFreezer(db, policy({ maxTableAge: 10, fullPassEvery: 3 }));
    await burn(12);
    const first = await freezer.pass();
    expect(first.full).toBe(true);
    expect(first.frozen).toContain('public.still');
    await db.exec(`INSERT INTO grows (pad) SELECT repeat('y', 200) FROM generate_series(1, 500)`);
    await db.exec('CREATE TABLE later (id int, pad text)');
    await burn(12);
    // Not a full pass: the grown table is frozen, the old one (by age) and the new one wait.
    const second = await freezer.pass();
    expect(second).toMatchObject({ full: false, frozen: ['public.grows'] });
    await db.exec(`INSERT INTO later SELECT i, repeat('z', 200) FROM generate_series(1, 500) i`);
    expect((await freezer.pass()).frozen).toEqual([]);
    // The full pass lists `later` and acts on ages (both tables are 12 transactions old).
    const fourth = await freezer.pass();
    expect(fourth.full).toBe(true);
    expect(fourth.frozen).toContain('public.still');
    expect(fourth.frozen).toContain('public.later');
    await db.exec(`INSERT INTO later SELECT i, repeat('z', 200) FROM generate_series(1, 500) i`);
    expect((await freezer.pass()).frozen).toEqual(['public.later']);
    await db.exec('DROP TABLE later');
  });

  it('stops between tables once its signal is aborted', async () => {
    await burn(3);
    const stop = new AbortController();
    stop.abort();
    expect((await new PgliteFreezer(db, policy({ maxTableAge: 1 })).pass(stop.signal)).frozen).toEqual([]);
  });

  it('skips a table dropped after it was found due (the partitions job drops expired months)', async () => {
    await db.exec('CREATE TABLE gone (id int)');
    const freezer = new PgliteFreezer(
      {
        ...db,
        exec: async (sql: string) => {
          if (sql.endsWith('public.gone')) await db.exec('DROP TABLE gone');
          return db.exec(sql);
        },
      },
      policy({ maxTableAge: 0 }),
    );
    const pass = await freezer.pass();
    expect(pass.frozen).not.toContain('public.gone');
    expect(pass.frozen).toContain('public.still');
  });

  it('warns when the template databases are older than warnIdleDatabaseAge', async () => {
    const warned: string[] = [];
    await new PgliteFreezer(db, policy({ warnIdleDatabaseAge: 1 }), (m) => warned.push(m)).pass();
    expect(warned).toHaveLength(1);
    expect(warned[0]).toMatch(/template databases are \d+ transactions old; restart the server/);
    await new PgliteFreezer(db, policy({}), (m) => warned.push(m)).pass();
    expect(warned).toHaveLength(1);
  });

  it('opening the directory freezes the template databases once they are maxIdleDatabaseAge old', async () => {
    await burn(10);
    expect(await idleDatabasesToFreeze(db, 5)).toEqual(['template0', 'template1']);
    expect(await idleDatabasesToFreeze(db)).toEqual([]);
    await db.close();
    db = await openDb({ dataDir });
    const kept = await databaseAges();
    expect(kept.template0).toBeGreaterThanOrEqual(10);
    await db.close();
    db = await openDb({ dataDir, maxIdleDatabaseAge: 5 });
    const frozen = await databaseAges();
    expect(frozen.template0).toBeLessThan(5);
    expect(frozen.template1).toBeLessThan(5);
    // The served database's own tables are the freezer's (above), not the opening's.
    expect(frozen.postgres).toBeGreaterThanOrEqual(10);
    expect(await db.query('SELECT count(*)::int AS n FROM grows')).toEqual([{ n: 2500 }]);
  });

  it('keeps the defaults PostgreSQL itself uses for freezing (vacuum_freeze_min_age) or stricter', () => {
    expect(PGLITE_FREEZING.maxTableAge).toBeLessThanOrEqual(50_000_000);
    expect(PGLITE_FREEZING.maxIdleDatabaseAge).toBeLessThan(PGLITE_FREEZING.warnIdleDatabaseAge);
  });
});

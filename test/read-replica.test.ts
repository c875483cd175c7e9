import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openReadDb } from '../src/db/read-replica.ts';
import { StatsRepository } from '../src/modules/reporting/stats-repository.ts';
import { schemaOf, type TestDb, testDb } from './helpers.ts';

describe('report queries without a replica', () => {
  let t: TestDb;
  beforeAll(async () => {
    t = await testDb();
  });
  afterAll(() => t.close());

  it('run on the primary when DATABASE_READ_URL is unset', async () => {
    const reads = await openReadDb(t.db, undefined);
    await t.db.query('CREATE TABLE marker (v text)');
    await t.db.query("INSERT INTO marker VALUES ('primary')");
    expect(await reads.query('SELECT v FROM marker')).toEqual([{ v: 'primary' }]);
    expect(reads.replicaDown).toBe(false);
    await reads.close();
  });
});

// A replica is a second PostgreSQL connection pool; here it points at the same server and schema.
describe.runIf(process.env.DATABASE_URL)('report queries with DATABASE_READ_URL', () => {
  let t: TestDb;
  let schema: string;
  beforeAll(async () => {
    t = await testDb();
    schema = await schemaOf(t.db);
  });
  afterAll(() => t.close());

  it('go to the replica pool, which sees what the primary committed', async () => {
    const url = process.env.DATABASE_URL as string;
    const reads = await openReadDb(t.db, url, { schema });
    try {
      const [own] = await reads.query<{ pid: number }>('SELECT pg_backend_pid() AS pid');
      const [primary] = await t.db.query<{ pid: number }>('SELECT pg_backend_pid() AS pid');
      expect(own?.pid).not.toBe(primary?.pid);
      const stats = await new StatsRepository(reads).stats({
        from: '2026-01-01',
        to: '2026-01-31',
        tz: 'fixed',
        zone: 'UTC',
        limit: 10,
        offset: 0,
      });
      expect(stats).toEqual({ rows: [], total: 0 });
      // A SQL error is not an outage: it is not hidden by a retry on the primary.
      await expect(reads.query('SELECT * FROM no_such_table')).rejects.toThrow(/no_such_table/);
      expect(reads.replicaDown).toBe(false);
    } finally {
      await reads.close();
    }
  });

  it("report the replica's slow statements, not the primary's", async () => {
    const reads = await openReadDb(t.db, process.env.DATABASE_URL as string, { schema });
    const seen: string[] = [];
    try {
      reads.watchSlow(40, (s) => seen.push(s.statement));
      await reads.query('SELECT pg_sleep(0.06) AS on_replica');
      await t.db.query('SELECT pg_sleep(0.06) AS on_primary');
      expect(seen).toEqual(['SELECT pg_sleep(0.06) AS on_replica']);
    } finally {
      await reads.close();
    }
  });

  it('fall back to the primary while the replica is down, and try it again later', async () => {
    // Nothing listens on port 1 of loopback: every connection is refused at once.
    const down = new URL(process.env.DATABASE_URL as string);
    down.port = '1';
    let clock = 1_000_000;
    const reads = await openReadDb(t.db, down.toString(), { schema, now: () => clock });
    try {
      expect(await reads.query<{ one: number }>('SELECT 1 AS one')).toEqual([{ one: 1 }]);
      expect(reads.replicaDown).toBe(true);
      // Past the pause the replica is tried again; still down, the primary still answers.
      clock += 60_000;
      const [r] = await reads.query<{ schema: string }>('SELECT current_schema() AS schema');
      expect(r?.schema).toBe(schema);
      expect(reads.replicaDown).toBe(true);
    } finally {
      await reads.close();
    }
  });
});

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Db, openDb } from '../src/db/index.ts';
import { Scheduler } from '../src/lib/jobs.ts';
import { DB_KIND, schemaOf, type TestDb, testDb } from './helpers.ts';

describe(`scheduled jobs run once per slot across processes (${DB_KIND})`, () => {
  let t: TestDb;
  let other: Db;
  const clock = { now: new Date('2026-11-23T10:00:30Z') };

  beforeAll(async () => {
    t = await testDb();
    // On PostgreSQL the second "process" has its own connection pool; PGlite is one process.
    other = process.env.DATABASE_URL
      ? await openDb({ url: process.env.DATABASE_URL, schema: await schemaOf(t.db), poolSize: 2 })
      : t.db;
  });
  afterAll(async () => {
    if (other !== t.db) await other.close();
    await t.close();
  });

  const schedulers = () =>
    [new Scheduler(t.db, () => clock.now), new Scheduler(other, () => clock.now)] as const;

  it('two schedulers ticking the same slot run the job once; the next slot runs once again', async () => {
    let runs = 0;
    const [a, b] = schedulers();
    for (const s of [a, b]) {
      s.register({
        name: 'operator-pull',
        everyMs: 60_000,
        run: async () => {
          runs++;
          await new Promise((r) => setTimeout(r, 20));
        },
      });
    }
    await Promise.all([a.tick(), b.tick(), a.tick(), b.tick()]);
    expect(runs).toBe(1);
    clock.now = new Date('2026-11-23T10:01:05Z');
    await Promise.all([b.tick(), a.tick()]);
    expect(runs).toBe(2);
    const rows = await t.db.query<{ status: string }>(
      "SELECT status FROM job_runs WHERE job = 'operator-pull'",
    );
    expect(rows.map((r) => r.status)).toEqual(['succeeded', 'succeeded']);
    expect(a.jobStats()['operator-pull']!.runs + b.jobStats()['operator-pull']!.runs).toBe(2);
  });

  it('records a failure with the secret scrubbed from the stored error', async () => {
    const [a] = schedulers();
    a.register({
      name: 'report-pull',
      everyMs: 60_000,
      run: async () => {
        throw new Error('upstream refused Bearer sk_live_abcdefghijklmnop');
      },
    });
    await a.tick();
    const [row] = await t.db.query<{ status: string; error: string }>(
      "SELECT status, error FROM job_runs WHERE job = 'report-pull'",
    );
    expect(row!.status).toBe('failed');
    expect(row!.error).toContain('Bearer [redacted]');
    expect(a.jobStats()['report-pull']!.failures).toBe(1);
  });

  it('a run interrupted by shutdown gives its slot back to another process', async () => {
    const [a, b] = schedulers();
    let finishedBy = '';
    a.register({
      name: 'long-pull',
      everyMs: 60_000,
      run: (signal) =>
        new Promise((_, reject) =>
          signal.addEventListener('abort', () => reject(new Error('shutting down'))),
        ),
    });
    b.register({
      name: 'long-pull',
      everyMs: 60_000,
      run: async () => {
        finishedBy = 'b';
      },
    });
    const running = a.tick();
    await new Promise((r) => setTimeout(r, 50));
    await b.tick();
    expect(finishedBy).toBe('');
    await a.stop();
    await running;
    const [row] = await t.db.query<{ status: string }>("SELECT status FROM job_runs WHERE job = 'long-pull'");
    expect(row!.status).toBe('interrupted');
    await b.tick();
    expect(finishedBy).toBe('b');
  });

  it('keeps eight days of runs by the database clock, in bounded batches; every current slot keeps its row', async () => {
    const MIN = 60_000;
    const DAY = 86_400_000;
    const week = 7 * DAY;
    // started_at is written by the database's clock; the scheduler's own clock (here days apart)
    // only names the slots.
    const insert = (job: string, slot: number, agoMs: number) =>
      t.db.query(
        `INSERT INTO job_runs (job, slot, owner, status, started_at)
         VALUES ($1, $2, 'test', 'succeeded', now() - make_interval(secs => $3::float8 / 1000))`,
        [job, slot, agoMs],
      );
    const minuteSlot = Math.floor(clock.now.getTime() / MIN);
    const minuteAgo = [10 * DAY, 9 * DAY, 8 * DAY + MIN, 8 * DAY - MIN, 3_600_000, 0];
    for (const [i, ago] of minuteAgo.entries())
      await insert('minute-job', minuteSlot - minuteAgo.length + 1 + i, ago);
    // A weekly job's current run, claimed six days ago (by a process that may set another period).
    await insert('week-job', Math.floor(clock.now.getTime() / week), 6 * DAY);
    // A job no process registers any more.
    await insert('gone-job', 1, 31 * DAY);

    const [a] = schedulers();
    let runs = 0;
    a.register({ name: 'minute-job', everyMs: MIN, run: async () => void runs++ });
    a.register({ name: 'week-job', everyMs: week, run: async () => void runs++ });
    expect(() => a.register({ name: 'fortnight', everyMs: week + 1, run: async () => {} })).toThrow(
      /seven days/,
    );

    /** Minutes since each run of `job` started, oldest first. */
    const minutesAgo = async (job: string) =>
      (
        await t.db.query<{ m: number }>(
          `SELECT round(extract(epoch FROM now() - started_at) / 60)::int AS m
             FROM job_runs WHERE job = $1 ORDER BY started_at`,
          [job],
        )
      ).map((r) => r.m);
    const retention = { keepMs: 0, batch: 2, maxBatches: 1 };
    const signal = new AbortController().signal;
    // keepMs never goes below eight days; one batch of two per call, the rest on the next call.
    expect(await a.pruneRuns(signal, retention)).toBe(2);
    expect(await a.pruneRuns(signal, { ...retention, maxBatches: 100 })).toBe(2);
    expect(await a.pruneRuns(signal, retention)).toBe(0);
    expect(await minutesAgo('minute-job')).toEqual([(8 * DAY - MIN) / MIN, 60, 0]);
    expect(await minutesAgo('week-job')).toEqual([(6 * DAY) / MIN]);
    expect(await minutesAgo('gone-job')).toEqual([]);
    // The current slots' rows stayed, so their runs are not repeated.
    await a.tick();
    expect(runs).toBe(0);
  });
});

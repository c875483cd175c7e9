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

  it('keeps a week of runs: older slots of each job go, in bounded batches; the current slot stays claimed', async () => {
    const MIN = 60_000;
    const DAY = 86_400_000;
    const now = clock.now.getTime();
    const slot = (ms: number, every: number) => Math.floor(ms / every);
    const insert = (job: string, s: number, startedAt: Date) =>
      t.db.query(
        "INSERT INTO job_runs (job, slot, owner, status, started_at) VALUES ($1, $2, 'test', 'succeeded', $3)",
        [job, s, startedAt],
      );
    const minuteAgo = [10 * DAY, 8 * DAY, 7 * DAY + MIN, 7 * DAY - MIN, 3_600_000, 0];
    for (const ago of minuteAgo) await insert('minute-job', slot(now - ago, MIN), new Date(now - ago));
    for (const back of [3, 2, 1, 0]) await insert('week-job', slot(now, 7 * DAY) - back, clock.now);
    // A job this process does not register (renamed, removed): kept 30 days by start time.
    await insert('gone-job', 1, new Date(now - 31 * DAY));
    await insert('gone-job', 2, new Date(now - 29 * DAY));

    const [a] = schedulers();
    let runs = 0;
    a.register({ name: 'minute-job', everyMs: MIN, run: async () => void runs++ });
    a.register({ name: 'week-job', everyMs: 7 * DAY, run: async () => void runs++ });
    expect(() => a.register({ name: 'fortnight', everyMs: 14 * DAY, run: async () => {} })).toThrow(
      /seven days/,
    );

    const left = async (job: string) =>
      (
        await t.db.query<{ slot: string }>('SELECT slot FROM job_runs WHERE job = $1 ORDER BY slot', [job])
      ).map((r) => Number(r.slot));
    const retention = { keepMs: 7 * DAY, batch: 2, maxBatches: 1 };
    const signal = new AbortController().signal;
    // One batch of two per call: the backlog goes over several calls.
    expect(await a.pruneRuns(signal, retention)).toBe(2);
    expect(await a.pruneRuns(signal, { ...retention, maxBatches: 100 })).toBe(4);
    expect(await a.pruneRuns(signal, retention)).toBe(0);
    expect(await left('minute-job')).toEqual(
      [7 * DAY - MIN, 3_600_000, 0].map((ago) => slot(now - ago, MIN)),
    );
    expect(await left('week-job')).toEqual([1, 0].map((back) => slot(now, 7 * DAY) - back));
    expect(await left('gone-job')).toEqual([2]);
    // The current slots' rows stayed, so their runs are not repeated.
    await a.tick();
    expect(runs).toBe(0);
  });
});

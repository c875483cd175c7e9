import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { DB_KIND, type TestApp, type TestDb, testApp, testDb } from '../../test/helpers.ts';
import { type SlowStatement, SlowStatements, statementLabel } from './slow-statements.ts';

describe('SlowStatements', () => {
  /** A clock the test moves, and calls that take as long as it says. */
  const setup = (thresholdMs: number) => {
    let now = 0;
    const slow = new SlowStatements(() => now);
    const reports: SlowStatement[] = [];
    slow.watch(thresholdMs, (s) => reports.push(s));
    const call = (ms: number, sql = 'SELECT 1', name?: string) =>
      slow.time(sql, name, async () => {
        now += ms;
        return ms;
      });
    return { reports, call, later: (ms: number) => (now += ms) };
  };

  it('reports a slow call at once, by name or by its SQL on one line, and never a fast one', async () => {
    const { reports, call } = setup(100);
    expect(await call(99)).toBe(99);
    expect(reports).toEqual([]);
    await call(150, 'SELECT a\n       FROM b\n  WHERE c = $1');
    await call(300, 'SELECT irrelevant', 'insert_clicks');
    expect(reports).toEqual([
      { statement: 'SELECT a FROM b WHERE c = $1', ms: 150, times: 1 },
      { statement: 'insert_clicks', ms: 300, times: 1 },
    ]);
  });

  it('reports a statement at most once a minute, with how often and how slow it was meanwhile', async () => {
    const { reports, call, later } = setup(100);
    await call(120);
    await call(500);
    await call(130);
    expect(reports).toHaveLength(1);
    later(60_000);
    await call(110);
    expect(reports[1]).toEqual({ statement: 'SELECT 1', ms: 500, times: 3 });
    await call(200);
    expect(reports).toHaveLength(2);
  });

  it('reports held counts once their minute is over, slow again or not, and all of them on stop', async () => {
    let now = 0;
    const slow = new SlowStatements(() => now);
    const reports: SlowStatement[] = [];
    slow.watch(100, (s) => reports.push(s));
    const call = (ms: number, sql: string) =>
      slow.time(sql, undefined, async () => {
        now += ms;
      });
    await call(150, 'SELECT a');
    await call(400, 'SELECT a');
    await call(200, 'SELECT a');
    await call(120, 'SELECT b');
    now += 30_000;
    slow.flush();
    expect(reports).toHaveLength(2);
    now += 30_000;
    slow.flush();
    expect(reports.slice(2)).toEqual([{ statement: 'SELECT a', ms: 400, times: 2 }]);
    // Forgotten once quiet for a minute: the next slow call is reported at once.
    await call(130, 'SELECT b');
    await call(140, 'SELECT a');
    expect(reports.slice(3).map((r) => r.statement)).toEqual(['SELECT b', 'SELECT a']);
    await call(500, 'SELECT a');
    slow.stop();
    expect(reports.at(-1)).toEqual({ statement: 'SELECT a', ms: 500, times: 1 });
    slow.watch(0, () => {});
  });

  it('never lets a failing reporter change the answer', async () => {
    let now = 0;
    const slow = new SlowStatements(() => now);
    slow.watch(1, () => {
      throw new Error('log stream closed');
    });
    await expect(
      slow.time('SELECT 1', undefined, async () => {
        now += 5;
        return 'rows';
      }),
    ).resolves.toBe('rows');
    slow.watch(0, () => {});
  });

  it('times nothing at threshold 0', async () => {
    const { reports, call } = setup(0);
    await call(10_000);
    expect(reports).toEqual([]);
  });

  it('passes a failure through, and reports it when it was slow', async () => {
    let now = 0;
    const slow = new SlowStatements(() => now);
    const reports: SlowStatement[] = [];
    slow.watch(100, (s) => reports.push(s));
    const err = new Error('canceling statement due to statement timeout');
    await expect(
      slow.time('SELECT slow()', undefined, async () => {
        now += 250;
        throw err;
      }),
    ).rejects.toBe(err);
    expect(reports).toEqual([{ statement: 'SELECT slow()', ms: 250, times: 1 }]);
  });

  it('cuts long SQL short', () => {
    const label = statementLabel(`SELECT ${'x, '.repeat(100)}y`);
    expect(label).toHaveLength(121);
    expect(label.endsWith('…')).toBe(true);
  });
});

describe(`slow statements on the database (${DB_KIND})`, () => {
  let t: TestDb;
  beforeAll(async () => {
    t = await testDb();
  });
  afterAll(async () => {
    await t?.close();
  });

  it('reports a statement that waited on the database, plain or prepared, and not a quick one', async () => {
    const reports: SlowStatement[] = [];
    t.db.watchSlow(40, (s) => reports.push(s));
    await t.db.query('SELECT 1');
    await t.db.query('SELECT pg_sleep(0.06)');
    await t.db.query('SELECT pg_sleep($1::float8)', [0.06], 'sleep_a_while');
    await t.db.tx((q) => q.query('SELECT pg_sleep(0.06) AS in_tx'));
    expect(reports.map((r) => r.statement)).toEqual([
      'SELECT pg_sleep(0.06)',
      'sleep_a_while',
      'SELECT pg_sleep(0.06) AS in_tx',
    ]);
    for (const r of reports) expect(r.ms).toBeGreaterThanOrEqual(55);
    t.db.watchSlow(0, (s) => reports.push(s));
    await t.db.query('SELECT pg_sleep(0.06)');
    expect(reports).toHaveLength(3);
  });
});

describe(`slow statements in the server's log (${DB_KIND})`, () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await testApp({ slowStatementMs: 40 });
  });
  afterAll(async () => {
    await t?.close();
  });

  it('logs one warning naming the statement, with its time', async () => {
    const warn = vi.spyOn(t.app.log, 'warn');
    await t.db.query('SELECT pg_sleep(0.06) AS logged');
    // Only this statement's lines: a background job on a busy machine may be slow too.
    const lines = warn.mock.calls
      .filter((c) => c[1] === 'slow database statement')
      .map((c) => c[0] as unknown as { statement: string; ms: number; times: number; database: string })
      .filter((f) => f.statement === 'SELECT pg_sleep(0.06) AS logged');
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatchObject({ times: 1, database: 'primary' });
    expect(lines[0]?.ms).toBeGreaterThanOrEqual(55);
  });
});

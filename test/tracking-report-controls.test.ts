import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { BackfillList, BackfillOne, ReportTestAnswer } from '../src/modules/reporting/ops-schemas.ts';
import { DB_KIND, eventually, type TestApp, testApp } from './helpers.ts';
import { json, type LoopbackServer, loopbackServer } from './hostile-server.ts';
import { expectSchema } from './schema-check.ts';
import { type TrackingFixture, trackingFixture } from './tracking-fixture.ts';

const KEY = 'opk_live_report_controls_1';
const row = (tracker: string, clicks: number) => ({
  campaign: `Campaign ${tracker}`,
  tracker,
  clicks,
  registrations: 1,
  ftds: 0,
  deposits: '10.00',
  commission: '2.50',
});

/**
 * The operator report test (one live call, judged like the scheduled pull, nothing stored) and
 * backfills queued over the admin API, against operator servers on loopback.
 */
describe(`operator report test and backfills (${DB_KIND})`, () => {
  let t: TestApp;
  let fx: TrackingFixture;
  let op: LoopbackServer;
  let programId: number;

  const admin = async (
    method: 'GET' | 'POST' | 'PUT',
    url: string,
    payload?: unknown,
    program = programId,
  ) => {
    const res = await t.app.inject({
      method,
      url: `/api/admin/v1/tracking/programs/${program}${url}`,
      headers: { authorization: `Bearer ${fx.adminToken}` },
      ...(payload === undefined ? {} : { payload: payload as object }),
    });
    return { status: res.statusCode, body: res.json(), raw: res.body };
  };
  const stored = async () => {
    const [r] = await t.db.query<{ pulls: number; rows: number }>(
      `SELECT (SELECT count(*)::int FROM aggregate_pulls WHERE program_id = $1) AS pulls,
              (SELECT count(*)::int FROM operator_aggregates WHERE program_id = $1) AS rows`,
      [programId],
    );
    return r;
  };

  beforeAll(async () => {
    t = await testApp(
      { secretKeys: [{ version: 1, key: Buffer.alloc(32, 9) }], outboundTimeoutMs: 3000 },
      { outboundTestOnly: { allowHttp: true, allowAddresses: ['127.0.0.1'] } },
    );
    fx = await trackingFixture(t.app.services, t.db);
    programId = (
      await t.app.services.tracking.createProgram({
        slug: 'op',
        name: 'Operator',
        timezone: 'Pacific/Auckland',
      })
    ).id;
    op = await loopbackServer();
    // Auckland is 13 hours ahead: at 12:00 UTC on the 20th it is already the 21st there.
    t.clock.now = new Date('2026-11-20T12:00:00Z');
    const put = await admin('PUT', '/report', { url: `${op.origin}/partner`, key: KEY });
    expect(put.status).toBe(200);
  });
  afterAll(async () => {
    await t?.close();
    await op?.close();
  });
  beforeEach(() => {
    op.hits.length = 0;
  });

  describe('POST …/report/test', () => {
    it('pulls yesterday in the programme zone once and returns the first rows, storing nothing', async () => {
      op.handle((req, res) => {
        const day = new URL(req.url ?? '', 'http://x').searchParams.get('date');
        json(res, 200, {
          date: day,
          currency: 'EUR',
          rows: Array.from({ length: 12 }, (_, i) => row(`t${i}`, i)),
        });
      });
      const before = await stored();
      const res = await admin('POST', '/report/test');
      expect(res.status).toBe(200);
      expectSchema(ReportTestAnswer, res.body);
      expect(res.body.data).toMatchObject({
        day: '2026-11-20',
        outcome: 'ok',
        status: 200,
        message: '12 rows in 1 page',
        rowCount: 12,
        currency: 'EUR',
      });
      expect(res.body.data.rows).toHaveLength(10);
      expect(res.body.data.rows[0]).toEqual(row('t0', 0));
      expect(op.hits).toHaveLength(1);
      expect(op.hits[0]?.url).toBe('/partner/api/reports/affiliate-daily?date=2026-11-20');
      expect(op.hits[0]?.headers.authorization).toBe(`Bearer ${KEY}`);
      expect(await stored()).toEqual(before);
      expect(res.raw).not.toContain(KEY);
    });

    it('classifies a refusal, a malformed answer and a slow operator like the scheduled pull, one call each', async () => {
      const cases: [string, (res: import('node:http').ServerResponse) => void, number | null, RegExp][] = [
        [
          '401',
          (res) => json(res, 401, { code: 'unauthorized', message: 'bad key' }),
          401,
          /HTTP 401 unauthorized: bad key/,
        ],
        [
          'malformed',
          (res) => json(res, 200, { rows: 'many' }),
          200,
          /^malformed answer: rows: must be an array/,
        ],
        ['not json', (res) => json(res, 200, '<html>'), 200, /answer is not JSON/],
        [
          'slow',
          (res) => void setTimeout(() => json(res, 200, { rows: [] }), 8000),
          null,
          /no complete answer within 3000 ms/,
        ],
        ['5xx', (res) => json(res, 503, { code: 'down', message: 'maintenance' }), 503, /HTTP 503/],
      ];
      const before = await stored();
      for (const [name, handler, status, message] of cases) {
        op.hits.length = 0;
        op.handle((_req, res) => handler(res));
        const res = await admin('POST', '/report/test');
        expect(res.status, name).toBe(200);
        expectSchema(ReportTestAnswer, res.body);
        expect(res.body.data, name).toMatchObject({
          day: '2026-11-20',
          outcome: 'failed',
          status,
          rowCount: 0,
          rows: [],
        });
        expect(res.body.data.message, name).toMatch(message);
        expect(op.hits, name).toHaveLength(1);
      }
      expect(await stored()).toEqual(before);
    });

    it('answers 404 for an unknown programme', async () => {
      expect((await admin('POST', '/report/test', undefined, 99999)).status).toBe(404);
    });
  });

  describe('POST …/report/pull and GET …/report/backfills', () => {
    it('queues a backfill that the job runner pulls day by day', async () => {
      op.handle((req, res) => {
        const day = new URL(req.url ?? '', 'http://x').searchParams.get('date');
        json(res, 200, { date: day, currency: 'EUR', rows: [row('trk', 5)] });
      });
      const res = await admin('POST', '/report/pull', { from: '2026-11-01', to: '2026-11-03' });
      expect(res.status).toBe(202);
      expectSchema(BackfillOne, res.body);
      expect(res.body.data).toMatchObject({
        programId,
        from: '2026-11-01',
        to: '2026-11-03',
        daysTotal: 3,
        error: null,
        finishedAt: null,
      });
      const id = res.body.data.id;
      const done = await eventually(async () => {
        const list = await admin('GET', '/report/backfills');
        return list.body.data.find((b: { id: number }) => b.id === id)?.status === 'done';
      }, 20_000);
      expect(done).toBe(true);
      const list = await admin('GET', '/report/backfills');
      expectSchema(BackfillList, list.body);
      expect(list.body.data[0]).toMatchObject({
        id,
        status: 'done',
        daysDone: 3,
        daysFailed: 0,
        error: null,
      });
      expect(op.hits.map((h) => new URL(h.url, 'http://x').searchParams.get('date'))).toEqual([
        '2026-11-01',
        '2026-11-02',
        '2026-11-03',
      ]);
      const pulls = await t.db.query<{ trigger: string; status: string }>(
        "SELECT trigger, status FROM aggregate_pulls WHERE program_id = $1 AND day BETWEEN '2026-11-01' AND '2026-11-03'",
        [programId],
      );
      expect(pulls).toEqual(Array(3).fill({ trigger: 'backfill', status: 'ok' }));
      // The audit log has the request.
      const audit = await t.app.inject({
        method: 'GET',
        url: `/api/admin/v1/audit?target_type=tracking&target_id=${programId}`,
        headers: { authorization: `Bearer ${fx.adminToken}` },
      });
      expect(JSON.stringify(audit.json())).toContain('/report/pull');
    });

    it('ends failed with the reason when the operator refuses every day', async () => {
      op.handle((_req, res) => json(res, 401, { code: 'unauthorized', message: 'bad key' }));
      const res = await admin('POST', '/report/pull', { from: '2026-11-05', to: '2026-11-06' });
      expect(res.status).toBe(202);
      const id = res.body.data.id;
      const ended = await eventually(
        async () =>
          (await admin('GET', '/report/backfills')).body.data.find((b: { id: number }) => b.id === id)
            ?.status === 'failed',
        20_000,
      );
      expect(ended).toBe(true);
      const b = (await admin('GET', '/report/backfills')).body.data[0];
      expect(b).toMatchObject({ id, daysDone: 2, daysFailed: 2 });
      expect(b.error).toMatch(
        /^2 of 2 days failed; last 2026-11-06: GET \/api\/reports\/affiliate-daily: HTTP 401/,
      );
      expect(b.finishedAt).not.toBeNull();
    });

    it('resumes a backfill whose process went away after the days it had done', async () => {
      op.handle((req, res) => {
        const day = new URL(req.url ?? '', 'http://x').searchParams.get('date');
        json(res, 200, { date: day, rows: [row('trk', 1)] });
      });
      // Another process took it, pulled the first day and stopped answering: its lease ran out.
      const [orphan] = await t.db.query<{ id: number }>(
        `INSERT INTO aggregate_backfills (program_id, from_day, to_day, status, days_total, days_done, owner,
                                          lease_until, started_at)
         VALUES ($1, '2026-11-10', '2026-11-12', 'running', 3, 1, 'gone:1:x', $2, $2) RETURNING id::int AS id`,
        [programId, new Date(t.clock.now.getTime() - 60_000).toISOString()],
      );
      await t.app.services.backfills.kick();
      const b = (await admin('GET', '/report/backfills')).body.data.find(
        (x: { id: number }) => x.id === orphan?.id,
      );
      expect(b).toMatchObject({ status: 'done', daysDone: 3, daysFailed: 0 });
      expect(op.hits.map((h) => new URL(h.url, 'http://x').searchParams.get('date'))).toEqual([
        '2026-11-11',
        '2026-11-12',
      ]);
    });

    it('takes at most 3 open backfills per programme', async () => {
      // Held by a live process elsewhere (its lease has not run out).
      await t.db.query(
        `INSERT INTO aggregate_backfills (program_id, from_day, to_day, status, days_total, owner, lease_until)
         SELECT $1, '2026-10-01', '2026-10-02', 'running', 2, 'busy:1:x', $2 FROM generate_series(1, 3)`,
        [programId, new Date(t.clock.now.getTime() + 3_600_000).toISOString()],
      );
      const res = await admin('POST', '/report/pull', { from: '2026-11-01', to: '2026-11-01' });
      expect(res.status).toBe(409);
      expect(res.body.message).toMatch(/already has 3 backfills queued or running/);
      await t.db.query("UPDATE aggregate_backfills SET status = 'done' WHERE owner = 'busy:1:x'");
    });

    it('refuses bad ranges, programmes without an endpoint and unknown programmes', async () => {
      const cases: [unknown, number, string][] = [
        [{ from: '2026-11-05', to: '2026-11-01' }, 422, 'to'],
        [{ from: '2025-01-01', to: '2026-11-01' }, 422, 'to'],
        [{ from: '2026-02-30', to: '2026-03-01' }, 422, 'from'],
        [{ from: '2026-11-01' }, 422, 'to'],
        [{ from: '2026-11-01', to: '2026-11-01', extra: 1 }, 422, 'extra'],
      ];
      for (const [body, status, field] of cases) {
        const res = await admin('POST', '/report/pull', body);
        expect(res.status, JSON.stringify(body)).toBe(status);
        expect(JSON.stringify(res.body), JSON.stringify(body)).toContain(field);
      }
      const bare = await t.app.services.tracking.createProgram({ slug: 'bare', name: 'Bare' });
      const refused = await t.app.inject({
        method: 'POST',
        url: `/api/admin/v1/tracking/programs/${bare.id}/report/pull`,
        headers: { authorization: `Bearer ${fx.adminToken}` },
        payload: { from: '2026-11-01', to: '2026-11-01' },
      });
      expect(refused.statusCode).toBe(409);
      expect(refused.json().message).toMatch(/no report endpoint/);
      for (const url of ['/report/pull', '/report/backfills']) {
        const res = await t.app.inject({
          method: url.endsWith('pull') ? 'POST' : 'GET',
          url: `/api/admin/v1/tracking/programs/99999${url}`,
          headers: { authorization: `Bearer ${fx.adminToken}` },
          ...(url.endsWith('pull') ? { payload: { from: '2026-11-01', to: '2026-11-01' } } : {}),
        });
        expect(res.statusCode, url).toBe(404);
      }
    });
  });
});

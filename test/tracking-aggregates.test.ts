import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { loadConfig } from '../src/config.ts';
import { Scheduler } from '../src/lib/jobs.ts';
import { OutboundClient } from '../src/lib/outbound.ts';
import { sealerFromConfig } from '../src/lib/seal.ts';
import { registerAggregateJob } from '../src/modules/reporting/aggregate-job.ts';
import { AggregateRepository } from '../src/modules/reporting/aggregate-repository.ts';
import { OperatorAggregates } from '../src/modules/reporting/aggregates.ts';
import { DB_KIND, type TestApp, testApp } from './helpers.ts';
import { json, type LoopbackServer, loopbackServer } from './hostile-server.ts';
import { type TrackingFixture, trackingFixture } from './tracking-fixture.ts';

const KEY = 'opk_live_0123456789abcdef';
const SECRET_KEYS = [{ version: 1, key: Buffer.alloc(32, 7) }];
const BROWSER = { 'user-agent': 'Mozilla/5.0 (X11; Linux x86_64; rv:120.0) Gecko/20100101 Firefox/120.0' };
const row = (tracker: string, clicks: number, registrations: number, ftds: number) => ({
  campaign: `Campaign ${tracker}`,
  tracker,
  clicks,
  registrations,
  ftds,
  deposits: '100.50',
  commission: '25.25',
});

/**
 * Operator daily aggregates against fake operator servers on loopback, the scheduled window
 * pull across two schedulers, and reconciliation on a seeded scenario with hand-computed numbers.
 */
describe(`operator daily aggregates (${DB_KIND})`, () => {
  let t: TestApp;
  let fx: TrackingFixture;
  let op: LoopbackServer;
  let elsewhere: LoopbackServer;
  let programId: number;
  let postbackToken: string;
  let aggregates: OperatorAggregates;
  let http: OutboundClient;
  const waits: number[] = [];

  const admin = (method: 'GET' | 'PUT' | 'DELETE', url: string, payload?: unknown) =>
    t.app.inject({
      method,
      url: `/api/admin/v1/tracking/programs/${programId}${url}`,
      headers: { authorization: `Bearer ${fx.adminToken}` },
      ...(payload === undefined ? {} : { payload: payload as object }),
    });
  const stored = (day: string) => t.app.services.aggregates.aggregates(programId, day, day);

  beforeAll(async () => {
    t = await testApp({ secretKeys: SECRET_KEYS });
    fx = await trackingFixture(t.app.services, t.db);
    const created = await t.app.services.tracking.createProgram({
      slug: 'op',
      name: 'Operator',
      landingParams: 'btag={click_id}',
      timezone: 'Europe/Malta',
      trackerIds: fx.trackerIds,
    });
    programId = created.id;
    postbackToken = created.postbackToken;
    op = await loopbackServer();
    elsewhere = await loopbackServer();
    http = new OutboundClient({ testOnly: { allowHttp: true, allowAddresses: ['127.0.0.1'] } });
    // Retry-After waits go through a recorded no-op sleep (checked, not slept); backoff is p-retry's, 10–50 ms.
    aggregates = new OperatorAggregates(
      new AggregateRepository(t.db),
      sealerFromConfig(t.config),
      http,
      t.config,
      () => t.clock.now,
      {
        attempts: 4,
        budgetMs: 600_000,
        baseMs: 10,
        capMs: 50,
        sleep: async (ms) => {
          waits.push(ms);
        },
      },
    );
    await aggregates.setReport(programId, { url: `${op.origin}/partner`, key: KEY });
  });
  afterAll(async () => {
    await http?.close();
    await op?.close();
    await elsewhere?.close();
    await t?.close();
  });
  beforeEach(() => {
    waits.length = 0;
    op.hits.length = 0;
  });

  describe('report endpoint settings', () => {
    it('seals the key with the programme id bound in and never shows it', async () => {
      const [r] = await t.db.query<{ report_key_sealed: string }>(
        'SELECT report_key_sealed FROM affiliate_programs WHERE id = $1',
        [programId],
      );
      expect(r?.report_key_sealed).toMatch(/^gcm1:1:/);
      expect(r?.report_key_sealed).not.toContain(KEY);
      const got = await admin('GET', '/report');
      expect(got.json().data).toEqual({ programId, url: `${op.origin}/partner`, keySet: true, mapping: {} });
      expect(got.body).not.toContain(KEY);
      // The sealed value opens only for its own programme.
      const other = await t.app.services.tracking.createProgram({ slug: 'other', name: 'Other' });
      await t.db.query(
        'UPDATE affiliate_programs SET report_url = $2, report_key_sealed = $3 WHERE id = $1',
        [other.id, `${op.origin}/partner`, r?.report_key_sealed],
      );
      const stolen = await aggregates.pullDay(other.id, '2026-11-01', 'backfill');
      expect(stolen.status).toBe('failed');
      expect(stolen.reason).toMatch(/^the report key cannot be opened/);
      expect(op.hits).toHaveLength(0);
    });

    it('refuses unsafe or malformed settings with the field named', async () => {
      const cases: [unknown, string][] = [
        [{ url: 'http://operator.example' }, 'url'],
        [{ url: 'https://127.0.0.1/x' }, 'url'],
        [{ url: 'https://10.1.2.3' }, 'url'],
        [{ url: 'https://user:pw@operator.example' }, 'url'],
        [{ url: 'not a url' }, 'url'],
        [{ url: 'https://operator.example', key: 'short' }, 'key'],
        [{ url: 'https://operator.example', mapping: { nope: 'x' } }, 'mapping.nope'],
        [{ url: 'https://operator.example', mapping: { clicks: 'a..b' } }, 'mapping.clicks'],
        [{ url: 'https://operator.example', extra: 1 }, 'extra'],
      ];
      for (const [body, field] of cases) {
        const res = await admin('PUT', '/report', body);
        expect(res.statusCode, JSON.stringify(body)).toBe(422);
        expect(JSON.stringify(res.json()), JSON.stringify(body)).toContain(field);
      }
      expect((await admin('GET', '/report')).json().data.url).toBe(`${op.origin}/partner`);
    });

    it('removes the endpoint and key on DELETE; a pull then fails saying so', async () => {
      const removed = await admin('DELETE', '/report');
      expect(removed.json().data).toEqual({ programId, url: null, keySet: false, mapping: {} });
      const r = await aggregates.pullDay(programId, '2026-11-01', 'backfill');
      expect(r).toMatchObject({ status: 'failed', reason: 'the programme has no report endpoint', calls: 0 });
      await aggregates.setReport(programId, { url: `${op.origin}/partner`, key: KEY });
    });
  });

  describe('pulls against fake operators', () => {
    it('stores the rows of a normal answer, sending the key only as a bearer header', async () => {
      op.handle((_req, res) =>
        json(res, 200, { date: '2026-11-10', currency: 'EUR', rows: [row('trk-a', 40, 4, 1)] }),
      );
      const r = await aggregates.pullDay(programId, '2026-11-10', 'backfill');
      expect(r).toMatchObject({ status: 'ok', calls: 1, pages: 1, rows: 1, reason: null });
      expect(op.hits[0]?.url).toBe('/partner/api/reports/affiliate-daily?date=2026-11-10');
      expect(op.hits[0]?.headers.authorization).toBe(`Bearer ${KEY}`);
      expect(await stored('2026-11-10')).toEqual([
        {
          day: '2026-11-10',
          tracker: 'trk-a',
          campaign: 'Campaign trk-a',
          clicks: 40,
          registrations: 4,
          ftds: 1,
          deposits: '100.5000',
          commission: '25.2500',
          currency: 'EUR',
          pullId: r.id,
        },
      ]);
    });

    it('follows next_cursor through every page and sums rows split by the operator', async () => {
      op.handle((req, res) => {
        const cursor = new URL(req.url ?? '', 'http://x').searchParams.get('cursor');
        if (cursor === null)
          json(res, 200, { date: '2026-11-11', rows: [row('trk-a', 1, 0, 0)], next_cursor: 'p2' });
        else if (cursor === 'p2') json(res, 200, { rows: [row('trk-b', 2, 1, 0)], next_cursor: 'p3' });
        else json(res, 200, { rows: [row('trk-a', 3, 1, 1)], next_cursor: null });
      });
      const r = await aggregates.pullDay(programId, '2026-11-11', 'backfill');
      expect(r).toMatchObject({ status: 'ok', calls: 3, pages: 3 });
      expect(op.hits.map((h) => new URL(h.url, 'http://x').searchParams.get('cursor'))).toEqual([
        null,
        'p2',
        'p3',
      ]);
      const rows = await stored('2026-11-11');
      expect(rows.map((x) => [x.tracker, x.clicks, x.registrations, x.ftds, x.deposits])).toEqual([
        ['trk-a', 4, 1, 1, '201.0000'],
        ['trk-b', 2, 1, 0, '100.5000'],
      ]);
    });

    it('waits as Retry-After asks on 429, then succeeds', async () => {
      let n = 0;
      op.handle((_req, res) =>
        n++ === 0
          ? json(res, 429, { code: 'rate_limited', message: 'slow down' }, { 'retry-after': '7' })
          : json(res, 200, { rows: [row('trk-a', 5, 0, 0)] }),
      );
      const r = await aggregates.pullDay(programId, '2026-11-12', 'backfill');
      expect(r).toMatchObject({ status: 'ok', calls: 2 });
      expect(waits).toEqual([7000]);
    });

    it('retries 5xx with backoff until the operator answers', async () => {
      let n = 0;
      op.handle((_req, res) => {
        n++;
        if (n === 1) json(res, 503, { code: 'unavailable', message: 'maintenance' });
        else if (n === 2) json(res, 500, 'oops');
        else json(res, 200, { rows: [] });
      });
      const r = await aggregates.pullDay(programId, '2026-11-13', 'backfill');
      expect(r).toMatchObject({ status: 'ok', calls: 3, rows: 0 });
      // No Retry-After: the waits were the backoff's.
      expect(waits).toEqual([]);
    });

    it('records a malformed answer as a failed pull with a clear reason, keeping the last good rows', async () => {
      const before = await stored('2026-11-10');
      const bodies: [string, RegExp][] = [
        ['<html>not json</html>', /answer is not JSON/],
        [JSON.stringify({ rows: 'many' }), /^malformed answer: rows: must be an array/],
        [JSON.stringify({ date: '2026-11-09', rows: [] }), /^malformed answer: date: is "2026-11-09"/],
        [
          JSON.stringify({ rows: [{ ...row('x', 1, 0, 0), clicks: -3 }] }),
          /^malformed answer: rows\[0\]\.clicks/,
        ],
        // A cursor that never changes is refused rather than followed forever.
        [JSON.stringify({ rows: [], next_cursor: 'same' }), /next_cursor repeats the cursor just sent/],
      ];
      for (const [body, reason] of bodies) {
        op.handle((_req, res) => {
          res.writeHead(200, { 'content-type': 'application/json' });
          res.end(body);
        });
        const r = await aggregates.pullDay(programId, '2026-11-10', 'backfill');
        expect(r.status, body).toBe('failed');
        expect(r.reason, body).toMatch(reason);
      }
      expect(await stored('2026-11-10')).toEqual(before);
      const pulls = await aggregates.pulls(programId, '2026-11-10', '2026-11-10');
      expect(pulls[0]).toMatchObject({ status: 'failed', trigger: 'backfill' });
      expect(JSON.stringify(pulls)).not.toContain(KEY);
    });

    it('refuses to follow a redirect', async () => {
      op.handle((_req, res) => {
        res.writeHead(302, { location: `${elsewhere.origin}/steal` });
        res.end();
      });
      const r = await aggregates.pullDay(programId, '2026-11-14', 'backfill');
      expect(r.status).toBe('failed');
      expect(r.reason).toMatch(/302 redirect \(not followed\)/);
      expect(elsewhere.hits).toHaveLength(0);
    });

    it('does not retry a refused key and keeps it out of the reason', async () => {
      op.handle((_req, res) => json(res, 401, { code: 'unauthorized', message: `bad key ${KEY}` }));
      const r = await aggregates.pullDay(programId, '2026-11-15', 'backfill');
      expect(r).toMatchObject({ status: 'failed', calls: 1 });
      expect(r.reason).toMatch(/HTTP 401/);
      expect(r.reason).not.toContain(KEY);
    });

    it('reads another shape through the programme mapping', async () => {
      await aggregates.setReport(programId, {
        url: `${op.origin}/partner`,
        mapping: {
          rows: 'data.items',
          date: 'data.day',
          tracker: 'btag',
          clicks: 'stats.hits',
          ftds: 'stats.fd',
        },
      });
      op.handle((_req, res) =>
        json(res, 200, {
          data: { day: '2026-11-16', items: [{ btag: 'trk-z', stats: { hits: '12', fd: 2 } }] },
        }),
      );
      const r = await aggregates.pullDay(programId, '2026-11-16', 'backfill');
      expect(r.status, r.reason ?? '').toBe('ok');
      expect((await stored('2026-11-16'))[0]).toMatchObject({
        tracker: 'trk-z',
        clicks: 12,
        ftds: 2,
        registrations: 0,
      });
      // Mapping changes keep the sealed key.
      expect((await aggregates.report(programId)).keySet).toBe(true);
      await aggregates.setReport(programId, { url: `${op.origin}/partner` });
    });

    it('backfills a range with progress, one pull per day', async () => {
      op.handle((req, res) => {
        const day = new URL(req.url ?? '', 'http://x').searchParams.get('date');
        json(res, 200, { date: day, rows: [row('trk-a', 1, 0, 0)] });
      });
      const progress: string[] = [];
      const results = await aggregates.pullRange(programId, '2026-10-30', '2026-11-02', (done, total, r) =>
        progress.push(`${done}/${total} ${r.day} ${r.status}`),
      );
      expect(progress).toEqual([
        '1/4 2026-10-30 ok',
        '2/4 2026-10-31 ok',
        '3/4 2026-11-01 ok',
        '4/4 2026-11-02 ok',
      ]);
      expect(results.every((r) => r.status === 'ok')).toBe(true);
      await expect(aggregates.pullRange(programId, '2026-11-02', '2026-11-01')).rejects.toThrow(/to/);
    });
  });

  describe('scheduled trailing window', () => {
    it('pulls the window once per slot across two schedulers', async () => {
      op.handle((req, res) => {
        const day = new URL(req.url ?? '', 'http://x').searchParams.get('date');
        json(res, 200, { date: day, rows: [] });
      });
      // 23:30 UTC on 20 November is already 21 November in Malta: the window ends on the 20th.
      t.clock.now = new Date('2026-11-20T23:30:00Z');
      const config = loadConfig({}, { aggregatePullMinutes: 60, aggregateWindowDays: 3 });
      const windowed = new OperatorAggregates(
        new AggregateRepository(t.db),
        sealerFromConfig(t.config),
        http,
        config,
        () => t.clock.now,
      );
      const a = new Scheduler(t.db, () => t.clock.now);
      const b = new Scheduler(t.db, () => t.clock.now);
      registerAggregateJob(a, windowed, config);
      registerAggregateJob(b, windowed, config);
      await Promise.all([a.tick(), b.tick()]);
      await Promise.all([a.stop(), b.stop()]);
      expect(op.hits.map((h) => new URL(h.url, 'http://x').searchParams.get('date'))).toEqual([
        '2026-11-18',
        '2026-11-19',
        '2026-11-20',
      ]);
      const pulls = await aggregates.pulls(programId, '2026-11-18', '2026-11-20');
      expect(pulls.filter((p) => p.trigger === 'schedule')).toHaveLength(3);
    });

    it('throws when stopped, so the scheduler hands the slot to another process', async () => {
      const stop = new AbortController();
      stop.abort();
      await expect(aggregates.pullWindow(stop.signal)).rejects.toThrow();
    });
  });

  describe('reconciliation', () => {
    it('matches hand-computed differences on a seeded scenario', async () => {
      const rec = await t.app.services.tracking.createProgram({
        slug: 'rec',
        name: 'Reconciled',
        landingParams: 'btag={click_id}',
        timezone: 'Europe/Malta',
        trackerIds: fx.trackerIds,
      });
      await aggregates.setReport(rec.id, { url: `${op.origin}/rec` });
      const go = () => t.app.inject({ url: `/go/${fx.slugs[0]}`, headers: BROWSER });
      // 23:30 UTC on the 19th is 00:30 on the 20th in Malta: it counts for the 20th.
      t.clock.now = new Date('2026-11-19T23:30:00Z');
      const first = await go();
      t.clock.now = new Date('2026-11-20T10:00:00Z');
      for (let i = 0; i < 10; i++) await go();
      await t.app.inject({ url: `/go/${fx.slugs[0]}`, headers: { 'user-agent': 'Googlebot/2.1' } });
      const clickId = new URL(first.headers.location as string).searchParams.get('btag');
      const pb = (q: string) =>
        t.app.inject(`/api/postback/rec/${rec.postbackToken}?click_id=${clickId}&${q}`);
      for (const q of [
        'transaction_id=r1&event=registration',
        'transaction_id=r2&event=registration',
        'transaction_id=r3&event=registration',
        'transaction_id=f1&event=ftd',
        'transaction_id=f1&event=ftd',
        'transaction_id=c1&event=cpa&amount=30.0001&currency=EUR',
        'transaction_id=c2&event=revshare&amount=20.4999',
        'transaction_id=c3&event=cpa&amount=99&currency=USD',
        'transaction_id=d1&event=deposit&amount=500&currency=EUR',
      ])
        expect((await pb(q)).statusCode).toBe(200);
      // Our 20th: 11 counted clicks (the bot is not counted), 3 registrations, 1 FTD (the repeat is a
      // duplicate), and 30.0001 + 20.4999 EUR of commission (the USD one and the deposit are not in it).
      op.handle((req, res) => {
        const day = new URL(req.url ?? '', 'http://x').searchParams.get('date');
        if (day === '2026-11-20') json(res, 200, { rows: [row('trk-a', 8, 3, 1), row('trk-b', 2, 0, 1)] });
        else json(res, 200, { rows: [] });
      });
      expect((await aggregates.pullDay(rec.id, '2026-11-20', 'backfill')).status).toBe('ok');
      expect((await aggregates.pullDay(rec.id, '2026-11-21', 'backfill')).status).toBe('ok');
      const res = await t.app.inject({
        url: `/api/admin/v1/tracking/programs/${rec.id}/reconciliation?from=2026-11-20&to=2026-11-22`,
        headers: { authorization: `Bearer ${fx.adminToken}` },
      });
      expect(res.statusCode, res.body).toBe(200);
      const { data } = res.json();
      expect(data).toMatchObject({ timezone: 'Europe/Malta', thresholdPercent: 5 });
      expect(data.days[0]).toMatchObject({
        day: '2026-11-20',
        pulled: true,
        lastPull: { status: 'ok', reason: null },
        clicks: { ours: 11, operator: 10, difference: 1, differencePercent: '10.00', flagged: true },
        registrations: { ours: 3, operator: 3, difference: 0, differencePercent: '0.00', flagged: false },
        ftds: { ours: 1, operator: 2, difference: -1, differencePercent: '-50.00', flagged: true },
        commission: {
          currency: 'EUR',
          ours: '50.5000',
          operator: '50.5000',
          difference: '0.0000',
          differencePercent: '0.00',
          flagged: false,
        },
        flagged: true,
      });
      expect(data.days[1]).toMatchObject({
        day: '2026-11-21',
        pulled: true,
        clicks: { ours: 0, operator: 0, difference: 0, differencePercent: '0.00', flagged: false },
        commission: { ours: '0.0000', operator: '0.0000', difference: '0.0000', flagged: false },
        flagged: false,
      });
      expect(data.days[2]).toMatchObject({
        day: '2026-11-22',
        pulled: false,
        lastPull: null,
        clicks: { ours: 0, operator: null, difference: null, flagged: false },
        commission: { currency: 'EUR', ours: '0.0000', operator: null, difference: null, flagged: false },
      });
      const loose = await t.app.inject({
        url: `/api/admin/v1/tracking/programs/${rec.id}/reconciliation?from=2026-11-20&to=2026-11-20&threshold=15`,
        headers: { authorization: `Bearer ${fx.adminToken}` },
      });
      expect(loose.json().data.days[0]).toMatchObject({
        clicks: { flagged: false },
        ftds: { flagged: true },
      });
      for (const q of [
        'from=2026-11-20',
        'from=2026-11-22&to=2026-11-20',
        'from=2026-11-20&to=2026-11-20&threshold=-1',
      ]) {
        const bad = await t.app.inject({
          url: `/api/admin/v1/tracking/programs/${rec.id}/reconciliation?${q}`,
          headers: { authorization: `Bearer ${fx.adminToken}` },
        });
        expect(bad.statusCode, q).toBe(422);
      }
      const unknown = await t.app.inject({
        url: '/api/admin/v1/tracking/programs/999999/reconciliation?from=2026-11-20&to=2026-11-20',
        headers: { authorization: `Bearer ${fx.adminToken}` },
      });
      expect(unknown.statusCode).toBe(404);
      expect(postbackToken).toMatch(/^pdp_/);
    });
  });
});

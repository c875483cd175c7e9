import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FAILING_PULLS } from '../src/modules/adserver/reports.ts';
import {
  admin,
  approved,
  bookable,
  fakeAdServer,
  type ReferenceServer,
  startServers,
  stopServers,
} from './adserver-fixture.ts';
import { eventually, type TestApp } from './helpers.ts';
import { json, type LoopbackServer } from './hostile-server.ts';
import { trackingFixture } from './tracking-fixture.ts';

/** inject()'s default user agent is recognised as a bot, so counted hits send a browser's. */
const BROWSER = {
  'user-agent': 'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 Chrome/120.0 Safari/537.36',
};

let t: TestApp & { admin: string };
let ref: ReferenceServer;
let hostile: LoopbackServer;
const refClock = { now: new Date('2026-11-23T10:00:00Z') };

beforeAll(async () => {
  ({ t, ref, hostile } = await startServers({ now: () => refClock.now }));
  t.clock.now = new Date('2026-11-23T10:00:00Z');
});
afterAll(() => stopServers({ t, ref, hostile }));

describe('end to end against the reference ad server', () => {
  it('connect → verify → inventory → forecast → push → activate there → report pull → matched delivery beside Podium counts', async () => {
    const tracking = await trackingFixture(t.app.services, t.db);
    const toplistSlug = tracking.slugs[0]!;

    // connect (verify probe inside) and inventory
    const fx = await bookable(t, ref, 'e2e-pub');
    const conn = (await admin(t, 'POST', `/adserver/connections/${fx.conn}/verify`)).body.data;
    expect(conn).toMatchObject({ status: 'connected', timezone: 'Europe/Malta', currency: 'EUR' });

    // forecast
    const forecast = (
      await admin(t, 'POST', `/adserver/connections/${fx.conn}/forecast`, {
        placement_id: fx.leaderboard,
        start_date: '2026-12-01',
        end_date: '2026-12-31',
      })
    ).body.data;
    expect(forecast.forecast.available_impressions).toBeGreaterThan(200_000);

    // a placement on the tracked site, mapped to the leaderboard slot
    const placement = (
      await admin(t, 'POST', '/adserver/placements', {
        publisher: 'e2e-pub',
        site_id: tracking.siteId,
        name: 'Site leaderboard',
        sizes: ['728x90'],
      })
    ).body.data;
    expect(placement.site_id).toBe(tracking.siteId);
    await admin(t, 'PUT', `/adserver/placements/${placement.id}/slots`, {
      connection_id: fx.conn,
      inventory_id: 'slot-home-leaderboard',
    });

    // push a booking: its line gets its own code and a tag generated from the approved creative
    const created = await admin(t, 'POST', '/adserver/bookings', {
      connection_id: fx.conn,
      currency: 'EUR',
      advertiser: { name: 'Lucky Spin Ltd' },
      campaign: { name: 'December', external_ref: 'cmp-e2e' },
      lines: [
        {
          placement_id: placement.id,
          month: '2026-12',
          goal_impressions: 200_000,
          sizes: ['728x90'],
          creatives: [approved()],
        },
      ],
    });
    expect(created.status, created.raw).toBe(201);
    const code: string = created.body.data.lines[0].click_codes[0];
    expect(code).not.toBe(toplistSlug);
    const booking = (await admin(t, 'POST', `/adserver/bookings/${created.body.data.id}/push`)).body.data;
    const lineItemId = booking.lines[0].line_item_id as string;
    const [pushedLine] = await ref.store.query<{ creatives: { tag: string }[] }>(
      'SELECT creatives FROM line_items WHERE id = $1',
      [lineItemId],
    );
    expect(pushedLine!.creatives[0]!.tag).toBe(created.body.data.lines[0].creatives[0].tag);
    expect(pushedLine!.creatives[0]!.tag).toContain(`/ad/${code}"`);

    // Podium's own tracking sees impressions and clicks of the line's code in December; a toplist
    // click on the same day is not the line's
    t.clock.now = new Date('2026-12-05T12:00:00Z');
    for (let i = 0; i < 6; i++) await t.app.inject({ method: 'GET', url: `/imp/${code}`, headers: BROWSER });
    for (let i = 0; i < 2; i++) {
      const click = await t.app.inject({ method: 'GET', url: `/go/${code}`, headers: BROWSER });
      expect(click.statusCode).toBe(302);
      expect(click.headers.location).toBe(approved().landing_url);
    }
    await t.app.inject({ method: 'GET', url: `/go/${toplistSlug}`, headers: BROWSER });
    expect(
      await eventually(async () => {
        const rows = await t.app.services.tracking.countsByCode(
          [code],
          '2026-12-01',
          '2026-12-31',
          'Europe/Malta',
        );
        return rows.length === 1 && rows[0]!.impressions === 6 && rows[0]!.clicks === 2;
      }),
    ).toBe(true);
    const [bannerHit] = await t.db.query<{ site_id: number; tracker_id: number | null; n: number }>(
      `SELECT c.site_id, c.tracker_id, count(*)::int AS n FROM clicks c JOIN banner_links b ON b.id = c.link_id
       WHERE b.code = $1 GROUP BY 1, 2`,
      [code],
    );
    expect(bannerHit).toEqual({ site_id: tracking.siteId, tracker_id: null, n: 8 });

    // ad-ops takes the draft live in the ad server's console; January comes
    expect(await ref.activate(booking.order_id)).toBe(true);
    refClock.now = t.clock.now = new Date('2027-01-02T12:00:00Z');

    const pull = (await admin(t, 'POST', `/adserver/connections/${fx.conn}/reports/pull`)).body.data;
    expect(pull).toMatchObject({ state: 'ok', date_from: '2026-12-01', date_to: '2026-12-31', unmatched: 0 });
    expect(pull.matched).toBe(31);
    const after = (await admin(t, 'GET', `/adserver/connections/${fx.conn}`)).body.data;
    expect(after.capabilities).toEqual({
      inventory_read: 'confirmed',
      forecast: 'confirmed',
      reporting: 'confirmed',
      draft_booking: 'confirmed',
    });

    const delivery = (await admin(t, 'GET', `/adserver/bookings/${booking.id}/delivery`)).body.data;
    const line = delivery.lines[0];
    expect(line.line_item_id).toBe(lineItemId);
    expect(line.days).toHaveLength(31);
    // The billing reference equals the ad server's own figures.
    const [own] = await ref.app
      .inject({
        method: 'POST',
        url: '/api/v1/reports',
        headers: { authorization: `Bearer ${ref.apiKey}` },
        payload: {
          line_item_ids: [lineItemId],
          date_range: { start_date: '2026-12-01', end_date: '2026-12-31' },
        },
      })
      .then((r) => r.json().rows);
    expect(line.totals.impressions).toBe(own.impressions);
    expect(line.totals.clicks).toBe(own.clicks);
    expect(line.totals.impressions).toBeGreaterThan(100_000);
    const dec5 = line.days.find((d: { date: string }) => d.date === '2026-12-05');
    expect(dec5).toMatchObject({ podium_impressions: 6, podium_clicks: 2 });
    expect(line.totals).toMatchObject({ podium_impressions: 6, podium_clicks: 2 });
    expect(line.totals.impression_discrepancy_pct).toBe(
      (((line.totals.impressions - 6) / line.totals.impressions) * 100).toFixed(2),
    );

    // a second pull only asks for the trailing days, and the scheduler runs the job once per slot
    const again = (await admin(t, 'POST', `/adserver/connections/${fx.conn}/reports/pull`)).body.data;
    expect(again.date_from).toBe('2026-12-30');
    await t.app.services.scheduler.tick();
    await t.app.services.scheduler.tick();
    const runs = await t.db.query<{ status: string }>(
      `SELECT status FROM job_runs WHERE job = 'adserver-reports'`,
    );
    expect(runs).toEqual([{ status: 'succeeded' }]);
    expect((await admin(t, 'GET', `/adserver/connections/${fx.conn}/reports/pulls`)).body.data).toHaveLength(
      3,
    );
  });
});

describe('report pulls against a hostile ad server', () => {
  /** A connection to the hostile server with one pushed line over December 2026. */
  async function pushedLine(
    publisher: string,
    reports: (body: Record<string, unknown>, n: number) => [number, unknown, Record<string, string>?],
  ) {
    let n = 0;
    hostile.handle(
      fakeAdServer({ timezone: 'UTC', forecast: () => false }, (req, res, raw) => {
        const url = req.url ?? '';
        if (url.includes('/orders')) {
          const body = JSON.parse(raw);
          return json(res, 201, {
            order_id: 'ord-1',
            status: 'DRAFT',
            line_items: body.line_items.map((l: { external_ref: string }) => ({
              external_ref: l.external_ref,
              line_item_id: `li-${publisher}`,
              status: 'DRAFT',
            })),
          });
        }
        const [status, out, headers] = reports(JSON.parse(raw), n++);
        json(res, status, out, headers);
      }),
    );
    t.clock.now = new Date('2026-11-23T10:00:00Z');
    const fx = await bookable(t, { ...ref, url: `${hostile.origin}/v1` }, publisher);
    const b = await admin(t, 'POST', '/adserver/bookings', {
      connection_id: fx.conn,
      currency: 'EUR',
      advertiser: { name: 'A' },
      campaign: { name: 'C', external_ref: `cmp-${publisher}` },
      lines: [{ placement_id: fx.leaderboard, month: '2026-12', goal_impressions: 1000, sizes: ['728x90'] }],
    });
    expect((await admin(t, 'POST', `/adserver/bookings/${b.body.data.id}/push`)).status).toBe(200);
    t.clock.now = new Date('2026-12-03T12:00:00Z');
    const mine = () =>
      hostile.hits.filter((h) => h.url.includes('/reports') && h.body.includes(`"li-${publisher}"`));
    return { conn: fx.conn, calls: () => mine().length };
  }

  it('walks report pages by cursor; rows of unknown line ids are kept aside as unmatched', async () => {
    const { conn } = await pushedLine('pages', (body, _n) =>
      body.cursor === 'p2'
        ? [
            200,
            {
              rows: [{ line_item_id: 'li-someone-else', date: '2026-12-02', impressions: 9, clicks: 1 }],
              next_cursor: null,
            },
          ]
        : [
            200,
            {
              rows: [{ line_item_id: 'li-pages', date: '2026-12-01', impressions: 100, clicks: 3 }],
              next_cursor: 'p2',
            },
          ],
    );
    const pull = (await admin(t, 'POST', `/adserver/connections/${conn}/reports/pull`)).body.data;
    expect(pull).toMatchObject({
      state: 'ok',
      matched: 1,
      unmatched: 1,
      calls: 2,
      date_from: '2026-12-01',
      date_to: '2026-12-03',
    });
    expect((await admin(t, 'GET', `/adserver/connections/${conn}/unmatched-delivery`)).body.data).toEqual([
      { line_item_id: 'li-someone-else', date: '2026-12-02', impressions: 9, clicks: 1 },
    ]);
    const sent = hostile.hits.filter((h) => h.url.includes('/reports')).map((h) => JSON.parse(h.body));
    expect(sent[0]).toEqual({
      line_item_ids: ['li-pages'],
      date_range: { start_date: '2026-12-01', end_date: '2026-12-03' },
      granularity: 'daily',
      limit: 200,
    });
  });

  it('a cursor loop and rows breaking the contract stop the pull as invalid_response', async () => {
    const loop = await pushedLine('loop', () => [200, { rows: [], next_cursor: 'same' }]);
    const r = (await admin(t, 'POST', `/adserver/connections/${loop.conn}/reports/pull`)).body.data;
    expect(r).toMatchObject({ state: 'invalid_response', calls: 2 });
    const bad = await pushedLine('badrow', () => [
      200,
      { rows: [{ line_item_id: 'li-badrow', date: '2026-12-01', impressions: 1.5, clicks: 0 }] },
    ]);
    expect((await admin(t, 'POST', `/adserver/connections/${bad.conn}/reports/pull`)).body.data.state).toBe(
      'invalid_response',
    );
  });

  it('429 waits per Retry-After and retries; garbage Retry-After falls back to backoff; 5xx persistently → unreachable', async () => {
    const limited = await pushedLine('limited', (_b, n) =>
      n === 0
        ? [429, { code: 'rate_limited', message: 'slow down' }, { 'retry-after': '1' }]
        : [200, { rows: [] }],
    );
    const ok = (await admin(t, 'POST', `/adserver/connections/${limited.conn}/reports/pull`)).body.data;
    expect(ok).toMatchObject({ state: 'ok', calls: 2 });
    const garbage = await pushedLine('garbage', (_b, n) =>
      n === 0
        ? [429, { code: 'rate_limited', message: 'x' }, { 'retry-after': 'soon-ish' }]
        : [200, { rows: [] }],
    );
    expect(
      (await admin(t, 'POST', `/adserver/connections/${garbage.conn}/reports/pull`)).body.data,
    ).toMatchObject({ state: 'ok', calls: 2 });
    const down = await pushedLine('down', () => [503, { code: 'server_error', message: 'x' }]);
    const failed = (await admin(t, 'POST', `/adserver/connections/${down.conn}/reports/pull`)).body.data;
    expect(failed.state).toBe('unreachable');
    expect(failed.calls).toBe(5);
  }, 120_000);

  it('a Retry-After past the job budget is not slept on: the pull stops and says until when', async () => {
    const far = await pushedLine('far', () => [
      429,
      { code: 'rate_limited', message: 'x' },
      { 'retry-after': '3600' },
    ]);
    const conn = await t.app.services.adserver.connections.get(far.conn);
    const started = Date.now();
    const r = await t.app.services.adserver.reports.pull(conn, Date.now() + 2000);
    expect(Date.now() - started).toBeLessThan(30_000);
    expect(r).toMatchObject({ state: 'unreachable', calls: 1 });
    expect(r.error).toMatch(/rate limited until/);
  });

  it('pulls that keep failing put the connection in error as unreachable until the operator re-verifies', async () => {
    const down = await pushedLine('flaky', () => [500, { code: 'server_error', message: 'db down' }]);
    const conn = await t.app.services.adserver.connections.get(down.conn);
    const status = async () => (await admin(t, 'GET', `/adserver/connections/${down.conn}`)).body.data;
    // A deadline already near: each pull makes one call and records the failure.
    for (let i = 1; i < FAILING_PULLS; i++) {
      expect((await t.app.services.adserver.reports.pull(conn, Date.now() + 50)).state).toBe('unreachable');
      expect(await status()).toMatchObject({ status: 'connected', state: 'connected' });
    }
    await t.app.services.adserver.reports.pull(conn, Date.now() + 50);
    const shown = await status();
    expect(shown).toMatchObject({ status: 'error', state: 'unreachable' });
    expect(shown.last_error).toMatch(
      new RegExp(`report pulls failed ${FAILING_PULLS} times in a row: .*500`),
    );
    const before = down.calls();
    await t.app.services.adserver.reports.pullAll(new AbortController().signal, 5000);
    expect(down.calls()).toBe(before);
    expect((await admin(t, 'POST', `/adserver/connections/${down.conn}/verify`)).body.data).toMatchObject({
      status: 'connected',
      state: 'connected',
    });
  });

  it('401 on a pull puts the connection in error and the job skips it afterwards', async () => {
    const denied = await pushedLine('denied', () => [401, { code: 'unauthorized', message: 'revoked' }]);
    expect(
      (await admin(t, 'POST', `/adserver/connections/${denied.conn}/reports/pull`)).body.data.state,
    ).toBe('auth_error');
    expect((await admin(t, 'GET', `/adserver/connections/${denied.conn}`)).body.data).toMatchObject({
      status: 'error',
      state: 'auth_error',
    });
    const before = denied.calls();
    await t.app.services.adserver.reports.pullAll(new AbortController().signal, 5000);
    expect(denied.calls()).toBe(before);
  });
});

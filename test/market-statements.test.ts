import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  admin,
  bookable,
  type ReferenceServer,
  type ReportRow,
  referenceServer,
  reportingAdServer,
} from './adserver-fixture.ts';
import { type TestApp, testApp } from './helpers.ts';
import { type LoopbackServer, loopbackServer } from './hostile-server.ts';

let t: TestApp & { admin: string };
let ads: LoopbackServer;
let ref: ReferenceServer;
/** What the fake ad server's `POST /reports` answers from (filtered by the request's ids and dates). */
let report: ReportRow[] = [];

const days = (from: number, to: number, month = '2026-12') =>
  Array.from({ length: to - from + 1 }, (_, i) => `${month}-${String(from + i).padStart(2, '0')}`);

beforeAll(async () => {
  const base = await testApp(
    {
      secretKeys: [{ version: 1, key: randomBytes(32) }],
      outboundConnectTimeoutMs: 300,
      outboundTimeoutMs: 1000,
    },
    { outboundTestOnly: { allowHttp: true, allowAddresses: ['127.0.0.1'] } },
  );
  const { token } = await base.app.services.access.createAdminToken(
    'market',
    ['adserver:read', 'adserver:write', 'market:read', 'market:write'],
    null,
  );
  t = { ...base, admin: token };
  [ads, ref] = await Promise.all([loopbackServer(), referenceServer()]);
  ads.handle(reportingAdServer('Europe/Malta', () => report));
}, 60_000);
afterAll(async () => {
  await Promise.all([t?.close(), ads?.close(), ref?.close()]);
});

describe('statements from the ad server figures', () => {
  it('equal a hand computation (CPM, a flat fee pro-rated for a mid-month line), frozen; a later pull is an adjustment', async () => {
    t.clock.now = new Date('2026-11-23T10:00:00Z');
    const fx = await bookable(t, { ...ref, url: `${ads.origin}/v1` }, 'billing');
    const adv = (
      await admin(t, 'POST', '/market/advertisers', { publisher: 'billing', name: 'Lucky Spin Ltd' })
    ).body.data.id;
    const product = async (pricing: string, price: string, name: string) =>
      (
        await admin(t, 'POST', '/market/products', {
          connection_id: fx.conn,
          placement_id: fx.leaderboard,
          name,
          geos: ['MT', 'DE'],
          first_month: '2026-12',
          last_month: '2026-12',
          pricing,
          price,
        })
      ).body.data.id;
    const cpm = await product('cpm', '12.50', 'Leaderboard CPM');
    const flat = await product('flat', '1500.00', 'Leaderboard flat');
    const r = (
      await admin(t, 'POST', '/market/reservations', {
        advertiser_id: adv,
        campaign_name: 'December',
        lines: [
          { product_id: cpm, geo: 'MT', month: '2026-12', impressions: 150_000 },
          { product_id: flat, geo: 'DE', month: '2026-12', impressions: 80_000 },
        ],
      })
    ).body.data;
    const early = await admin(t, 'POST', `/market/reservations/${r.id}/statements`, { month: '2026-12' });
    expect(early.status).toBe(409);
    const booked = (await admin(t, 'POST', `/market/reservations/${r.id}/approve`)).body.data;
    expect(booked.status).toBe('booked');
    const [l1, l2] = booked.lines.map((l: { line_item_id: string }) => l.line_item_id);

    // Line 1 ran 1–10 December, 12 345 impressions a day; line 2 started mid-month: 17–31
    // December, 5 000 a day (one day with none inside the run does not shorten it).
    report = [
      ...days(1, 10).map((date) => ({ line_item_id: l1, date, impressions: 12_345, clicks: 20 })),
      ...days(17, 31).map((date) => ({
        line_item_id: l2,
        date,
        impressions: date === '2026-12-20' ? 0 : 5_000,
        clicks: 3,
      })),
    ];
    t.clock.now = new Date('2026-12-31T12:00:00Z');
    expect(
      (await admin(t, 'POST', `/market/reservations/${r.id}/statements`, { month: '2026-12' })).body.details
        .field,
    ).toBe('month');
    t.clock.now = new Date('2027-01-02T10:00:00Z');
    const pulled = await admin(t, 'POST', `/adserver/connections/${fx.conn}/reports/pull`);
    expect(pulled.body.data, pulled.raw).toMatchObject({ state: 'ok', matched: 25 });

    const issued = await admin(t, 'POST', `/market/reservations/${r.id}/statements`, { month: '2026-12' });
    expect(issued.status, issued.raw).toBe(201);
    const s = issued.body.data;
    // By hand: 12.50 × 123 450 / 1000 = 1543.125 → 1543.13; 1500.00 × 15 / 31 = 725.806… → 725.81.
    expect(s.lines).toEqual([
      expect.objectContaining({
        line_no: 1,
        pricing: 'cpm',
        price: '12.5000',
        impressions: 123_450,
        clicks: 200,
        days_ran: 10,
        amount: '1543.13',
      }),
      expect.objectContaining({
        line_no: 2,
        pricing: 'flat',
        price: '1500.0000',
        impressions: 70_000,
        days_ran: 15,
        days_in_month: 31,
        amount: '725.81',
      }),
    ]);
    expect(s).toMatchObject({
      currency: 'EUR',
      total: '2268.94',
      adjustments_total: '0.00',
      adjusted_total: '2268.94',
      adjustments: [],
    });
    expect(
      (await admin(t, 'POST', `/market/reservations/${r.id}/statements`, { month: '2026-12' })).status,
    ).toBe(409);
    await expect(t.db.query('UPDATE market_statements SET total = 0 WHERE id = $1', [s.id])).rejects.toThrow(
      /frozen/,
    );
    await expect(
      t.db.query('DELETE FROM market_statement_lines WHERE statement_id = $1', [s.id]),
    ).rejects.toThrow(/frozen/);

    // The ad server revises the last day: 1 000 late impressions on line 1, 1 000 fewer on line 2.
    report.push({ line_item_id: l1, date: '2026-12-31', impressions: 1_000, clicks: 0 });
    report = report.map((x) =>
      x.line_item_id === l2 && x.date === '2026-12-31' ? { ...x, impressions: 4_000 } : x,
    );
    const again = await admin(t, 'POST', `/adserver/connections/${fx.conn}/reports/pull`);
    expect(again.body.data.state).toBe('ok');
    const unchanged = (await admin(t, 'GET', `/market/statements/${s.id}`)).body.data;
    expect(unchanged.lines).toEqual(s.lines);
    const adjusted = (await admin(t, 'POST', `/market/statements/${s.id}/reconcile`)).body.data;
    // Line 1: 12.50 × 124 450 / 1000 = 1555.625 → 1555.63, +12.50 (and it now ran 1–31 December);
    // line 2: a flat fee, still 15 days: only the impressions move.
    expect(adjusted.adjustments).toEqual([
      expect.objectContaining({
        line_no: 1,
        impressions_delta: 1_000,
        clicks_delta: 0,
        days_ran_delta: 21,
        amount_delta: '12.50',
      }),
      expect.objectContaining({
        line_no: 2,
        impressions_delta: -1_000,
        days_ran_delta: 0,
        amount_delta: '0.00',
      }),
    ]);
    expect(adjusted).toMatchObject({
      total: '2268.94',
      adjustments_total: '12.50',
      adjusted_total: '2281.44',
      lines: s.lines,
    });
    expect(
      (await admin(t, 'POST', `/market/statements/${s.id}/reconcile`)).body.data.adjustments,
    ).toHaveLength(2);
    expect(await t.app.services.market.statements.reconcileRecent()).toBe(1);
    expect((await admin(t, 'GET', `/market/statements/${s.id}`)).body.data.adjustments).toHaveLength(2);

    const csv = await t.app.inject({
      url: `/api/admin/v1/market/statements/${s.id}/csv`,
      headers: { authorization: `Bearer ${t.admin}` },
    });
    expect(csv.headers['content-type']).toBe('text/csv; charset=utf-8');
    const lines = csv.body.trim().split('\r\n');
    expect(lines[0]).toMatch(/^kind,line_no,product_id,geo,line_item_id,pricing,price,impressions/);
    expect(lines.filter((l) => l.startsWith('line,'))).toHaveLength(2);
    expect(lines.filter((l) => l.startsWith('adjustment,'))).toHaveLength(2);
    expect(lines.at(-1)).toMatch(/^adjusted_total,.*,2281\.44,EUR,/);
    const timeline = (await admin(t, 'GET', `/market/reservations/${r.id}`)).body.data.events;
    expect(timeline.at(-1)).toMatchObject({
      kind: 'statement_issued',
      detail: { statement_id: s.id, month: '2026-12' },
    });
    expect((await admin(t, 'GET', `/market/reservations/${r.id}/statements`)).body.data).toHaveLength(1);
    // The list of all statements names the campaign and the advertiser, filtered by month.
    const all = (await admin(t, 'GET', `/market/statements?month=2026-12&advertiser_id=${r.advertiser_id}`))
      .body.data;
    expect(all).toEqual([
      expect.objectContaining({
        id: s.id,
        campaign_name: r.campaign_name,
        advertiser_name: expect.any(String),
        adjusted_total: '2281.44',
      }),
    ]);
    expect((await admin(t, 'GET', '/market/statements?month=2026-11')).body.data).toEqual([]);
    expect((await admin(t, 'GET', '/market/statements?month=2026-13')).status).toBe(422);
  }, 60_000);
});

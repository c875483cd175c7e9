import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { admin, bookable, fakeAdServer, type ReferenceServer, referenceServer } from './adserver-fixture.ts';
import { DB_KIND, type TestApp, testApp } from './helpers.ts';
import { json, type LoopbackServer, loopbackServer } from './hostile-server.ts';
import { serve, sharedSchemaEnv } from './serve-process.ts';

const KEY = randomBytes(32);
const FAST = { outboundConnectTimeoutMs: 300, outboundTimeoutMs: 1000, outboundMaxBytes: 1024 * 1024 };

let t: TestApp & { admin: string };
let ref: ReferenceServer;
let noForecast: ReferenceServer;
let hostile: LoopbackServer;
let fx: Awaited<ReturnType<typeof bookable>>;
let listedFx: Awaited<ReturnType<typeof bookable>>;
let adv: string;
let listedAdv: string;

beforeAll(async () => {
  const base = await testApp(
    { secretKeys: [{ version: 1, key: KEY }], ...FAST },
    { outboundTestOnly: { allowHttp: true, allowAddresses: ['127.0.0.1'] } },
  );
  const { token } = await base.app.services.access.createAdminToken(
    'market',
    ['adserver:read', 'adserver:write', 'market:read', 'market:write'],
    null,
  );
  t = { ...base, admin: token };
  [ref, noForecast, hostile] = await Promise.all([
    referenceServer(),
    referenceServer({ account: { forecast: false } }),
    loopbackServer(),
  ]);
  t.clock.now = new Date('2026-11-23T10:00:00Z');
  fx = await bookable(t, ref, 'acme');
  listedFx = await bookable(t, noForecast, 'listed-pub');
  adv = (await admin(t, 'POST', '/market/advertisers', { publisher: 'acme', name: 'Lucky Spin Ltd' })).body
    .data.id;
  listedAdv = (
    await admin(t, 'POST', '/market/advertisers', { publisher: 'listed-pub', name: 'Lucky Spin Ltd' })
  ).body.data.id;
}, 60_000);
afterAll(async () => {
  await Promise.all([t?.close(), ref?.close(), noForecast?.close(), hostile?.close()]);
});

let products = 0;
async function product(connection: string, placement: number, over: Record<string, unknown> = {}) {
  const r = await admin(t, 'POST', '/market/products', {
    connection_id: connection,
    placement_id: placement,
    name: `Product ${++products}`,
    geos: ['MT', 'DE'],
    first_month: '2026-12',
    last_month: '2027-03',
    pricing: 'cpm',
    price: '12.50',
    ...over,
  });
  if (r.status !== 201) throw new Error(r.raw);
  return r.body.data.id as string;
}

const reserve = (advertiser: string, lines: Record<string, unknown>[], name = 'Winter push') =>
  admin(t, 'POST', '/market/reservations', { advertiser_id: advertiser, campaign_name: name, lines });

async function capacity(productId: string, geo: string, month: string) {
  const r = await admin(t, 'GET', `/market/products/${productId}/availability?geo=${geo}&month=${month}`);
  return r.body.data[0];
}

describe('advertisers', () => {
  it('takes the currency of the publisher account; a publisher without a verified connection is refused', async () => {
    const a = await admin(t, 'GET', `/market/advertisers/${adv}`);
    expect(a.body.data).toMatchObject({
      publisher: 'acme',
      name: 'Lucky Spin Ltd',
      currency: 'EUR',
      contacts: [],
    });
    const none = await admin(t, 'POST', '/market/advertisers', { publisher: 'nobody', name: 'X' });
    expect(none.status).toBe(422);
    expect(none.body.details.field).toBe('publisher');
    const dup = await admin(t, 'POST', '/market/advertisers', { publisher: 'acme', name: 'Lucky Spin Ltd' });
    expect(dup.status).toBe(409);
    expect(dup.body.details.field).toBe('name');
    const badMail = await admin(t, 'POST', '/market/advertisers', {
      publisher: 'acme',
      name: 'Y',
      contacts: [{ name: 'Ann', email: 'not-an-address' }],
    });
    expect(badMail.status).toBe(422);
    const patched = await admin(t, 'PATCH', `/market/advertisers/${adv}`, {
      contacts: [{ name: 'Ann Smith', email: 'ann@luckyspin.test', role: 'billing' }],
    });
    expect(patched.body.data.contacts).toEqual([
      { name: 'Ann Smith', email: 'ann@luckyspin.test', role: 'billing' },
    ]);
    const audit = await t.db.query<{ action: string; before: unknown }>(
      "SELECT action, before FROM audit_log WHERE target_type = 'market' AND target_id = $1 ORDER BY id",
      [adv],
    );
    expect(audit.map((a) => a.action)).toEqual([
      'POST /api/admin/v1/market/advertisers',
      'PATCH /api/admin/v1/market/advertisers/:id',
    ]);
    expect(audit[1]!.before).toMatchObject({ contacts: [] });
  });
});

describe('access and limits', () => {
  it('needs the market scopes; list limits are refused, not clamped', async () => {
    const { token } = await t.app.services.access.createAdminToken(
      'ads-only',
      ['adserver:read', 'adserver:write'],
      null,
    );
    const denied = await t.app.inject({
      method: 'GET',
      url: '/api/admin/v1/market/reservations',
      headers: { authorization: `Bearer ${token}` },
    });
    expect(denied.statusCode).toBe(403);
    expect(denied.json()).toMatchObject({ code: 'forbidden', details: { requiredScope: 'market:read' } });
    const tooMany = await admin(t, 'GET', '/market/reservations?limit=500');
    expect(tooMany.status).toBe(422);
    expect(tooMany.body.details.field).toBe('limit');
    const lines = Array.from({ length: 51 }, () => ({
      product_id: 'prd_00000000000000000000000000',
      geo: 'MT',
      month: '2026-12',
      impressions: 1,
    }));
    expect((await reserve(adv, lines)).status).toBe(422);
  });
});

describe('products and prices', () => {
  it('exact decimal prices in the account currency, validated field by field', async () => {
    const id = await product(fx.conn, fx.leaderboard, { price: '1234567.8901', pricing: 'flat' });
    const p = (await admin(t, 'GET', `/market/products/${id}`)).body.data;
    expect(p).toMatchObject({
      price: '1234567.8901',
      pricing: 'flat',
      currency: 'EUR',
      inventory_id: 'slot-home-leaderboard',
      sizes: ['728x90'],
    });
    const cases: [Record<string, unknown>, string][] = [
      [{ price: 12.5 }, 'price'],
      [{ price: '1e3' }, 'price'],
      [{ price: '0.12345' }, 'price'],
      [{ price: '-1' }, 'price'],
      [{ geos: ['XX'] }, 'geos.0'],
      [{ last_month: '2026-11', first_month: '2026-12' }, 'last_month'],
      [{ last_month: '2029-12' }, 'last_month'],
      [{ placement_id: 999_999 }, 'placement_id'],
      [{ pricing: 'cpc' }, 'pricing'],
    ];
    for (const [over, field] of cases) {
      const r = await admin(t, 'POST', '/market/products', {
        connection_id: fx.conn,
        placement_id: fx.leaderboard,
        name: `bad ${field}`,
        geos: ['MT'],
        first_month: '2026-12',
        last_month: '2027-01',
        pricing: 'cpm',
        price: '1',
        ...over,
      });
      expect(r.status, JSON.stringify(over)).toBe(422);
      expect(r.body.details.field, JSON.stringify(over)).toBe(field);
    }
    const patched = await admin(t, 'PATCH', `/market/products/${id}`, { price: '0.0001', pricing: 'cpm' });
    expect(patched.body.data).toMatchObject({ price: '0.0001', pricing: 'cpm' });
    expect((await t.db.query("SELECT 1 FROM market_products WHERE name LIKE 'bad %'")).length).toBe(0);
  });
});

describe('availability', () => {
  it("from the ad server's forecast, cached with its age; a 501 slot has no limit and booking proceeds", async () => {
    const id = await product(fx.conn, fx.leaderboard);
    expect((await capacity(id, 'MT', '2026-12')).source).toBe('pending');
    const fresh = await admin(t, 'POST', `/market/products/${id}/availability/refresh`, {
      geo: 'MT',
      month: '2026-12',
    });
    const direct = await admin(t, 'POST', `/adserver/connections/${fx.conn}/forecast`, {
      placement_id: fx.leaderboard,
      start_date: '2026-12-01',
      end_date: '2026-12-31',
      geo: ['MT'],
      sizes: ['728x90'],
    });
    expect(fresh.body.data).toMatchObject({
      source: 'forecast',
      available: direct.body.data.forecast.available_impressions,
      held: 0,
      age_seconds: 0,
    });
    t.clock.now = new Date(t.clock.now.getTime() + 120_000);
    expect((await capacity(id, 'MT', '2026-12')).age_seconds).toBe(120);

    const skin = await product(fx.conn, fx.skin);
    const r = await reserve(adv, [
      { product_id: skin, geo: 'DE', month: '2027-01', impressions: 9_000_000_000 },
    ]);
    expect(r.status).toBe(201);
    expect(await capacity(skin, 'DE', '2027-01')).toMatchObject({
      source: 'none',
      available: null,
      held: 9_000_000_000,
    });
  });

  it('the background job refreshes forecasts older than the configured age', async () => {
    const id = await product(fx.conn, fx.mpu);
    await admin(t, 'POST', `/market/products/${id}/availability/refresh`, { geo: 'DE', month: '2027-02' });
    const first = await capacity(id, 'DE', '2027-02');
    t.clock.now = new Date(t.clock.now.getTime() + (t.config.marketForecastMaxAgeMinutes + 1) * 60_000);
    expect((await capacity(id, 'DE', '2027-02')).age_seconds).toBeGreaterThan(
      t.config.marketForecastMaxAgeMinutes * 60,
    );
    await t.app.services.market.refreshStale();
    const again = await capacity(id, 'DE', '2027-02');
    expect(again.age_seconds).toBe(0);
    expect(again.available).toBe(first.available);
  });

  it('a connection without forecast sells what the publisher listed; nothing listed is nothing to sell', async () => {
    const id = await product(listedFx.conn, listedFx.leaderboard);
    const none = await reserve(listedAdv, [{ product_id: id, geo: 'MT', month: '2026-12', impressions: 1 }]);
    expect(none.status).toBe(409);
    expect(none.body.details).toMatchObject({ field: 'lines.0.impressions', remaining: 0 });
    const listed = await admin(t, 'PUT', `/market/products/${id}/availability`, {
      geo: 'MT',
      month: '2026-12',
      impressions: 50_000,
    });
    expect(listed.body.data).toMatchObject({
      source: 'listed',
      available: 50_000,
      listed: 50_000,
      remaining: 50_000,
    });
  });
});

describe('reservations never oversell', () => {
  it(`50 concurrent requests for the last 10 000 impressions (${DB_KIND}, one process): exactly those that fit are held`, async () => {
    const id = await product(listedFx.conn, listedFx.leaderboard);
    await admin(t, 'PUT', `/market/products/${id}/availability`, {
      geo: 'MT',
      month: '2027-01',
      impressions: 50_000,
    });
    expect(
      (await reserve(listedAdv, [{ product_id: id, geo: 'MT', month: '2027-01', impressions: 40_000 }]))
        .status,
    ).toBe(201);
    const answers = await Promise.all(
      Array.from({ length: 50 }, (_, i) =>
        reserve(listedAdv, [{ product_id: id, geo: 'MT', month: '2027-01', impressions: 300 }], `race ${i}`),
      ),
    );
    const held = answers.filter((a) => a.status === 201);
    const refused = answers.filter((a) => a.status === 409);
    expect(held).toHaveLength(33);
    expect(refused).toHaveLength(17);
    for (const r of refused) expect(r.body).toMatchObject({ code: 'conflict', details: { remaining: 100 } });
    expect(await capacity(id, 'MT', '2027-01')).toMatchObject({ held: 49_900, remaining: 100 });
    const [rows] = await t.db.query<{ n: number }>(
      `SELECT count(*)::int AS n FROM market_reservations r JOIN market_reservation_lines l ON l.reservation_id = r.id
        WHERE l.product_id = $1 AND r.status = 'held'`,
      [id],
    );
    expect(rows!.n).toBe(34);
  });

  it('a multi-line request is all or nothing; lines are validated by name', async () => {
    const id = await product(listedFx.conn, listedFx.leaderboard);
    await admin(t, 'PUT', `/market/products/${id}/availability`, {
      geo: 'MT',
      month: '2027-02',
      impressions: 1000,
    });
    await admin(t, 'PUT', `/market/products/${id}/availability`, {
      geo: 'DE',
      month: '2027-02',
      impressions: 1000,
    });
    const over = await reserve(listedAdv, [
      { product_id: id, geo: 'MT', month: '2027-02', impressions: 500 },
      { product_id: id, geo: 'DE', month: '2027-02', impressions: 1001 },
    ]);
    expect(over.status).toBe(409);
    expect(over.body.details).toMatchObject({ field: 'lines.1.impressions', remaining: 1000 });
    expect((await capacity(id, 'MT', '2027-02')).held).toBe(0);
    const cases: [Record<string, unknown>, string, string?][] = [
      [{ geo: 'FR' }, 'lines.0.geo'],
      [{ month: '2027-06' }, 'lines.0.month'],
      [{ month: '2026-10' }, 'lines.0.month'],
      [{ impressions: 0 }, 'lines.0.impressions'],
      [{ impressions: 1.5 }, 'lines.0.impressions'],
      [{ product_id: 'prd_00000000000000000000000000' }, 'lines.0.product_id'],
    ];
    for (const [line, field] of cases) {
      const r = await reserve(listedAdv, [
        { product_id: id, geo: 'MT', month: '2027-02', impressions: 10, ...line },
      ]);
      expect(r.status, JSON.stringify(line)).toBe(422);
      expect(r.body.details.field, JSON.stringify(line)).toBe(field);
    }
    const otherPublisher = await reserve(adv, [
      { product_id: id, geo: 'MT', month: '2027-02', impressions: 10 },
    ]);
    expect(otherPublisher.body.details.field).toBe('lines.0.product_id');
  });
});

describe('holds expire, approval, rejection, risk', () => {
  it('a hold that expires returns its impressions; approving after expiry is refused', async () => {
    const id = await product(listedFx.conn, listedFx.leaderboard);
    await admin(t, 'PUT', `/market/products/${id}/availability`, {
      geo: 'DE',
      month: '2027-03',
      impressions: 10_000,
    });
    const line = { product_id: id, geo: 'DE', month: '2027-03', impressions: 6_000 };
    const a = (await reserve(listedAdv, [line])).body.data;
    expect((await capacity(id, 'DE', '2027-03')).held).toBe(6_000);
    t.clock.now = new Date(Date.parse(a.expires_at) + 1000);
    expect(await t.app.services.market.expireDue()).toBeGreaterThanOrEqual(1);
    expect((await capacity(id, 'DE', '2027-03')).held).toBe(0);
    const expired = (await admin(t, 'GET', `/market/reservations/${a.id}`)).body.data;
    expect(expired.status).toBe('expired');
    expect(expired.events.map((e: { kind: string }) => e.kind)).toEqual(['held', 'expired']);
    const refused = await admin(t, 'POST', `/market/reservations/${a.id}/approve`);
    expect(refused.status).toBe(409);

    // Past its time but before the job ran: approval refuses it and frees it there and then.
    const b = (await reserve(listedAdv, [line])).body.data;
    t.clock.now = new Date(Date.parse(b.expires_at) + 1000);
    const late = await admin(t, 'POST', `/market/reservations/${b.id}/approve`);
    expect(late.status).toBe(409);
    expect(late.body.message).toMatch(/expired/);
    expect((await capacity(id, 'DE', '2027-03')).held).toBe(0);
    const audit = await t.db.query<{ actor: string }>(
      "SELECT actor FROM audit_log WHERE target_id = $1 AND action = 'expire hold'",
      [a.id],
    );
    expect(audit).toEqual([{ actor: 'job:market-holds' }]);
    t.clock.now = new Date('2026-11-23T10:00:00Z');
  });

  it('approval pushes the DRAFT order; holds become bookings; every change is on the timeline and audited', async () => {
    const id = await product(fx.conn, fx.leaderboard);
    const r = (
      await reserve(adv, [
        { product_id: id, geo: 'MT', month: '2026-12', impressions: 20_000 },
        { product_id: id, geo: 'DE', month: '2027-01', impressions: 30_000 },
      ])
    ).body.data;
    expect(r).toMatchObject({ status: 'held', currency: 'EUR', booking_id: null });
    expect(r.lines[0]).toMatchObject({
      pricing: 'cpm',
      price: '12.5000',
      at_risk: false,
      line_item_id: null,
    });
    const approved = await admin(t, 'POST', `/market/reservations/${r.id}/approve`);
    expect(approved.status, approved.raw).toBe(200);
    const b = approved.body.data;
    expect(b.status).toBe('booked');
    expect(b.order_id).toMatch(/.+/);
    expect(b.lines.every((l: { line_item_id: string | null }) => l.line_item_id)).toBe(true);
    expect(b.events.map((e: { kind: string }) => e.kind)).toEqual(['held', 'approval_started', 'booked']);
    const orders = await ref.store.query<{ status: string }>(
      'SELECT status FROM orders WHERE external_ref = $1',
      [r.id],
    );
    expect(orders).toEqual([{ status: 'DRAFT' }]);
    expect(await capacity(id, 'MT', '2026-12')).toMatchObject({ held: 0, booked: 20_000 });
    expect((await admin(t, 'POST', `/market/reservations/${r.id}/approve`)).body.data.order_id).toBe(
      b.order_id,
    );
    const audit = await t.db.query<{ action: string; after: { status: string } }>(
      "SELECT action, after FROM audit_log WHERE target_id = $1 AND action LIKE '%approve' ORDER BY id",
      [r.id],
    );
    expect(audit[0]!.after.status).toBe('booked');
    expect((await admin(t, 'POST', `/market/reservations/${r.id}/reject`, { reason: 'late' })).status).toBe(
      409,
    );
  });

  it('an approval whose process died after making the booking reuses that booking', async () => {
    const id = await product(fx.conn, fx.leaderboard);
    const r = (await reserve(adv, [{ product_id: id, geo: 'DE', month: '2027-02', impressions: 5_000 }])).body
      .data;
    // What the dead approval left: the booking exists, the reservation does not name it.
    const left = await t.app.services.adserver.bookings.create({
      connection_id: fx.conn,
      currency: 'EUR',
      advertiser: { name: 'Lucky Spin Ltd', external_ref: adv },
      campaign: { name: 'Winter push', external_ref: r.id },
      lines: [
        {
          placement_id: fx.leaderboard,
          month: '2027-02',
          geo: ['DE'],
          goal_impressions: 5_000,
          sizes: ['728x90'],
        },
      ],
    });
    const approved = await admin(t, 'POST', `/market/reservations/${r.id}/approve`);
    expect(approved.status, approved.raw).toBe(200);
    expect(approved.body.data).toMatchObject({ status: 'booked', booking_id: left.id });
  });

  it('rejection frees the impressions and keeps the reason', async () => {
    const id = await product(listedFx.conn, listedFx.leaderboard);
    await admin(t, 'PUT', `/market/products/${id}/availability`, {
      geo: 'MT',
      month: '2026-12',
      impressions: 1000,
    });
    const r = (await reserve(listedAdv, [{ product_id: id, geo: 'MT', month: '2026-12', impressions: 1000 }]))
      .body.data;
    expect((await admin(t, 'POST', `/market/reservations/${r.id}/reject`, { reason: ' ' })).status).toBe(422);
    const rejected = (
      await admin(t, 'POST', `/market/reservations/${r.id}/reject`, { reason: 'Creative not compliant' })
    ).body.data;
    expect(rejected).toMatchObject({ status: 'rejected', reason: 'Creative not compliant' });
    expect(rejected.events.at(-1)).toMatchObject({
      kind: 'rejected',
      detail: { reason: 'Creative not compliant' },
    });
    expect((await capacity(id, 'MT', '2026-12')).held).toBe(0);
    const list = (await admin(t, 'GET', `/market/reservations?status=rejected&advertiser_id=${listedAdv}`))
      .body.data;
    expect(list.map((x: { id: string }) => x.id)).toContain(r.id);
  });

  it('a figure that drops below what is held marks the lines at risk; nothing is cut', async () => {
    const id = await product(listedFx.conn, listedFx.leaderboard);
    await admin(t, 'PUT', `/market/products/${id}/availability`, {
      geo: 'DE',
      month: '2026-12',
      impressions: 50_000,
    });
    const r = (
      await reserve(listedAdv, [{ product_id: id, geo: 'DE', month: '2026-12', impressions: 30_000 }])
    ).body.data;
    const dropped = await admin(t, 'PUT', `/market/products/${id}/availability`, {
      geo: 'DE',
      month: '2026-12',
      impressions: 20_000,
    });
    expect(dropped.body.data).toMatchObject({ held: 30_000, remaining: -10_000, at_risk: true });
    const after = (await admin(t, 'GET', `/market/reservations/${r.id}`)).body.data;
    expect(after).toMatchObject({ status: 'held', lines: [{ impressions: 30_000, at_risk: true }] });
    expect(after.events.at(-1)).toMatchObject({
      kind: 'at_risk',
      detail: { available: 20_000, held: 30_000 },
    });
    const more = await reserve(listedAdv, [{ product_id: id, geo: 'DE', month: '2026-12', impressions: 1 }]);
    expect(more.body.details).toMatchObject({ remaining: 0 });
  });
});

describe('approval against a hostile ad server', () => {
  it('is never marked booked without DRAFT ids for every line', async () => {
    /** The ad server's answer to POST /orders, or no answer at all (the call times out). */
    type Answer = (refs: string[]) => [number, unknown] | 'hang';
    let answer: Answer = () => [500, {}];
    hostile.handle(
      fakeAdServer({ timezone: 'Europe/Malta', forecast: () => true }, (req, res, raw) => {
        if (req.url?.includes('/forecast'))
          return json(res, 200, {
            inventory_id: 'slot-home-leaderboard',
            available_impressions: 1_000_000,
            forecasted_impressions: 2_000_000,
          });
        const refs = (JSON.parse(raw) as { line_items: { external_ref: string }[] }).line_items.map(
          (l) => l.external_ref,
        );
        const a = answer(refs);
        if (a !== 'hang') json(res, a[0], a[1]);
      }),
    );
    const h = await bookable(t, { ...ref, url: `${hostile.origin}/v1` }, 'hostile-market');
    const hAdv = (await admin(t, 'POST', '/market/advertisers', { publisher: 'hostile-market', name: 'H' }))
      .body.data.id;
    const id = await product(h.conn, h.leaderboard);
    const r = (
      await reserve(hAdv, [
        { product_id: id, geo: 'MT', month: '2026-12', impressions: 1000 },
        { product_id: id, geo: 'DE', month: '2026-12', impressions: 1000 },
      ])
    ).body.data;
    const lines = (refs: string[], over: Record<string, unknown> = {}) =>
      refs.map((ref, i) => ({ external_ref: ref, line_item_id: `li-${i}`, status: 'DRAFT', ...over }));
    const broken: Answer[] = [
      () => [422, { code: 'invalid_flight', message: 'no' }],
      () => [503, { code: 'unavailable', message: 'down' }],
      () => 'hang',
      (refs) => [201, { order_id: 'o-1', status: 'DRAFT', line_items: lines(refs).slice(0, 1) }],
      (refs) => [201, { order_id: 'o-1', status: 'ACTIVE', line_items: lines(refs) }],
      (refs) => [201, { order_id: 'o-1', status: 'DRAFT', line_items: lines(refs, { status: 'READY' }) }],
      (refs) => [201, { order_id: 'o-1', status: 'DRAFT', line_items: lines(refs, { line_item_id: '' }) }],
      (refs) => [201, { status: 'DRAFT', line_items: lines(refs) }],
      () => [200, 'not json'],
      () => [409, { code: 'idempotency_conflict', message: 'key reused' }],
    ];
    for (const [i, a] of broken.entries()) {
      answer = a;
      const res = await admin(t, 'POST', `/market/reservations/${r.id}/approve`);
      expect(res.status, `answer ${i}: ${res.raw}`).toBeGreaterThanOrEqual(400);
      const now = (await admin(t, 'GET', `/market/reservations/${r.id}`)).body.data;
      expect(now.status, `answer ${i}`).toBe('held');
      expect(now.last_error, `answer ${i}`).toBeTruthy();
      expect(now.events.at(-1).kind).toBe('approval_failed');
      expect(await capacity(id, 'MT', '2026-12')).toMatchObject({ held: 1000, booked: 0 });
    }
    answer = (refs) => [201, { order_id: 'o-good', status: 'DRAFT', line_items: lines(refs) }];
    const ok = await admin(t, 'POST', `/market/reservations/${r.id}/approve`);
    expect(ok.status, ok.raw).toBe(200);
    expect(ok.body.data).toMatchObject({
      status: 'booked',
      order_id: 'o-good',
      last_error: null,
      lines: [{ line_item_id: 'li-0' }, { line_item_id: 'li-1' }],
    });
  }, 60_000);
});

// Two server processes need a database they share: this runs with DATABASE_URL only.
describe.runIf(process.env.DATABASE_URL)('two processes on one PostgreSQL', () => {
  it('50 concurrent requests for the last 10 000 impressions: exactly those that fit are held', async () => {
    // The server processes run on the wall clock (their hold-expiry job too): so does this test.
    t.clock.now = new Date();
    const id = await product(listedFx.conn, listedFx.mpu);
    await admin(t, 'PUT', `/market/products/${id}/availability`, {
      geo: 'DE',
      month: '2027-01',
      impressions: 50_000,
    });
    expect(
      (await reserve(listedAdv, [{ product_id: id, geo: 'DE', month: '2027-01', impressions: 40_000 }]))
        .status,
    ).toBe(201);
    const env = await sharedSchemaEnv(t.db, { PODIUM_SECRET_KEYS: `1:${KEY.toString('base64')}` });
    const procs = await Promise.all([serve(env), serve(env)]);
    try {
      const answers = await Promise.all(
        Array.from({ length: 50 }, async (_, i) => {
          const res = await fetch(`${procs[i % 2]!.url}/api/admin/v1/market/reservations`, {
            method: 'POST',
            headers: { authorization: `Bearer ${t.admin}`, 'content-type': 'application/json' },
            body: JSON.stringify({
              advertiser_id: listedAdv,
              campaign_name: `race ${i}`,
              lines: [{ product_id: id, geo: 'DE', month: '2027-01', impressions: 300 }],
            }),
          });
          return { status: res.status, body: (await res.json()) as { details?: { remaining?: number } } };
        }),
      );
      expect(answers.filter((a) => a.status === 201)).toHaveLength(33);
      const refused = answers.filter((a) => a.status === 409);
      expect(refused).toHaveLength(17);
      for (const r of refused) expect(r.body.details?.remaining).toBe(100);
      expect(await capacity(id, 'DE', '2027-01')).toMatchObject({ held: 49_900, remaining: 100 });
    } finally {
      for (const p of procs) p.proc.kill('SIGTERM');
      await Promise.all(procs.map((p) => p.exit));
    }
  }, 120_000);
});

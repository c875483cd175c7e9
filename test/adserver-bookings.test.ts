import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  admin,
  approved,
  bookable,
  fakeAdServer,
  type ReferenceServer,
  startServers,
  stopServers,
} from './adserver-fixture.ts';
import type { TestApp } from './helpers.ts';
import { json, type LoopbackServer, loopbackServer } from './hostile-server.ts';

let t: TestApp & { admin: string };
let ref: ReferenceServer;
let hostile: LoopbackServer;
let fx: Awaited<ReturnType<typeof bookable>>;

beforeAll(async () => {
  ({ t, ref, hostile } = await startServers());
  t.clock.now = new Date('2026-11-23T10:00:00Z');
  fx = await bookable(t, ref, 'acme');
});
afterAll(() => stopServers({ t, ref, hostile }));

let campaigns = 0;
const booking = (over: Record<string, unknown> = {}, line: Record<string, unknown> = {}) => ({
  connection_id: fx.conn,
  currency: 'EUR',
  advertiser: { name: 'Lucky Spin Ltd', external_ref: 'adv-7' },
  campaign: { name: 'Winter push', external_ref: `cmp-${++campaigns}` },
  lines: [
    {
      placement_id: fx.leaderboard,
      month: '2026-12',
      geo: ['MT'],
      goal_impressions: 300_000,
      sizes: ['728x90'],
      ...line,
    },
  ],
  ...over,
});

async function refOrders(externalRef: string) {
  return ref.store.query<{ id: string; name: string; status: string }>(
    'SELECT id, name, status FROM orders WHERE external_ref = $1',
    [externalRef],
  );
}

describe('forecast', () => {
  it('returns the ad server figures for a mapped slot and confirms the capability', async () => {
    const r = await admin(t, 'POST', `/adserver/connections/${fx.conn}/forecast`, {
      placement_id: fx.leaderboard,
      start_date: '2026-12-01',
      end_date: '2026-12-31',
      geo: ['MT'],
    });
    expect(r.status).toBe(200);
    const f = r.body.data;
    expect(f.reason).toBeNull();
    expect(f.inventory_id).toBe('slot-home-leaderboard');
    expect(Number.isInteger(f.forecast.available_impressions)).toBe(true);
    expect(f.forecast.available_impressions).toBeLessThanOrEqual(f.forecast.forecasted_impressions);
    expect((await admin(t, 'GET', `/adserver/connections/${fx.conn}`)).body.data.capabilities.forecast).toBe(
      'confirmed',
    );
  });

  it('501 forecast_unsupported → no forecast for the slot', async () => {
    const r = await admin(t, 'POST', `/adserver/connections/${fx.conn}/forecast`, {
      placement_id: fx.skin,
      start_date: '2026-12-01',
      end_date: '2026-12-31',
    });
    expect(r.body.data).toMatchObject({
      inventory_id: 'slot-new-skin',
      forecast: null,
      reason: 'forecast_unsupported',
    });
    const bad = await admin(t, 'POST', `/adserver/connections/${fx.conn}/forecast`, {
      placement_id: fx.skin,
      start_date: '2026-12-31',
      end_date: '2026-12-01',
    });
    expect(bad.body.details.field).toBe('end_date');
  });

  it('capabilities.forecast false: never called; broken figures are invalid_response, never used', async () => {
    let body: unknown = {
      inventory_id: 'slot-home-leaderboard',
      available_impressions: 10,
      forecasted_impressions: 5,
    };
    let forecastOn = false;
    hostile.handle(
      fakeAdServer({ timezone: 'Europe/Malta', forecast: () => forecastOn }, (_req, res) =>
        json(res, 200, body),
      ),
    );
    const h = await bookable(t, { ...ref, url: `${hostile.origin}/v1` }, 'hostile-forecast');
    const ask = () =>
      admin(t, 'POST', `/adserver/connections/${h.conn}/forecast`, {
        placement_id: h.leaderboard,
        start_date: '2026-12-01',
        end_date: '2026-12-31',
      });
    expect((await ask()).body.data).toMatchObject({ forecast: null, reason: 'forecast_disabled' });
    expect(hostile.hits.filter((x) => x.url.includes('/forecast'))).toHaveLength(0);
    forecastOn = true;
    await admin(t, 'POST', `/adserver/connections/${h.conn}/verify`);
    for (const broken of [
      body,
      { inventory_id: 'slot-home-leaderboard', available_impressions: -1, forecasted_impressions: 5 },
      { inventory_id: 'slot-home-leaderboard', available_impressions: 1.5, forecasted_impressions: 5 },
      { inventory_id: 'other', available_impressions: 1, forecasted_impressions: 5 },
      { inventory_id: 'slot-home-leaderboard', available_impressions: 1, forecasted_impressions: '5' },
      {
        inventory_id: 'slot-home-leaderboard',
        available_impressions: 1,
        forecasted_impressions: 5,
        unit_type: 'CLICKS',
      },
    ]) {
      body = broken;
      expect((await ask()).body.data, JSON.stringify(broken)).toMatchObject({
        forecast: null,
        reason: 'invalid_response',
      });
    }
    body = { inventory_id: 'slot-home-leaderboard', available_impressions: 5, forecasted_impressions: 5 };
    expect((await ask()).body.data.forecast).toEqual({ available_impressions: 5, forecasted_impressions: 5 });
  });
});

describe('bookings → draft orders', () => {
  it('validates against the account and the synced inventory, naming the field', async () => {
    const cases: [Record<string, unknown>, Record<string, unknown>, string][] = [
      [{ currency: 'USD' }, {}, 'currency'],
      [{}, { month: '2026-10' }, 'lines.0.month'],
      [{}, { sizes: ['300x250'] }, 'lines.0.sizes'],
      [{}, { creatives: [approved(300, 250)] }, 'lines.0.creatives.0'],
      [
        {},
        { creatives: [{ ...approved(), image_url: 'http://cdn.podium.test/x.png' }] },
        'lines.0.creatives.0.image_url',
      ],
      [
        {},
        { creatives: [{ ...approved(), landing_url: 'javascript:alert(1)' }] },
        'lines.0.creatives.0.landing_url',
      ],
      [{}, { placement_id: 999_999 }, 'lines.0.placement_id'],
    ];
    for (const [over, line, field] of cases) {
      const r = await admin(t, 'POST', '/adserver/bookings', booking(over, line));
      expect(r.status, field).toBe(422);
      expect(r.body.details.field).toBe(field);
    }
    expect((await admin(t, 'POST', '/adserver/bookings', booking({}, { month: '2026-13' }))).status).toBe(
      422,
    );
  });

  it('pushes a draft order with a deterministic name, month flight, key = body key; a second push sends nothing', async () => {
    const b = (await admin(t, 'POST', '/adserver/bookings', booking())).body.data;
    expect(b.lines[0]).toMatchObject({
      start_date: '2026-12-01',
      end_date: '2026-12-31',
      inventory_id: 'slot-home-leaderboard',
      line_item_id: null,
    });
    const pushed = await admin(t, 'POST', `/adserver/bookings/${b.id}/push`);
    expect(pushed.status).toBe(200);
    const p = pushed.body.data;
    expect(p.order_id).toMatch(/.+/);
    expect(p.lines[0].line_item_id).toMatch(/.+/);
    expect(p.pushed_revision).toBe(1);
    const orders = await refOrders(b.external_ref);
    expect(orders).toEqual([
      { id: p.order_id, name: `Lucky Spin Ltd – Winter push [${b.external_ref}]`, status: 'DRAFT' },
    ]);
    const pushes = (await admin(t, 'GET', `/adserver/bookings/${b.id}/pushes`)).body.data;
    expect(pushes).toHaveLength(1);
    expect(JSON.parse(pushes[0].body).idempotency_key).toBe(pushes[0].idempotency_key);
    expect((await admin(t, 'POST', `/adserver/bookings/${b.id}/push`)).body.data.order_id).toBe(p.order_id);
    expect((await admin(t, 'GET', `/adserver/bookings/${b.id}/pushes`)).body.data).toHaveLength(1);
    expect(
      (await admin(t, 'GET', `/adserver/connections/${fx.conn}`)).body.data.capabilities.draft_booking,
    ).toBe('confirmed');
  });

  it('an approved creative later: its own code and generated tag; new key, same ids; the tag arrives byte for byte', async () => {
    const b = (await admin(t, 'POST', '/adserver/bookings', booking())).body.data;
    const first = (await admin(t, 'POST', `/adserver/bookings/${b.id}/push`)).body.data;
    const patched = (
      await admin(t, 'PATCH', `/adserver/bookings/${b.id}/lines/1`, {
        creatives: [approved()],
        goal_impressions: 350_000,
      })
    ).body.data;
    expect(patched.revision).toBe(2);
    const line1 = patched.lines[0];
    const code: string = line1.click_codes[0];
    expect(code).toMatch(/^[A-Za-z0-9_-]{24}$/);
    expect(line1.impression_codes).toEqual([code]);
    expect(line1.approved_creatives).toEqual([approved()]);
    expect(line1.creatives).toEqual([
      {
        type: 'third_party_tag',
        width: 728,
        height: 90,
        tag: `<iframe src="${t.config.publicUrl}/ad/${code}" width="728" height="90" frameborder="0" scrolling="no" marginwidth="0" marginheight="0" style="border:0;overflow:hidden"></iframe>`,
      },
    ]);
    const second = (await admin(t, 'POST', `/adserver/bookings/${b.id}/push`)).body.data;
    expect(second.order_id).toBe(first.order_id);
    expect(second.lines[0].line_item_id).toBe(first.lines[0].line_item_id);
    const pushes = (await admin(t, 'GET', `/adserver/bookings/${b.id}/pushes`)).body.data;
    expect(pushes.map((p: { status: string; http_status: number }) => [p.status, p.http_status])).toEqual([
      ['succeeded', 201],
      ['succeeded', 200],
    ]);
    expect(pushes[0].idempotency_key).not.toBe(pushes[1].idempotency_key);
    const [line] = await ref.store.query<{ creatives: { tag: string }[]; goal_impressions: string }>(
      'SELECT creatives, goal_impressions FROM line_items WHERE id = $1',
      [first.lines[0].line_item_id],
    );
    expect(line!.creatives[0]!.tag).toBe(line1.creatives[0].tag);
    expect(Number(line!.goal_impressions)).toBe(350_000);
    expect(await refOrders(b.external_ref)).toHaveLength(1);

    // The frame shows the approved image linked to /go and fires /imp; a new image keeps the code and tag.
    const frame = await t.app.inject({ method: 'GET', url: `/ad/${code}` });
    expect(frame.statusCode).toBe(200);
    expect(frame.headers['content-security-policy']).toContain('frame-ancestors *');
    expect(frame.body).toContain(`<a href="../go/${code}"`);
    expect(frame.body).toContain(`<img src="../imp/${code}"`);
    expect(frame.body).toContain('src="https://cdn.podium.test/winter-728x90.png"');
    const swapped = (
      await admin(t, 'PATCH', `/adserver/bookings/${b.id}/lines/1`, {
        creatives: [{ ...approved(), image_url: 'https://cdn.podium.test/x.png?a=1&b="><script>' }],
      })
    ).body.data.lines[0];
    expect(swapped.click_codes).toEqual([code]);
    expect(swapped.creatives[0].tag).toBe(line1.creatives[0].tag);
    const after = (await t.app.inject({ method: 'GET', url: `/ad/${code}` })).body;
    expect(after).toContain('src="https://cdn.podium.test/x.png?a=1&amp;b=&quot;&gt;&lt;script&gt;"');
    expect(after).not.toContain('<script>');
    expect((await t.app.inject({ method: 'GET', url: '/ad/nope' })).statusCode).toBe(404);
  });
});

describe('lines added later', () => {
  it('a new line is created on the next push; the order and the existing line keep their ids', async () => {
    const b = (await admin(t, 'POST', '/adserver/bookings', booking())).body.data;
    const first = (await admin(t, 'POST', `/adserver/bookings/${b.id}/push`)).body.data;
    const added = await admin(t, 'POST', `/adserver/bookings/${b.id}/lines`, {
      placement_id: fx.leaderboard,
      month: '2027-01',
      geo: ['MT'],
      goal_impressions: 100_000,
      sizes: ['728x90'],
    });
    expect(added.status).toBe(201);
    expect(added.body.data.lines[1]).toMatchObject({
      line_no: 2,
      external_ref: `${b.external_ref}:L2`,
      start_date: '2027-01-01',
    });
    const second = (await admin(t, 'POST', `/adserver/bookings/${b.id}/push`)).body.data;
    expect(second.order_id).toBe(first.order_id);
    expect(second.lines[0].line_item_id).toBe(first.lines[0].line_item_id);
    expect(second.lines[1].line_item_id).toMatch(/.+/);
    expect(second.lines[1].line_item_id).not.toBe(first.lines[0].line_item_id);
    const lines = await ref.store.query('SELECT id FROM line_items WHERE order_id = $1', [first.order_id]);
    expect(lines).toHaveLength(2);
    const wrong = await admin(t, 'POST', `/adserver/bookings/${b.id}/lines`, {
      placement_id: fx.leaderboard,
      month: '2027-01',
      goal_impressions: 1,
      sizes: ['300x250'],
    });
    expect(wrong.body.details.field).toBe('sizes');
  });

  it('two pushes of one revision at once share one key and make one order', async () => {
    const b = (await admin(t, 'POST', '/adserver/bookings', booking())).body.data;
    const [a, c] = await Promise.all([
      admin(t, 'POST', `/adserver/bookings/${b.id}/push`),
      admin(t, 'POST', `/adserver/bookings/${b.id}/push`),
    ]);
    expect([a.status, c.status]).toEqual([200, 200]);
    expect(a.body.data.order_id).toBe(c.body.data.order_id);
    expect(await refOrders(b.external_ref)).toHaveLength(1);
    const pushes = (await admin(t, 'GET', `/adserver/bookings/${b.id}/pushes`)).body.data;
    expect(new Set(pushes.map((p: { idempotency_key: string }) => p.idempotency_key)).size).toBe(1);
  });
});

describe('idempotent push matrix', () => {
  /** A proxy in front of the reference server whose behaviour per /orders call is scripted. */
  async function proxy(script: ('forward' | 'forward-then-drop' | '409' | '500' | 'drop')[]) {
    const srv = await loopbackServer();
    const orders: { key: string | undefined; body: string }[] = [];
    srv.handle(async (req, res, body) => {
      const url = req.url ?? '';
      const step = url.includes('/orders') ? (script[orders.length] ?? 'forward') : 'forward';
      if (url.includes('/orders')) orders.push({ key: req.headers['idempotency-key'] as string, body });
      if (step === '409') return json(res, 409, { code: 'idempotency_conflict', message: 'other body' });
      if (step === '500') return json(res, 500, { code: 'server_error', message: 'x' });
      if (step === 'drop') return req.socket.destroy();
      const upstream = await fetch(ref.url.replace(/\/api\/v1$/, '') + url, {
        method: req.method,
        headers: Object.fromEntries(
          Object.entries(req.headers).filter(([k]) =>
            ['authorization', 'content-type', 'idempotency-key'].includes(k),
          ),
        ) as Record<string, string>,
        body: req.method === 'POST' ? body : undefined,
      });
      const text = await upstream.text();
      if (step === 'forward-then-drop') return req.socket.destroy();
      res.writeHead(upstream.status, { 'content-type': 'application/json' });
      res.end(text);
    });
    return { srv, orders };
  }

  /** A booking on a connection that reaches the reference server through a scripted proxy. */
  async function bookedBehind(script: Parameters<typeof proxy>[0], publisher: string) {
    const { srv, orders } = await proxy(script);
    const h = await bookable(t, { ...ref, url: `${srv.origin}/api/v1` }, publisher);
    const created = await admin(
      t,
      'POST',
      '/adserver/bookings',
      booking({ connection_id: h.conn }, { placement_id: h.leaderboard }),
    );
    expect(created.status, created.raw).toBe(201);
    return { srv, orders, h, b: created.body.data };
  }

  it('a response lost after the ad server created the order: retried with the same key and bytes, created once', async () => {
    const { srv, orders, b } = await bookedBehind(['forward-then-drop'], 'dropper');
    const p = await admin(t, 'POST', `/adserver/bookings/${b.id}/push`);
    expect(p.status).toBe(200);
    expect(orders).toHaveLength(2);
    expect(orders[1]).toEqual(orders[0]);
    expect(JSON.parse(orders[0]!.body).idempotency_key).toBe(orders[0]!.key);
    expect(await refOrders(b.external_ref)).toHaveLength(1);
    const [push] = (await admin(t, 'GET', `/adserver/bookings/${b.id}/pushes`)).body.data;
    expect(push).toMatchObject({ status: 'succeeded', calls: 2, http_status: 200 });
    await srv.close();
  });

  it('5xx and dropped connections are retried with the same key and bytes, then succeed', async () => {
    const { srv, orders, b } = await bookedBehind(['500', 'drop', 'forward'], 'flaky');
    expect((await admin(t, 'POST', `/adserver/bookings/${b.id}/push`)).status).toBe(200);
    expect(orders).toHaveLength(3);
    expect(new Set(orders.map((o) => `${o.key}|${o.body}`)).size).toBe(1);
    expect(await refOrders(b.external_ref)).toHaveLength(1);
    await srv.close();
  });

  it('409 is logged on the push and never retried', async () => {
    const { srv, orders, b } = await bookedBehind(['409'], 'conflicted');
    const r = await admin(t, 'POST', `/adserver/bookings/${b.id}/push`);
    expect(r.status).toBe(409);
    expect(r.body.message).toContain('idempotency_conflict');
    expect(orders).toHaveLength(1);
    const [push] = (await admin(t, 'GET', `/adserver/bookings/${b.id}/pushes`)).body.data;
    expect(push).toMatchObject({ status: 'conflict', http_status: 409, calls: 1 });
    expect((await admin(t, 'GET', `/adserver/bookings/${b.id}`)).body.data.last_push_error).toContain('409');
    await srv.close();
  });

  it('a failed push is resent later under the same key; a connection in error is not pushed to', async () => {
    const { srv, orders, h, b } = await bookedBehind(['500', '500', '500', '500', 'forward'], 'down-then-up');
    const failed = await admin(t, 'POST', `/adserver/bookings/${b.id}/push`);
    expect(failed.status).toBe(502);
    expect(orders).toHaveLength(4);
    expect((await admin(t, 'POST', `/adserver/bookings/${b.id}/push`)).status).toBe(200);
    expect(new Set(orders.map((o) => o.key)).size).toBe(1);
    await t.db.query(`UPDATE adserver_connections SET status = 'error', state = 'auth_error' WHERE id = $1`, [
      h.conn,
    ]);
    await admin(t, 'PATCH', `/adserver/bookings/${b.id}/lines/1`, { goal_impressions: 1000 });
    const refused = await admin(t, 'POST', `/adserver/bookings/${b.id}/push`);
    expect(refused.status).toBe(409);
    expect(orders).toHaveLength(5);
    await srv.close();
  });
});

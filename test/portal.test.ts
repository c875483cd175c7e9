import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEMO_CAMPAIGNS, type MarketDemo, monthOf, seedMarketDemo } from '../src/modules/market/demo.ts';
import { admin, type ReferenceServer, referenceServer } from './adserver-fixture.ts';
import { png } from './creative-images.ts';
import { type TestApp, testApp } from './helpers.ts';

// The advertiser portal API on the demo's marketplace, against the reference ad server on loopback.
describe('advertiser portal API', { timeout: 120_000 }, () => {
  let t: TestApp & { admin: string };
  let ref: ReferenceServer;
  let demo: MarketDemo;
  let token: string;
  let other: string;

  const portal = async (
    method: 'GET' | 'POST',
    url: string,
    as: string | null,
    payload?: object,
    // biome-ignore lint/suspicious/noExplicitAny: response bodies are checked by the assertions
  ): Promise<{ status: number; body: any; raw: string }> => {
    const res = await t.app.inject({
      method,
      url: `/api/portal/v1${url}`,
      headers: as ? { authorization: `Bearer ${as}` } : {},
      ...(payload ? { payload } : {}),
    });
    return { status: res.statusCode, body: res.json(), raw: res.body };
  };

  beforeAll(async () => {
    ref = await referenceServer();
    const app = await testApp({
      secretKeys: [{ version: 1, key: randomBytes(32) }],
      outboundLoopbackAllow: [`127.0.0.1:${new URL(ref.url).port}`],
    });
    t = { ...app, admin: (await app.app.services.access.createAdminToken('portal', ['admin'], null)).token };
    demo = await seedMarketDemo(t.app.services, ref, t.clock);
    token = (await admin(t, 'POST', `/market/advertisers/${demo.advertiserId}/tokens`, { name: 'portal' }))
      .body.data.token;
    const rival = await admin(t, 'POST', '/market/advertisers', {
      publisher: 'casino-guide-media',
      name: 'Rival Bet',
    });
    expect(rival.status, rival.raw).toBe(201);
    other = (await admin(t, 'POST', `/market/advertisers/${rival.body.data.id}/tokens`, { name: 'rival' }))
      .body.data.token;
  }, 120_000);
  afterAll(async () => {
    await t.close();
    await ref.close();
  });

  it('describes itself in an OpenAPI document listing every portal route', async () => {
    const res = await t.app.inject({ url: '/api/portal/v1/openapi.json' });
    expect(res.statusCode).toBe(200);
    const paths = Object.keys(res.json().paths);
    const routes = t.app.routeTable
      .filter((r) => r.url.startsWith('/api/portal/v1/') && !r.url.endsWith('/openapi.json'))
      .map((r) => r.url.replace('/api/portal/v1', '').replace(/:(\w+)/g, '{$1}'));
    expect(routes.length).toBe(13);
    for (const r of routes) expect(paths, r).toContain(r);
  });

  it('answers 401 without an advertiser token, with a wrong one and with an admin token', async () => {
    for (const as of [null, 'pdb_not-a-real-token', t.admin]) {
      const res = await portal('GET', '/me', as);
      expect(res.status).toBe(401);
      expect(res.body.code).toBe('unauthorized');
    }
  });

  it('shows the advertiser, the products it can book and their availability', async () => {
    const me = await portal('GET', '/me', token);
    expect(me.body.data).toMatchObject({ id: demo.advertiserId, name: 'Lucky Spin Ltd', currency: 'EUR' });
    const products = (await portal('GET', '/products', token)).body.data;
    expect(products.map((p: { id: string }) => p.id).sort()).toEqual([...demo.products].sort());
    const cells = (await portal('GET', `/products/${demo.products[0]}/availability?geo=DE`, token)).body.data;
    expect(cells.length).toBeGreaterThan(0);
    expect(cells.every((c: { geo: string }) => c.geo === 'DE')).toBe(true);
    const unknown = await portal('GET', '/products/prd_00000000000000000000000000/availability', token);
    expect(unknown.status).toBe(404);
  });

  it('reserves for the advertiser itself; another advertiser never sees it', async () => {
    const month = monthOf(t.clock.now, 2);
    const res = await portal('POST', '/reservations', token, {
      campaign_name: 'Portal spring',
      lines: [{ product_id: demo.products[0], geo: 'DE', month, impressions: 1_000 }],
    });
    expect(res.status, res.raw).toBe(201);
    expect(res.body.data).toMatchObject({
      status: 'held',
      advertiser_id: demo.advertiserId,
      campaign_name: 'Portal spring',
    });
    expect(res.body.data.events[0].actor).toMatch(/^advertiser-token:\d+$/);
    const id = res.body.data.id as string;

    const mine = (await portal('GET', '/reservations', token)).body.data.map(
      (r: { campaign_name: string }) => r.campaign_name,
    );
    expect(mine).toEqual(
      expect.arrayContaining(['Portal spring', DEMO_CAMPAIGNS.delivered, DEMO_CAMPAIGNS.awaiting]),
    );
    expect((await portal('GET', '/reservations', other)).body.data).toEqual([]);
    expect((await portal('GET', `/reservations/${id}`, other)).status).toBe(404);
    expect((await portal('POST', `/reservations/${id}/withdraw`, other)).status).toBe(404);
    // The publisher sees it in its inbox, held like any other.
    expect((await admin(t, 'GET', `/market/reservations/${id}`)).body.data.status).toBe('held');

    const withdrawn = await portal('POST', `/reservations/${id}/withdraw`, token);
    expect(withdrawn.body.data).toMatchObject({ status: 'rejected', reason: 'Withdrawn by the advertiser' });
    // Both writes are in the audit log, naming the advertiser token.
    const audit = (await admin(t, 'GET', '/audit?limit=10')).body.data.filter(
      (r: { targetId: string }) => r.targetId === id,
    );
    expect(audit.map((r: { summary: string }) => r.summary)).toEqual([
      expect.stringMatching(/^Advertiser token #\d+ withdrew reservation “Portal spring”$/),
      expect.stringMatching(/^Advertiser token #\d+ made reservation “Portal spring”$/),
    ]);
    const again = await portal('POST', `/reservations/${id}/withdraw`, token);
    expect(again.status).toBe(409);
    expect(again.body.code).toBe('conflict');
  });

  it('refuses a product it is not offered and fields it may not set, naming the field; nothing is held', async () => {
    const before = (await portal('GET', '/reservations', token)).body.data.length;
    const month = monthOf(t.clock.now, 2);
    const foreign = await portal('POST', '/reservations', token, {
      campaign_name: 'Sneaky',
      lines: [{ product_id: 'prd_00000000000000000000000000', geo: 'DE', month, impressions: 10 }],
    });
    expect(foreign.status).toBe(422);
    expect(foreign.body).toMatchObject({
      code: 'validation_failed',
      details: { field: 'lines.0.product_id' },
    });
    const forOther = await portal('POST', '/reservations', token, {
      advertiser_id: 'adv_00000000000000000000000000',
      campaign_name: 'Sneaky',
      lines: [{ product_id: demo.products[0], geo: 'DE', month, impressions: 10 }],
    });
    expect(forOther.status).toBe(422);
    expect(forOther.body.code).toBe('validation_failed');
    expect((await portal('GET', '/reservations', token)).body.data).toHaveLength(before);
  });

  it('uploads a creative for a line of its own reservation, moderated by the publisher', async () => {
    const id = demo.reservations.awaiting;
    const upload = (as: string, bytes: Buffer, line = 1) =>
      t.app.inject({
        method: 'POST',
        url: `/api/portal/v1/reservations/${id}/lines/${line}/creatives?landing_url=${encodeURIComponent('https://luckyspin.example/spring')}&name=spring`,
        headers: { authorization: `Bearer ${as}`, 'content-type': 'image/png' },
        payload: bytes,
      });
    const wrong = await upload(token, png(300, 250));
    expect(wrong.statusCode).toBe(422);
    expect(wrong.json().details).toMatchObject({ rule: 'size', field: 'body' });
    expect((await upload(other, png(728, 90))).statusCode).toBe(404);
    const ok = await upload(token, png(728, 90));
    expect(ok.statusCode, ok.body).toBe(201);
    expect(ok.json().data).toMatchObject({
      reservation_id: id,
      reservation_line_no: 1,
      status: 'pending',
      name: 'spring',
    });
    expect((await upload(token, png(728, 90))).statusCode).toBe(200);
    const mine = (await portal('GET', '/creatives', token)).body.data;
    expect(mine.map((c: { id: string }) => c.id)).toEqual([ok.json().data.id]);
    expect((await portal('GET', '/creatives', other)).body.data).toEqual([]);
    const queue = (await admin(t, 'GET', `/creatives?reservation_id=${id}&status=pending`)).body.data;
    expect(queue.map((c: { id: string }) => c.id)).toEqual([ok.json().data.id]);
  });

  it('shows delivery beside Podium’s own counts once booked, and the statements with their CSV', async () => {
    const delivered = await portal('GET', `/reservations/${demo.reservations.delivered}/delivery`, token);
    expect(delivered.status).toBe(200);
    expect(delivered.body.data.lines.length).toBeGreaterThan(0);
    const totals = delivered.body.data.lines[0].totals;
    expect(totals.impressions).toBeGreaterThan(0);
    expect(totals).toHaveProperty('podium_impressions');
    expect(totals).toHaveProperty('impression_discrepancy_pct');
    expect(
      (await portal('GET', `/reservations/${demo.reservations.awaiting}/delivery`, token)).body.data,
    ).toBeNull();

    const list = (await portal('GET', '/statements', token)).body.data;
    expect(list.map((s: { id: string }) => s.id)).toEqual([demo.statementId]);
    const s = (await portal('GET', `/statements/${demo.statementId}`, token)).body.data;
    const issued = (await admin(t, 'GET', `/market/statements/${demo.statementId}`)).body.data;
    expect(s.total).toBe(issued.total);
    const raw = await t.app.inject({
      url: `/api/portal/v1/statements/${demo.statementId}/csv`,
      headers: { authorization: `Bearer ${token}` },
    });
    expect(raw.headers['content-type']).toBe('text/csv; charset=utf-8');
    expect(raw.body).toContain(issued.total);
    expect((await portal('GET', `/statements/${demo.statementId}`, other)).status).toBe(404);
    expect((await portal('GET', '/statements?month=2026-13', token)).status).toBe(422);
  });
});

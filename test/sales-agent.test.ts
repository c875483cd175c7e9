import { randomBytes } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import {
  ADCPMultiAgentClient,
  CreateMediaBuyAsyncSubmittedSchema,
  GetAdCPCapabilitiesResponseSchema,
  GetMediaBuyDeliveryResponseSchema,
  GetProductsResponseSchema,
  ListCreativeFormatsResponseSchema,
} from '@adcp/client';
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

// The AdCP sales agent, driven by the official client (@adcp/client) over MCP on loopback, in
// front of a loopback ad server whose reports the test writes.

let t: TestApp & { admin: string };
let ads: LoopbackServer;
let ref: ReferenceServer;
let agentUrl: string;
let advertiser: string;
let token: string;
let cpm: string;
let flat: string;
let report: ReportRow[] = [];

const client = (authToken: string) =>
  new ADCPMultiAgentClient([
    { id: 'podium', name: 'Podium', agent_uri: agentUrl, protocol: 'mcp', auth_token: authToken },
  ]).agent('podium');
const ACCOUNT = { brand: { domain: 'luckyspin.example' }, operator: 'luckyspin.example' };

beforeAll(async () => {
  const base = await testApp(
    {
      secretKeys: [{ version: 1, key: randomBytes(32) }],
      outboundConnectTimeoutMs: 300,
      outboundTimeoutMs: 1000,
    },
    { outboundTestOnly: { allowHttp: true, allowAddresses: ['127.0.0.1'] } },
  );
  const admins = await base.app.services.access.createAdminToken(
    'market',
    ['adserver:read', 'adserver:write', 'market:read', 'market:write'],
    null,
  );
  t = { ...base, admin: admins.token };
  [ads, ref] = await Promise.all([loopbackServer(), referenceServer()]);
  ads.handle(reportingAdServer('UTC', () => report));
  t.clock.now = new Date('2026-11-23T10:00:00Z');
  const fx = await bookable(t, { ...ref, url: `${ads.origin}/v1` }, 'agentpub');
  advertiser = (
    await admin(t, 'POST', '/market/advertisers', { publisher: 'agentpub', name: 'Lucky Spin Ltd' })
  ).body.data.id;
  const product = async (pricing: string, price: string, name: string, placement: number) => {
    const r = await admin(t, 'POST', '/market/products', {
      connection_id: fx.conn,
      placement_id: placement,
      name,
      geos: ['MT', 'DE'],
      first_month: '2026-12',
      last_month: '2027-02',
      pricing,
      price,
    });
    if (r.status !== 201) throw new Error(r.raw);
    return r.body.data.id as string;
  };
  cpm = await product('cpm', '12.50', 'Home leaderboard', fx.leaderboard);
  flat = await product('flat', '1500.00', 'Home MPU, the month', fx.mpu);
  const minted = await admin(t, 'POST', `/market/advertisers/${advertiser}/tokens`, { name: 'buying agent' });
  expect(minted.status, minted.raw).toBe(201);
  token = minted.body.data.token;
  await t.app.listen({ port: 0, host: '127.0.0.1' });
  agentUrl = `http://127.0.0.1:${(t.app.server.address() as AddressInfo).port}/adcp/mcp`;
}, 60_000);
afterAll(async () => {
  await Promise.all([t?.close(), ads?.close(), ref?.close()]);
});

describe('the sales agent through @adcp/client', () => {
  it('discovers capabilities, products with their prices and the creative formats', async () => {
    const agent = client(token);
    const caps = await agent.getAdcpCapabilities({});
    expect(caps.success, caps.error).toBe(true);
    const c = GetAdCPCapabilitiesResponseSchema.parse(caps.data);
    expect(c.adcp.major_versions).toEqual([3]);
    expect(c.supported_protocols).toEqual(['media_buy']);

    const res = await agent.getProducts({ buying_mode: 'brief', brief: 'leaderboard in Malta' });
    expect(res.success, res.error).toBe(true);
    const { products } = GetProductsResponseSchema.parse(res.data);
    expect(products.map((p) => p.product_id)).toEqual([cpm]);
    expect(products[0]).toMatchObject({
      name: 'Home leaderboard',
      delivery_type: 'guaranteed',
      pricing_options: [
        { pricing_option_id: `${cpm}:cpm`, pricing_model: 'cpm', currency: 'EUR', fixed_price: 12.5 },
      ],
      format_ids: [{ id: 'display_728x90', width: 728, height: 90 }],
    });
    const all = GetProductsResponseSchema.parse((await agent.getProducts({ buying_mode: 'wholesale' })).data);
    expect(all.products.map((p) => p.product_id).sort()).toEqual([cpm, flat].sort());

    const formats = await agent.listCreativeFormats({});
    expect(formats.success, formats.error).toBe(true);
    const f = ListCreativeFormatsResponseSchema.parse(formats.data);
    expect(f.formats.map((x) => x.format_id.id)).toEqual(['display_300x250', 'display_728x90']);
  });

  it('books a media buy as a reservation awaiting approval, then reads delivery after approval and a report pull', async () => {
    const agent = client(token);
    const buy = await agent.createMediaBuy({
      buyer_ref: 'winter-2026',
      account: ACCOUNT,
      brand: ACCOUNT.brand,
      start_time: '2026-12-01T00:00:00Z',
      end_time: '2027-01-31T23:59:59Z',
      packages: [
        {
          buyer_ref: 'lb-mt',
          product_id: cpm,
          pricing_option_id: `${cpm}:cpm`,
          budget: 2500,
          targeting_overlay: { geo_countries: ['MT'] },
        },
        {
          buyer_ref: 'mpu-de',
          product_id: flat,
          pricing_option_id: `${flat}:flat`,
          budget: 3000,
          impressions: 60_001,
          targeting_overlay: { geo_countries: ['DE'] },
        },
      ],
    } as never);
    expect(buy.status).toBe('submitted');
    const submitted = buy.data as unknown as Record<string, unknown>;
    CreateMediaBuyAsyncSubmittedSchema.parse(submitted);
    const id = submitted.media_buy_id as string;
    expect(id).toMatch(/^rsv_/);
    // €2 500 at €12.50 CPM buys 200 000 impressions, over two months; the flat package names its own.
    const r = (await admin(t, 'GET', `/market/reservations/${id}`)).body.data;
    expect(r).toMatchObject({ status: 'held', advertiser_id: advertiser, campaign_name: 'winter-2026' });
    expect(
      r.lines.map((l: Record<string, unknown>) => [l.product_id, l.geo, l.month, l.impressions]),
    ).toEqual([
      [cpm, 'MT', '2026-12', 100_000],
      [cpm, 'MT', '2027-01', 100_000],
      [flat, 'DE', '2026-12', 30_001],
      [flat, 'DE', '2027-01', 30_000],
    ]);
    expect(r.events[0].actor).toMatch(/^advertiser-token:\d+$/);

    // The same buyer_ref again is the same buy, not a second hold.
    const again = await agent.createMediaBuy({
      buyer_ref: 'winter-2026',
      account: ACCOUNT,
      brand: ACCOUNT.brand,
      start_time: '2026-12-01T00:00:00Z',
      end_time: '2027-01-31T23:59:59Z',
      packages: [{ buyer_ref: 'x', product_id: cpm, pricing_option_id: `${cpm}:cpm`, budget: 1 }],
    } as never);
    expect((again.data as { media_buy_id: string }).media_buy_id).toBe(id);
    expect(
      (await admin(t, 'GET', `/market/reservations?advertiser_id=${advertiser}`)).body.data,
    ).toHaveLength(1);

    const pending = GetMediaBuyDeliveryResponseSchema.parse(
      (await agent.getMediaBuyDelivery({ media_buy_ids: [id] })).data,
    );
    expect(pending.media_buy_deliveries[0]).toMatchObject({
      media_buy_id: id,
      status: 'pending_activation',
      totals: { impressions: 0 },
    });

    const booked = (await admin(t, 'POST', `/market/reservations/${id}/approve`)).body.data;
    expect(booked.status).toBe('booked');
    const [l1, , l3] = booked.lines.map((l: { line_item_id: string }) => l.line_item_id);
    report = [
      { line_item_id: l1, date: '2026-12-01', impressions: 40_000, clicks: 31 },
      { line_item_id: l1, date: '2026-12-02', impressions: 2_345, clicks: 4 },
      { line_item_id: l3, date: '2026-12-01', impressions: 1_000, clicks: 2 },
    ];
    t.clock.now = new Date('2026-12-03T10:00:00Z');
    const pulled = await admin(t, 'POST', `/adserver/connections/${booked.connection_id}/reports/pull`);
    expect(pulled.body.data, pulled.raw).toMatchObject({ state: 'ok' });

    const res = await agent.getMediaBuyDelivery({
      media_buy_ids: [id],
      start_date: '2026-12-01',
      end_date: '2026-12-31',
    });
    expect(res.success, res.error).toBe(true);
    const d = GetMediaBuyDeliveryResponseSchema.parse(res.data);
    const mine = d.media_buy_deliveries[0]!;
    expect(mine.status).toBe('active');
    // CPM: 42 345 × 12.50 / 1000 = 529.31 (529.3125 rounded); flat: 1 500 × 1 day / 31 = 48.39.
    expect(mine.by_package).toEqual([
      expect.objectContaining({
        package_id: 'winter-2026:1',
        buyer_ref: 'lb-mt',
        impressions: 42_345,
        clicks: 35,
        spend: 529.31,
      }),
      expect.objectContaining({
        package_id: 'winter-2026:2',
        buyer_ref: 'mpu-de',
        impressions: 1_000,
        clicks: 2,
        spend: 48.39,
      }),
    ]);
    expect(mine.totals).toMatchObject({ impressions: 43_345, clicks: 37, spend: 577.7 });
  });

  it('refuses what the marketplace cannot sell with AdCP errors naming the field', async () => {
    const agent = client(token);
    const base = {
      account: ACCOUNT,
      brand: ACCOUNT.brand,
      start_time: '2026-12-01T00:00:00Z',
      end_time: '2026-12-31T23:59:59Z',
    };
    const pkg = {
      buyer_ref: 'p',
      product_id: cpm,
      pricing_option_id: `${cpm}:cpm`,
      budget: 100,
      targeting_overlay: { geo_countries: ['MT'] },
    };
    const cases: [Record<string, unknown>, string, string][] = [
      [
        { ...base, buyer_ref: 'mid', start_time: '2026-12-05T00:00:00Z', packages: [pkg] },
        'start_time',
        'first day of a month',
      ],
      [
        { ...base, buyer_ref: 'geo', packages: [{ ...pkg, targeting_overlay: { geo_countries: ['SE'] } }] },
        'packages[0].targeting_overlay.geo_countries',
        'SE is not offered',
      ],
      [
        { ...base, buyer_ref: 'opt', packages: [{ ...pkg, pricing_option_id: 'other' }] },
        'packages[0].pricing_option_id',
        'pricing option',
      ],
      [
        { ...base, buyer_ref: 'budget', packages: [{ ...pkg, impressions: 9_000 }] },
        'packages[0].budget',
        'buys 8000 impressions',
      ],
      [
        { ...base, buyer_ref: 'sold-out', packages: [{ ...pkg, budget: 100_000 }] },
        'lines.0.impressions',
        'remain',
      ],
    ];
    for (const [req, field, text] of cases) {
      const res = await agent.createMediaBuy(req as never);
      const err = JSON.stringify(res.data ?? res.error);
      expect(err, JSON.stringify(req)).toContain(field);
      expect(err).toContain(text);
      expect(res.success).toBe(false);
    }
    // Nothing was held by a refused buy.
    expect(
      (await admin(t, 'GET', `/market/reservations?advertiser_id=${advertiser}`)).body.data,
    ).toHaveLength(1);
  });

  it('answers 401 without a live advertiser token; a revoked token stops working', async () => {
    const post = (auth?: string) =>
      fetch(agentUrl, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          accept: 'application/json, text/event-stream',
          ...(auth ? { authorization: auth } : {}),
        },
        body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
      });
    expect((await post()).status).toBe(401);
    expect((await post('Bearer pdb_nope')).status).toBe(401);
    const listed = await post(`Bearer ${token}`);
    expect(listed.status).toBe(200);
    const tools = ((await listed.json()) as { result: { tools: { name: string }[] } }).result.tools.map(
      (x) => x.name,
    );
    expect(tools.sort()).toEqual([
      'create_media_buy',
      'get_adcp_capabilities',
      'get_media_buy_delivery',
      'get_products',
      'list_creative_formats',
    ]);

    const second = (await admin(t, 'POST', `/market/advertisers/${advertiser}/tokens`, { name: 'to revoke' }))
      .body.data;
    expect((await post(`Bearer ${second.token}`)).status).toBe(200);
    const list = (await admin(t, 'GET', `/market/advertisers/${advertiser}/tokens`)).body.data;
    expect(JSON.stringify(list)).not.toContain(second.token);
    expect(list.map((x: { hint: string }) => x.hint)).toContain(second.hint);
    const revoked = await admin(t, 'DELETE', `/market/advertisers/${advertiser}/tokens/${second.id}`);
    expect(revoked.body.data.revoked_at).not.toBeNull();
    expect((await post(`Bearer ${second.token}`)).status).toBe(401);
    const [row] = await t.db.query<{ token_hash: Buffer }>(
      'SELECT token_hash FROM market_advertiser_tokens WHERE id = $1',
      [second.id],
    );
    expect(row!.token_hash.toString('utf8')).not.toContain(second.token);
  });
});

import { randomBytes } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import {
  ADCPMultiAgentClient,
  CreateMediaBuyAsyncSubmittedSchema,
  GetAdCPCapabilitiesResponseSchema,
  GetMediaBuyDeliveryResponseSchema,
  GetProductsResponseSchema,
  ListCreativeFormatsResponseSchema,
  ListCreativesResponseSchema,
  SyncCreativesResponseSchema,
  SyncCreativesSuccessSchema,
  UpdateMediaBuyErrorSchema,
  UpdateMediaBuySuccessSchema,
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
import { png } from './creative-images.ts';
import { eventually, type TestApp, testApp } from './helpers.ts';
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
// The buyer's asset host: on loopback, reachable only through the test-only allow-list of 127.0.0.1.
let assets: LoopbackServer;
const files = new Map<string, Buffer>();
let assetHits = 0;
const LEADERBOARD = png(728, 90, { rgb: [10, 120, 200] });

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
    ['adserver:read', 'adserver:write', 'market:read', 'market:write', 'creatives:moderate'],
    null,
  );
  t = { ...base, admin: admins.token };
  [ads, ref, assets] = await Promise.all([loopbackServer(), referenceServer(), loopbackServer()]);
  assets.handle((req, res) => {
    assetHits++;
    const f = files.get(req.url ?? '');
    if (!f) return void res.writeHead(404).end();
    res.writeHead(200, { 'content-type': 'image/png' }).end(f);
  });
  files.set('/winter-728x90.png', LEADERBOARD);
  files.set('/mpu.png', png(300, 250, { rgb: [200, 10, 10] }));
  files.set('/heavy.png', png(728, 90, { noise: true }));
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
  await Promise.all([t?.close(), ads?.close(), ref?.close(), assets?.close()]);
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

    // The buyer syncs a creative for the leaderboard package: fetched from its host, awaiting moderation.
    const creative = {
      creative_id: 'lb-winter',
      name: 'Winter leaderboard',
      format_id: {
        agent_url: `${agentUrl.replace(/\/mcp$/, '')}`,
        id: 'display_728x90',
        width: 728,
        height: 90,
      },
      assets: {
        image: { url: `${assets.origin}/winter-728x90.png`, width: 728, height: 90 },
        click_url: { url: 'https://luckyspin.example/winter' },
      },
    };
    const sync = await agent.syncCreatives({
      account: ACCOUNT,
      creatives: [creative],
      assignments: [{ creative_id: 'lb-winter', package_id: 'winter-2026:1' }],
    } as never);
    expect(sync.success, JSON.stringify(sync.error)).toBe(true);
    const synced = SyncCreativesSuccessSchema.parse(sync.data);
    expect(synced.creatives[0]).toMatchObject({
      creative_id: 'lb-winter',
      action: 'created',
      assigned_to: ['winter-2026:1'],
    });
    // The same sync again changes nothing.
    const repeat = await agent.syncCreatives({
      account: ACCOUNT,
      creatives: [creative],
      assignments: [{ creative_id: 'lb-winter', package_id: 'winter-2026:1' }],
    } as never);
    expect(SyncCreativesSuccessSchema.parse(repeat.data).creatives[0]!.action).toBe('unchanged');
    const listed = ListCreativesResponseSchema.parse((await agent.listCreatives({})).data);
    expect(listed.creatives).toHaveLength(1);
    expect(listed.creatives[0]).toMatchObject({
      creative_id: 'lb-winter',
      status: 'pending_review',
      format_id: { id: 'display_728x90' },
      assignments: {
        assignment_count: 1,
        assigned_packages: [{ package_id: 'winter-2026:1', buyer_ref: 'lb-mt' }],
      },
    });
    // One creative per reservation line of the package (two months), each moderated by the operator.
    const queue = (await admin(t, 'GET', `/creatives?reservation_id=${id}&status=pending`)).body.data;
    expect(queue.map((c: { reservation_line_no: number }) => c.reservation_line_no).sort()).toEqual([1, 2]);
    for (const c of queue)
      expect((await admin(t, 'POST', `/creatives/${c.id}/approve`)).body.data.status).toBe('approved');
    const imageUrl = queue[0].url as string;

    const booked = (await admin(t, 'POST', `/market/reservations/${id}/approve`)).body.data;
    expect(booked.status).toBe('booked');
    // The booked lines carry the approved creative, so the draft order pushed holds its tag.
    const booking = (await admin(t, 'GET', `/adserver/bookings/${booked.booking_id}`)).body.data;
    expect(
      booking.lines.map((l: { approved_creatives: { image_url: string }[] }) =>
        l.approved_creatives.map((c) => c.image_url),
      ),
    ).toEqual([[imageUrl], [imageUrl], [], []]);
    expect(booking.lines[0].creatives[0].tag).toContain(`/ad/${booking.lines[0].click_codes[0]}`);
    const approved = ListCreativesResponseSchema.parse((await agent.listCreatives({})).data);
    expect(approved.creatives[0]!.status).toBe('approved');
    // Podium's own tracking of the first line's banner: five impressions and a click on 1 December.
    t.clock.now = new Date('2026-12-01T12:00:00Z');
    const code = booking.lines[0].click_codes[0] as string;
    const browser = {
      'user-agent': 'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 Chrome/120.0 Safari/537.36',
    };
    for (let i = 0; i < 5; i++) await t.app.inject({ method: 'GET', url: `/imp/${code}`, headers: browser });
    expect((await t.app.inject({ method: 'GET', url: `/go/${code}`, headers: browser })).statusCode).toBe(
      302,
    );
    expect(
      await eventually(async () => {
        const rows = await t.app.services.tracking.countsByCode([code], '2026-12-01', '2026-12-31', 'UTC');
        return rows.some((r) => r.impressions === 5 && r.clicks === 1);
      }),
    ).toBe(true);
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
        // Beside the ad server's figures, Podium's own: (42 345 − 5) / 42 345 and (35 − 1) / 35.
        ext: {
          podium: {
            podium_impressions: 5,
            podium_clicks: 1,
            impression_discrepancy_pct: '99.99',
            click_discrepancy_pct: '97.14',
            timezone: 'UTC',
          },
        },
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

  it('sync_creatives fetches only through the SSRF guard and refuses what an upload refuses, per creative', async () => {
    const agent = client(token);
    const img = (url: string, w = 728, h = 90) => ({
      image: { url, width: w, height: h },
      click_url: { url: 'https://luckyspin.example/' },
    });
    const fmt = { agent_url: 'https://podium.test/adcp', id: 'display_728x90', width: 728, height: 90 };
    const hits = assetHits;
    const res = await agent.syncCreatives({
      account: ACCOUNT,
      creatives: [
        {
          creative_id: 'unassigned',
          name: 'u',
          format_id: fmt,
          assets: img(`${assets.origin}/winter-728x90.png`),
        },
        // 127.0.0.2 is loopback but not on the test's allow-list: refused before any connection.
        {
          creative_id: 'private',
          name: 'p',
          format_id: fmt,
          assets: img(`http://127.0.0.2:${new URL(assets.origin).port}/winter-728x90.png`),
        },
        { creative_id: 'wrong-size', name: 'w', format_id: fmt, assets: img(`${assets.origin}/mpu.png`) },
        { creative_id: 'missing', name: 'm', format_id: fmt, assets: img(`${assets.origin}/nope.png`) },
        { creative_id: 'heavy', name: 'h', format_id: fmt, assets: img(`${assets.origin}/heavy.png`) },
      ],
      assignments: ['private', 'wrong-size', 'missing', 'heavy'].map((c) => ({
        creative_id: c,
        package_id: 'winter-2026:1',
      })),
    } as never);
    expect(res.success, JSON.stringify(res.error)).toBe(true);
    const out = SyncCreativesResponseSchema.parse(res.data) as { creatives: Record<string, unknown>[] };
    const byId: Record<string, Record<string, unknown>> = Object.fromEntries(
      out.creatives.map((c) => [c.creative_id, c]),
    );
    for (const c of Object.values(byId)) expect(c.action).toBe('failed');
    expect(JSON.stringify(byId.unassigned)).toContain('assign the creative to a package');
    expect(JSON.stringify(byId.private)).toContain('not a public address');
    expect(JSON.stringify(byId['wrong-size'])).toContain('rule size');
    expect(JSON.stringify(byId.missing)).toContain('HTTP 404');
    expect(JSON.stringify(byId.heavy)).toMatch(/rule weight/);
    // The private address was never connected to: only the three allowed fetches reached the host.
    expect(assetHits - hits).toBe(3);
    expect(ListCreativesResponseSchema.parse((await agent.listCreatives({})).data).creatives).toHaveLength(1);
  });

  it('update_media_buy resizes or withdraws a buy awaiting approval, and refuses once approved', async () => {
    const agent = client(token);
    const made = await agent.createMediaBuy({
      buyer_ref: 'spring-2027',
      account: ACCOUNT,
      brand: ACCOUNT.brand,
      start_time: '2027-02-01T00:00:00Z',
      end_time: '2027-02-28T23:59:59Z',
      packages: [
        {
          buyer_ref: 'lb-de',
          product_id: cpm,
          pricing_option_id: `${cpm}:cpm`,
          budget: 100,
          targeting_overlay: { geo_countries: ['DE'] },
        },
      ],
    } as never);
    const id = (made.data as { media_buy_id: string }).media_buy_id;
    const resized = await agent.updateMediaBuy({
      account: ACCOUNT,
      media_buy_id: id,
      packages: [{ package_id: 'spring-2027:1', budget: 250 }],
    } as never);
    expect(resized.success, JSON.stringify(resized.error)).toBe(true);
    expect(UpdateMediaBuySuccessSchema.parse(resized.data).affected_packages).toEqual([
      expect.objectContaining({ package_id: 'spring-2027:1', impressions: 20_000 }),
    ]);
    const r = (await admin(t, 'GET', `/market/reservations/${id}`)).body.data;
    expect(r.lines[0].impressions).toBe(20_000);
    const avail = (await admin(t, 'GET', `/market/products/${cpm}/availability?month=2027-02&geo=DE`)).body
      .data;
    expect(avail[0].held).toBe(20_000);

    const tooMuch = await agent.updateMediaBuy({
      account: ACCOUNT,
      media_buy_id: id,
      packages: [{ package_id: 'spring-2027:1', impressions: 10_000_000 }],
    } as never);
    expect(tooMuch.success).toBe(false);
    expect(JSON.stringify(tooMuch.data ?? tooMuch.error)).toContain('remain');
    expect((await admin(t, 'GET', `/market/reservations/${id}`)).body.data.lines[0].impressions).toBe(20_000);

    const withdrawn = await agent.updateMediaBuy({
      account: ACCOUNT,
      media_buy_id: id,
      paused: true,
    } as never);
    expect(UpdateMediaBuySuccessSchema.parse(withdrawn.data).ext).toMatchObject({
      podium: { reservation_status: 'rejected', media_buy_status: 'canceled' },
    });
    expect(
      (await admin(t, 'GET', `/market/products/${cpm}/availability?month=2027-02&geo=DE`)).body.data[0].held,
    ).toBe(0);

    // The winter buy is booked: the publisher's now.
    const [winter] = (await admin(t, 'GET', `/market/reservations?advertiser_id=${advertiser}&status=booked`))
      .body.data;
    const late = await agent.updateMediaBuy({
      account: ACCOUNT,
      media_buy_id: winter.id,
      packages: [{ package_id: 'winter-2026:1', impressions: 1 }],
    } as never);
    expect(late.success).toBe(false);
    // The client carries the AdCP error either as the task's data or as its error text.
    if (late.data) UpdateMediaBuyErrorSchema.parse(late.data);
    const said = JSON.stringify(late.data ?? late.error);
    expect(said).toContain('CONFLICT');
    expect(said).toContain('only a buy awaiting approval can change');
  });

  it('list_authorized_properties names the publisher domains of the products', async () => {
    const res = await client(token).executeTask('list_authorized_properties', {});
    expect(res.success, JSON.stringify(res.error)).toBe(true);
    expect((res.data as { publisher_domains: string[] }).publisher_domains.length).toBeGreaterThan(0);
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
      'list_authorized_properties',
      'list_creative_formats',
      'list_creatives',
      'sync_creatives',
      'update_media_buy',
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

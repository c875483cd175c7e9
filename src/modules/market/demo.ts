import type { AdserverService } from '../adserver/service.ts';
import type { MarketService } from './service.ts';

/** The publisher the demo's marketplace sells for (its ad-server connection and advertisers). */
export const DEMO_PUBLISHER = 'casino-guide-media';
/** Impressions of the demo's reservations, so tests and screens can name them. */
export const DEMO_CAMPAIGNS = {
  /** Booked last month and delivered (LIVE on the reference ad server): its statement is issued. */
  delivered: 'Autumn welcome bonus',
  /** Approved: a DRAFT order on the reference ad server, next month. */
  booked: 'Winter jackpot week',
  /** Held, awaiting the publisher's approval. */
  awaiting: 'Spring free spins',
} as const;

/** The reference ad server the demo connects to, as far as the seeding needs it. */
export interface DemoAdServer {
  /** Base URL, `http://127.0.0.1:<port>/api/v1` (reachable through the loopback allowance). */
  url: string;
  apiKey: string;
  /** The ad server's console action: takes an order live, so it delivers and reports. */
  activate(orderId: string): Promise<boolean>;
}

/** What the seeding left, for the start banner and tests. */
export interface MarketDemo {
  connectionId: string;
  advertiserId: string;
  products: string[];
  reservations: Record<keyof typeof DEMO_CAMPAIGNS, string>;
  statementId: string;
}

/** `YYYY-MM` of the month `offset` months from the one `at` falls in (UTC). */
export function monthOf(at: Date, offset = 0): string {
  const d = new Date(Date.UTC(at.getUTCFullYear(), at.getUTCMonth() + offset, 1));
  return d.toISOString().slice(0, 7);
}

/**
 * Seeds the marketplace of the demo against a running reference ad server: a verified connection
 * with its inventory, three placements mapped to its slots, products priced as a CPM and as a flat
 * monthly fee, an advertiser, a campaign booked last month and delivered (report pulled, statement
 * issued), one approved as a DRAFT order for next month, and one reservation awaiting approval.
 *
 * `clock` is the clock of `services`: the delivered campaign is reserved and approved while it
 * reads the 3rd of last month (a reservation for a month that is over is refused, as it should
 * be), then it is set back to `now` for the pull, the statement and the rest.
 */
export async function seedMarketDemo(
  services: { adserver: AdserverService; market: MarketService },
  ref: DemoAdServer,
  clock: { now: Date },
  opts: { siteId?: number; log?: (msg: string) => void } = {},
): Promise<MarketDemo> {
  const now = clock.now;
  try {
    return await seed(services, ref, clock, opts);
  } finally {
    // Whatever failed, the clock reads the time it read before.
    clock.now = now;
  }
}

async function seed(
  services: { adserver: AdserverService; market: MarketService },
  ref: DemoAdServer,
  clock: { now: Date },
  opts: { siteId?: number; log?: (msg: string) => void },
): Promise<MarketDemo> {
  const { adserver, market } = services;
  const log = opts.log ?? (() => {});
  const now = clock.now;
  const last = monthOf(now, -1);
  clock.now = new Date(`${last}-03T10:00:00Z`);
  const actor = 'system:demo';

  const conn = await adserver.connections.create({
    publisher: DEMO_PUBLISHER,
    base_url: ref.url,
    api_key: ref.apiKey,
  });
  if (conn.status !== 'connected')
    throw new Error(
      `the reference ad server at ${ref.url} did not verify: ${conn.last_error ?? conn.status}`,
    );
  const sync = await adserver.syncInventory(conn.id);
  if (!sync.ok) throw new Error(`inventory sync of ${ref.url} failed`);
  const place = async (name: string, sizes: string[], inventoryId: string) => {
    const p = await adserver.createPlacement({
      publisher: DEMO_PUBLISHER,
      name,
      sizes,
      ...(opts.siteId ? { site_id: opts.siteId } : {}),
    });
    await adserver.mapPlacement(p.id, conn.id, inventoryId);
    return p.id;
  };
  const leaderboard = await place('Home leaderboard', ['728x90'], 'slot-home-leaderboard');
  const mpu = await place('Home MPU', ['300x250'], 'slot-home-mpu');
  const skin = await place('Site skin', ['1920x1080'], 'slot-new-skin');

  const offer = { first_month: last, last_month: monthOf(now, 4) };
  const products = [
    await market.createProduct({
      connection_id: conn.id,
      placement_id: leaderboard,
      name: 'Home leaderboard',
      geos: ['DE', 'SE', 'MT'],
      ...offer,
      pricing: 'cpm',
      price: '12.50',
    }),
    await market.createProduct({
      connection_id: conn.id,
      placement_id: mpu,
      name: 'Home MPU',
      geos: ['DE', 'SE'],
      ...offer,
      pricing: 'cpm',
      price: '8.75',
    }),
    await market.createProduct({
      connection_id: conn.id,
      placement_id: skin,
      name: 'Site skin (monthly)',
      geos: ['DE'],
      ...offer,
      pricing: 'flat',
      price: '1500.00',
    }),
  ];
  const [lb, mp, sk] = products as [(typeof products)[0], (typeof products)[0], (typeof products)[0]];
  const adv = await market.createAdvertiser({
    publisher: DEMO_PUBLISHER,
    name: 'Lucky Spin Ltd',
    contacts: [{ name: 'Mia Media', email: 'mia@luckyspin.example', role: 'media buyer' }],
  });

  type Line = { product_id: string; geo: string; month: string; impressions: number };
  const reserve = (campaign_name: string, lines: Line[]) =>
    market.reserve({ advertiser_id: adv.id, campaign_name, lines }, actor);

  // Last month: reserved, approved, taken live on the ad server.
  const delivered = await reserve(DEMO_CAMPAIGNS.delivered, [
    { product_id: lb.id, geo: 'DE', month: last, impressions: 400_000 },
    { product_id: sk.id, geo: 'DE', month: last, impressions: 150_000 },
  ]);
  const approved = await market.approve(delivered.id, actor);
  if (!approved.order_id || !(await ref.activate(approved.order_id)))
    throw new Error(`the reference ad server did not take order ${approved.order_id} live`);

  clock.now = now;
  const pull = await adserver.pullReports(conn.id);
  if (pull.state !== 'ok') throw new Error(`the report pull failed: ${pull.error ?? pull.state}`);
  const statement = await market.statements.issue(delivered.id, last, actor);

  const next = monthOf(now, 1);
  const booked = await reserve(DEMO_CAMPAIGNS.booked, [
    { product_id: lb.id, geo: 'SE', month: next, impressions: 150_000 },
    { product_id: mp.id, geo: 'SE', month: next, impressions: 100_000 },
  ]);
  await market.approve(booked.id, actor);
  const awaiting = await reserve(DEMO_CAMPAIGNS.awaiting, [
    { product_id: lb.id, geo: 'MT', month: monthOf(now, 2), impressions: 60_000 },
  ]);

  // Every cell of the calendar not fetched yet gets its figure now rather than at the job's next
  // run (a cell just fetched keeps its bookings until the ad server's forecast accounts for them).
  for (const p of products)
    for (const cell of await market.availability(p.id))
      if (cell.source === 'pending' && cell.month >= monthOf(now))
        await market.refreshNow(p.id, { geo: cell.geo, month: cell.month }).catch(() => {});
  log(
    `demo: marketplace seeded on the reference ad server (${products.length} products, ${DEMO_CAMPAIGNS.delivered} delivered with its statement, one DRAFT order, one reservation awaiting approval)`,
  );
  return {
    connectionId: conn.id,
    advertiserId: adv.id,
    products: products.map((p) => p.id),
    reservations: { delivered: delivered.id, booked: booked.id, awaiting: awaiting.id },
    statementId: statement.id,
  };
}

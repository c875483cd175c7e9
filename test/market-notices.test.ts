import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mailerFromConfig } from '../src/lib/mailer.ts';
import { MarketNotices } from '../src/modules/market/notices.ts';
import { admin, bookable, type ReferenceServer, referenceServer } from './adserver-fixture.ts';
import { adminCall, DB_KIND, type TestApp, testApp } from './helpers.ts';
import { type SmtpSink, startSmtpSink } from './smtp-sink.ts';

let t: TestApp & { admin: string };
let root: string;
let ref: ReferenceServer;
let smtp: SmtpSink;
let fx: Awaited<ReturnType<typeof bookable>>;
let adv: string;
let product: string;
let siteId: number;
let hook: string;

const ANN = 'ann@luckyspin.test';
const BOB = 'bob@luckyspin.test';

beforeAll(async () => {
  smtp = await startSmtpSink();
  const base = await testApp(
    {
      secretKeys: [{ version: 1, key: randomBytes(32) }],
      smtpUrl: smtp.url,
      mailFrom: 'Podium <podium@podium.test>',
    },
    { outboundTestOnly: { allowHttp: true, allowAddresses: ['127.0.0.1'] } },
  );
  const { token } = await base.app.services.access.createAdminToken(
    'market',
    ['adserver:read', 'adserver:write', 'market:read', 'market:write'],
    null,
  );
  root = (await base.app.services.access.createAdminToken('root', ['admin'], null)).token;
  t = { ...base, admin: token };
  ref = await referenceServer();
  t.clock.now = new Date('2026-11-23T10:00:00Z');
  fx = await bookable(t, ref, 'acme');
  // The leaderboard sits on a site: its reservations' events go to that site's endpoints.
  siteId = (await t.app.services.catalog.sites.create({ domain: 'casinoguide.example' })).id;
  await t.db.query('UPDATE adserver_placements SET site_id = $1 WHERE id = $2', [siteId, fx.leaderboard]);
  hook = (
    await adminCall(t.app, root, 'POST', '/webhooks', {
      url: 'http://127.0.0.1:9/hook',
      siteId,
      events: ['reservation.booked', 'reservation.rejected', 'reservation.expired'],
    })
  ).body.data.id;
  adv = (
    await admin(t, 'POST', '/market/advertisers', {
      publisher: 'acme',
      name: 'Lucky Spin Ltd',
      contacts: [
        { name: 'Ann', email: ANN },
        { name: 'Bob', email: BOB, role: 'billing' },
      ],
    })
  ).body.data.id;
  product = (
    await admin(t, 'POST', '/market/products', {
      connection_id: fx.conn,
      placement_id: fx.leaderboard,
      name: 'Home leaderboard',
      geos: ['MT', 'DE'],
      first_month: '2026-12',
      last_month: '2027-03',
      pricing: 'cpm',
      price: '12.50',
    })
  ).body.data.id;
}, 60_000);
afterAll(async () => {
  await Promise.all([t?.close(), ref?.close(), smtp?.close()]);
});

const reserve = async (name: string) => {
  const r = await admin(t, 'POST', '/market/reservations', {
    advertiser_id: adv,
    campaign_name: name,
    lines: [{ product_id: product, geo: 'MT', month: '2026-12', impressions: 10_000 }],
  });
  expect(r.status, r.raw).toBe(201);
  return r.body.data.id as string;
};
/** The reservation's webhook events as recorded in the outbox, with the endpoints they go to. */
const events = async (reservationId: string) =>
  (
    await t.db.query<{ type: string; site_id: number | null; payload: string; endpoints: string[] }>(
      `SELECT e.type, e.site_id, e.payload,
              coalesce(array_agg(d.endpoint_id) FILTER (WHERE d.endpoint_id IS NOT NULL), '{}') AS endpoints
         FROM webhook_events e LEFT JOIN webhook_deliveries d ON d.event_id = e.id
        WHERE e.type LIKE 'reservation.%' GROUP BY e.id ORDER BY e.created_at, e.id`,
    )
  )
    .map((e) => ({ ...e, payload: JSON.parse(e.payload) }))
    .filter((e) => e.payload.data.reservationId === reservationId);
const timeline = async (id: string) =>
  (
    (await admin(t, 'GET', `/market/reservations/${id}`)).body.data.events as {
      kind: string;
      detail: object;
    }[]
  ).map((e) => e.kind);

describe(`notices to the advertiser (${DB_KIND})`, () => {
  it('an approval mails every contact and tells the site webhook, once, with the order id', async () => {
    const id = await reserve('Winter push');
    const approved = await admin(t, 'POST', `/market/reservations/${id}/approve`);
    expect(approved.status, approved.raw).toBe(200);
    const orderId = approved.body.data.order_id as string;

    const [event] = await events(id);
    expect(event).toMatchObject({ type: 'reservation.booked', site_id: siteId, endpoints: [hook] });
    expect(event!.payload).toMatchObject({
      type: 'reservation.booked',
      data: {
        reservationId: id,
        advertiserId: adv,
        campaignName: 'Winter push',
        status: 'booked',
        orderId,
        siteId,
      },
    });

    expect(await t.app.services.marketNotices.sendDue()).toBe(1);
    for (const to of [ANN, BOB]) {
      const m = await smtp.next(to);
      expect(m.subject).toBe(`Reservation ${id} "Winter push" is approved and booked`);
      expect(m.text).toContain(`draft order ${orderId}`);
      expect(m.text).toContain('MT · 2026-12 · 10000 impressions · cpm 12.5000 EUR');
    }
    expect(await timeline(id)).toEqual(['held', 'approval_started', 'booked', 'notice_mailed']);
    // Nothing is owed twice: a second run and a repeated approval send nothing more.
    expect(await t.app.services.marketNotices.sendDue()).toBe(0);
    await admin(t, 'POST', `/market/reservations/${id}/approve`);
    expect(await events(id)).toHaveLength(1);
  });

  it('a rejection carries its reason; an expired hold says so', async () => {
    const rejected = await reserve('Spring push');
    await admin(t, 'POST', `/market/reservations/${rejected}/reject`, {
      reason: 'The slot is kept for a sponsor',
    });
    const expired = await reserve('Summer push');
    t.clock.now = new Date(t.clock.now.getTime() + 3 * 86_400_000);
    expect(await t.app.services.market.expireDue()).toBeGreaterThanOrEqual(1);

    expect((await events(rejected)).map((e) => e.payload.data)).toEqual([
      expect.objectContaining({ status: 'rejected', reason: 'The slot is kept for a sponsor' }),
    ]);
    expect((await events(expired)).map((e) => e.type)).toEqual(['reservation.expired']);
    expect(await t.app.services.marketNotices.sendDue()).toBe(2);
    const subjects = [(await smtp.next(ANN)).subject, (await smtp.next(ANN)).subject].sort();
    expect(subjects).toEqual([
      `Reservation ${rejected} "Spring push" was not approved`,
      `Reservation ${expired} "Summer push" expired before approval`,
    ]);
    expect(await timeline(expired)).toEqual(['held', 'expired', 'notice_mailed']);
    t.clock.now = new Date('2026-11-23T10:00:00Z');
  });

  it('a failed send is tried again later, never lost; with no SMTP server the notice goes to the log', async () => {
    const id = await reserve('Autumn push');
    await admin(t, 'POST', `/market/reservations/${id}/reject`, { reason: 'Budget withdrawn' });
    const logged: string[] = [];
    const log = { info: (m: string) => logged.push(m), warn: (m: string) => logged.push(m) };
    const now = () => t.clock.now;
    // Port 9 on loopback refuses the connection: the send fails, the notice waits with its error.
    const down = mailerFromConfig({ smtpUrl: 'smtp://127.0.0.1:9', mailFrom: 'podium@podium.test' });
    expect(await new MarketNotices(t.db, t.app.services.market, down, log, now).sendDue()).toBe(0);
    const [row] = await t.db.query<{ attempts: number; done_at: unknown; last_error: string }>(
      'SELECT attempts, done_at, last_error FROM market_notices WHERE reservation_id = $1',
      [id],
    );
    expect(row).toMatchObject({ attempts: 1, done_at: null });
    expect(row!.last_error).toMatch(/ECONNREFUSED|connect/i);
    // Not due again before its backoff: the next run at the same moment leaves it.
    const none = mailerFromConfig({ smtpUrl: undefined, mailFrom: 'podium@podium.test' });
    expect(await new MarketNotices(t.db, t.app.services.market, none, log, now).sendDue()).toBe(0);

    t.clock.now = new Date(t.clock.now.getTime() + 10 * 60_000);
    expect(await new MarketNotices(t.db, t.app.services.market, none, log, now).sendDue()).toBe(1);
    expect(logged.at(-1)).toBe(
      `market notice not mailed (no SMTP server, PODIUM_SMTP_URL): Reservation ${id} "Autumn push" was not approved — 2 contact(s)`,
    );
    expect(logged.join('\n')).not.toContain(ANN);
    expect(await timeline(id)).toEqual(['held', 'rejected', 'notice_logged']);
    t.clock.now = new Date('2026-11-23T10:00:00Z');
  });
});

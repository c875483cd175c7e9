import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  DEMO_CAMPAIGNS,
  DEMO_PUBLISHER,
  type MarketDemo,
  monthOf,
  seedMarketDemo,
} from '../src/modules/market/demo.ts';
import { type ReferenceServer, referenceServer } from './adserver-fixture.ts';
import { type TestApp, testApp } from './helpers.ts';

// The marketplace half of the demo, seeded as `npm start` seeds it: against the reference ad
// server on loopback, reached only through the local-only allowance (no test-only switch).
describe('the marketplace demo', { timeout: 120_000 }, () => {
  let t: TestApp;
  let ref: ReferenceServer;
  let demo: MarketDemo;
  let started: Date;

  beforeAll(async () => {
    ref = await referenceServer();
    const port = new URL(ref.url).port;
    t = await testApp({
      secretKeys: [{ version: 1, key: randomBytes(32) }],
      outboundLoopbackAllow: [`127.0.0.1:${port}`],
    });
    started = t.clock.now;
    demo = await seedMarketDemo(t.app.services, { ...ref, activate: (id) => ref.activate(id) }, t.clock);
  }, 120_000);
  afterAll(async () => {
    await t?.close();
    await ref?.close();
  });

  it('connects the reference ad server through the allowance, with its inventory', async () => {
    const conn = await t.app.services.adserver.connections.get(demo.connectionId);
    expect(conn).toMatchObject({
      publisher: DEMO_PUBLISHER,
      status: 'connected',
      base_url: ref.url,
      currency: 'EUR',
    });
    expect(conn.capabilities).toMatchObject({ inventory_read: 'confirmed', forecast: 'confirmed' });
    expect(t.clock.now).toEqual(started);
  });

  it('has products priced as a CPM and as a flat fee, with figures on the calendar', async () => {
    const products = await t.app.services.market.listProducts(demo.connectionId);
    expect(products.map((p) => [p.pricing, p.price]).sort()).toEqual([
      ['cpm', '12.5000'],
      ['cpm', '8.7500'],
      ['flat', '1500.0000'],
    ]);
    const calendar = await t.app.services.market.availability(demo.products[0]!, monthOf(started, 1), 'SE');
    expect(calendar[0]).toMatchObject({ source: 'forecast', booked: 150_000, held: 0 });
    expect(calendar[0]!.available).toBeGreaterThan(150_000);
  });

  it('has a reservation awaiting approval, a DRAFT order on the reference server and a delivered, stated campaign', async () => {
    const { market } = t.app.services;
    const awaiting = await market.getReservation(demo.reservations.awaiting);
    expect(awaiting).toMatchObject({
      status: 'held',
      campaign_name: DEMO_CAMPAIGNS.awaiting,
      order_id: null,
    });
    expect(Date.parse(awaiting.expires_at)).toBeGreaterThan(started.getTime());

    const booked = await market.getReservation(demo.reservations.booked);
    expect(booked.status).toBe('booked');
    const [order] = await ref.store.query<{ status: string; lines: number }>(
      `SELECT o.status, (SELECT count(*)::int FROM line_items l WHERE l.order_id = o.id) AS lines
       FROM orders o WHERE o.id = $1`,
      [booked.order_id],
    );
    expect(order).toEqual({ status: 'DRAFT', lines: 2 });

    const delivered = await market.getReservation(demo.reservations.delivered);
    expect(delivered.status).toBe('booked');
    expect(delivered.lines.map((l) => l.month)).toEqual([monthOf(started, -1), monthOf(started, -1)]);
    const statement = await market.statements.get(demo.statementId);
    expect(statement.reservation_id).toBe(delivered.id);
    expect(statement.month).toBe(monthOf(started, -1));
    const cpm = statement.lines.find((l) => l.pricing === 'cpm')!;
    expect(cpm.impressions).toBeGreaterThan(0);
    // CPM × impressions / 1000, rounded to cents with halves away from zero, as the statement
    // states it: €12.50 a thousand is 1.25 cents an impression (exact in integers, no float).
    const cents = (BigInt(cpm.impressions) * 125n + 50n) / 100n;
    expect(cpm.amount).toBe(`${cents / 100n}.${String(cents % 100n).padStart(2, '0')}`);
    expect(statement.lines.find((l) => l.pricing === 'flat')!.amount).toMatch(/^\d+\.\d{2}$/);
  });
});

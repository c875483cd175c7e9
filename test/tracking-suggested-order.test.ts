import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DB_KIND, type TestApp, testApp } from './helpers.ts';
import { catalogBasics } from './tracking-fixture.ts';

/**
 * A seeded geo family (one site and template, toplists DE and AT). On DE: C at position 1 with
 * 5000 clicks and 250 CPAs of 10 EUR, B at 2 with 3000 clicks and 900 CPAs, A at 3 with 3 clicks
 * and 1 CPA. On AT: D with 6000 clicks and 60 CPAs. Family: 14003 clicks, 1211 CPAs, 12110 EUR,
 * so the rate prior p0 = 1211/14003, the value prior v0 = 10 EUR, the prior EPC 0.8648.
 * With 100 prior clicks and 10 prior conversions, by hand (50-digit decimals):
 *   C: (250 + 100 p0)/5100 × (2500 + 100)/260 = 0.5072
 *   B: (900 + 100 p0)/3100 × (9000 + 100)/910 = 2.9311
 *   A: (1 + 100 p0)/103 × (10 + 100)/11       = 0.9367  (raw EPC 3.3333: thin evidence)
 * Ranking B, A, C. Click shares of positions 1..3 on DE: 5000, 3000, 3 of 8003, so the list's
 * expected EPC goes from 1.4160 (C, B, A) to 2.1826 (B, A, C): +0.7666.
 */
describe(`suggested toplist order (${DB_KIND})`, () => {
  let t: TestApp;
  let token: string;
  let de: number;
  let at: number;
  const brand: Record<string, number> = {};

  const get = (url: string) =>
    t.app.inject({ url: `/api/admin/v1${url}`, headers: { authorization: `Bearer ${token}` } });

  beforeAll(async () => {
    t = await testApp();
    t.clock.now = new Date('2026-11-20T12:00:00Z');
    const { catalog, access } = t.app.services;
    token = (await access.createAdminToken('suggest', ['admin'], null)).token;
    const { owner, site, offerType, template } = await catalogBasics(catalog);
    const offer: Record<string, number> = {};
    for (const name of ['A', 'B', 'C', 'D']) {
      const b = await catalog.brands.create({
        externalId: `b-${name}`,
        name: `Brand ${name}`,
        slug: `brand-${name.toLowerCase()}`,
        rating: 4,
        logo: {
          rectangular: 'https://cdn.example/r.png',
          square: 'https://cdn.example/s.png',
          backgroundColor: '#112233',
        },
      });
      brand[name] = b.id;
      offer[name] = (
        await catalog.offers.create({
          externalId: `o-${name}`,
          brandId: b.id,
          offerTypeId: offerType.id,
          offerText: 'Bonus',
          bonusExpiryDate: '2027-12-31',
        })
      ).id;
    }
    const toplist = async (code: string, names: string[]) => {
      const tl = await catalog.toplists.create({
        siteId: site.id,
        templateId: template.id,
        ownerId: owner.id,
        name: `Best ${code}`,
        slug: `best-${code.toLowerCase()}`,
        geo: { type: 'country', code },
      });
      await catalog.publishing.replaceItems(
        tl.id,
        names.map((n, i) => ({ position: i + 1, brandId: brand[n]!, offerId: offer[n]! })),
      );
      return tl.id;
    };
    de = await toplist('DE', ['C', 'B', 'A']);
    at = await toplist('AT', ['D']);
    const seed = async (
      toplistId: number,
      position: number,
      name: string,
      clicks: number,
      cpas: number,
      amount: string,
      currency = 'EUR',
      bucket = '2026-11-19T10:00:00Z',
    ) => {
      // The suggested order reads the UTC daily rollups (kept with the 15-minute ones by each batch).
      if (clicks)
        await t.db.query(
          `INSERT INTO click_daily_rollups (zone, day, kind, site_id, toplist_id, position, brand_id, program_id, n)
           VALUES ('UTC', ($1::timestamptz AT TIME ZONE 'UTC')::date, 'click', $2, $3, $4, $5, 1, $6)`,
          [bucket, site.id, toplistId, position, brand[name], clicks],
        );
      if (cpas)
        await t.db.query(
          `INSERT INTO conversion_daily_rollups (zone, day, event, currency, site_id, toplist_id, position, brand_id,
                                                 program_id, n, amount)
           VALUES ('UTC', ($1::timestamptz AT TIME ZONE 'UTC')::date, 'cpa', $2, $3, $4, $5, $6, 1, $7, $8)`,
          [bucket, currency, site.id, toplistId, position, brand[name], cpas, amount],
        );
    };
    await seed(de, 1, 'C', 4000, 250, '2500');
    // The other 1000 of C's clicks are not folded into the daily rows yet: the order reads them
    // from the 15-minute rollups after UTC's folded instant. A bucket before it is in the daily
    // rows already (here, deliberately, not), so it is not read again.
    await t.db.query("UPDATE rollup_zones SET clicks_folded_to = '2026-11-19T06:00:00Z' WHERE zone = 'UTC'");
    for (const [bucket, n] of [
      ['2026-11-19T06:00:00Z', 600],
      ['2026-11-19T09:45:00Z', 400],
      ['2026-11-19T05:45:00Z', 777],
    ] as const)
      await t.db.query(
        `INSERT INTO click_rollups_base (bucket, kind, site_id, toplist_id, position, brand_id, program_id, link_id, n)
         VALUES ($1, 'click', $2, $3, 1, $4, 1, 1, $5)`,
        [bucket, site.id, de, brand.C, n],
      );
    await seed(de, 2, 'B', 3000, 900, '9000');
    await seed(de, 3, 'A', 3, 1, '10');
    await seed(at, 1, 'D', 6000, 60, '600');
    // Outside a 30-day window, and in another currency: neither counts by default.
    await seed(de, 3, 'A', 50_000, 40_000, '400000', 'EUR', '2026-10-01T10:00:00Z');
    await seed(de, 3, 'A', 0, 2, '0.0002', 'USD');
  });
  afterAll(async () => {
    await t?.close();
  });

  it('ranks by shrunk EPC, so 3 clicks and 1 conversion do not outrank 3 000 clicks', async () => {
    const res = await get(`/toplists/${de}/suggested-order?days=30`);
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json().data).toEqual({
      toplistId: de,
      days: 30,
      from: '2026-10-22',
      to: '2026-11-20',
      currency: 'EUR',
      priorEpc: '0.8648',
      items: [
        {
          brandId: brand.B,
          brandName: 'Brand B',
          currentPosition: 2,
          suggestedPosition: 1,
          clicks: 3000,
          conversions: 900,
          commission: '9000.0000',
          epc: '3.0000',
          shrunkEpc: '2.9311',
          interval: { low: '2.7712', high: '3.0911' },
        },
        {
          brandId: brand.A,
          brandName: 'Brand A',
          currentPosition: 3,
          suggestedPosition: 2,
          clicks: 3,
          conversions: 1,
          commission: '10.0000',
          epc: '3.3333',
          shrunkEpc: '0.9367',
          interval: { low: '0.4406', high: '1.4328' },
        },
        {
          brandId: brand.C,
          brandName: 'Brand C',
          currentPosition: 1,
          suggestedPosition: 3,
          clicks: 5000,
          conversions: 250,
          commission: '2500.0000',
          epc: '0.5000',
          shrunkEpc: '0.5072',
          interval: { low: '0.4553', high: '0.5590' },
        },
      ],
      expected: { currentEpc: '1.4160', suggestedEpc: '2.1826', change: '0.7666' },
    });
  });

  it('reads another currency and a longer window on request', async () => {
    const usd = (await get(`/toplists/${de}/suggested-order?currency=USD`)).json().data;
    expect(usd).toMatchObject({ days: 30, currency: 'USD' });
    expect(usd.items.find((i: { brandId: number }) => i.brandId === brand.A)).toMatchObject({
      conversions: 2,
      commission: '0.0002',
      epc: '0.0001',
    });
    const long = (await get(`/toplists/${de}/suggested-order?days=90`)).json().data;
    expect(long.items[0]).toMatchObject({ brandId: brand.A, clicks: 50_003, conversions: 40_001 });
  });

  it('answers a toplist without clicks with the current order, and refuses bad input', async () => {
    const quiet = (await get(`/toplists/${at}/suggested-order?days=1`)).json().data;
    expect(quiet).toMatchObject({ days: 1, from: '2026-11-20', to: '2026-11-20', priorEpc: null });
    expect(quiet.items).toEqual([
      expect.objectContaining({ brandId: brand.D, epc: null, shrunkEpc: '0.0000' }),
    ]);
    expect(quiet.expected).toEqual({ currentEpc: '0.0000', suggestedEpc: '0.0000', change: '0.0000' });
    for (const [q, field] of [
      ['days=0', 'days'],
      ['days=91', 'days'],
      ['days=abc', 'days'],
      ['currency=eur', 'currency'],
    ] as const) {
      const res = await get(`/toplists/${de}/suggested-order?${q}`);
      expect(res.statusCode, q).toBe(422);
      expect(JSON.stringify(res.json()), q).toContain(field);
    }
    expect((await get('/toplists/999999/suggested-order')).statusCode).toBe(404);
    const reader = await t.app.services.access.createAdminToken('reader', ['catalog:read'], null);
    const denied = await t.app.inject({
      url: `/api/admin/v1/toplists/${de}/suggested-order`,
      headers: { authorization: `Bearer ${reader.token}` },
    });
    expect(denied.statusCode).toBe(403);
  });
});

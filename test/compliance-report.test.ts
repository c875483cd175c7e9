import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadDemo } from '../src/modules/catalog/demo.ts';
import { casinoTemplate } from './catalog-fixture.ts';
import { adminCall, DB_KIND, type TestApp, testApp } from './helpers.ts';

const logo = {
  rectangular: 'https://cdn.example/r.png',
  square: 'https://cdn.example/s.png',
  backgroundColor: '#112233',
};

describe(`the compliance report: what live lists withhold now, where, why, since when (${DB_KIND})`, () => {
  let t: TestApp;
  let admin: string;
  let siteId: number;
  let se: number;
  let row: number;
  let fi: number;
  let brands: number[];
  let restrictedAt: string;

  const call = (method: 'GET' | 'POST' | 'PATCH' | 'DELETE', url: string, payload?: object) =>
    adminCall(t.app, admin, method, url, payload);

  beforeAll(async () => {
    t = await testApp();
    const { catalog, access } = t.app.services;
    admin = (await access.createAdminToken('root', ['admin'], null)).token;
    const site = await catalog.sites.create({ domain: 'report.example' });
    siteId = site.id;
    const fx = await casinoTemplate(catalog);
    const items: { position: number; brandId: number; offerId: number }[] = [];
    for (const [i, name] of ['alpha', 'bravo', 'charlie'].entries()) {
      const b = await catalog.brands.create({ externalId: name, name, slug: name, rating: 4, logo });
      const o = await catalog.offers.create({
        externalId: `o-${name}`,
        brandId: b.id,
        offerTypeId: fx.offerType.id,
        offerText: 'Bonus',
        bonusExpiryDate: '2030-01-01',
        trackers: [{ campaignName: 'main', landingUrl: `https://${name}.example/go` }],
      });
      items.push({ position: i + 1, brandId: b.id, offerId: o.id });
    }
    brands = items.map((i) => i.brandId);
    const list = async (code: string, type: 'country' | 'global') => {
      const l = await catalog.toplists.create({
        siteId,
        templateId: fx.template.id,
        ownerId: fx.owner.id,
        name: `List ${code}`,
        slug: `list-${code.toLowerCase()}`,
        geo: { type, code },
      });
      await catalog.publishing.replaceItems(l.id, items);
      return l.id;
    };
    se = await list('SE', 'country');
    row = await list('ROW', 'global');
    fi = await list('FI', 'country');
    for (const id of [se, row]) await catalog.publishing.publish(id);
    // Finland's list goes live over a restriction, by an audited override.
    await call('PATCH', `/brands/${brands[2]}`, { restrictedCountries: ['Finland'] });
    await catalog.publishing.publish(fi, { override: { reason: 'Court order 2026/17, until the appeal' } });
    t.clock.now = new Date(t.clock.now.getTime() + 60_000);
    restrictedAt = t.clock.now.toISOString();
    await call('PATCH', `/brands/${brands[1]}`, { restrictedCountries: ['Sweden'] });
  });
  afterAll(() => t.close());

  it('lists each entry with its list, scope, brand, country, rule and since; filters narrow it', async () => {
    const all = await call('GET', '/compliance/report?per_page=100');
    expect(all.status).toBe(200);
    const entries = all.body.data as Record<string, unknown>[];
    // Sweden's list withholds bravo; the global list withholds bravo from Swedish visitors and
    // charlie from Finnish ones; Finland's list shows charlie by override.
    expect(entries).toEqual(
      expect.arrayContaining([
        expect.objectContaining({
          status: 'withheld',
          scope: 'list',
          siteId,
          siteDomain: 'report.example',
          toplistId: se,
          toplistSlug: 'list-se',
          geo: { type: 'country', code: 'SE' },
          version: '1',
          position: 2,
          brandId: brands[1],
          brandName: 'bravo',
          country: 'SE',
          rule: 'restricted_country',
          since: restrictedAt,
        }),
        expect.objectContaining({ scope: 'visitors', toplistId: row, brandId: brands[1], country: 'SE' }),
        expect.objectContaining({ scope: 'visitors', toplistId: row, brandId: brands[2], country: 'FI' }),
        expect.objectContaining({
          status: 'overridden',
          scope: 'list',
          toplistId: fi,
          brandId: brands[2],
          country: 'FI',
        }),
      ]),
    );
    expect(entries).toHaveLength(4);
    expect(all.body.meta).toMatchObject({ total: 4, current_page: 1, last_page: 1 });
    // Newest first: the Swedish restriction came a minute after the Finnish one.
    expect(entries[0]!.since).toBe(restrictedAt);

    const sweden = await call('GET', '/compliance/report?country=SE');
    expect((sweden.body.data as { toplistId: number }[]).map((e) => e.toplistId).sort()).toEqual(
      [se, row].sort(),
    );
    const charlie = await call('GET', `/compliance/report?brand_id=${brands[2]}&status=withheld`);
    expect(charlie.body.data).toEqual([expect.objectContaining({ toplistId: row, country: 'FI' })]);
    expect((await call('GET', `/compliance/report?site_id=${siteId + 1000}`)).body.meta.total).toBe(0);

    const paged = await call('GET', '/compliance/report?per_page=3&page=2');
    expect(paged.body.data).toHaveLength(1);
    expect(paged.body.meta).toMatchObject({ total: 4, last_page: 2, from: 4, to: 4 });
  });

  it('exports the same entries as CSV', async () => {
    const res = await t.app.inject({
      method: 'GET',
      url: '/api/admin/v1/compliance/report?format=csv&country=SE',
      headers: { authorization: `Bearer ${admin}` },
    });
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toBe('text/csv; charset=utf-8');
    expect(res.headers['content-disposition']).toContain('podium-compliance-report.csv');
    const lines = res.body.trimEnd().split('\r\n');
    expect(lines[0]).toBe(
      'status,scope,site_id,site_domain,toplist_id,toplist_slug,geo_type,geo_code,version,item_id,position,brand_id,brand_name,country,rule,rule_id,reason,since',
    );
    expect(lines).toHaveLength(3);
    expect(lines.slice(1).every((l) => l.includes(',bravo,SE,restricted_country,,'))).toBe(true);
  });

  it('refuses bad filters naming the field, and a token without catalog:read', async () => {
    const bad = await call('GET', '/compliance/report?country=se');
    expect(bad.status).toBe(422);
    expect(bad.body.message).toContain('country');
    expect((await call('GET', '/compliance/report?per_page=101')).status).toBe(422);
    expect((await call('GET', '/compliance/report?site=1')).status).toBe(422);
    const tracking = (await t.app.services.access.createAdminToken('stats', ['tracking:read'], null)).token;
    expect((await adminCall(t.app, tracking, 'GET', '/compliance/report')).status).toBe(403);
  });

  it('an entry leaves the report when the rule is lifted', async () => {
    await call('PATCH', `/brands/${brands[1]}`, { restrictedCountries: [] });
    const after = await call('GET', '/compliance/report?country=SE');
    expect(after.body.meta.total).toBe(0);
  });
});

describe(`the demo's compliance rules (${DB_KIND})`, () => {
  let t: TestApp;
  let admin: string;

  beforeAll(async () => {
    t = await testApp();
    admin = (await loadDemo(t.app.services)).adminToken;
  }, 180_000);
  afterAll(() => t.close());

  it('every live list of the demo honours them; global lists withhold brands from the visitors they forbid', async () => {
    const withheld = async (q: string) => {
      const first = await adminCall(
        t.app,
        admin,
        'GET',
        `/compliance/report?status=withheld&per_page=100${q}`,
      );
      const entries = [...first.body.data];
      for (let page = 2; page <= first.body.meta.last_page; page++)
        entries.push(
          ...(
            await adminCall(
              t.app,
              admin,
              'GET',
              `/compliance/report?status=withheld&per_page=100&page=${page}${q}`,
            )
          ).body.data,
        );
      return entries as { scope: string; rule: string; geo: { type: string } }[];
    };
    const all = await withheld('');
    expect(all.filter((e) => e.scope === 'list')).toEqual([]);
    expect(all.every((e) => e.geo.type === 'global')).toBe(true);
    // Sweden requires a licence the sportsbooks and poker rooms do not hold; the demo restricts
    // brands in the countries of its RESTRICTED list.
    expect((await withheld('&country=SE')).map((e) => e.rule)).toContain('licence_required');
    expect((await withheld('&country=US')).map((e) => e.rule)).toContain('restricted_country');
    expect(
      (await adminCall(t.app, admin, 'GET', '/compliance/report?status=overridden')).body.meta.total,
    ).toBe(0);
  });
});

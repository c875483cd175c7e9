import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type DemoTokens, loadDemo } from '../src/modules/catalog/demo.ts';
import { expectContract } from './contract.ts';
import { DB_KIND, type TestApp, testApp } from './helpers.ts';

const BRANDS = 1200;

const brand = (i: number) => ({
  externalId: `search-${i}`,
  name: `Search Brand ${String(i).padStart(4, '0')}`,
  slug: `search-brand-${i}`,
  rating: 7,
  logo: {
    rectangular: 'https://cdn.example/r.png',
    square: 'https://cdn.example/s.png',
    backgroundColor: '#112233',
  },
});

// `q` on the catalog lists: one generic place (the CRUD route and the editorial repository), paged by the server.
describe(`catalog list search q (${DB_KIND})`, () => {
  let t: TestApp;
  let demo: DemoTokens;
  const get = async (url: string) => {
    const res = await t.app.inject({
      url: `/api/admin/v1${url}`,
      headers: { authorization: `Bearer ${demo.adminToken}` },
    });
    return { status: res.statusCode, body: res.json() };
  };

  beforeAll(async () => {
    t = await testApp();
    demo = await loadDemo(t.app.services);
    const odd = { ...brand(0), externalId: 'search-odd', name: '100% Casino_Club', slug: 'hundred-percent' };
    await t.app.services.catalog.importer.importCatalog({
      brands: [...Array.from({ length: BRANDS }, (_, i) => brand(i + 1)), odd],
    });
  });
  afterAll(() => t?.close());

  it('finds a brand by part of its name or slug, in any case, with the paging meta of the matches', async () => {
    const byName = await get('/brands?q=search%20BRAND%201101');
    expect(byName.status).toBe(200);
    expect(byName.body.data.map((b: { name: string }) => b.name)).toEqual(['Search Brand 1101']);
    expect(byName.body.meta).toMatchObject({ total: 1, current_page: 1, last_page: 1 });

    const bySlug = await get('/brands?q=SEARCH-brand-110&per_page=5&page=2');
    // search-brand-110 and 1100…1109: 11 matches, the second page of five.
    expect(bySlug.body.meta).toMatchObject({
      total: 11,
      current_page: 2,
      per_page: 5,
      last_page: 3,
      from: 6,
      to: 10,
    });
    expect(bySlug.body.data).toHaveLength(5);
  });

  it('matches % and _ literally, not as wildcards', async () => {
    const pct = await get(`/brands?q=${encodeURIComponent('100%')}`);
    expect(pct.body.data.map((b: { slug: string }) => b.slug)).toEqual(['hundred-percent']);
    const under = await get(`/brands?q=${encodeURIComponent('o_c')}`);
    expect(under.body.data.map((b: { slug: string }) => b.slug)).toEqual(['hundred-percent']);
    const none = await get(`/brands?q=${encodeURIComponent('_%_')}`);
    expect(none.body.meta.total).toBe(0);
  });

  it('searches sites, templates, offers and toplists, keeping their other filters', async () => {
    const site = demo.siteTokens[0]!;
    const sites = await get(`/sites?q=${encodeURIComponent(site.domain.slice(0, 6).toUpperCase())}`);
    expect(sites.body.data.some((s: { domain: string }) => s.domain === site.domain)).toBe(true);

    const toplists = await get('/toplists?q=BEST-CASINOS-DE');
    expect(toplists.body.data.map((x: { slug: string }) => x.slug)).toContain('best-casinos-de');
    const elsewhere = await get('/toplists?q=best-casinos-de&site_id=2147483647');
    expect(elsewhere.body.meta.total).toBe(0);

    const templates = await get('/templates');
    const first = templates.body.data[0] as { name: string };
    const found = await get(`/templates?q=${encodeURIComponent(first.name.toLowerCase())}`);
    expect(found.body.data.map((x: { name: string }) => x.name)).toContain(first.name);

    const offers = await get('/offers?per_page=1');
    const offer = offers.body.data[0] as { brandId: number; offerText: string };
    const words = offer.offerText.slice(0, 8);
    const hit = await get(`/offers?brand_id=${offer.brandId}&q=${encodeURIComponent(words)}`);
    expect(hit.body.meta.total).toBeGreaterThan(0);
    for (const o of hit.body.data) expect(o.brandId).toBe(offer.brandId);
  });

  it('refuses an empty, blank, overlong or control-character q with 422 naming q', async () => {
    for (const q of ['', '%20%20', 'x'.repeat(101), 'a%00b', 'a%0Ab']) {
      const r = await get(`/brands?q=${q}`);
      expect(r.status, q).toBe(422);
      expectContract('error', r.body);
      expect(r.body.details?.field, q).toBe('q');
    }
  });
});

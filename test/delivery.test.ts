import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type DemoTokens, loadDemo } from '../src/modules/catalog/demo.ts';
import { expectContract } from './contract.ts';
import { DB_KIND, type TestApp, testApp } from './helpers.ts';

interface WireToplist {
  id: number;
  slug: string;
  version: string;
  updatedAt: string;
  geo: { geo_type: string; code: string; coveredCountries: string[] | null };
  template: { id: number };
  items: unknown[];
}

describe(`toplist delivery API (${DB_KIND})`, () => {
  let t: TestApp;
  let demo: DemoTokens;
  let site1: string;
  let site2: string;

  const get = (url: string, token?: string, headers: Record<string, string> = {}) =>
    t.app.inject({
      method: 'GET',
      url,
      headers: { ...(token ? { authorization: `Bearer ${token}` } : {}), ...headers },
    });
  const admin = async (
    method: 'GET' | 'POST' | 'PATCH' | 'PUT' | 'DELETE',
    url: string,
    payload?: unknown,
  ) => {
    const res = await t.app.inject({
      method,
      url: `/api/admin/v1${url}`,
      headers: { authorization: `Bearer ${demo.adminToken}` },
      payload: payload as object,
    });
    return { status: res.statusCode, body: res.json() };
  };
  const casinoTemplateId = async () =>
    (await get('/api/v1/toplists/by-slug/best-casinos-row', site1)).json().data.template.id as number;

  beforeAll(async () => {
    t = await testApp();
    demo = await loadDemo(t.app.services);
    site1 = demo.siteTokens[0]!.token;
    site2 = demo.siteTokens[1]!.token;
  });
  afterAll(() => t.close());

  it('has no request budget per token: 300 reads in a row from one address all answer 200, no rate-limit headers', async () => {
    for (let i = 0; i < 300; i++) {
      const res = await get('/api/v1/toplists/by-slug/best-casinos-se', site1);
      expect(res.statusCode, `request ${i + 1}`).toBe(200);
      expect(Object.keys(res.headers).filter((h) => /rate|retry-after/i.test(h))).toEqual([]);
    }
  });

  describe('list', () => {
    it('serves the first page with the spec envelope and cache headers', async () => {
      const res = await get('/api/v1/toplists', site1);
      expect(res.statusCode).toBe(200);
      expect(res.headers['content-type']).toBe('application/json; charset=utf-8');
      expect(res.headers['cache-control']).toBe('private');
      expect(res.headers.vary).toBe('Authorization, Accept-Encoding');
      expect(res.headers.etag).toMatch(/^"[^"]+"$/);
      const body = res.json();
      expectContract('list', body);
      expect(body.meta).toMatchObject({
        current_page: 1,
        per_page: 15,
        total: 130,
        last_page: 9,
        from: 1,
        to: 15,
      });
      expect(body.links.prev).toBeNull();
      expect(body.links.next).toBe('https://podium.test/api/v1/toplists?per_page=15&page=2');
      expect(body.data).toHaveLength(15);
    });

    it('orders by updatedAt desc then id desc, also across pages', async () => {
      const all: WireToplist[] = [];
      for (let page = 1; page <= 2; page++)
        all.push(...(await get(`/api/v1/toplists?per_page=100&page=${page}`, site1)).json().data);
      const sorted = [...all].sort(
        (a, b) => Date.parse(b.updatedAt) - Date.parse(a.updatedAt) || b.id - a.id,
      );
      expect(all.map((x) => x.id)).toEqual(sorted.map((x) => x.id));
    });

    it.each([15, 100])(
      'walks the 129-member geo family with per_page=%i, every member exactly once',
      async (perPage) => {
        const templateId = await casinoTemplateId();
        const seen: number[] = [];
        let page = 1;
        let lastPage = Number.POSITIVE_INFINITY;
        for (let guard = 0; page <= lastPage && guard < 50; guard++, page++) {
          const res = await get(
            `/api/v1/toplists?template_id=${templateId}&per_page=${perPage}&page=${page}`,
            site1,
          );
          expect(res.statusCode).toBe(200);
          const body = res.json();
          expectContract('list', body);
          lastPage = body.meta.last_page;
          expect(body.meta.total).toBe(129);
          expect(body.links.next === null).toBe(page === lastPage);
          if (body.links.next) expect(body.links.next).toContain(`template_id=${templateId}`);
          seen.push(...body.data.map((x: WireToplist) => x.id));
        }
        expect(lastPage).toBe(Math.ceil(129 / perPage));
        expect(seen).toHaveLength(129);
        expect(new Set(seen).size).toBe(129);
        // The family carries the three geo kinds, with markets holding uppercase covered countries.
        const rows = (
          await get(`/api/v1/toplists?template_id=${templateId}&geo_type=market&geo_code=NORDICS`, site1)
        ).json().data;
        expect(rows).toHaveLength(1);
        expect(rows[0].geo).toEqual({
          geo_type: 'market',
          name: 'Nordics',
          code: 'NORDICS',
          coveredCountries: ['SE', 'NO', 'DK', 'FI', 'IS'],
        });
      },
    );

    it('filters one geo variant; geo_code is matched case-insensitively', async () => {
      const res = await get('/api/v1/toplists?geo_type=country&geo_code=de', site1);
      const body = res.json();
      expect(body.meta.total).toBe(1);
      expect(body.data[0].geo).toMatchObject({ geo_type: 'country', code: 'DE', coveredCountries: null });
      const global = (await get('/api/v1/toplists?geo_type=global&geo_code=ROW', site1)).json();
      expect(global.data.map((x: WireToplist) => x.slug).sort()).toEqual([
        'best-casinos-row',
        'casino-bonuses',
      ]);
    });

    it('a page past the end is empty, with a correct last_page and no next link', async () => {
      const body = (await get('/api/v1/toplists?page=50', site1)).json();
      expectContract('list', body);
      expect(body.data).toEqual([]);
      expect(body.meta).toMatchObject({ current_page: 50, last_page: 9, from: null, to: null });
      expect(body.links.next).toBeNull();
    });
  });

  describe('single toplist', () => {
    it('by slug and by id return {data} only, validating against the contract', async () => {
      const bySlug = await get('/api/v1/toplists/by-slug/best-casinos-se', site1);
      expect(bySlug.statusCode).toBe(200);
      const body = bySlug.json();
      expectContract('single', body);
      expect(Object.keys(body)).toEqual(['data']);
      const byId = await get(`/api/v1/toplists/${body.data.id}`, site1);
      expect(byId.body).toBe(bySlug.body);
      expect(byId.headers.etag).toBe(bySlug.headers.etag);
      expect(body.data.items).toHaveLength(10);
      const tracker = body.data.items[0].offer.trackers[0];
      expect(tracker.trackerLink).toMatch(/^https:\/\/podium\.test\/go\/[A-Za-z0-9_-]{12}$/);
    });

    it('serves a published toplist with zero items as items: []', async () => {
      const body = (await get('/api/v1/toplists/by-slug/casino-bonuses', site1)).json();
      expectContract('single', body);
      expect(body.data.items).toEqual([]);
    });

    it('never serves an unpublished toplist', async () => {
      expect((await get('/api/v1/toplists/by-slug/casino-bonuses-se', site1)).statusCode).toBe(404);
      const draft = (
        await admin('GET', '/toplists?site_id=1&geo_type=country&geo_code=SE&per_page=100')
      ).body.data.find((x: { slug: string }) => x.slug === 'casino-bonuses-se');
      expect(draft.liveVersion).toBeNull();
      const res = await get(`/api/v1/toplists/${draft.id}`, site1);
      expect(res.statusCode).toBe(404);
      expect(res.json()).toEqual({ code: 'not_found', message: 'Toplist not found' });
      const listed = (await get('/api/v1/toplists?per_page=100&page=1', site1))
        .json()
        .data.concat((await get('/api/v1/toplists?per_page=100&page=2', site1)).json().data);
      expect(listed.some((x: WireToplist) => x.id === draft.id)).toBe(false);
    });
  });

  describe('visitor resolve', () => {
    const resolve = (q: string, token = site1, headers: Record<string, string> = {}) =>
      get(`/api/v1/toplists/resolve?${q}`, token, headers);

    it('answers the exact country row with the by-id bytes and ETag, and 304 on a match', async () => {
      const templateId = await casinoTemplateId();
      const se = await get('/api/v1/toplists/by-slug/best-casinos-se', site1);
      const res = await resolve(`template_id=${templateId}&country=se`);
      expect(res.statusCode).toBe(200);
      expectContract('single', res.json());
      expect(res.body).toBe(se.body);
      expect(res.headers.etag).toBe(se.headers.etag);
      expect(res.headers['cache-control']).toBe('private');
      expect(res.headers['access-control-allow-origin']).toBeUndefined();
      const again = await resolve(`template_id=${templateId}&country=SE`, site1, {
        'if-none-match': se.headers.etag as string,
      });
      expect(again.statusCode).toBe(304);
    });

    const familyRows = async (templateId: number) => {
      const rows: WireToplist[] = [];
      for (let page = 1; ; page++) {
        const body = (
          await get(`/api/v1/toplists?template_id=${templateId}&per_page=100&page=${page}`, site1)
        ).json();
        rows.push(...body.data);
        if (page >= body.meta.last_page) return rows;
      }
    };

    /** The casino family, its LATAM market and a country LATAM covers that has no variant of its own. */
    const latamFamily = async () => {
      const templateId = await casinoTemplateId();
      const rows = await familyRows(templateId);
      const hasCountry = (c: string) => rows.some((x) => x.geo.geo_type === 'country' && x.geo.code === c);
      const latam = rows.find((x) => x.geo.code === 'LATAM')!;
      return {
        templateId,
        hasCountry,
        latam,
        viaLatam: latam.geo.coveredCountries!.find((c) => !hasCountry(c))!,
      };
    };

    it('falls to the one covering market, then to global; an unknown code only gets global', async () => {
      const { templateId, hasCountry, latam, viaLatam } = await latamFamily();
      expect(viaLatam).toBeDefined();
      expect((await resolve(`template_id=${templateId}&country=${viaLatam}`)).json().data.id).toBe(latam.id);
      const uncovered = ['ZW', 'ZM', 'YE', 'VU'].find((c) => !hasCountry(c))!;
      expect((await resolve(`template_id=${templateId}&country=${uncovered}`)).json().data.slug).toBe(
        'best-casinos-row',
      );
      for (const unknown of ['XX', 'T1', 'EU', 'uk'])
        expect((await resolve(`template_id=${templateId}&country=${unknown}`)).json().data.slug).toBe(
          'best-casinos-row',
        );
    });

    it('answers 404 not_found with the reason: ambiguous markets, no variant, unknown country, another site', async () => {
      const { templateId, latam, viaLatam: shared } = await latamFamily();
      const ownerId = (await admin('GET', '/owners')).body.data[0].id;
      // A second market covering the same country makes it ambiguous: never an arbitrary pick, no global.
      const created = await admin('POST', '/toplists', {
        siteId: 1,
        templateId,
        ownerId,
        name: 'Andes',
        slug: 'best-casinos-andes',
        geo: { type: 'market', code: 'ANDES', coveredCountries: [shared] },
      });
      expect(created.status).toBe(201);
      await admin('POST', `/toplists/${created.body.data.id}/publish`);
      const ambiguous = await resolve(`template_id=${templateId}&country=${shared.toLowerCase()}`);
      expect(ambiguous.statusCode).toBe(404);
      expectContract('error', ambiguous.json());
      expect(ambiguous.json()).toMatchObject({
        code: 'not_found',
        details: { reason: 'ambiguous', templateId, country: shared },
      });
      expect(ambiguous.json().details.candidates.sort()).toEqual([latam.id, created.body.data.id].sort());
      await admin('POST', `/toplists/${created.body.data.id}/unpublish`);
      expect((await resolve(`template_id=${templateId}&country=${shared}`)).json().data.id).toBe(latam.id);

      // A family without a global row: nothing for a country without a variant, nor for an unknown code.
      const bonus = (await get('/api/v1/toplists/by-slug/casino-bonuses', site1)).json().data;
      await admin('POST', `/toplists/${bonus.id}/unpublish`);
      const none = await resolve(`template_id=${bonus.template.id}&country=ZW`);
      expect(none.statusCode).toBe(404);
      expect(none.json().details).toEqual({
        reason: 'no_variant',
        templateId: bonus.template.id,
        country: 'ZW',
      });
      const unknown = await resolve(`template_id=${bonus.template.id}&country=XX`);
      expect(unknown.json().details.reason).toBe('unknown_country');
      await admin('POST', `/toplists/${bonus.id}/publish`);
      // Another site never resolves this site's family.
      const other = await resolve(`template_id=${templateId}&country=SE`, site2);
      expect(other.statusCode).toBe(404);
      expect(other.json().details.reason).toBe('no_variant');
    });

    it('refuses missing or malformed parameters with 422 naming the field, and no token with 401', async () => {
      const templateId = await casinoTemplateId();
      for (const [q, field] of [
        [`country=SE`, 'template_id'],
        [`template_id=${templateId}`, 'country'],
        [`template_id=abc&country=SE`, 'template_id'],
        [`template_id=${templateId}&country=SWE`, 'country'],
        [`template_id=${templateId}&country=%27%20OR%201`, 'country'],
        [`template_id=0&country=SE`, 'template_id'],
      ]) {
        const res = await resolve(q!);
        expect(res.statusCode, q).toBe(422);
        expectContract('error', res.json());
        expect(JSON.stringify(res.json()), q).toContain(field!);
      }
      expect((await get(`/api/v1/toplists/resolve?template_id=${templateId}&country=SE`)).statusCode).toBe(
        401,
      );
    });
  });

  describe('brands', () => {
    it("pages through the brands of the site's live toplists exactly once, A-Z, as the contract says", async () => {
      const fromToplists = new Set<number>();
      for (let page = 1; page <= 2; page++) {
        for (const t of (await get(`/api/v1/toplists?per_page=100&page=${page}`, site1)).json().data)
          for (const i of t.items) fromToplists.add(i.brand.id);
      }
      const seen: { id: number; name: string }[] = [];
      let page = 1;
      for (;;) {
        const res = await get(`/api/v1/brands?per_page=25&page=${page}`, site1);
        expect(res.statusCode).toBe(200);
        const body = res.json();
        expectContract('brands', body);
        seen.push(...body.data);
        if (body.meta.current_page >= body.meta.last_page) {
          expect(body.links.next).toBeNull();
          break;
        }
        page++;
      }
      expect(seen.map((b) => b.id).sort((a, b) => a - b)).toEqual([...fromToplists].sort((a, b) => a - b));
      const names = seen.map((b) => b.name);
      expect(names).toEqual([...names].sort());
    });

    it('a WordPress-style brand sync (per_page=25 to last_page, only brandStatus "Active") keeps every brand of the live toplists, with their product types, top geos and offers', async () => {
      // What the site's live toplists say about each brand.
      const expected = new Map<
        number,
        { products: Set<string>; countries: Set<string>; markets: Set<string>; offers: Set<number> }
      >();
      for (let page = 1; ; page++) {
        const body = (await get(`/api/v1/toplists?per_page=100&page=${page}`, site1)).json();
        for (const t of body.data)
          for (const i of t.items) {
            const e = expected.get(i.brand.id) ?? {
              products: new Set(),
              countries: new Set(),
              markets: new Set(),
              offers: new Set(),
            };
            e.products.add(t.template.productType);
            if (t.geo.geo_type === 'country') e.countries.add(t.geo.code);
            if (t.geo.geo_type === 'market') e.markets.add(t.geo.code);
            e.offers.add(i.offer.id);
            expected.set(i.brand.id, e);
          }
        if (page >= body.meta.last_page) break;
      }
      // The plugin: stop on meta.last_page alone, keep rows with an id and brandStatus exactly "Active".
      const stored = new Map<number, Record<string, unknown>>();
      let lastPage = 1;
      for (let page = 1; page <= lastPage; page++) {
        const res = await get(`/api/v1/brands?per_page=25&page=${page}`, site1);
        expect(res.statusCode).toBe(200);
        const body = res.json();
        expectContract('brands', body);
        lastPage = body.meta.last_page;
        for (const row of body.data) if (row.id && row.brandStatus === 'Active') stored.set(row.id, row);
      }
      expect(expected.size).toBeGreaterThan(25);
      expect([...stored.keys()].sort((a, b) => a - b)).toEqual([...expected.keys()].sort((a, b) => a - b));
      for (const [id, row] of stored) {
        const e = expected.get(id)!;
        const b = row as {
          productTypes: string[];
          topGeos: { countries: string[]; markets: string[] };
          offers: { id: number; trackers: { trackerLink: string }[] }[];
          offersCount: number;
          logo: { rectangular: string; square: string };
        };
        expect(b.productTypes).toEqual([...e.products].sort());
        expect(b.topGeos).toEqual({ countries: [...e.countries].sort(), markets: [...e.markets].sort() });
        expect(b.offers.map((o) => o.id)).toEqual([...e.offers].sort((x, y) => x - y));
        expect(b.offersCount).toBe(b.offers.length);
        for (const o of b.offers)
          for (const tr of o.trackers) expect(tr.trackerLink).toMatch(/^https:\/\/podium\.test\/go\//);
        expect(typeof b.logo.rectangular).toBe('string');
      }
      // The plugin warns per brand with offers but no top geos: only brands ranked solely in global lists.
      const noGeos = [...stored.values()].filter(
        (b) =>
          (b as { offersCount: number }).offersCount > 0 &&
          !(b as { topGeos: { countries: string[]; markets: string[] } }).topGeos.countries.length &&
          !(b as { topGeos: { countries: string[]; markets: string[] } }).topGeos.markets.length,
      );
      for (const b of noGeos) expect(expected.get(b.id as number)!.countries.size).toBe(0);
    });

    it("never lists another site's brands", async () => {
      const casino = new Set(
        (await get('/api/v1/brands?per_page=100', site1)).json().data.map((b: { id: number }) => b.id),
      );
      const sport = (await get('/api/v1/brands?per_page=100', site2)).json().data;
      expect(sport.length).toBeGreaterThan(0);
      expect(sport.some((b: { id: number }) => casino.has(b.id))).toBe(false);
    });
  });

  describe('site isolation and tokens', () => {
    it("a site never sees another site's toplists, by list, slug or id", async () => {
      const mine = (await get('/api/v1/toplists/by-slug/best-casinos-se', site1)).json().data;
      expect((await get('/api/v1/toplists/by-slug/best-casinos-se', site2)).statusCode).toBe(404);
      expect((await get(`/api/v1/toplists/${mine.id}`, site2)).statusCode).toBe(404);
      const list = (await get('/api/v1/toplists?per_page=100', site2)).json();
      expect(list.meta.total).toBe(3);
      expect(list.data.every((x: { site: { id: number } }) => x.site.id === 2)).toBe(true);
    });

    it('answers 401 with WWW-Authenticate for a missing, malformed, unknown or wrong-kind token', async () => {
      for (const headers of [
        {},
        { authorization: 'Basic dXNlcjpwYXNz' },
        { authorization: 'Bearer' },
        { authorization: 'Bearer pds_unknown' },
        { authorization: `Bearer ${demo.adminToken}` },
        { authorization: `Bearer ${site1}x` },
      ]) {
        const res = await t.app.inject({ url: '/api/v1/toplists', headers });
        expect(res.statusCode).toBe(401);
        expect(res.headers['www-authenticate']).toMatch(/^Bearer/);
        expectContract('error', res.json());
        expect(res.json().code).toBe('unauthorized');
      }
    });

    it('refuses a revoked token at once while another token of the site keeps working', async () => {
      const a = (await admin('POST', '/sites/1/tokens', { name: 'rotation A' })).body.data;
      const b = (await admin('POST', '/sites/1/tokens', { name: 'rotation B' })).body.data;
      expect((await get('/api/v1/toplists', a.token)).statusCode).toBe(200);
      expect((await admin('DELETE', `/sites/1/tokens/${a.id}`)).status).toBe(200);
      expect((await get('/api/v1/toplists', a.token)).statusCode).toBe(401);
      expect((await get('/api/v1/toplists', b.token)).statusCode).toBe(200);
    });
  });

  describe('publishing and caching', () => {
    it('answers 304 to a matching If-None-Match and a new ETag after a publish', async () => {
      const first = await get('/api/v1/toplists/by-slug/best-casinos-fi', site1);
      const etag = first.headers.etag as string;
      const again = await get('/api/v1/toplists/by-slug/best-casinos-fi', site1, { 'if-none-match': etag });
      expect(again.statusCode).toBe(304);
      expect(again.body).toBe('');
      expect(again.headers.etag).toBe(etag);
      const listEtag = (await get('/api/v1/toplists', site1)).headers.etag as string;
      expect(
        (await get('/api/v1/toplists', site1, { 'if-none-match': `"other", ${listEtag}` })).statusCode,
      ).toBe(304);

      t.clock.now = new Date(t.clock.now.getTime() + 60_000);
      const id = first.json().data.id;
      const published = await admin('POST', `/toplists/${id}/publish`);
      expect(published.status).toBe(200);
      expect(published.body.data.version).toBe('2');
      const after = await get('/api/v1/toplists/by-slug/best-casinos-fi', site1, { 'if-none-match': etag });
      expect(after.statusCode).toBe(200);
      expect(after.json().data.version).toBe('2');
      expect(after.json().data.updatedAt).toBe(`${new Date(t.clock.now).toISOString().slice(0, 19)}+00:00`);
      // The newest publish moves to the top of the list.
      expect((await get('/api/v1/toplists?per_page=1', site1)).json().data[0].id).toBe(id);
      expect((await get('/api/v1/toplists', site1, { 'if-none-match': listEtag })).statusCode).toBe(200);
    });

    it('unpublish removes the toplist at once; republish brings a new version', async () => {
      const id = (await get('/api/v1/toplists/by-slug/best-casinos-no', site1)).json().data.id;
      expect((await admin('POST', `/toplists/${id}/unpublish`)).status).toBe(200);
      expect((await get(`/api/v1/toplists/${id}`, site1)).statusCode).toBe(404);
      const templateId = await casinoTemplateId();
      expect((await get(`/api/v1/toplists?template_id=${templateId}`, site1)).json().meta.total).toBe(128);
      await admin('POST', `/toplists/${id}/publish`);
      const back = await get(`/api/v1/toplists/${id}`, site1);
      expect(back.json().data.version).toBe('2');
    });

    it('honours the live_from / live_until window at read time', async () => {
      const id = (await get('/api/v1/toplists/by-slug/best-casinos-dk', site1)).json().data.id;
      const now = t.clock.now.getTime();
      const inAnHour = new Date(now + 3_600_000).toISOString();
      const inTwoHours = new Date(now + 7_200_000).toISOString();
      expect(
        (await admin('PATCH', `/toplists/${id}`, { liveFrom: inAnHour, liveUntil: inTwoHours })).status,
      ).toBe(200);
      expect((await get(`/api/v1/toplists/${id}`, site1)).statusCode).toBe(404);
      expect((await get('/api/v1/toplists/by-slug/best-casinos-dk', site1)).statusCode).toBe(404);
      // The same list page at each instant: a page kept from before a window opened or closed
      // must not be served after it.
      const listed = async () =>
        (await get('/api/v1/toplists?geo_type=country&geo_code=DK', site1))
          .json()
          .data.map((e: WireToplist) => e.id);
      expect(await listed()).toEqual([]);
      t.clock.now = new Date(now + 5_400_000);
      expect((await get(`/api/v1/toplists/${id}`, site1)).statusCode).toBe(200);
      expect(await listed()).toEqual([id]);
      t.clock.now = new Date(now + 7_200_000);
      expect((await get(`/api/v1/toplists/${id}`, site1)).statusCode).toBe(404);
      expect(await listed()).toEqual([]);
      t.clock.now = new Date(now + 5_400_000);
      expect(await listed()).toEqual([id]);
      t.clock.now = new Date(now);
      expect(await listed()).toEqual([]);
      await admin('PATCH', `/toplists/${id}`, { liveFrom: null, liveUntil: null });
      expect((await get(`/api/v1/toplists/${id}`, site1)).statusCode).toBe(200);
      expect(await listed()).toEqual([id]);
    });
  });

  describe('hostile input', () => {
    it.each([
      ['page=abc', 'page'],
      ['page=0', 'page'],
      ['page=-1', 'page'],
      ['page=1.5', 'page'],
      ['page=99999999999999999999', 'page'],
      ['page=1&page=2', 'page'],
      ['per_page=0', 'per_page'],
      ['per_page=101', 'per_page'],
      ['per_page=1e2', 'per_page'],
      ['per_page=%20', 'per_page'],
      ['template_id=abc', 'template_id'],
      ['template_id=-5', 'template_id'],
      ['geo_type=country', 'geo_code'],
      ['geo_code=SE', 'geo_type'],
      ['geo_type=planet&geo_code=MARS', 'geo_type'],
    ])('?%s → 422 naming %s', async (query, field) => {
      const res = await get(`/api/v1/toplists?${query}`, site1);
      expect(res.statusCode).toBe(422);
      const body = res.json();
      expectContract('error', body);
      expect(body.code).toBe('validation_failed');
      expect(body.details.field).toBe(field);
      expect(body.message).toContain(field);
    });

    it.each([
      "/api/v1/toplists/by-slug/' OR 1=1 --",
      '/api/v1/toplists/by-slug/%F0%9F%8E%B0-casino',
      '/api/v1/toplists/by-slug/..%2F..%2Fetc%2Fpasswd',
      '/api/v1/toplists/abc',
      '/api/v1/toplists/0',
      '/api/v1/toplists/-1',
      '/api/v1/toplists/99999999999999999999',
      '/api/v1/toplists/1;DROP TABLE toplists',
    ])('%s → 404 not_found', async (url) => {
      const res = await get(url, site1);
      expect(res.statusCode).toBe(404);
      expectContract('error', res.json());
      expect(res.json().code).toBe('not_found');
    });

    it('answers 414 uri_too_long for an absurdly long path parameter', async () => {
      const res = await get(`/api/v1/toplists/by-slug/${'a'.repeat(5000)}`, site1);
      expect(res.statusCode).toBe(414);
      expectContract('error', res.json());
      expect(res.json().code).toBe('uri_too_long');
    });

    it('survives all of the above with the data intact', async () => {
      expect((await get('/api/v1/toplists', site1)).json().meta.total).toBe(130);
    });
  });

  describe('tracking domain', () => {
    /** Every trackerLink of every live edition of a site, read through the public API. */
    const links = async (token: string) => {
      const out: string[] = [];
      for (let page = 1; ; page++) {
        const body = (await get(`/api/v1/toplists?per_page=100&page=${page}`, token)).json();
        for (const t of body.data)
          for (const i of t.items) for (const tr of i.offer.trackers) out.push(tr.trackerLink as string);
        if (page >= body.meta.last_page) return out;
      }
    };

    it('a changed tracking domain shows in the next read of every live edition of that site, and only that site', async () => {
      const before1 = await links(site1);
      const before2 = await links(site2);
      expect(before1.length).toBeGreaterThan(1000);
      expect(before1.every((l) => l.startsWith('https://podium.test/go/'))).toBe(true);
      const etag = (await get('/api/v1/toplists/by-slug/best-casinos-se', site1)).headers.etag as string;

      const patched = await admin('PATCH', '/sites/1', {
        trackingBaseUrl: 'https://go.casino-guide.example',
      });
      expect(patched.status).toBe(200);
      expect(patched.body.data.trackingBaseUrl).toBe('https://go.casino-guide.example');

      const after1 = await links(site1);
      expect(after1).toEqual(
        before1.map((l) => l.replace('https://podium.test/', 'https://go.casino-guide.example/')),
      );
      expect(await links(site2)).toEqual(before2);
      // The stored bytes changed (reads serve them as they are), and so did the validator.
      const [row] = await t.db.query<{ document: string }>(
        `SELECT e.document FROM toplists t JOIN editions e ON e.id = t.live_edition_id WHERE t.slug = 'best-casinos-se'`,
      );
      expect(row!.document).toContain('"trackerLink":"https://go.casino-guide.example/go/');
      const se = await get('/api/v1/toplists/by-slug/best-casinos-se', site1, { 'if-none-match': etag });
      expect(se.statusCode).toBe(200);
      expectContract('single', se.json());
      // The brands of the site carry the same links.
      const brands = (await get('/api/v1/brands?per_page=100', site1)).json();
      expect(brands.data[0].offers[0].trackers[0].trackerLink).toMatch(
        /^https:\/\/go\.casino-guide\.example\/go\//,
      );
      // The links still redirect: the slug is unchanged.
      const slug = after1[0]!.split('/go/')[1];
      expect((await t.app.inject({ url: `/go/${slug}` })).statusCode).toBe(302);

      // A new publish renders with the site's domain too; null goes back to PODIUM_PUBLIC_URL.
      const id = se.json().data.id;
      expect((await admin('POST', `/toplists/${id}/publish`)).status).toBe(200);
      const republished = (await get(`/api/v1/toplists/${id}`, site1)).json().data;
      expect(republished.items[0].offer.trackers[0].trackerLink).toMatch(
        /^https:\/\/go\.casino-guide\.example\/go\//,
      );
      expect((await admin('PATCH', '/sites/1', { trackingBaseUrl: null })).status).toBe(200);
      expect((await links(site1)).every((l) => l.startsWith('https://podium.test/go/'))).toBe(true);
    });

    it.each([
      'ftp://go.example',
      'https://go.example/',
      'go.example',
      'https://go.example/?a=1',
      'javascript:alert(1)',
    ])('refuses the tracking domain %s: not an http(s) base without a trailing slash', async (bad) => {
      const r = await admin('PATCH', '/sites/1', { trackingBaseUrl: bad });
      expect(r.status).toBe(422);
      expect(JSON.stringify(r.body)).toContain('trackingBaseUrl');
    });
  });

  it('publishes an OpenAPI 3.1 document of the public API', async () => {
    const res = await get('/api/v1/openapi.json');
    expect(res.statusCode).toBe(200);
    const doc = res.json();
    expect(doc.openapi).toBe('3.1.0');
    expect(Object.keys(doc.paths).sort()).toEqual([
      '/brands',
      '/openapi.json',
      '/toplists',
      '/toplists/by-slug/{slug}',
      '/toplists/resolve',
      '/toplists/{id}',
    ]);
    expect(doc.paths['/toplists'].get.parameters.map((p: { name: string }) => p.name)).toEqual(
      expect.arrayContaining(['template_id', 'geo_type', 'geo_code', 'page', 'per_page']),
    );
  });
});

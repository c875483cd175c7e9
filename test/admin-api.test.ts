import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type DemoTokens, loadDemo } from '../src/modules/catalog/demo.ts';
import { expectContract } from './contract.ts';
import { DB_KIND, type TestApp, testApp } from './helpers.ts';

type Method = 'GET' | 'POST' | 'PATCH' | 'PUT' | 'DELETE';

describe(`editorial admin API (${DB_KIND})`, () => {
  let t: TestApp;
  let demo: DemoTokens;

  const call = async (method: Method, url: string, token: string | undefined, payload?: unknown) => {
    const res = await t.app.inject({
      method,
      url: `/api/admin/v1${url}`,
      headers: token ? { authorization: `Bearer ${token}` } : {},
      ...(payload === undefined ? {} : { payload: payload as object }),
    });
    return { status: res.statusCode, body: res.body ? res.json() : undefined, headers: res.headers };
  };
  const admin = (method: Method, url: string, payload?: unknown) =>
    call(method, url, demo.adminToken, payload);
  const publicGet = (url: string) =>
    t.app.inject({ url, headers: { authorization: `Bearer ${demo.siteTokens[0]!.token}` } });

  /** Asserts an error body of the catalog naming `field`. */
  const expectField = (
    r: { status: number; body: { code: string; details?: { field?: string } } },
    status: number,
    field: string,
  ) => {
    expect(r.status).toBe(status);
    expectContract('error', r.body);
    expect(r.body.details?.field).toBe(field);
  };

  const brandInput = (n: string) => ({
    externalId: `brand-test-${n}`,
    name: `Test Brand ${n}`,
    slug: `test-brand-${n}`,
    rating: 8.35,
    logo: {
      rectangular: 'https://cdn.example/r.png',
      square: 'https://cdn.example/s.png',
      backgroundColor: '#112233',
    },
  });

  beforeAll(async () => {
    t = await testApp();
    demo = await loadDemo(t.app.services);
  });
  afterAll(() => t.close());

  describe('authentication and scopes', () => {
    it('answers 401 before validating anything, 401 to a site token, 403 naming the missing scope', async () => {
      const anon = await call('POST', '/brands', undefined, { nonsense: true });
      expect(anon.status).toBe(401);
      expect(anon.headers['www-authenticate']).toMatch(/^Bearer/);
      expect(anon.body.code).toBe('unauthorized');
      expect((await call('GET', '/brands', demo.siteTokens[0]!.token)).status).toBe(401);

      const reader = (await admin('POST', '/admin-tokens', { name: 'reader', scopes: ['catalog:read'] })).body
        .data;
      expect(reader.token).toMatch(/^pda_/);
      expect((await call('GET', '/brands', reader.token)).status).toBe(200);
      const denied = await call('POST', '/brands', reader.token, brandInput('denied'));
      expect(denied.status).toBe(403);
      expect(denied.body).toMatchObject({ code: 'forbidden', details: { requiredScope: 'catalog:write' } });
      expect((await call('POST', '/toplists/1/publish', reader.token)).status).toBe(403);

      await admin('DELETE', `/admin-tokens/${reader.id}`);
      expect((await call('GET', '/brands', reader.token)).status).toBe(401);
    });

    it('shows a new site token once, never in lists, and marks the response no-store', async () => {
      const created = await admin('POST', '/sites/2/tokens', { name: 'wordpress' });
      expect(created.status).toBe(201);
      expect(created.headers['cache-control']).toBe('no-store');
      expect(created.body.data.token).toMatch(/^pds_/);
      const list = await admin('GET', '/sites/2/tokens');
      const listed = list.body.data.find((x: { id: number }) => x.id === created.body.data.id);
      expect(listed.name).toBe('wordpress');
      expect(JSON.stringify(list.body)).not.toContain(created.body.data.token);
      const rows = await t.db.query<{ token_hash: Buffer }>(
        'SELECT token_hash FROM site_tokens WHERE id = $1',
        [created.body.data.id],
      );
      expect(Buffer.from(rows[0]!.token_hash).toString('utf8')).not.toContain(created.body.data.token);
      // The name is optional: a token asked for with no body at all is unnamed.
      const unnamed = await admin('POST', '/sites/2/tokens');
      expect(unnamed.status).toBe(201);
      expect(unnamed.body.data).toMatchObject({ name: '', token: expect.stringMatching(/^pds_/) });
      // A token for a site that does not exist, or a revocation of one that does not, is a 404.
      expect((await admin('POST', '/sites/999999/tokens', { name: 'x' })).body.code).toBe('not_found');
      const gone = await admin('DELETE', '/sites/2/tokens/999999');
      expect(gone.status).toBe(404);
      expect(gone.body.message).toBe('Site token not found');
    });
  });

  describe('validation', () => {
    it.each([
      ['a missing required field', { ...brandInput('a'), slug: undefined }, 'slug'],
      ['an unknown field', { ...brandInput('b'), colour: 'red' }, 'colour'],
      ['a rating with three decimals', { ...brandInput('c'), rating: 8.355 }, 'rating'],
      ['a rating out of range', { ...brandInput('d'), rating: 11 }, 'rating'],
      ['a slug with capitals', { ...brandInput('e'), slug: 'Bad Slug' }, 'slug'],
      [
        'a nested bad colour',
        { ...brandInput('f'), logo: { ...brandInput('f').logo, backgroundColor: 'red' } },
        'logo.backgroundColor',
      ],
    ])('POST /brands with %s → 422 naming the field', async (_label, body, field) => {
      expectField(await admin('POST', '/brands', body), 422, field);
    });

    it('rejects an empty body, malformed JSON and an oversized body with clear errors', async () => {
      expectField(await admin('POST', '/sites', undefined), 422, 'domain');
      const bad = await t.app.inject({
        method: 'POST',
        url: '/api/admin/v1/sites',
        headers: { authorization: `Bearer ${demo.adminToken}`, 'content-type': 'application/json' },
        payload: '{"domain": ',
      });
      expect(bad.statusCode).toBe(400);
      expect(bad.json().code).toBe('bad_request');
      const huge = await t.app.inject({
        method: 'POST',
        url: '/api/admin/v1/sites',
        headers: { authorization: `Bearer ${demo.adminToken}`, 'content-type': 'application/json' },
        payload: JSON.stringify({ domain: 'x.example', name: 'a'.repeat(2 * 1024 * 1024) }),
      });
      expect(huge.statusCode).toBe(413);
      expect(huge.json().code).toBe('payload_too_large');
    });

    it('answers 409 naming the field for a duplicate, 422 for a dangling reference', async () => {
      expect((await admin('POST', '/brands', brandInput('dup'))).status).toBe(201);
      const again = await admin('POST', '/brands', { ...brandInput('dup'), slug: 'another-slug' });
      expect(again.status).toBe(409);
      expect(again.body.code).toBe('conflict');
      expect(again.body.details.field).toBe('externalId');
      expect((await admin('POST', '/sites', { domain: 'casinoguide.example' })).status).toBe(409);
      const offer = await admin('POST', '/offers', {
        externalId: 'offer-dangling',
        brandId: 999999,
        offerTypeId: 1,
        offerText: 'x',
        bonusExpiryDate: '2026-12-31',
      });
      expectField(offer, 422, 'brandId');
    });

    it('checks decimals as strings and never stores a half-created offer', async () => {
      const brand = (await admin('POST', '/brands', brandInput('dec'))).body.data;
      const base = {
        externalId: 'offer-dec',
        brandId: brand.id,
        offerTypeId: 1,
        offerText: '100% up to 200',
        bonusExpiryDate: '2026-12-31',
      };
      expectField(await admin('POST', '/offers', { ...base, maxBonusAmount: 200.5 }), 422, 'maxBonusAmount');
      expectField(
        await admin('POST', '/offers', { ...base, maxBonusAmount: '1.234' }),
        422,
        'maxBonusAmount',
      );
      const badTracker = await admin('POST', '/offers', {
        ...base,
        trackers: [
          { campaignName: 'ok', landingUrl: 'https://ok.example/' },
          { campaignName: 'bad', landingUrl: 'javascript:alert(1)' },
        ],
      });
      expectField(badTracker, 422, 'trackers.1.landingUrl');
      const offers = await t.db.query("SELECT 1 FROM offers WHERE external_id = 'offer-dec'");
      expect(offers).toHaveLength(0);
      const ok = await admin('POST', '/offers', { ...base, maxBonusAmount: '200.5' });
      expect(ok.status).toBe(201);
    });
  });

  describe('toplists, drafts and editions', () => {
    let toplistId: number;
    let brands: { id: number; offerId: number }[];

    beforeAll(async () => {
      const offers = (await admin('GET', '/offers?per_page=100')).body.data as {
        id: number;
        brandId: number;
      }[];
      const byBrand = new Map<number, number>();
      for (const o of offers) if (!byBrand.has(o.brandId)) byBrand.set(o.brandId, o.id);
      brands = [...byBrand].slice(0, 4).map(([id, offerId]) => ({ id, offerId }));
      const created = await admin('POST', '/toplists', {
        siteId: 1,
        templateId: 1,
        ownerId: 1,
        name: 'Admin Test List',
        slug: 'admin-test-list',
        geo: { type: 'market', code: 'BALTICS', name: 'Baltics', coveredCountries: ['EE', 'LV', 'LT'] },
      });
      expect(created.status).toBe(201);
      toplistId = created.body.data.id;
      expect(created.body.data.liveVersion).toBeNull();
    });

    const items = (n: number) =>
      brands.slice(0, n).map((b, i) => ({ position: i + 1, brandId: b.id, offerId: b.offerId, dealId: 77 }));

    it('refuses a duplicate slug or geo on the same site with 409', async () => {
      const dup = await admin('POST', '/toplists', {
        siteId: 1,
        templateId: 1,
        ownerId: 1,
        name: 'Dup',
        slug: 'admin-test-list',
        geo: { type: 'country', code: 'EE' },
      });
      expect(dup.status).toBe(409);
      expect(dup.body.details.field).toBe('slug');
    });

    it('replaces the draft atomically: one bad item leaves the draft as it was', async () => {
      expect((await admin('PUT', `/toplists/${toplistId}/items`, { items: items(2) })).status).toBe(200);
      const bad = await admin('PUT', `/toplists/${toplistId}/items`, {
        items: [...items(3), { position: 9, brandId: brands[0]!.id, offerId: brands[1]!.offerId }],
      });
      expectField(bad, 422, 'items.3.offerId');
      const twice = await admin('PUT', `/toplists/${toplistId}/items`, {
        items: [items(1)[0], { ...items(2)[1], position: 1 }],
      });
      expectField(twice, 422, 'items.1.position');
      const draft = (await admin('GET', `/toplists/${toplistId}`)).body.data;
      expect(draft.items).toHaveLength(2);
    });

    it('publishes immutable editions with digit versions, and serves the newest', async () => {
      const first = await admin('POST', `/toplists/${toplistId}/publish`);
      expect(first.status).toBe(200);
      expect(first.body.data.version).toBe('1');
      await admin('PUT', `/toplists/${toplistId}/items`, { items: items(4) });
      // The draft change is not live until published.
      expect((await publicGet('/api/v1/toplists/by-slug/admin-test-list')).json().data.items).toHaveLength(2);
      const second = await admin('POST', `/toplists/${toplistId}/publish`);
      expect(second.body.data.version).toBe('2');
      const live = (await publicGet('/api/v1/toplists/by-slug/admin-test-list')).json().data;
      expect(live.version).toBe('2');
      expect(live.items).toHaveLength(4);
      expect(live.geo).toEqual({
        geo_type: 'market',
        name: 'Baltics',
        code: 'BALTICS',
        coveredCountries: ['EE', 'LV', 'LT'],
      });

      const editions = (await admin('GET', `/toplists/${toplistId}/editions`)).body.data;
      expect(editions.map((e: { version: string }) => e.version)).toEqual(['2', '1']);
      // The history grows with every publish, so it is paged like every other list.
      const older = (await admin('GET', `/toplists/${toplistId}/editions?per_page=1&page=2`)).body;
      expect(older.data.map((e: { version: string }) => e.version)).toEqual(['1']);
      expect(older.meta).toEqual({ current_page: 2, per_page: 1, total: 2, last_page: 2, from: 2, to: 2 });
      const past = (await admin('GET', `/toplists/${toplistId}/editions?per_page=1&page=3`)).body;
      expect(past).toMatchObject({ data: [], meta: { total: 2, from: null } });
      const tooMany = await admin('GET', `/toplists/${toplistId}/editions?per_page=101`);
      expect(tooMany.status).toBe(422);
      expect(tooMany.body.details.field).toBe('per_page');
      const v1 = (await admin('GET', `/toplists/${toplistId}/editions/1`)).body.data;
      expect(v1.version).toBe('1');
      expect(v1.items).toHaveLength(2);
      expect((await admin('GET', `/toplists/${toplistId}/editions/3`)).status).toBe(404);
    });

    it('a locked toplist refuses item edits with 409 until unlocked', async () => {
      expect((await admin('PATCH', `/toplists/${toplistId}`, { locked: true })).status).toBe(200);
      const refused = await admin('PUT', `/toplists/${toplistId}/items`, { items: items(1) });
      expect(refused.status).toBe(409);
      expect(refused.body.code).toBe('conflict');
      await admin('PATCH', `/toplists/${toplistId}`, { locked: false });
      expect((await admin('PUT', `/toplists/${toplistId}/items`, { items: items(1) })).status).toBe(200);
    });

    it('validates the publish window and unpublishes at once', async () => {
      const badWindow = await admin('POST', `/toplists/${toplistId}/publish`, {
        liveFrom: '2026-12-01T00:00:00Z',
        liveUntil: '2026-11-01T00:00:00Z',
      });
      expectField(badWindow, 422, 'liveUntil');
      expect((await admin('GET', `/toplists/${toplistId}`)).body.data.liveVersion).toBe('2');
      const down = await admin('POST', `/toplists/${toplistId}/unpublish`);
      expect(down.body.data.liveVersion).toBeNull();
      expect((await publicGet('/api/v1/toplists/by-slug/admin-test-list')).statusCode).toBe(404);
    });

    it('404s unknown ids with the error body', async () => {
      for (const url of ['/toplists/999999', '/brands/999999', '/sites/999999/tokens']) {
        const r = await admin('GET', url);
        expect(r.status).toBe(404);
        expectContract('error', r.body);
      }
    });
  });
});

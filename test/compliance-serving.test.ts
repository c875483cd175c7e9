import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { CatalogService } from '../src/modules/catalog/service.ts';
import { casinoTemplate, draftToplist } from './catalog-fixture.ts';
import { adminCall, DB_KIND, type TestApp, testApp } from './helpers.ts';
import { serve, sharedSchemaEnv } from './serve-process.ts';

const logo = {
  rectangular: 'https://cdn.example/r.png',
  square: 'https://cdn.example/s.png',
  backgroundColor: '#112233',
};

/** A brand per name, each with one offer of one tracker. */
async function brandsWithOffers(catalog: CatalogService, offerTypeId: number, names: string[]) {
  const out: { brandId: number; offerId: number }[] = [];
  for (const name of names) {
    const b = await catalog.brands.create({ externalId: name, name, slug: name, rating: 4, logo });
    const o = await catalog.offers.create({
      externalId: `o-${name}`,
      brandId: b.id,
      offerTypeId,
      offerText: 'Bonus',
      bonusExpiryDate: '2030-01-01',
      trackers: [{ campaignName: 'main', landingUrl: `https://${name}.example/go` }],
    });
    out.push({ brandId: b.id, offerId: o.id });
  }
  return out;
}

interface Served {
  httpStatus: number;
  etag: string;
  items: { position: number; brand: { id: number } }[];
  updatedAt: string;
  version: string;
}

describe(`the serving guard: rule changes withhold items from live editions (${DB_KIND})`, () => {
  let t: TestApp;
  let admin: string;
  let site: string;
  let list: number;
  let brands: { brandId: number; offerId: number }[];

  const call = (method: 'GET' | 'POST' | 'PATCH' | 'DELETE', url: string, payload?: object) =>
    adminCall(t.app, admin, method, url, payload);
  const served = async (id = list): Promise<Served> => {
    const res = await t.app.inject({
      method: 'GET',
      url: `/api/v1/toplists/${id}`,
      headers: { authorization: `Bearer ${site}` },
    });
    const data = res.json().data;
    return { ...data, httpStatus: res.statusCode, etag: String(res.headers.etag) };
  };
  const brandIdsServed = async (id = list) => (await served(id)).items.map((i) => i.brand.id);
  const siteBrands = async () => {
    const res = await t.app.inject({
      method: 'GET',
      url: '/api/v1/brands?per_page=100',
      headers: { authorization: `Bearer ${site}` },
    });
    return (res.json().data as { id: number }[]).map((b) => b.id);
  };
  const events = async (toplistId: number) =>
    (
      await t.db.query<{ payload: string }>(
        "SELECT payload FROM webhook_events WHERE type = 'toplist.compliance_changed' ORDER BY created_at, id",
      )
    )
      .map((r) => JSON.parse(r.payload))
      .filter((p) => p.data.toplistId === toplistId);

  beforeAll(async () => {
    t = await testApp();
    const { catalog, access } = t.app.services;
    admin = (await access.createAdminToken('root', ['admin'], null)).token;
    const s = await catalog.sites.create({ domain: 'casinos.example' });
    site = (await access.createSiteToken(s.id)).token;
    const fx = await casinoTemplate(catalog);
    brands = await brandsWithOffers(catalog, fx.offerType.id, ['alpha', 'bravo', 'charlie']);
    const at = { siteId: s.id, owner: fx.owner, template: fx.template };
    const toplist = await draftToplist(
      catalog,
      at,
      { name: 'Sweden', slug: 'best-se', country: 'SE' },
      brands.map((b, i) => ({ position: i + 1, ...b })),
    );
    list = toplist.id;
    await catalog.publishing.publish(list);
  });
  afterAll(() => t.close());

  it('a restriction added to a brand takes it out of the live list at once: positions, ETag, /brands, webhook, audit', async () => {
    const before = await served();
    expect(before.items.map((i) => i.brand.id)).toEqual(brands.map((b) => b.brandId));
    expect(await siteBrands()).toContain(brands[1]!.brandId);

    t.clock.now = new Date(t.clock.now.getTime() + 1000);
    const patched = await call('PATCH', `/brands/${brands[1]!.brandId}`, { restrictedCountries: ['Sweden'] });
    expect(patched.status).toBe(200);

    const after = await served();
    expect(after.httpStatus).toBe(200);
    expect(after.version).toBe(before.version);
    expect(after.items.map((i) => [i.position, i.brand.id])).toEqual([
      [1, brands[0]!.brandId],
      [2, brands[2]!.brandId],
    ]);
    expect(after.etag).not.toBe(before.etag);
    expect(after.updatedAt).not.toBe(before.updatedAt);
    expect(await siteBrands()).not.toContain(brands[1]!.brandId);

    expect((await events(list)).map((e) => e.type)).toEqual(['toplist.compliance_changed']);
    const [row] = (await call('GET', `/audit?target_type=toplists&target_id=${list}`)).body.data;
    expect(row).toMatchObject({
      actor: 'system:compliance',
      action: 'compliance.withheld_changed',
      before: { withheld: [] },
      after: { withheld: [{ brandId: brands[1]!.brandId, country: 'SE', rule: 'restricted_country' }] },
    });
  });

  it('lifting the restriction serves the item again, in its place', async () => {
    t.clock.now = new Date(t.clock.now.getTime() + 1000);
    await call('PATCH', `/brands/${brands[1]!.brandId}`, { restrictedCountries: [] });
    expect(await brandIdsServed()).toEqual(brands.map((b) => b.brandId));
    expect((await served()).items.map((i) => i.position)).toEqual([1, 2, 3]);
    expect(await events(list)).toHaveLength(2);
  });

  it('a licence rule added withholds every brand without a licence; a licence that lapses is withdrawn by the job runner', async () => {
    t.clock.now = new Date(t.clock.now.getTime() + 1000);
    const until = new Date(t.clock.now.getTime() + 3_600_000);
    for (const b of brands.slice(0, 2))
      await call('POST', `/brands/${b.brandId}/licences`, {
        authority: 'Spelinspektionen',
        countries: ['SE'],
        validUntil: b === brands[0] ? until.toISOString() : null,
      });
    const rule = await call('POST', '/compliance/rules', { geo: { type: 'country', code: 'SE' } });
    expect(rule.status).toBe(201);
    expect(await brandIdsServed()).toEqual([brands[0]!.brandId, brands[1]!.brandId]);

    // The first brand's licence runs out: the next run of the re-check job withdraws it.
    t.clock.now = new Date(until.getTime() + 60_000);
    await t.app.services.scheduler.tick();
    expect(await brandIdsServed()).toEqual([brands[1]!.brandId]);
    const [row] = (await call('GET', `/audit?target_type=toplists&target_id=${list}`)).body.data;
    expect(row.after.withheld).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ brandId: brands[0]!.brandId, rule: 'licence_required' }),
      ]),
    );

    await call('DELETE', `/compliance/rules/${rule.body.data.id}`);
    expect(await brandIdsServed()).toEqual(brands.map((b) => b.brandId));
  });

  it('keeps serving what an edition was published over with an override, and withholds what came after', async () => {
    const { catalog } = t.app.services;
    const owner = await catalog.owners.create({ name: 'Other' });
    const toplist = await catalog.toplists.create({
      siteId: (await catalog.toplists.get(list)).siteId,
      templateId: (await catalog.toplists.get(list)).templateId,
      ownerId: owner.id,
      name: 'Finland',
      slug: 'best-fi',
      geo: { type: 'country', code: 'FI' },
    });
    await catalog.publishing.replaceItems(
      toplist.id,
      brands.map((b, i) => ({ position: i + 1, ...b })),
    );
    await call('PATCH', `/brands/${brands[0]!.brandId}`, { restrictedCountries: ['Finland'] });
    await catalog.publishing.publish(toplist.id, {
      override: { reason: 'Court order 2026/17, until the appeal' },
    });
    expect(await brandIdsServed(toplist.id)).toEqual(brands.map((b) => b.brandId));

    await call('PATCH', `/brands/${brands[2]!.brandId}`, { restrictedCountries: ['Finland'] });
    expect(await brandIdsServed(toplist.id)).toEqual([brands[0]!.brandId, brands[1]!.brandId]);
  });
});

// Two server processes need a database they share: this runs with DATABASE_URL only.
describe.runIf(process.env.DATABASE_URL)('the serving guard across two processes on one PostgreSQL', () => {
  it('a restriction written through one process is no longer served by the other', async () => {
    const t = await testApp();
    try {
      // The server processes run on the wall clock: so does this test's data.
      t.clock.now = new Date();
      const { catalog, access } = t.app.services;
      const admin = (await access.createAdminToken('root', ['admin'], null)).token;
      const s = await catalog.sites.create({ domain: 'two-processes.example' });
      const site = (await access.createSiteToken(s.id)).token;
      const fx = await casinoTemplate(catalog);
      const items = (await brandsWithOffers(catalog, fx.offerType.id, ['delta', 'echo'])).map((b, i) => ({
        position: i + 1,
        ...b,
      }));
      const list = await draftToplist(
        catalog,
        { siteId: s.id, owner: fx.owner, template: fx.template },
        { name: 'Sweden', slug: 'best-se', country: 'SE' },
        items,
      );
      await catalog.publishing.publish(list.id);

      const env = await sharedSchemaEnv(t.db, {
        PODIUM_SECRET_KEYS: `1:${randomBytes(32).toString('base64')}`,
      });
      const [writer, reader] = await Promise.all([serve(env), serve(env)]);
      try {
        const servedBrands = async () => {
          const res = await fetch(`${reader.url}/api/v1/toplists/${list.id}`, {
            headers: { authorization: `Bearer ${site}` },
          });
          expect(res.status).toBe(200);
          return ((await res.json()) as { data: Served }).data.items.map((i) => i.brand.id);
        };
        // The reader has the edition in its cache before the rule changes.
        expect(await servedBrands()).toEqual(items.map((i) => i.brandId));
        const patched = await fetch(`${writer.url}/api/admin/v1/brands/${items[0]!.brandId}`, {
          method: 'PATCH',
          headers: { authorization: `Bearer ${admin}`, 'content-type': 'application/json' },
          body: JSON.stringify({ restrictedCountries: ['Sweden'] }),
        });
        expect(patched.status).toBe(200);
        await expect.poll(servedBrands, { timeout: 5_000, interval: 100 }).toEqual([items[1]!.brandId]);
      } finally {
        for (const p of [writer, reader]) p.proc.kill('SIGTERM');
        await Promise.all([writer.exit, reader.exit]);
      }
    } finally {
      await t.close();
    }
  }, 120_000);
});

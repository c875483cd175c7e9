import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { migrate } from '../src/db/migrate.ts';
import { casinoTemplate, draftToplist } from './catalog-fixture.ts';
import { adminCall, DB_KIND, dbBefore, type TestApp, testApp } from './helpers.ts';

const logo = {
  rectangular: 'https://cdn.example/r.png',
  square: 'https://cdn.example/s.png',
  backgroundColor: '#112233',
};

describe(`compliance rules and the publish guard (${DB_KIND})`, () => {
  let t: TestApp;
  let admin: string;
  let publisher: string;
  let officer: string;
  let siteId: number;
  let at: { siteId: number; owner: { id: number }; template: { id: number } };
  let offerType: number;

  const call = (method: 'GET' | 'POST' | 'PATCH' | 'DELETE', url: string, token = admin, payload?: object) =>
    adminCall(t.app, token, method, url, payload);

  /** A brand with one offer (one tracker) through the admin API; returns both ids. */
  const brandWithOffer = async (slug: string, extra: object = {}, offerGeos?: object) => {
    const b = await call('POST', '/brands', admin, {
      externalId: slug,
      name: slug,
      slug,
      rating: 4,
      logo,
      ...extra,
    });
    expect(b.status).toBe(201);
    const o = await call('POST', '/offers', admin, {
      externalId: `o-${slug}`,
      brandId: b.body.data.id,
      offerTypeId: offerType,
      offerText: 'Bonus',
      bonusExpiryDate: '2030-01-01',
      ...(offerGeos ? { geos: offerGeos } : {}),
      trackers: [{ campaignName: 'main', landingUrl: `https://${slug}.example/go` }],
    });
    expect(o.status).toBe(201);
    return { brandId: b.body.data.id as number, offerId: o.body.data.id as number };
  };

  beforeAll(async () => {
    t = await testApp();
    const { catalog, access } = t.app.services;
    admin = (await access.createAdminToken('root', ['admin'], null)).token;
    publisher = (await access.createAdminToken('pub', ['catalog:read', 'publish'], null)).token;
    officer = (
      await access.createAdminToken('officer', ['catalog:read', 'publish', 'compliance:override'], null)
    ).token;
    siteId = (await catalog.sites.create({ domain: 'casinos.example' })).id;
    const fx = await casinoTemplate(catalog);
    offerType = fx.offerType.id;
    at = { siteId, owner: fx.owner, template: fx.template };
  });
  afterAll(() => t.close());

  it('stores restricted countries as codes, shows them as names and refuses a name that is no country', async () => {
    const { brandId } = await brandWithOffer('north-star', {
      restrictedCountries: ['Sweden', 'de', 'Sweden'],
    });
    const [row] = await t.db.query<{ restricted_countries: string[] }>(
      'SELECT restricted_countries FROM brands WHERE id = $1',
      [brandId],
    );
    expect(row!.restricted_countries).toEqual(['DE', 'SE']);
    expect((await call('GET', `/brands/${brandId}`)).body.data.restrictedCountries).toEqual([
      'Germany',
      'Sweden',
    ]);

    const bad = await call('PATCH', `/brands/${brandId}`, admin, {
      restrictedCountries: ['Finland', 'Narnia'],
    });
    expect(bad.status).toBe(422);
    expect(bad.body).toMatchObject({
      code: 'validation_failed',
      details: { field: 'restrictedCountries.1' },
    });
    expect(bad.body.message).toContain('"Narnia"');
    const [still] = await t.db.query<{ restricted_countries: string[] }>(
      'SELECT restricted_countries FROM brands WHERE id = $1',
      [brandId],
    );
    expect(still!.restricted_countries).toEqual(['DE', 'SE']);
  });

  it('keeps licences per brand with validated countries and window, audited with before and after', async () => {
    const { brandId } = await brandWithOffer('licensed');
    const created = await call('POST', `/brands/${brandId}/licences`, admin, {
      authority: 'Spelinspektionen',
      countries: ['SE'],
      validFrom: '2026-01-01T00:00:00Z',
      validUntil: '2031-01-01T00:00:00Z',
    });
    expect(created.status).toBe(201);
    expect(created.body.data).toMatchObject({ brandId, authority: 'Spelinspektionen', countries: ['SE'] });
    const id = created.body.data.id;

    const cases: [object, string][] = [
      [{ authority: 'X', countries: ['XX'] }, 'countries.0'],
      [
        {
          authority: 'X',
          countries: ['SE'],
          validFrom: '2030-01-01T00:00:00Z',
          validUntil: '2029-01-01T00:00:00Z',
        },
        'validUntil',
      ],
    ];
    for (const [body, field] of cases) {
      const res = await call('POST', `/brands/${brandId}/licences`, admin, body);
      expect(res.status, JSON.stringify(body)).toBe(422);
      expect(res.body.details.field).toBe(field);
    }
    expect((await call('POST', `/brands/${brandId}/licences`, admin, { authority: 'X' })).status).toBe(422);
    expect(
      (await call('POST', '/brands/999999/licences', admin, { authority: 'X', countries: ['SE'] })).status,
    ).toBe(404);
    expect(
      (await call('POST', `/brands/${brandId}/licences`, publisher, { authority: 'X', countries: ['SE'] }))
        .status,
    ).toBe(403);
    expect((await call('GET', `/brands/${brandId}/licences`)).body.data).toHaveLength(1);

    const patched = await call('PATCH', `/brands/${brandId}/licences/${id}`, admin, {
      countries: ['SE', 'FI'],
    });
    expect(patched.body.data.countries).toEqual(['FI', 'SE']);
    const log = (await call('GET', `/audit?target_type=brands&target_id=${brandId}`)).body.data;
    expect(log[0]).toMatchObject({
      action: 'PATCH /api/admin/v1/brands/:id/licences/:subId',
      before: { countries: ['SE'] },
      after: { countries: ['FI', 'SE'] },
    });
    expect((await call('DELETE', `/brands/${brandId}/licences/${id}`)).status).toBe(200);
    expect((await call('GET', `/brands/${brandId}/licences/${id}`)).status).toBe(404);
  });

  it('keeps country and market licence rules, refusing a global or unknown geo', async () => {
    const se = await call('POST', '/compliance/rules', admin, {
      geo: { type: 'country', code: 'NL' },
      authority: 'KSA',
    });
    expect(se.status).toBe(201);
    expect(se.body.data).toMatchObject({
      geoType: 'country',
      code: 'NL',
      countries: ['NL'],
      authority: 'KSA',
    });
    const dup = await call('POST', '/compliance/rules', admin, { geo: { type: 'country', code: 'NL' } });
    expect(dup.status).toBe(409);
    const market = await call('POST', '/compliance/rules', admin, {
      geo: { type: 'market', code: 'BALTICS', coveredCountries: ['EE', 'LV', 'LT'] },
    });
    expect(market.body.data.countries).toEqual(['EE', 'LT', 'LV']);
    for (const geo of [
      { type: 'global', code: 'ROW' },
      { type: 'country', code: 'XX' },
      { type: 'market', code: 'EMPTY' },
      { type: 'market', code: 'BAD', coveredCountries: ['QQ'] },
    ]) {
      const res = await call('POST', '/compliance/rules', admin, { geo });
      expect(res.status, JSON.stringify(geo)).toBe(422);
    }
    const log = (await call('GET', '/audit?target_type=compliance')).body.data;
    expect(log[0]).toMatchObject({ targetId: String(market.body.data.id), after: { code: 'BALTICS' } });
    expect((await call('DELETE', `/compliance/rules/${market.body.data.id}`)).status).toBe(200);
    expect((await call('DELETE', `/compliance/rules/${se.body.data.id}`)).status).toBe(200);
    expect((await call('GET', '/compliance/rules')).body.data).toEqual([]);
  });

  it('refuses to publish a country list holding a restricted brand, naming item, brand, country and rule', async () => {
    const { catalog } = t.app.services;
    const ok = await brandWithOffer('fine-casino');
    const banned = await brandWithOffer('banned-in-se', { restrictedCountries: ['Sweden'] });
    const list = await draftToplist(catalog, at, { name: 'Sweden', slug: 'best-se', country: 'SE' }, [
      { position: 1, brandId: ok.brandId, offerId: ok.offerId },
      { position: 2, brandId: banned.brandId, offerId: banned.offerId },
    ]);
    const draft = await call('GET', `/toplists/${list.id}/compliance`, publisher);
    expect(draft.body.data).toMatchObject({ publishable: false, violations: [{ country: 'SE' }] });

    const res = await call('POST', `/toplists/${list.id}/publish`, publisher, {});
    expect(res.status).toBe(422);
    expect(res.body.code).toBe('compliance_violation');
    const itemId = (await catalog.toplists.get(list.id)).items[1]!.id;
    expect(res.body.message).toContain(`item ${itemId}`);
    expect(res.body.message).toContain('banned-in-se');
    expect(res.body.message).toContain('SE');
    expect(res.body.message).toContain('restricted_country');
    expect(res.body.details.violations).toEqual([
      expect.objectContaining({
        itemId,
        position: 2,
        brandId: banned.brandId,
        country: 'SE',
        rule: 'restricted_country',
      }),
    ]);
    const editions = await t.db.query('SELECT id FROM editions WHERE toplist_id = $1', [list.id]);
    expect(editions).toHaveLength(0);
    expect((await catalog.toplists.get(list.id)).liveVersion).toBeNull();
  });

  it('judges an unsaved draft without writing it: new items by position, refused items named by field', async () => {
    const { catalog } = t.app.services;
    const ok = await brandWithOffer('fine-draft');
    const banned = await brandWithOffer('banned-draft-no', { restrictedCountries: ['Norway'] });
    const list = await draftToplist(
      catalog,
      at,
      { name: 'Norway drafts', slug: 'drafts-no', country: 'NO' },
      [{ position: 1, brandId: ok.brandId, offerId: ok.offerId }],
    );
    const savedId = (await catalog.toplists.get(list.id)).items[0]!.id;
    const proposed = [
      { id: savedId, position: 2, brandId: ok.brandId, offerId: ok.offerId },
      { position: 1, brandId: banned.brandId, offerId: banned.offerId },
    ];
    const res = await call('POST', `/toplists/${list.id}/compliance`, publisher, { items: proposed });
    expect(res.status).toBe(200);
    expect(res.body.data).toEqual({
      toplistId: list.id,
      publishable: false,
      violations: [
        expect.objectContaining({
          itemId: null,
          position: 1,
          brandId: banned.brandId,
          brandName: 'banned-draft-no',
          country: 'NO',
          rule: 'restricted_country',
        }),
      ],
    });
    // Nothing was written: the saved draft is the one item it was, and it may be published.
    const saved = await catalog.toplists.get(list.id);
    expect(saved.items.map((i) => [i.id, i.position, i.brandId])).toEqual([[savedId, 1, ok.brandId]]);
    const stored = await call('GET', `/toplists/${list.id}/compliance`, publisher);
    expect(stored.body.data).toMatchObject({ publishable: true, violations: [] });

    const clean = await call('POST', `/toplists/${list.id}/compliance`, publisher, { items: [proposed[0]] });
    expect(clean.body.data).toEqual({ toplistId: list.id, publishable: true, violations: [] });

    const wrongOffer = await call('POST', `/toplists/${list.id}/compliance`, publisher, {
      items: [{ position: 1, brandId: ok.brandId, offerId: banned.offerId }],
    });
    expect(wrongOffer.status).toBe(422);
    expect(wrongOffer.body.details).toMatchObject({ field: 'items.0.offerId' });
    expect(wrongOffer.body.message).toContain(`belongs to brand ${banned.brandId}`);
    const twice = await call('POST', `/toplists/${list.id}/compliance`, publisher, {
      items: [
        { position: 1, brandId: ok.brandId, offerId: ok.offerId },
        { position: 1, brandId: banned.brandId, offerId: banned.offerId },
      ],
    });
    expect(twice.status).toBe(422);
    expect(twice.body.details).toMatchObject({ field: 'items.1.position' });
    expect((await call('POST', '/toplists/999999/compliance', publisher, { items: [] })).status).toBe(404);
    const noItems = await call('POST', `/toplists/${list.id}/compliance`, publisher, {});
    expect(noItems.status).toBe(422);
  });

  it('lets only the compliance:override scope publish over a violation, with a reason, audited', async () => {
    const { catalog } = t.app.services;
    const banned = await brandWithOffer('banned-in-fi', { restrictedCountries: ['Finland'] });
    const list = await draftToplist(catalog, at, { name: 'Finland', slug: 'best-fi', country: 'FI' }, [
      { position: 1, brandId: banned.brandId, offerId: banned.offerId },
    ]);
    const reason = 'Court order 2026/17 allows this listing until the appeal';
    const denied = await call('POST', `/toplists/${list.id}/publish`, publisher, {
      complianceOverride: { reason },
    });
    expect(denied).toMatchObject({
      status: 403,
      body: { details: { requiredScope: 'compliance:override' } },
    });
    const short = await call('POST', `/toplists/${list.id}/publish`, officer, {
      complianceOverride: { reason: 'x' },
    });
    expect(short.status).toBe(422);

    const done = await call('POST', `/toplists/${list.id}/publish`, officer, {
      complianceOverride: { reason },
    });
    expect(done.status).toBe(200);
    expect(done.body.data.version).toBe('1');
    const [edition] = await t.db.query<{ compliance_override: { reason: string; violations: unknown[] } }>(
      'SELECT compliance_override FROM editions WHERE toplist_id = $1',
      [list.id],
    );
    expect(edition!.compliance_override.reason).toBe(reason);
    expect(edition!.compliance_override.violations).toHaveLength(1);
    const [audit] = (await call('GET', `/audit?target_type=toplists&target_id=${list.id}`)).body.data;
    expect(audit.after.complianceOverride).toMatchObject({ reason, violations: [{ country: 'FI' }] });
  });

  it('checks each country a market covers against licence rules, and lets a licence in force through', async () => {
    const { catalog } = t.app.services;
    const rule = await call('POST', '/compliance/rules', admin, {
      geo: { type: 'country', code: 'DK' },
      authority: 'Spillemyndigheden',
    });
    const brand = await brandWithOffer('nordic-play');
    const list = await catalog.toplists.create({
      siteId,
      templateId: at.template.id,
      ownerId: at.owner.id,
      name: 'Nordics',
      slug: 'best-nordics',
      geo: { type: 'market', code: 'NORDICS', coveredCountries: ['SE', 'DK', 'NO'] },
    });
    await catalog.publishing.replaceItems(list.id, [{ position: 1, ...brand }]);
    const refused = await call('POST', `/toplists/${list.id}/publish`, publisher, {});
    expect(refused.status).toBe(422);
    expect(refused.body.details.violations).toEqual([
      expect.objectContaining({ country: 'DK', rule: 'licence_required', ruleId: rule.body.data.id }),
    ]);
    // A licence from another authority, or one that lapsed, does not count.
    await call('POST', `/brands/${brand.brandId}/licences`, admin, { authority: 'MGA', countries: ['DK'] });
    const lapsed = new Date(t.clock.now.getTime() - 1000).toISOString();
    await call('POST', `/brands/${brand.brandId}/licences`, admin, {
      authority: 'Spillemyndigheden',
      countries: ['DK'],
      validUntil: lapsed,
    });
    expect((await call('POST', `/toplists/${list.id}/publish`, publisher, {})).status).toBe(422);
    await call('POST', `/brands/${brand.brandId}/licences`, admin, {
      authority: 'spillemyndigheden',
      countries: ['DK'],
    });
    expect((await call('POST', `/toplists/${list.id}/publish`, publisher, {})).status).toBe(200);
  });

  it("counts the offer's and the trackers' geos, by country name or market", async () => {
    const { catalog } = t.app.services;
    const german = await brandWithOffer('german-only', {}, { countries: ['Germany'], markets: [] });
    const dach = await brandWithOffer('dach-offer', {}, { countries: [], markets: ['DACH'] });
    await catalog.toplists.create({
      siteId,
      templateId: at.template.id,
      ownerId: at.owner.id,
      name: 'DACH',
      slug: 'best-dach',
      geo: { type: 'market', code: 'DACH', coveredCountries: ['DE', 'AT', 'CH'] },
    });
    const at_ = await draftToplist(catalog, at, { name: 'Austria', slug: 'best-at', country: 'AT' }, [
      { position: 1, ...german },
      { position: 2, ...dach },
    ]);
    const res = await call('GET', `/toplists/${at_.id}/compliance`);
    expect(res.body.data.violations).toEqual([
      expect.objectContaining({ brandId: german.brandId, country: 'AT', rule: 'offer_geo' }),
    ]);
  });
});

describe(`migration 0090 (${DB_KIND})`, () => {
  it('turns stored restricted country names into codes, keeping what names no country', async () => {
    const old = await dbBefore('0090_compliance');
    try {
      await old.db.query(
        `INSERT INTO brands (external_id, name, slug, logo_rectangular, logo_square, logo_background_color, restricted_countries)
         VALUES ('b', 'B', 'b', 'https://x/r', 'https://x/s', '#000000', $1)`,
        [['United States', 'sweden', 'FR', 'Narnia', 'France']],
      );
      await migrate(old.db);
      const [row] = await old.db.query<{ restricted_countries: string[] }>(
        'SELECT restricted_countries FROM brands',
      );
      expect(row!.restricted_countries).toEqual(['FR', 'Narnia', 'SE', 'US']);
    } finally {
      await old.close();
    }
  });
});

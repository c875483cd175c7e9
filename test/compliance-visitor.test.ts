import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { casinoTemplate } from './catalog-fixture.ts';
import { expectContract } from './contract.ts';
import { adminCall, DB_KIND, type TestApp, testApp } from './helpers.ts';

const logo = {
  rectangular: 'https://cdn.example/r.png',
  square: 'https://cdn.example/s.png',
  backgroundColor: '#112233',
};

type Geo = { type: 'country' | 'market' | 'global'; code: string; coveredCountries?: string[] };

describe(`visitor-level serving: resolve never carries a brand the visitor's country forbids (${DB_KIND})`, () => {
  let t: TestApp;
  let admin: string;
  let fx: Awaited<ReturnType<typeof casinoTemplate>>;

  const call = (method: 'GET' | 'POST' | 'PATCH' | 'DELETE', url: string, payload?: object) =>
    adminCall(t.app, admin, method, url, payload);

  /** A site with a family of lists (one per geo) ranking `brands` in order; returns the site token and list ids. */
  async function family(
    domain: string,
    brands: { name: string; offerGeos?: string[]; trackerGeos?: string[] }[],
    geos: Geo[],
  ) {
    const { catalog, access } = t.app.services;
    const site = await catalog.sites.create({ domain });
    const token = (await access.createSiteToken(site.id)).token;
    const template = await catalog.templates.create({
      name: `Best ${domain}`,
      productTypeId: fx.template.productTypeId,
      classificationTypeId: fx.template.classificationTypeId,
    });
    const items = [];
    for (const [i, b] of brands.entries()) {
      const slug = `${domain.split('.')[0]}-${b.name}`;
      const brand = await catalog.brands.create({ externalId: slug, name: b.name, slug, rating: 4, logo });
      const offer = await catalog.offers.create({
        externalId: `o-${slug}`,
        brandId: brand.id,
        offerTypeId: fx.offerType.id,
        offerText: 'Bonus',
        bonusExpiryDate: '2030-01-01',
        ...(b.offerGeos ? { geos: { countries: b.offerGeos, markets: [] } } : {}),
        trackers: [
          {
            campaignName: 'main',
            landingUrl: `https://${slug}.example/go`,
            ...(b.trackerGeos ? { geos: { countries: b.trackerGeos, markets: [] } } : {}),
          },
        ],
      });
      items.push({ position: i + 1, brandId: brand.id, offerId: offer.id });
    }
    const lists = new Map<string, number>();
    for (const geo of geos) {
      const toplist = await catalog.toplists.create({
        siteId: site.id,
        templateId: template.id,
        ownerId: fx.owner.id,
        name: `List ${geo.code}`,
        slug: `list-${geo.code.toLowerCase()}`,
        geo,
      });
      await catalog.publishing.replaceItems(toplist.id, items);
      lists.set(geo.code, toplist.id);
    }
    return { token, lists, template: template.id, brandIds: items.map((i) => i.brandId) };
  }

  const resolve = async (token: string, template: number, country: string, etag?: string) => {
    const res = await t.app.inject({
      method: 'GET',
      url: `/api/v1/toplists/resolve?template_id=${template}&country=${country}`,
      headers: { authorization: `Bearer ${token}`, ...(etag ? { 'if-none-match': etag } : {}) },
    });
    const body = res.statusCode === 200 ? res.json() : undefined;
    return {
      status: res.statusCode,
      etag: String(res.headers.etag),
      body,
      items: (body?.data.items ?? []) as { position: number; brand: { id: number } }[],
    };
  };
  const byId = async (token: string, id: number) => {
    const res = await t.app.inject({
      method: 'GET',
      url: `/api/v1/toplists/${id}`,
      headers: { authorization: `Bearer ${token}` },
    });
    return {
      etag: String(res.headers.etag),
      ids: (res.json().data.items as { brand: { id: number } }[]).map((i) => i.brand.id),
    };
  };
  const brandsOf = (r: { items: { brand: { id: number } }[] }) => r.items.map((i) => i.brand.id);

  beforeAll(async () => {
    t = await testApp();
    admin = (await t.app.services.access.createAdminToken('root', ['admin'], null)).token;
    fx = await casinoTemplate(t.app.services.catalog);
  });
  afterAll(() => t.close());

  it('a global list reached by the cascade leaves out, per visitor country, what may not be advertised there', async () => {
    const f = await family(
      'walk.example',
      [{ name: 'alpha' }, { name: 'bravo' }, { name: 'charlie', offerGeos: ['DE', 'AT'] }],
      [
        { type: 'country', code: 'SE' },
        { type: 'global', code: 'ROW' },
      ],
    );
    const [alpha, bravo, charlie] = f.brandIds as [number, number, number];
    const { catalog } = t.app.services;
    await catalog.publishing.publish(f.lists.get('ROW')!);

    // The offer of charlie is for DE and AT only: from the publish on, other visitors never get it.
    const de = await resolve(f.token, f.template, 'DE');
    const fr = await resolve(f.token, f.template, 'fr');
    const unknown = await resolve(f.token, f.template, 'XX');
    const plain = await byId(f.token, f.lists.get('ROW')!);
    expect(brandsOf(de)).toEqual([alpha, bravo, charlie]);
    expect(de.etag).toBe(plain.etag);
    expect(brandsOf(fr)).toEqual([alpha, bravo]);
    expect(fr.items.map((i) => i.position)).toEqual([1, 2]);
    expect(fr.etag).not.toBe(plain.etag);
    expectContract('single', fr.body);
    expect(brandsOf(unknown)).toEqual([alpha, bravo, charlie]);
    // by-id is not a visitor's answer: it serves the list as published.
    expect(plain.ids).toEqual([alpha, bravo, charlie]);
    // Every visitor country left out of the offer shares one variant, one ETag, and conditional reads.
    const it_ = await resolve(f.token, f.template, 'IT');
    expect(it_.etag).toBe(fr.etag);
    expect((await resolve(f.token, f.template, 'FR', fr.etag)).status).toBe(304);

    // Restricting bravo in France: French visitors lose it at once; Italians keep theirs (same ETag).
    t.clock.now = new Date(t.clock.now.getTime() + 1000);
    expect((await call('PATCH', `/brands/${bravo}`, { restrictedCountries: ['France'] })).status).toBe(200);
    const fr2 = await resolve(f.token, f.template, 'FR');
    expect(brandsOf(fr2)).toEqual([alpha]);
    expect(fr2.items.map((i) => i.position)).toEqual([1]);
    expect(fr2.etag).not.toBe(fr.etag);
    expectContract('single', fr2.body);
    expect((await resolve(f.token, f.template, 'FR', fr.etag)).status).toBe(200);
    expect((await resolve(f.token, f.template, 'IT')).etag).toBe(fr.etag);
    expect(brandsOf(await resolve(f.token, f.template, 'DE'))).toEqual([alpha, bravo, charlie]);

    const [row] = (await call('GET', `/audit?target_type=toplists&target_id=${f.lists.get('ROW')}`)).body
      .data;
    expect(row).toMatchObject({ actor: 'system:compliance', action: 'compliance.withheld_changed' });
    expect(row.after.visitorsNewlyWithheld).toEqual([
      expect.objectContaining({ brandId: bravo, country: 'FR', rule: 'restricted_country' }),
    ]);
    expect(row.after.visitorsServedAgain).toEqual([]);
    expect(row.after.visitorWithheldTotal).toBe(row.before.visitorWithheldTotal + 1);
    const events = await t.db.query<{ payload: string }>(
      "SELECT payload FROM webhook_events WHERE type = 'toplist.compliance_changed'",
    );
    expect(events.map((e) => JSON.parse(e.payload).data.toplistId)).toContain(f.lists.get('ROW'));

    // A licence rule for NL: only licensed brands reach Dutch visitors; alpha holds a licence.
    await call('POST', `/brands/${alpha}/licences`, { authority: 'Kansspelautoriteit', countries: ['NL'] });
    const rule = await call('POST', '/compliance/rules', { geo: { type: 'country', code: 'NL' } });
    expect(rule.status).toBe(201);
    expect(brandsOf(await resolve(f.token, f.template, 'NL'))).toEqual([alpha]);

    // Lifting both: visitors get what they got before, with the variant's ETag as before.
    await call('DELETE', `/compliance/rules/${rule.body.data.id}`);
    await call('PATCH', `/brands/${bravo}`, { restrictedCountries: [] });
    const fr3 = await resolve(f.token, f.template, 'FR');
    expect(brandsOf(fr3)).toEqual([alpha, bravo]);
    expect(brandsOf(await resolve(f.token, f.template, 'NL'))).toEqual([alpha, bravo]);
  });

  it('keeps the variants of the live edition only: a republish replaces them, an unpublish drops them', async () => {
    const f = await family(
      'republish.example',
      [{ name: 'foxtrot', offerGeos: ['GB'] }, { name: 'golf' }],
      [{ type: 'global', code: 'ROW' }],
    );
    const { catalog } = t.app.services;
    const id = f.lists.get('ROW')!;
    const variantEditions = async () =>
      (
        await t.db.query<{ edition_id: number }>(
          'SELECT DISTINCT v.edition_id FROM edition_variants v JOIN editions e ON e.id = v.edition_id WHERE e.toplist_id = $1',
          [id],
        )
      ).map((r) => r.edition_id);
    await catalog.publishing.publish(id);
    const [first] = await variantEditions();
    expect(first).toBeDefined();
    await catalog.publishing.publish(id);
    const second = await variantEditions();
    expect(second).toHaveLength(1);
    expect(second[0]).not.toBe(first);
    expect(brandsOf(await resolve(f.token, f.template, 'FR'))).toEqual([f.brandIds[1]]);
    await catalog.publishing.unpublish(id);
    expect(await variantEditions()).toEqual([]);
  });

  it('a new tracking domain re-renders the visitor variants too, with new ETags', async () => {
    const f = await family(
      'links.example',
      [{ name: 'delta' }, { name: 'echo', trackerGeos: ['GB'] }],
      [{ type: 'global', code: 'ROW' }],
    );
    const { catalog } = t.app.services;
    await catalog.publishing.publish(f.lists.get('ROW')!);
    const before = await resolve(f.token, f.template, 'FR');
    expect(brandsOf(before)).toEqual([f.brandIds[0]]);
    const site = (await catalog.toplists.get(f.lists.get('ROW')!)).siteId;
    expect(
      (await call('PATCH', `/sites/${site}`, { trackingBaseUrl: 'https://go.links.example' })).status,
    ).toBe(200);
    const after = await resolve(f.token, f.template, 'FR');
    expect(brandsOf(after)).toEqual([f.brandIds[0]]);
    expect(after.etag).not.toBe(before.etag);
    expect(JSON.stringify(after.body)).toContain('https://go.links.example/go/');
    expect(JSON.stringify(after.body)).not.toContain('https://podium.test/go/');
  });

  it('property: for random families and rules, no visitor country is ever served a brand it forbids', async () => {
    const POOL = ['SE', 'DE', 'FR', 'NL', 'FI', 'GB'];
    const subset = fc.subarray(POOL);
    const scenario = fc.record({
      brands: fc.array(
        fc.record({
          restricted: subset,
          licensed: subset,
          offerGeos: fc.option(fc.subarray(POOL, { minLength: 1 }), { nil: undefined }),
        }),
        { minLength: 1, maxLength: 4 },
      ),
      licenceRules: subset,
      countryRows: subset,
      market: fc.option(fc.subarray(POOL, { minLength: 2 }), { nil: undefined }),
    });
    let run = 0;
    await fc.assert(
      fc.asyncProperty(scenario, async (s) => {
        run++;
        for (const r of (await call('GET', '/compliance/rules')).body.data)
          await call('DELETE', `/compliance/rules/${r.id}`);
        const market = s.market?.filter((c) => !s.countryRows.includes(c));
        const geos: Geo[] = [
          { type: 'global', code: 'ROW' },
          ...s.countryRows.map((code) => ({ type: 'country' as const, code })),
          ...(market?.length ? [{ type: 'market' as const, code: 'MKT', coveredCountries: market }] : []),
        ];
        const f = await family(
          `prop${run}.example`,
          s.brands.map((b, i) => ({ name: `b${i}`, offerGeos: b.offerGeos })),
          geos,
        );
        const live = new Map<string, Geo>();
        for (const geo of geos) {
          const published = await call('POST', `/toplists/${f.lists.get(geo.code)}/publish`, {});
          if (published.status === 200) live.set(geo.code, geo);
          else expect(published.body.code).toBe('compliance_violation');
        }
        // The rules arrive after the publish: the serving guard and the variants must follow.
        for (const [i, b] of s.brands.entries()) {
          if (b.licensed.length)
            await call('POST', `/brands/${f.brandIds[i]}/licences`, {
              authority: 'Reg',
              countries: b.licensed,
            });
          await call('PATCH', `/brands/${f.brandIds[i]}`, { restrictedCountries: b.restricted });
        }
        for (const code of s.licenceRules)
          await call('POST', '/compliance/rules', { geo: { type: 'country', code } });

        const allowed = (i: number, c: string) => {
          const b = s.brands[i]!;
          return (
            !b.restricted.includes(c) &&
            (!s.licenceRules.includes(c) || b.licensed.includes(c)) &&
            (!b.offerGeos || b.offerGeos.includes(c))
          );
        };
        for (const c of [...POOL, 'US', 'BR']) {
          const got = await resolve(f.token, f.template, c);
          const row = live.get(c) ?? (market?.includes(c) ? live.get('MKT') : undefined) ?? live.get('ROW')!;
          const covered = row.type === 'country' ? [c] : row.type === 'market' ? row.coveredCountries! : [c];
          const expected = f.brandIds.filter((_, i) => covered.every((k) => allowed(i, k)) && allowed(i, c));
          expect(brandsOf(got), `${c} via ${row.code}`).toEqual(expected);
          expect(got.items.map((i) => i.position)).toEqual(expected.map((_, k) => k + 1));
        }
      }),
      { numRuns: 8, seed: 53 },
    );
  });
});

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { casinoTemplate, draftToplist } from './catalog-fixture.ts';
import { adminCall, DB_KIND, type TestApp, testApp } from './helpers.ts';

describe(`the click guard: /go never sends a restricted country's visitor to the operator (${DB_KIND})`, () => {
  let t: TestApp;
  let admin: string;
  let siteId: number;
  let brandId: number;
  let slug: string;

  const call = (method: 'POST' | 'PATCH' | 'DELETE', url: string, payload?: object) =>
    adminCall(t.app, admin, method, url, payload);
  const go = (country?: string) =>
    t.app.inject({
      method: 'GET',
      url: `/go/${slug}`,
      headers: {
        'user-agent': 'Mozilla/5.0 (X11; Linux x86_64) Firefox/140.0',
        ...(country ? { 'cf-ipcountry': country } : {}),
      },
    });
  const lastClick = async () =>
    (
      await t.db.query<{ country: string | null; flag: string | null }>(
        "SELECT country, flag FROM clicks WHERE kind = 'click' ORDER BY id DESC LIMIT 1",
      )
    )[0]!;

  beforeAll(async () => {
    t = await testApp();
    const { catalog, access } = t.app.services;
    admin = (await access.createAdminToken('root', ['admin'], null)).token;
    siteId = (await catalog.sites.create({ domain: 'casinos.example' })).id;
    const fx = await casinoTemplate(catalog);
    const brand = await catalog.brands.create({
      externalId: 'b',
      name: 'Operator One',
      slug: 'operator-one',
      rating: 4,
      logo: {
        rectangular: 'https://cdn.example/r.png',
        square: 'https://cdn.example/s.png',
        backgroundColor: '#112233',
      },
    });
    brandId = brand.id;
    const offer = await catalog.offers.create({
      externalId: 'o',
      brandId,
      offerTypeId: fx.offerType.id,
      offerText: 'Bonus',
      bonusExpiryDate: '2030-01-01',
      trackers: [{ campaignName: 'main', landingUrl: 'https://operator-one.example/land?c={click_id}' }],
    });
    const list = await draftToplist(
      catalog,
      { siteId, owner: fx.owner, template: fx.template },
      { name: 'DE', slug: 'de', country: 'DE' },
      [{ position: 1, brandId, offerId: offer.id }],
    );
    await catalog.publishing.publish(list.id);
    const [link] = await t.db.query<{ slug: string }>(
      'SELECT slug FROM tracking_links WHERE toplist_id = $1',
      [list.id],
    );
    slug = link!.slug;
  });
  afterAll(() => t.close());

  it('sends a visitor from a country the brand is restricted in to the site fallback, recorded as a blocked click', async () => {
    const ok = await go('DE');
    expect(ok.statusCode).toBe(302);
    expect(ok.headers.location).toMatch(/^https:\/\/operator-one\.example\/land\?c=/);
    expect(await lastClick()).toEqual({ country: 'DE', flag: null });

    expect(
      (
        await call('PATCH', `/sites/${siteId}`, {
          complianceFallbackUrl: 'https://casinos.example/not-available',
        })
      ).status,
    ).toBe(200);
    expect((await call('PATCH', `/brands/${brandId}`, { restrictedCountries: ['Germany'] })).status).toBe(
      200,
    );

    const blocked = await go('de');
    expect(blocked.statusCode).toBe(302);
    expect(blocked.headers.location).toBe('https://casinos.example/not-available');
    expect(await lastClick()).toEqual({ country: 'DE', flag: 'blocked' });

    // Another country, or no country header at all, still reaches the operator.
    for (const country of ['SE', undefined]) {
      const res = await go(country);
      expect(res.headers.location, String(country)).toMatch(/^https:\/\/operator-one\.example\//);
    }
    const metrics = await t.app.inject({ method: 'GET', url: '/metrics' });
    expect(metrics.statusCode).toBe(200);
    expect(metrics.body).toMatch(/podium_clicks_blocked_total 1\b/);
  });

  it('counts blocked clicks in the stats apart from the clicks the operator received', async () => {
    const [{ day }] = (await t.db.query<{ day: string }>(
      "SELECT to_char(max(at) AT TIME ZONE 'UTC', 'YYYY-MM-DD') AS day FROM clicks",
    )) as [{ day: string }];
    const stats = await adminCall(
      t.app,
      admin,
      'GET',
      `/tracking/stats?from=${day}&to=${day}&tz=UTC&group=brand`,
    );
    expect(stats.status).toBe(200);
    expect(stats.body.data).toEqual([expect.objectContaining({ brandId, clicks: 3, blockedClicks: 1 })]);
    const bySub = await adminCall(
      t.app,
      admin,
      'GET',
      `/tracking/stats?from=${day}&to=${day}&tz=UTC&by=sub_id`,
    );
    const rows = bySub.body.data as { clicks: number; blockedClicks: number }[];
    expect(rows.reduce((n, r) => n + r.blockedClicks, 0)).toBe(1);
    expect(rows.reduce((n, r) => n + r.clicks, 0)).toBe(3);
  });

  it("without a fallback page answers Podium's own 451 page; a licence rule the brand does not meet blocks too", async () => {
    await call('PATCH', `/sites/${siteId}`, { complianceFallbackUrl: null });
    const page = await go('DE');
    expect(page.statusCode).toBe(451);
    expect(page.headers['content-type']).toMatch(/^text\/html/);
    expect(page.body).not.toContain('operator-one');

    const rule = await call('POST', '/compliance/rules', { geo: { type: 'country', code: 'SE' } });
    expect((await go('SE')).statusCode).toBe(451);
    await call('POST', `/brands/${brandId}/licences`, { authority: 'Spelinspektionen', countries: ['SE'] });
    expect((await go('SE')).headers.location).toMatch(/^https:\/\/operator-one\.example\//);
    await call('DELETE', `/compliance/rules/${rule.body.data.id}`);
  });

  it('refuses a fallback that is not an http(s) URL', async () => {
    const res = await call('PATCH', `/sites/${siteId}`, { complianceFallbackUrl: 'javascript:alert(1)' });
    expect(res.status).toBe(422);
    expect(res.body.message).toContain('complianceFallbackUrl');
  });
});

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DB_KIND, type TestApp, testApp } from './helpers.ts';
import { type TrackingFixture, trackingFixture } from './tracking-fixture.ts';

const SECRET_KEYS = [{ version: 1, key: Buffer.alloc(32, 9) }];
const LOOPBACK_NAMES = ['localhost', 'LOCALHOST', 'localhost.', 'api.localhost', 'A.B.LocalHost.'];

/**
 * The findings of an outside probe (issue 58), each refused or answered the safe way: loopback
 * names at save, unsafe templates at write, stored URLs normalised, `;` in CSV quoted, postback
 * answers that do not tell a programme exists, `per_page`'s message (the session cookie's Secure
 * flag: session.test.ts).
 */
describe(`hardening from an outside probe (${DB_KIND})`, () => {
  let t: TestApp;
  let fx: TrackingFixture;
  let programId: number;
  let postbackToken: string;

  const admin = (method: 'GET' | 'POST' | 'PUT' | 'PATCH', url: string, payload?: object) =>
    t.app.inject({
      method,
      url: `/api/admin/v1${url}`,
      headers: { authorization: `Bearer ${fx.adminToken}` },
      ...(payload === undefined ? {} : { payload }),
    });
  /** A write refused with 422 naming `field`, and its message. */
  const refused = async (res: Awaited<ReturnType<typeof admin>>, field: string): Promise<string> => {
    expect(res.statusCode, res.body).toBe(422);
    const body = res.json();
    expect(body.code).toBe('validation_failed');
    expect(body.details.field).toBe(field);
    return body.message as string;
  };

  beforeAll(async () => {
    t = await testApp({ secretKeys: SECRET_KEYS });
    fx = await trackingFixture(t.app.services, t.db);
    const created = await t.app.services.tracking.createProgram({
      slug: 'probe-partners',
      name: 'Probe partners',
      trackerIds: fx.trackerIds,
    });
    programId = created.id;
    postbackToken = created.postbackToken;
  });
  afterAll(() => t?.close());

  describe('loopback host names are refused when saved (finding 2)', () => {
    it('webhook URLs: the same 422 as a loopback literal, nothing stored', async () => {
      const literal = await refused(
        await admin('POST', '/webhooks', { url: 'https://127.0.0.1/hook', events: ['toplist.published'] }),
        'url',
      );
      expect(literal).toMatch(/not a public address/);
      for (const host of LOOPBACK_NAMES) {
        const res = await admin('POST', '/webhooks', {
          url: `https://${host}/hook`,
          events: ['toplist.published'],
        });
        expect(await refused(res, 'url'), host).toMatch(/not a public address \(loopback\)/);
      }
      expect((await admin('GET', '/webhooks')).json().data).toEqual([]);
    });

    it('operator report URLs: refused, the stored endpoint unchanged', async () => {
      for (const host of LOOPBACK_NAMES) {
        const res = await admin('PUT', `/tracking/programs/${programId}/report`, {
          url: `https://${host}/r`,
        });
        expect(await refused(res, 'url'), host).toMatch(/not a public address \(loopback\)/);
      }
      expect((await admin('GET', `/tracking/programs/${programId}/report`)).json().data.url).toBeNull();
      // A name that only ends like one is an ordinary public name.
      const ok = await admin('PUT', `/tracking/programs/${programId}/report`, {
        url: 'https://notlocalhost.example/r',
      });
      expect(ok.statusCode, ok.body).toBe(200);
    });
  });

  describe('unsafe templates are refused at write (finding 3)', () => {
    it('landingParams with CR, LF or another control character: 422 naming the field and rule', async () => {
      for (const landingParams of ['a=1\r\nSet-Cookie: x=1', 'a=1\nb=2', 'a=\tb', 'a=\u007f', 'a=\u2028']) {
        const res = await admin('POST', '/tracking/programs', { slug: 'ctl', name: 'Ctl', landingParams });
        expect(await refused(res, 'landingParams'), JSON.stringify(landingParams)).toMatch(
          /control character/,
        );
        const patched = await admin('PATCH', `/tracking/programs/${programId}`, { landingParams });
        await refused(patched, 'landingParams');
      }
      expect((await admin('GET', `/tracking/programs/${programId}`)).json().data.landingParams).toBe('');
    });

    it('a tracker landing URL with a macro in its host or with userinfo: 422 naming the field and rule', async () => {
      const cases: [url: string, rule: RegExp][] = [
        ['https://{sub_id}/land', /macro.*host/],
        ['https://op{site_id}.example/land', /macro.*host/],
        ['https://op.example:{position}/land', /macro.*host/],
        ['https://op.example@evil.example/land', /user name or password/],
        ['https://user:pw@op.example/land', /user name or password/],
      ];
      for (const [landingUrl, rule] of cases) {
        const add = await admin('POST', `/offers/${fx.offerId}/trackers`, { campaignName: 'x', landingUrl });
        expect(await refused(add, 'landingUrl'), landingUrl).toMatch(rule);
        const patch = await admin('PATCH', `/offers/${fx.offerId}/trackers/${fx.trackerIds[0]}`, {
          landingUrl,
        });
        await refused(patch, 'landingUrl');
      }
      const inline = await admin('POST', '/offers', {
        externalId: 'o-bad',
        brandId: fx.brandId,
        offerTypeId: 1,
        offerText: 'x',
        bonusExpiryDate: '2027-01-01',
        trackers: [
          { campaignName: 'ok', landingUrl: 'https://op.example/' },
          { campaignName: 'bad', landingUrl: 'https://a@b.example/' },
        ],
      });
      await refused(inline, 'trackers.1.landingUrl');
      const offer = (await admin('GET', `/offers/${fx.offerId}`)).json().data;
      expect(offer.trackers.map((tr: { landingUrl: string }) => tr.landingUrl)).toEqual([
        'https://operator.example/land?lang=en',
        'https://operator.example/p/{site_id}?x=1',
      ]);
    });
  });

  describe('stored URLs are parsed and stored as the parser writes them (finding 6)', () => {
    const hostile = 'https://x.example/a"><img/src=x/onerror=alert(1)>';

    it('logos, landingUrl and tcLink keep no raw quote or angle bracket; macros stay usable', async () => {
      const brand = await admin('POST', '/brands', {
        externalId: 'b-hostile',
        name: 'Hostile',
        slug: 'hostile',
        rating: 3,
        logo: { rectangular: hostile, square: 'https://CDN.Example/s.png', backgroundColor: '#000000' },
      });
      expect(brand.statusCode, brand.body).toBe(201);
      expect(brand.json().data.logo).toMatchObject({
        rectangular: 'https://x.example/a%22%3E%3Cimg/src=x/onerror=alert(1)%3E',
        square: 'https://cdn.example/s.png',
      });
      const added = await admin('POST', `/offers/${fx.offerId}/trackers`, {
        campaignName: 'hostile',
        landingUrl: 'https://op.example/p/{site_id}?q="<x>"&c={click_id}#"f"',
        tcLink: hostile,
      });
      expect(added.statusCode, added.body).toBe(201);
      const tracker = added
        .json()
        .data.trackers.find((tr: { campaignName: string }) => tr.campaignName === 'hostile');
      expect(tracker.landingUrl).toBe('https://op.example/p/{site_id}?q=%22%3Cx%3E%22&c={click_id}#%22f%22');
      expect(tracker.tcLink).toBe('https://x.example/a%22%3E%3Cimg/src=x/onerror=alert(1)%3E');
      for (const v of [tracker.landingUrl, tracker.tcLink, brand.json().data.logo.rectangular])
        expect(v).not.toMatch(/["<>]/);
    });

    it('refuses what the URL parser does not take, naming the field', async () => {
      const res = await admin('PATCH', `/offers/${fx.offerId}/trackers/${fx.trackerIds[0]}`, {
        landingUrl: 'https://exa mple.com/x',
      });
      expect(res.statusCode).toBe(422);
      await refused(
        await admin('PATCH', `/brands/${fx.brandId}`, {
          logo: {
            rectangular: 'https://[::1/x',
            square: 'https://cdn.example/s.png',
            backgroundColor: '#000000',
          },
        }),
        'logo.rectangular',
      );
    });
  });

  describe('postbacks (findings 5 and 7)', () => {
    const pb = (program: string, token: string, query: string, body?: string) =>
      t.app.inject({
        method: body === undefined ? 'GET' : 'POST',
        url: `/api/postback/${program}/${token}${query}`,
        ...(body === undefined ? {} : { payload: body, headers: { 'content-type': 'application/json' } }),
      });

    it('an unknown programme and a wrong token get the same answer', async () => {
      const wrong = await pb('probe-partners', `pdp_${'x'.repeat(43)}`, '?transaction_id=a&event=ftd');
      const unknown = await pb('no-such-programme', `pdp_${'x'.repeat(43)}`, '?transaction_id=a&event=ftd');
      const malformed = await pb('Not_A_Slug', 'short', '?transaction_id=a&event=ftd');
      for (const res of [wrong, unknown, malformed]) {
        expect(res.statusCode).toBe(401);
        expect(res.body).toBe(wrong.body);
        expect(res.headers['www-authenticate']).toBe(wrong.headers['www-authenticate']);
      }
      expect(wrong.json().code).toBe('unauthorized');
    });

    it('a JSON body with a key given twice is a 400 like a repeated query or form parameter', async () => {
      const twice = await pb(
        'probe-partners',
        postbackToken,
        '',
        '{"transaction_id":"d-1","event":"ftd","event":"registration"}',
      );
      expect(twice.statusCode, twice.body).toBe(400);
      expect(twice.json()).toMatchObject({ code: 'bad_request', details: { field: 'event' } });
      const query = await pb(
        'probe-partners',
        postbackToken,
        '?transaction_id=d-1&event=ftd&event=registration',
      );
      expect(query.statusCode).toBe(400);
      expect(query.json().message).toBe(twice.json().message);
      const once = await pb('probe-partners', postbackToken, '', '{"transaction_id":"d-1","event":"ftd"}');
      expect(once.statusCode, once.body).toBe(200);
    });

    it('quotes a conversions CSV cell holding ; or a tab, keeping the formula guard', async () => {
      for (const id of ['x;=1+1', 'pipe|=1+1', 'arabic\u061B=1+1'])
        expect(
          (await pb('probe-partners', postbackToken, `?transaction_id=${encodeURIComponent(id)}&event=ftd`))
            .statusCode,
        ).toBe(200);
      const day = new Date().toISOString().slice(0, 10);
      const csv = await admin(
        'GET',
        `/tracking/conversions?from=${day}&to=${day}&format=csv&program_id=${programId}`,
      );
      expect(csv.statusCode, csv.body).toBe(200);
      expect(csv.body).toContain('"x;=1+1"');
      expect(csv.body).toContain('"pipe|=1+1"');
      expect(csv.body).toContain('"arabic\u061B=1+1"');
      expect(csv.body).not.toMatch(/,x;=1\+1/);
    });
  });

  describe('per_page above 100 (finding 9)', () => {
    it('stays a 422 whose message says "at most 100"', async () => {
      const site = await t.app.services.access.createSiteToken(fx.siteId);
      for (const url of ['/api/v1/toplists?per_page=101', '/api/v1/brands?per_page=500']) {
        const res = await t.app.inject({ url, headers: { authorization: `Bearer ${site.token}` } });
        expect(res.statusCode).toBe(422);
        expect(res.json()).toMatchObject({ code: 'validation_failed', details: { field: 'per_page' } });
        expect(res.json().message).toBe('per_page must be at most 100');
      }
      const zero = await t.app.inject({
        url: '/api/v1/toplists?per_page=0',
        headers: { authorization: `Bearer ${site.token}` },
      });
      expect(zero.json().message).toBe('per_page must be at least 1');
    });
  });
});

import { Agent } from 'node:http';
import { gunzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApp } from '../src/app.ts';
import { type DemoTokens, loadDemo } from '../src/modules/catalog/demo.ts';
import {
  BRANDS_ROUTE,
  BY_ID_ROUTE,
  BY_SLUG_ROUTE,
  LIST_ROUTE,
  RESOLVE_ROUTE,
} from '../src/modules/delivery/fast-path.ts';
import { IMP_ROUTE } from '../src/modules/tracking/go-fast-path.ts';
import { type HttpAnswer, httpRequest, type TestApp, testApp, untilGzipped } from './helpers.ts';

type Answer = Omit<HttpAnswer, 'body'> & { body: string };

/** One real HTTP request, its body as text. */
const get = async (
  base: string,
  path: string,
  headers: Record<string, string>,
  method = 'GET',
): Promise<Answer> => {
  const a = await httpRequest(base, path, headers, method);
  return { ...a, body: a.body.toString() };
};

/**
 * True once `check` holds right after `warm` filled the fast app's caches. On PostgreSQL the
 * change channel is shared by every test file (and a change's own NOTIFY comes back later), so a
 * change elsewhere may empty the caches between the two: warm again, a few times.
 */
async function afterWarming(warm: () => Promise<unknown>, check: () => boolean): Promise<boolean> {
  for (let i = 0; i < 5; i++) {
    await warm();
    if (check()) return true;
  }
  return false;
}

/** Headers that differ between any two answers (time, request id). */
const comparable = (h: Answer['headers']) => {
  const { date: _date, 'x-request-id': _id, ...rest } = h;
  return rest;
};

/** The same bytes with the same headers, but for those that differ between any two answers. */
function expectSameAnswer(a: Answer, b: Answer): void {
  expect(a.body).toBe(b.body);
  expect(comparable(a.headers)).toEqual(comparable(b.headers));
}

/** A log line without its time and duration, which differ between any two requests. */
const comparableLine = ({ time: _t, ms: _m, ...rest }: Record<string, unknown>) => rest;

/**
 * Two apps on one database with the demo loaded: `quick` with the fast paths, `plain` with every
 * request going through Fastify; each one's log lines captured.
 */
async function pairOfApps() {
  const t = await testApp();
  const demo = await loadDemo(t.app.services);
  const lines: Record<string, unknown>[] = [];
  const fastLines: Record<string, unknown>[] = [];
  const capture = (into: Record<string, unknown>[]) => ({
    stream: { write: (l: string) => into.push(JSON.parse(l)) },
  });
  const quick = await buildApp({ config: t.config, db: t.db, bus: t.bus, logger: capture(fastLines) });
  const fast = await quick.listen({ host: '127.0.0.1', port: 0 });
  const plain = await buildApp({
    config: t.config,
    db: t.db,
    bus: t.bus,
    fastPath: false,
    logger: capture(lines),
  });
  const slow = await plain.listen({ host: '127.0.0.1', port: 0 });
  return {
    t,
    demo,
    fast,
    slowUrl: slow,
    lines,
    fastLines,
    /** The fast app's own services (its caches). */
    quickServices: quick.services,
    /** One request to the fast app, then the same to the plain one. */
    both: async (
      path: string,
      headers: Record<string, string>,
      method?: string,
    ): Promise<[Answer, Answer]> => [
      await get(fast, path, headers, method),
      await get(slow, path, headers, method),
    ],
    /** The fast app's request log line, once it is written (the sink writes after the answer). */
    requestLine: async () => {
      await new Promise((r) => setTimeout(r, 50));
      return fastLines.find((l) => l.msg === 'request');
    },
    /** The fast paths' served counter. */
    served: async () => {
      const text = await quick.services.metrics.registry.getSingleMetricAsString(
        'podium_http_fast_path_served_total',
      );
      return Number(/ (\d+)$/m.exec(text)?.[1]);
    },
    close: async () => {
      await plain.close();
      await quick.close();
      await t.close();
    },
  };
}

describe('toplist fast path (by slug, by id, resolve, list and brand pages)', () => {
  let apps: Awaited<ReturnType<typeof pairOfApps>>;
  let t: TestApp;
  let demo: DemoTokens;
  let slug: string;
  let toplistId: number;
  let auth: Record<string, string>;
  let family: { templateId: number; country: string; toplistId: number };
  const served = () => apps.served();

  beforeAll(async () => {
    apps = await pairOfApps();
    ({ t, demo } = apps);
    const site = demo.siteTokens[0]!;
    auth = { authorization: `Bearer ${site.token}` };
    const [row] = await t.db.query<{ slug: string; id: number }>(
      'SELECT slug, id FROM toplists WHERE site_id = $1 AND live_edition_id IS NOT NULL ORDER BY id LIMIT 1',
      [site.siteId],
    );
    slug = row!.slug;
    toplistId = row!.id;
    // A country variant of one of the site's geo families, as resolve picks it for its country.
    const page = JSON.parse((await get(apps.fast, '/api/v1/toplists?per_page=100', auth)).body) as {
      data: { id: number; template: { id: number }; geo: { geo_type: string; code: string } }[];
    };
    const variant = page.data.find((d) => d.geo.geo_type === 'country')!;
    family = { templateId: variant.template.id, country: variant.geo.code, toplistId: variant.id };
  }, 120_000);

  afterAll(() => apps?.close());

  const cases: [string, string, Record<string, string>, string?][] = [
    ['unknown slug (404)', '/api/v1/toplists/by-slug/no-such-toplist', {}],
    ['a query string (the route ignores it)', '/api/v1/toplists/by-slug/SLUG?x=1', {}],
    ['percent-encoded slug', '/api/v1/toplists/by-slug/SLUG%2D', {}],
    ['HEAD', '/api/v1/toplists/by-slug/SLUG', {}, 'HEAD'],
    ['an unknown id (404)', '/api/v1/toplists/999999', {}],
    ['an id beyond the database integer (404)', '/api/v1/toplists/9999999999', {}],
    ['an id with a query string', '/api/v1/toplists/ID?x=1', {}],
    [
      'resolve with another parameter (the route ignores it)',
      '/api/v1/toplists/resolve?template_id=TEMPLATE&country=CC&x=1',
      {},
    ],
    [
      'resolve with a template id beyond the database integer (422)',
      '/api/v1/toplists/resolve?template_id=2147483648&country=CC',
      {},
    ],
    [
      'resolve with a three-letter country (422)',
      '/api/v1/toplists/resolve?template_id=TEMPLATE&country=SWE',
      {},
    ],
    [
      'resolve with a percent-encoded country',
      '/api/v1/toplists/resolve?template_id=TEMPLATE&country=%53E',
      {},
    ],
    [
      'resolve of a family with no variant (404 with the reason)',
      '/api/v1/toplists/resolve?template_id=999999&country=CC',
      {},
    ],
    ['a list page 0 (422)', '/api/v1/toplists?page=0', {}],
    ['a list page beyond the schema (422)', '/api/v1/toplists?page=1000001', {}],
    ['a list page of 101 (422)', '/api/v1/toplists?per_page=101', {}],
    ['a list page given twice (422)', '/api/v1/toplists?page=1&page=2', {}],
    ['a list page size with a leading zero', '/api/v1/toplists?per_page=05', {}],
    ['a list filtered by template', '/api/v1/toplists?template_id=TEMPLATE&per_page=5', {}],
    ['a list filtered by geo', '/api/v1/toplists?geo_type=country&geo_code=CC', {}],
    ['a list with another parameter (the route ignores it)', '/api/v1/toplists?per_page=5&x=1', {}],
    ['a percent-encoded list page', '/api/v1/toplists?page=%32', {}],
    ['a path that only starts like the list', '/api/v1/toplistsx', {}],
    ['HEAD of a list page', '/api/v1/toplists?per_page=5', {}, 'HEAD'],
    ['a brand page 0 (422)', '/api/v1/brands?page=0', {}],
    ['a brand page of 101 (422)', '/api/v1/brands?per_page=101', {}],
    ['a brand page size given twice (422)', '/api/v1/brands?per_page=1&per_page=2', {}],
    ['brands with another parameter (the route ignores it)', '/api/v1/brands?per_page=5&x=1', {}],
    ['a path that only starts like the brands', '/api/v1/brandsx', {}],
    ['a brand page under the brands', '/api/v1/brands/1', {}],
    ['HEAD of a brand page', '/api/v1/brands?per_page=5', {}, 'HEAD'],
  ];

  it('answers a live toplist with the bytes and headers of the Fastify route, and counts it', async () => {
    const before = await served();
    const path = `/api/v1/toplists/by-slug/${slug}`;
    const [a, b] = await apps.both(path, auth);
    expect(a.status).toBe(200);
    expectSameAnswer(a, b);
    expect(a.headers['x-request-id']).toMatch(/^[0-9A-HJKMNP-TV-Z]{26}$/);
    expect(await served()).toBe(before + 1);
  });

  it('answers by id with the bytes, headers and log route of the Fastify route, and counts it', async () => {
    const before = await served();
    apps.fastLines.length = 0;
    const path = `/api/v1/toplists/${toplistId}`;
    const [a, b] = await apps.both(path, auth);
    expect(a.status).toBe(200);
    expect(JSON.parse(a.body).data.slug).toBe(slug);
    expectSameAnswer(a, b);
    expect(await served()).toBe(before + 1);
    expect(await apps.requestLine()).toMatchObject({
      route: BY_ID_ROUTE,
      status: 200,
    });
  });

  it("answers resolve with the visitor's variant, the bytes, headers and log route of the Fastify route, and counts it", async () => {
    const { templateId, country } = family;
    for (const query of [
      `template_id=${templateId}&country=${country.toLowerCase()}`,
      `country=${country}&template_id=${templateId}`,
    ]) {
      const before = await served();
      apps.fastLines.length = 0;
      const [a, b] = await apps.both(`/api/v1/toplists/resolve?${query}`, auth);
      expect(a.status).toBe(200);
      expect(JSON.parse(a.body).data.id).toBe(family.toplistId);
      expectSameAnswer(a, b);
      expect(await served()).toBe(before + 1);
      expect(await apps.requestLine()).toMatchObject({
        route: RESOLVE_ROUTE,
        status: 200,
      });
    }
  });

  it('answers pages of the list with the bytes, headers and log route of the Fastify route, and counts them', async () => {
    const pages = [
      '',
      '?',
      '?per_page=5',
      '?page=2',
      '?per_page=5&page=3',
      '?page=3&per_page=5',
      '?page=999',
    ];
    for (const query of pages) {
      const before = await served();
      apps.fastLines.length = 0;
      const [a, b] = await apps.both(`/api/v1/toplists${query}`, auth);
      expect(a.status).toBe(200);
      expectSameAnswer(a, b);
      expect(await served()).toBe(before + 1);
      expect(await apps.requestLine()).toMatchObject({
        route: LIST_ROUTE,
        status: 200,
      });
    }
    // A page from memory counts as an edition cache hit, as the route's lookup does (a request
    // that found the set dropped by another test file's change counts a miss: asked again).
    const hitsOfOne = async () => {
      for (let i = 0; i < 5; i++) {
        const before = apps.quickServices.delivery.cacheStats();
        await get(apps.fast, '/api/v1/toplists?page=2', auth);
        const after = apps.quickServices.delivery.cacheStats();
        if (after.misses === before.misses) return after.hits - before.hits;
      }
    };
    expect(await hitsOfOne()).toBe(1);
    const third = JSON.parse((await get(apps.fast, '/api/v1/toplists?page=3&per_page=5', auth)).body);
    expect(third.meta).toMatchObject({ current_page: 3, per_page: 5, from: 11, to: 15 });
    expect(third.data).toHaveLength(5);
  });

  it('answers brand pages with the bytes, headers and log route of the Fastify route, and counts them', async () => {
    for (const query of ['', '?per_page=5', '?page=2&per_page=3', '?per_page=3&page=2', '?page=999']) {
      const before = await served();
      apps.fastLines.length = 0;
      const [a, b] = await apps.both(`/api/v1/brands${query}`, auth);
      expect(a.status).toBe(200);
      expectSameAnswer(a, b);
      expect(await served()).toBe(before + 1);
      expect(await apps.requestLine()).toMatchObject({ route: BRANDS_ROUTE, status: 200 });
    }
    const second = JSON.parse((await get(apps.fast, '/api/v1/brands?page=2&per_page=3', auth)).body);
    expect(second.meta).toMatchObject({ current_page: 2, per_page: 3, from: 4, to: 6 });
    expect(second.data).toHaveLength(3);
  });

  it('gzips a brand page like the route, and answers its ETag with 304, both from the fast path', async () => {
    const path = '/api/v1/brands?per_page=100';
    const plain = await get(apps.fast, path, auth);
    const gz = { ...auth, 'accept-encoding': 'gzip' };
    const zipped = await untilGzipped(apps.fast, path, gz);
    expect(gunzipSync(zipped!.body).toString()).toBe(plain.body);
    const viaRoute = await untilGzipped(apps.slowUrl, path, gz);
    expect(viaRoute?.body.equals(zipped!.body)).toBe(true);
    expect(comparable(viaRoute!.headers)).toEqual(comparable(zipped!.headers));
    let before = await served();
    expect((await httpRequest(apps.fast, path, gz)).body.equals(zipped!.body)).toBe(true);
    expect(await served()).toBe(before + 1);
    before = await served();
    const [a, b] = await apps.both(path, { ...gz, 'if-none-match': zipped!.headers.etag as string });
    expect(a.status).toBe(304);
    expectSameAnswer(a, b);
    expect(await served()).toBe(before + 1);
  });

  it('gzips a list page like the route, and answers its ETag with 304', async () => {
    const path = '/api/v1/toplists?per_page=20&page=2';
    const plain = await get(apps.fast, path, auth);
    const gz = { ...auth, 'accept-encoding': 'gzip' };
    const zipped = await untilGzipped(apps.fast, path, gz);
    expect(gunzipSync(zipped!.body).toString()).toBe(plain.body);
    expect(zipped!.headers['content-length']).toBe(String(zipped!.body.length));
    const viaRoute = await untilGzipped(apps.slowUrl, path, gz);
    expect(viaRoute?.body.equals(zipped!.body)).toBe(true);
    expect(comparable(viaRoute!.headers)).toEqual(comparable(zipped!.headers));
    for (const headers of [
      { ...auth, 'if-none-match': plain.headers.etag as string },
      { ...gz, 'if-none-match': zipped!.headers.etag as string },
    ]) {
      const [a, b] = await apps.both(path, headers);
      expect(a.status).toBe(304);
      expectSameAnswer(a, b);
    }
  });

  it('answers 304 to a matching If-None-Match like the route, and 200 to a stale one', async () => {
    const path = `/api/v1/toplists/by-slug/${slug}`;
    const etag = (await get(apps.fast, path, auth)).headers.etag as string;
    for (const inm of [etag, `W/${etag}`, `"stale", ${etag}`, '"stale"']) {
      const [a, b] = await apps.both(path, { ...auth, 'if-none-match': inm });
      expect(a.status).toBe(b.status);
      expectSameAnswer(a, b);
    }
  });

  it('gzips for a client that accepts it, once the toplist is deflated, with the headers of the route', async () => {
    const path = `/api/v1/toplists/by-slug/${slug}`;
    const plain = await get(apps.fast, path, auth);
    expect(plain.headers.vary).toBe('Authorization, Accept-Encoding');
    expect(plain.headers['content-encoding']).toBeUndefined();
    const gz = { ...auth, 'accept-encoding': 'gzip, deflate, br' };
    const zipped = await untilGzipped(apps.fast, path, gz);
    expect(zipped?.status).toBe(200);
    expect(gunzipSync(zipped!.body).toString()).toBe(plain.body);
    expect(zipped!.body.length).toBeLessThan(plain.body.length / 3);
    expect(zipped!.headers['content-length']).toBe(String(zipped!.body.length));
    // Weak, as the same document in another coding; either tag answers 304.
    expect(zipped!.headers.etag).toBe(`W/${plain.headers.etag}`);
    const viaRoute = await untilGzipped(apps.slowUrl, path, gz);
    expect(viaRoute?.body.equals(zipped!.body)).toBe(true);
    expect(comparable(viaRoute!.headers)).toEqual(comparable(zipped!.headers));
    for (const inm of [zipped!.headers.etag as string, plain.headers.etag as string]) {
      const [a, b] = await apps.both(path, { ...gz, 'if-none-match': inm });
      expect(a.status).toBe(304);
      expectSameAnswer(a, b);
      expect(a.headers.etag).toBe(`W/${plain.headers.etag}`);
    }
    // A client that refuses gzip, or names none, still gets the stored bytes.
    for (const ae of ['gzip;q=0', 'identity', 'br']) {
      const a = await get(apps.fast, path, { ...auth, 'accept-encoding': ae });
      expect(a.headers['content-encoding']).toBeUndefined();
      expect(a.body).toBe(plain.body);
    }
  });

  it('keeps a well-formed X-Request-Id and logs the line the route logs', async () => {
    const path = `/api/v1/toplists/by-slug/${slug}`;
    apps.lines.length = 0;
    apps.fastLines.length = 0;
    const [a] = await apps.both(path, { ...auth, 'x-request-id': 'edge-7' });
    expect(a.headers['x-request-id']).toBe('edge-7');
    const line = await apps.requestLine();
    expect(line).toMatchObject({ reqId: 'edge-7', route: BY_SLUG_ROUTE, status: 200, method: 'GET' });
    expect(line!.siteId).toBe(demo.siteTokens[0]!.siteId);
    expect(comparableLine(line!)).toEqual(comparableLine(apps.lines.find((l) => l.msg === 'request')!));
  });

  it.each(cases)('leaves %s to Fastify, same answer as the route', async (_name, template, extra, method) => {
    const path = template
      .replace('SLUG', slug)
      .replace('ID', String(toplistId))
      .replace('TEMPLATE', String(family.templateId))
      .replace('CC', family.country);
    const before = await served();
    const [a, b] = await apps.both(path, { ...auth, ...extra }, method);
    expect(a.status).toBe(b.status);
    expectSameAnswer(a, b);
    expect(await served()).toBe(before);
  });

  it('answers warm requests from memory, yet refuses a token revoked and a toplist unpublished just before', async () => {
    const site = demo.siteTokens[0]!;
    const minted = await t.app.services.access.createSiteToken(site.siteId, 'revoked soon');
    const own = { authorization: `Bearer ${minted.token}` };
    const path = `/api/v1/toplists/by-slug/${slug}`;
    const quick = apps.quickServices;
    expect(quick.access.knownSite(minted.token)).toBeUndefined();
    // After an answer, the token and the site's set are in memory: the next needs no lookup.
    const warm = async () => expect((await get(apps.fast, path, own)).status).toBe(200);
    const inMemory = () =>
      quick.access.knownSite(minted.token)?.siteId === site.siteId &&
      /^"t\d+e\d+/.test(quick.delivery.known(site.siteId, slug)?.etag ?? '') &&
      quick.delivery.known(site.siteId, toplistId)?.etag === quick.delivery.known(site.siteId, slug)?.etag;
    expect(await afterWarming(warm, inMemory)).toBe(true);
    const before = await served();
    await warm();
    expect(await served()).toBe(before + 1);

    await t.app.services.access.revokeSiteToken(site.siteId, minted.id);
    expect(quick.access.knownSite(minted.token)).toBeUndefined();
    const [a, b] = await apps.both(path, own);
    expect(a.status).toBe(401);
    expectSameAnswer(a, b);
    expect(
      await afterWarming(
        () => get(apps.fast, path, own),
        () => quick.access.knownSite(minted.token) === null,
      ),
    ).toBe(true);

    const [other] = await t.db.query<{ slug: string; id: number }>(
      'SELECT slug, id FROM toplists WHERE site_id = $1 AND live_edition_id IS NOT NULL AND id <> $2 ORDER BY id LIMIT 1',
      [site.siteId, toplistId],
    );
    const otherPath = `/api/v1/toplists/by-slug/${other!.slug}`;
    expect((await get(apps.fast, otherPath, auth)).status).toBe(200);
    await t.app.services.catalog.publishing.unpublish(other!.id);
    expect(quick.delivery.known(site.siteId, other!.slug)).toBeUndefined();
    const [c, d] = await apps.both(otherPath, auth);
    expect(c.status).toBe(404);
    expectSameAnswer(c, d);
    expect(quick.delivery.known(site.siteId, other!.slug)).toBeUndefined();
    expect(
      await afterWarming(
        () => get(apps.fast, path, auth),
        () => quick.delivery.known(site.siteId, slug) !== undefined,
      ),
    ).toBe(true);
  });

  it('tells apart the tokens sent on one keep-alive connection, and refuses one revoked between two of its requests', async () => {
    const agent = new Agent({ keepAlive: true, maxSockets: 1 });
    const on = (headers: Record<string, string>) =>
      httpRequest(apps.fast, `/api/v1/toplists/by-slug/${slug}`, headers, 'GET', agent);
    try {
      const [site, other] = demo.siteTokens;
      expect(other!.siteId).not.toBe(site!.siteId);
      const first = await on(auth);
      expect(first.status).toBe(200);
      // Warm until this connection's header is remembered with the token found in memory.
      const before = await served();
      const again = await on(auth);
      expect(again.reusedSocket).toBe(true);
      expect(again.status).toBe(200);
      expect(await served()).toBe(before + 1);

      // Another site's token on the same connection: that site's answer, not the remembered one.
      const [fromOther, fromOtherPlain] = [
        await on({ authorization: `Bearer ${other!.token}` }),
        await get(apps.slowUrl, `/api/v1/toplists/by-slug/${slug}`, {
          authorization: `Bearer ${other!.token}`,
        }),
      ];
      expect(fromOther.reusedSocket).toBe(true);
      expect(fromOther.status).toBe(fromOtherPlain.status);
      expect(fromOther.body.toString()).toBe(fromOtherPlain.body);
      // The remembered token with one character changed (same length) is not the remembered one.
      const token = site!.token;
      const last = token.at(-1) === 'A' ? 'B' : 'A';
      await on(auth);
      const forged = await on({ authorization: `Bearer ${token.slice(0, -1)}${last}` });
      expect(forged.reusedSocket).toBe(true);
      expect(forged.status).toBe(401);

      // A token revoked between two requests of one connection is refused by the second.
      const minted = await t.app.services.access.createSiteToken(site!.siteId, 'one connection');
      const own = { authorization: `Bearer ${minted.token}` };
      expect(
        await afterWarming(
          () => on(own),
          () => apps.quickServices.access.knownSite(minted.token)?.siteId === site!.siteId,
        ),
      ).toBe(true);
      expect((await on(own)).status).toBe(200);
      await t.app.services.access.revokeSiteToken(site!.siteId, minted.id);
      const refused = await on(own);
      expect(refused.reusedSocket).toBe(true);
      expect(refused.status).toBe(401);
    } finally {
      agent.destroy();
    }
  });

  it.each([
    ['no token', {}],
    ['an unknown token', { authorization: 'Bearer pds_unknownunknownunknownunknown' }],
    ['an admin token', { authorization: 'Bearer ADMIN' }],
  ])('leaves a request with %s to Fastify (401)', async (_name, headers: Record<string, string>) => {
    const path = `/api/v1/toplists/by-slug/${slug}`;
    const h =
      headers.authorization === 'Bearer ADMIN' ? { authorization: `Bearer ${demo.adminToken}` } : headers;
    const before = await served();
    const [a, b] = await apps.both(path, h);
    expect(a.status).toBe(401);
    expectSameAnswer(a, b);
    expect(await served()).toBe(before);
  });
});

describe('/go fast path', () => {
  let apps: Awaited<ReturnType<typeof pairOfApps>>;
  let t: TestApp;
  let slug: string;
  const served = () => apps.served();
  const browser = { 'user-agent': 'Mozilla/5.0 (X11; Linux x86_64) Chrome/120.0 Safari/537.36' };

  beforeAll(async () => {
    apps = await pairOfApps();
    ({ t } = apps);
    const [row] = await t.db.query<{ slug: string }>(
      'SELECT slug FROM tracking_links WHERE toplist_id IS NOT NULL ORDER BY slug LIMIT 1',
    );
    slug = row!.slug;
  }, 120_000);

  afterAll(() => apps?.close());

  const clicks = async () => {
    const [r] = await t.db.query<{ n: number; sub: number }>(
      "SELECT count(*)::int AS n, count(*) FILTER (WHERE sub_id = 'nl-top')::int AS sub FROM clicks",
    );
    return r!;
  };
  /** The click id in the landing URL differs per click; the rest of the redirect must not. */
  const redirect = (a: Answer) => {
    const { location, ...rest } = comparable(a.headers);
    return { ...rest, location: String(location).replace(/[0-9A-HJKMNP-TV-Z]{26}/g, 'CLICK') };
  };

  it('records the click before a 302 with the route headers, log line and counters', async () => {
    const before = { served: await served(), clicks: await clicks() };
    apps.lines.length = 0;
    apps.fastLines.length = 0;
    const path = `/go/${slug}?sub_id=nl-top`;
    const [a, b] = await apps.both(path, { ...browser, 'x-request-id': 'edge-9' });
    expect(a.status).toBe(302);
    expect(redirect(a)).toEqual(redirect(b));
    expect(a.body).toBe(b.body);
    expect(a.headers['x-request-id']).toBe('edge-9');
    const clickId = /[0-9A-HJKMNP-TV-Z]{26}/.exec(String(a.headers.location))![0];
    const [row] = await t.db.query<{ sub_id: string; flag: string | null }>(
      'SELECT sub_id, flag FROM clicks WHERE id = $1',
      [clickId],
    );
    expect(row).toEqual({ sub_id: 'nl-top', flag: null });
    expect(await clicks()).toEqual({ n: before.clicks.n + 2, sub: before.clicks.sub + 2 });
    expect(await served()).toBe(before.served + 1);
    const line = (await apps.requestLine())!;
    expect(line).toMatchObject({ reqId: 'edge-9', route: '/go/:slug', status: 302 });
    expect(comparableLine(line)).toEqual(comparableLine(apps.lines.find((l) => l.msg === 'request')!));
  });

  it.each([
    ['an unknown link, from a browser (404 page)', '/go/no-such-link', { accept: 'text/html' }],
    ['an unknown link, from a script (404 body)', '/go/no-such-link', {}],
    ['a malformed sub_id (400)', '/go/SLUG?sub_id=a%20b', {}],
    ['a percent-encoded slug', '/go/SLUG%2D', {}],
  ])('leaves %s to Fastify, same answer as the route', async (_name, template, extra) => {
    const path = template.replace('SLUG', slug);
    const before = { served: await served(), clicks: (await clicks()).n };
    const [a, b] = await apps.both(path, { ...browser, ...extra });
    expect(a.status).toBe(b.status);
    expect(a.status).toBeGreaterThanOrEqual(400);
    expectSameAnswer(a, b);
    expect(await served()).toBe(before.served);
    expect((await clicks()).n).toBe(before.clicks);
  });

  it('leaves HEAD and other query strings to Fastify, which records each click once', async () => {
    const before = { served: await served(), clicks: (await clicks()).n };
    const head = await get(apps.fast, `/go/${slug}`, browser, 'HEAD');
    expect(head.status).toBe(302);
    const [row] = await t.db.query<{ flag: string }>('SELECT flag FROM clicks ORDER BY id DESC LIMIT 1');
    expect(row!.flag).toBe('head');
    const [a, b] = await apps.both(`/go/${slug}?utm=x`, browser);
    expect(a.status).toBe(302);
    expect(redirect(a)).toEqual(redirect(b));
    expect(await served()).toBe(before.served);
    expect((await clicks()).n).toBe(before.clicks + 3);
  });

  const impressions = async () =>
    (await t.db.query<{ n: number }>("SELECT count(*)::int AS n FROM clicks WHERE kind = 'impression'"))[0]!
      .n;

  it('records the impression before the pixel, with the route headers, log line and counters', async () => {
    const before = { served: await served(), n: await impressions() };
    apps.lines.length = 0;
    apps.fastLines.length = 0;
    const [a, b] = await apps.both(`/imp/${slug}`, { ...browser, 'x-request-id': 'edge-11' });
    expect(a.status).toBe(200);
    expectSameAnswer(a, b);
    expect(a.headers['content-type']).toBe('image/gif');
    expect(a.headers['x-request-id']).toBe('edge-11');
    expect(Buffer.from(a.body, 'latin1').subarray(0, 6).toString()).toBe('GIF89a');
    expect(await impressions()).toBe(before.n + 2);
    expect(await served()).toBe(before.served + 1);
    const line = (await apps.requestLine())!;
    expect(line).toMatchObject({ reqId: 'edge-11', route: IMP_ROUTE, status: 200 });
    expect(comparableLine(line)).toEqual(comparableLine(apps.lines.find((l) => l.msg === 'request')!));
  });

  it.each([
    ['an unknown code (404)', '/imp/no-such-code', 'GET'],
    ['a query string (400)', '/imp/SLUG?x=1', 'GET'],
    ['a percent-encoded code', '/imp/SLUG%2D', 'GET'],
    ['HEAD', '/imp/SLUG', 'HEAD'],
  ])('leaves %s to Fastify, same answer and impressions as the route', async (_name, template, method) => {
    const path = template.replace('SLUG', slug);
    const before = { served: await served(), n: await impressions() };
    const a = await get(apps.fast, path, browser, method);
    const afterFast = await impressions();
    const b = await get(apps.slowUrl, path, browser, method);
    expect(a.status).toBe(b.status);
    expectSameAnswer(a, b);
    expect(await impressions()).toBe(afterFast + (afterFast - before.n));
    expect(await served()).toBe(before.served);
  });

  it('records no click, on either path, when the landing URL cannot be built', async () => {
    // A host macro (refused: a sub_id could pick the host) on a link neither app has resolved yet.
    const [row] = await t.db.query<{ slug: string; tracker_id: number }>(
      `SELECT slug, tracker_id FROM tracking_links
       WHERE toplist_id IS NOT NULL AND tracker_id <> (SELECT tracker_id FROM tracking_links WHERE slug = $1)
       ORDER BY slug LIMIT 1`,
      [slug],
    );
    await t.db.query("UPDATE trackers SET landing_url = 'https://{sub_id}/welcome' WHERE id = $1", [
      row!.tracker_id,
    ]);
    const before = { served: await served(), clicks: (await clicks()).n };
    const [a, b] = await apps.both(`/go/${row!.slug}?sub_id=evil.example`, browser);
    expect([a.status, b.status]).toEqual([404, 404]);
    expect(a.headers.location).toBeUndefined();
    expect(await served()).toBe(before.served);
    expect((await clicks()).n).toBe(before.clicks);
  });
});

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DB_KIND, httpRequest, type TestApp, testApp } from './helpers.ts';
import { type TrackingFixture, trackingFixture } from './tracking-fixture.ts';

const BROWSER = { 'user-agent': 'Mozilla/5.0 (X11; Linux x86_64; rv:120.0) Gecko/20100101 Firefox/120.0' };

// The routes that carry most traffic are ordinary Fastify routes: a hook added to the app, as a
// header, a rate limit or tracing would be, applies to them like to any other route (over real
// HTTP, as a publisher's server or a visitor's browser reaches them).
describe(`hot routes run every app hook (${DB_KIND})`, () => {
  let t: TestApp;
  let fx: TrackingFixture;
  let base: string;
  let auth: Record<string, string>;
  const seen: string[] = [];
  let paths: Record<string, string>;

  beforeAll(async () => {
    t = await testApp(
      {},
      {
        beforeReady: (app) => {
          app.addHook('onRequest', async (request, reply) => {
            seen.push(request.routeOptions.url ?? 'unmatched');
            if (request.headers['x-test-block'] === '1')
              return reply.status(429).header('x-test-hook', 'blocked').send({ code: 'rate_limited' });
          });
          app.addHook('onSend', async (_request, reply, payload) => {
            reply.header('x-test-hook', 'on-send');
            return payload;
          });
        },
      },
    );
    fx = await trackingFixture(t.app.services, t.db);
    const { token } = await t.app.services.access.createSiteToken(fx.siteId);
    auth = { authorization: `Bearer ${token}` };
    const [row] = await t.db.query<{ slug: string; template_id: number; geo_code: string }>(
      'SELECT slug, template_id, geo_code FROM toplists WHERE id = $1',
      [fx.toplistId],
    );
    paths = {
      '/api/v1/toplists/by-slug/:slug': `/api/v1/toplists/by-slug/${row!.slug}`,
      '/api/v1/toplists/:id': `/api/v1/toplists/${fx.toplistId}`,
      '/api/v1/toplists/resolve': `/api/v1/toplists/resolve?template_id=${row!.template_id}&country=${row!.geo_code}`,
      '/api/v1/toplists': '/api/v1/toplists?per_page=5',
      '/api/v1/brands': '/api/v1/brands',
    };
    base = await t.app.listen({ host: '127.0.0.1', port: 0 });
  });
  afterAll(() => t?.close());

  const requestCount = async (route: string, status: number) => {
    const text = (await t.app.inject('/metrics')).body;
    const line = text
      .split('\n')
      .find(
        (l) =>
          l.startsWith('podium_http_request_duration_seconds_count{') &&
          l.includes(`route="${route}"`) &&
          l.includes(`status="${status}"`),
      );
    return Number(line?.split(' ').pop() ?? 0);
  };

  it('the toplist reads: onRequest and onSend hooks run, on 200 and 304, and the request metrics count them', async () => {
    for (const [route, path] of Object.entries(paths)) {
      const before = await requestCount(route, 200);
      const ok = await httpRequest(base, path, auth);
      expect(ok.status, path).toBe(200);
      expect(ok.headers['x-test-hook'], path).toBe('on-send');
      expect(ok.headers['x-request-id'], path).toMatch(/^[0-9A-Z]{26}$/);
      expect(await requestCount(route, 200), path).toBe(before + 1);
      const again = await httpRequest(base, path, { ...auth, 'if-none-match': ok.headers.etag as string });
      expect(again.status, path).toBe(304);
      expect(again.headers['x-test-hook'], path).toBe('on-send');
      expect(seen.filter((r) => r === route).length, path).toBeGreaterThanOrEqual(2);
    }
  });

  it('/go and /imp: the hooks run and the request metrics count them', async () => {
    const goBefore = await requestCount('/go/:slug', 302);
    const go = await httpRequest(base, `/go/${fx.slugs[0]}`, BROWSER);
    expect(go.status).toBe(302);
    expect(go.headers['x-test-hook']).toBe('on-send');
    expect(await requestCount('/go/:slug', 302)).toBe(goBefore + 1);
    const impBefore = await requestCount('/imp/:slug', 200);
    const imp = await httpRequest(base, `/imp/${fx.slugs[0]}`, BROWSER);
    expect(imp.status).toBe(200);
    expect(imp.headers['x-test-hook']).toBe('on-send');
    expect(await requestCount('/imp/:slug', 200)).toBe(impBefore + 1);
  });

  it('a hook that answers first stops a hot route: no toplist sent, no click recorded', async () => {
    const clicks = async () =>
      Number((await t.db.query<{ n: string }>('SELECT count(*) AS n FROM clicks'))[0]!.n);
    await t.app.services.tracking.drain();
    const clicksBefore = await clicks();
    const blocked = await httpRequest(base, `/go/${fx.slugs[0]}`, { ...BROWSER, 'x-test-block': '1' });
    expect(blocked.status).toBe(429);
    expect(blocked.headers.location).toBeUndefined();
    const read = await httpRequest(base, paths['/api/v1/toplists/by-slug/:slug']!, {
      ...auth,
      'x-test-block': '1',
    });
    expect(read.status).toBe(429);
    expect(read.body.toString()).not.toContain('"data"');
    // A click let through is written; the blocked one never was.
    await httpRequest(base, `/go/${fx.slugs[0]}`, BROWSER);
    await t.app.services.tracking.drain();
    expect(await clicks()).toBe(clicksBefore + 1);
  });
});

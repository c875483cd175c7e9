import { readFileSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { connect } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { authOf } from '../src/plugins/auth.ts';
import { type TestApp, testApp } from './helpers.ts';
import { trackingFixture } from './tracking-fixture.ts';

/**
 * One regression test per class of input that used to answer 500 (or leak, or record), found by
 * a hostile pass over every route; the schema-driven fuzz test (fuzz.test.ts) keeps looking.
 */
const BROWSER = { 'user-agent': 'Mozilla/5.0 (X11; Linux x86_64; rv:120.0) Gecko/20100101 Firefox/120.0' };
let t: TestApp;
let admin: Record<string, string>;
let program: { slug: string; postbackToken: string };

const catalogShape = (body: unknown) => {
  const b = body as Record<string, unknown>;
  expect(typeof b.code).toBe('string');
  expect(b.code).toMatch(/^[a-z_]+$/);
  expect(typeof b.message).toBe('string');
  expect(Object.keys(b).every((k) => ['code', 'message', 'details'].includes(k))).toBe(true);
};

/** An admin API request with a JSON body, authorised as the fixture's admin. */
function adminSend(method: 'POST' | 'PATCH' | 'PUT', path: string, payload: object) {
  return t.app.inject({ method, url: `/api/admin/v1${path}`, headers: admin, payload });
}

async function count(table: string): Promise<number> {
  const [row] = await t.db.query<{ n: number }>(`SELECT count(*)::int AS n FROM ${table}`);
  return row!.n;
}

beforeAll(async () => {
  t = await testApp();
  const f = await trackingFixture(t.app.services, t.db);
  admin = { authorization: `Bearer ${f.adminToken}` };
  const res = await adminSend('POST', '/tracking/programs', {
    slug: 'hostile-partners',
    name: 'Hostile partners',
  });
  expect(res.statusCode).toBe(201);
  program = res.json().data;
});
afterAll(async () => t?.close());

describe('text PostgreSQL cannot store', () => {
  it.each([
    ['GET', '/go/%00', 'slug'],
    ['GET', '/imp/a%00b', 'slug'],
    ['GET', '/api/admin/v1/toplists?geo_type=country&geo_code=%00', 'geo_code'],
    ['GET', '/api/admin/v1/audit?target_type=%00', 'target_type'],
  ])('%s %s is a 422 naming the field', async (method, url, field) => {
    const res = await t.app.inject({ method: method as 'GET', url, headers: admin });
    expect(res.statusCode).toBe(422);
    catalogShape(res.json());
    expect(res.json().details.field).toBe(field);
  });

  it.each([
    ['NUL', 'Edit\u0000orial'],
    ['lone high surrogate', 'Edit\ud800orial'],
    ['lone low surrogate', '\udc00'],
  ])('a body string with a %s is refused by name and nothing is written', async (_what, name) => {
    const before = await count('owners');
    const res = await t.app.inject({
      method: 'POST',
      url: '/api/admin/v1/owners',
      // JSON.stringify writes lone surrogates as \\u escapes, exactly as a hostile client would.
      headers: { ...admin, 'content-type': 'application/json' },
      payload: JSON.stringify({ name }),
    });
    expect(res.statusCode).toBe(422);
    expect(res.json().details.field).toBe('name');
    expect(await count('owners')).toBe(before);
  });

  it('an object key with a NUL is refused', async () => {
    const res = await adminSend('POST', '/tracking/programs', {
      slug: 'nul-key',
      name: 'x',
      paramMap: { 'click\u0000id': 'b' },
    });
    expect(res.statusCode).toBe(422);
    catalogShape(res.json());
  });

  it('the database gate refuses what no schema checked, as a 422', async () => {
    const err = await t.db.query('SELECT $1::text', ['a\u0000b']).catch((e: unknown) => e);
    expect(err).toMatchObject({ code: 'validation_failed', status: 422 });
    const json = await t.db.query('SELECT $1::jsonb', [{ a: '\ud800' }]).catch((e: unknown) => e);
    expect(json).toMatchObject({ code: 'validation_failed' });
  });

  it('a postback with NUL in its fields is logged (NUL replaced) and answered 400', async () => {
    const logged = await count('postback_log');
    const res = await t.app.inject({
      method: 'GET',
      url: `/api/postback/${program.slug}/${program.postbackToken}?transaction_id=t%00x&event=ftd`,
    });
    expect(res.statusCode).toBe(400);
    catalogShape(res.json());
    expect(await count('postback_log')).toBe(logged + 1);
  });
});

describe('dates PostgreSQL refuses', () => {
  it.each([
    '/api/admin/v1/tracking/stats?from=0000-01-01&to=0000-01-02',
    '/api/admin/v1/tracking/programs/1/aggregates?from=0000-12-30&to=0001-01-02',
  ])('%s is a 422', async (url) => {
    const res = await t.app.inject({ method: 'GET', url, headers: admin });
    expect(res.statusCode).toBe(422);
    catalogShape(res.json());
  });

  it.each([
    ['liveFrom', '0000-06-01T00:00:00Z'],
    ['liveFrom', '0001-01-01T00:00:00+01:00'],
    ['liveUntil', '10000-01-01T00:00:00Z'],
    ['liveUntil', '2026-02-30T00:00:00Z'],
  ])('publish window %s=%s is a 422', async (field, value) => {
    const res = await adminSend('PATCH', '/toplists/1', { [field]: value });
    expect(res.statusCode).toBe(422);
    expect(res.json().details.field).toBe(field);
  });

  it('the first and last instants PostgreSQL and JavaScript share are accepted', async () => {
    const res = await adminSend('PATCH', '/toplists/1', {
      liveFrom: '0001-01-01T00:00:00Z',
      liveUntil: '9999-12-31T23:59:59Z',
    });
    expect(res.statusCode).toBe(200);
    const back = await adminSend('PATCH', '/toplists/1', { liveFrom: null, liveUntil: null });
    expect(back.statusCode).toBe(200);
  });

  it('bonusExpiryDate 0000-01-01 is a 422 and no offer is written', async () => {
    const before = await count('offers');
    const res = await adminSend('PATCH', '/offers/1', { bonusExpiryDate: '0000-01-01' });
    expect(res.statusCode).toBe(422);
    expect(res.json().details.field).toBe('bonusExpiryDate');
    expect(await count('offers')).toBe(before);
  });
});

describe('numbers and names', () => {
  it('an integer beyond bigint in a query is a 422', async () => {
    const res = await t.app.inject({
      method: 'GET',
      url: '/api/admin/v1/audit?before_id=99999999999999999999',
      headers: admin,
    });
    expect(res.statusCode).toBe(422);
    expect(res.json().details.field).toBe('before_id');
  });

  it('every number any route accepts is bounded (checked when the route is registered)', () => {
    // registerRouteTable throws on an unbounded one; the app built, so the table is clean.
    expect(t.app.routeTable.length).toBeGreaterThan(80);
  });

  it.each(['__proto__', 'constructor', 'toString', 'hasOwnProperty'])(
    'JSON-RPC method %s on /docs/mcp is "method not found", not a 500',
    async (method) => {
      const res = await t.app.inject({
        method: 'POST',
        url: '/docs/mcp',
        headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
        payload: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params: {} }),
      });
      expect(res.statusCode).toBeLessThan(500);
      expect(res.json().error.code).toBe(-32601);
    },
  );
});

describe('time zones the database does not know', () => {
  it('US/Pacific-New (known to ICU, not to PostgreSQL) is refused for sites and programmes', async () => {
    const site = await adminSend('PUT', '/tracking/sites/1', { timezone: 'US/Pacific-New' });
    expect(site.statusCode).toBe(422);
    const prog = await adminSend('POST', '/tracking/programs', {
      slug: 'pacific-new',
      name: 'x',
      timezone: 'US/Pacific-New',
    });
    expect(prog.statusCode).toBe(422);
    expect(prog.json().details.field).toBe('timezone');
    const stats = await t.app.inject({
      method: 'GET',
      url: '/api/admin/v1/tracking/stats?from=2026-01-01&to=2026-01-02&tz=US/Pacific-New',
      headers: admin,
    });
    expect(stats.statusCode).toBe(422);
    const ok = await adminSend('PUT', '/tracking/sites/1', { timezone: 'America/Los_Angeles' });
    expect(ok.statusCode).toBe(200);
  });

  it('migration 0050 puts zones stored before the check back to UTC, and stats work again', async () => {
    await t.db.query("UPDATE affiliate_programs SET timezone = 'US/Pacific-New' WHERE slug = $1", [
      program.slug,
    ]);
    await t.db.query(
      "INSERT INTO tracking_sites (site_id, timezone) VALUES (1, 'Mars/Olympus') ON CONFLICT (site_id) DO UPDATE SET timezone = EXCLUDED.timezone",
    );
    await t.db.exec(
      readFileSync(new URL('../src/db/migrations/0050_unknown_timezones.sql', import.meta.url), 'utf8'),
    );
    const [p] = await t.db.query<{ timezone: string }>(
      'SELECT timezone FROM affiliate_programs WHERE slug = $1',
      [program.slug],
    );
    expect(p!.timezone).toBe('UTC');
    const [site] = await t.db.query<{ timezone: string }>(
      'SELECT timezone FROM tracking_sites WHERE site_id = 1',
    );
    expect(site!.timezone).toBe('UTC');
    // A click today: stats cut its day in the site's zone, which must be one PostgreSQL knows.
    const [link] = await t.db.query<{ slug: string }>('SELECT slug FROM tracking_links LIMIT 1');
    expect(
      (await t.app.inject({ method: 'GET', url: `/go/${link!.slug}`, headers: BROWSER })).statusCode,
    ).toBe(302);
    await t.app.services.tracking.drain();
    const day = t.clock.now.toISOString().slice(0, 10);
    const fixed = await t.app.inject({
      method: 'GET',
      url: `/api/admin/v1/tracking/stats?from=${day}&to=${day}&tz=site&format=json`,
      headers: admin,
    });
    expect(fixed.statusCode).toBe(200);
    expect(fixed.json().data.length).toBeGreaterThan(0);
  });
});

describe('authentication before validation', () => {
  it('every admin and site route answers 401 to a request without a token, whatever its body', async () => {
    const guarded = t.app.routeTable.filter((r) => authOf(r.route));
    expect(guarded.length).toBeGreaterThan(70);
    for (const r of guarded) {
      const url = r.url.replace(/:([A-Za-z]+)/g, 'x');
      const res = await t.app.inject({
        method: r.method as 'GET',
        url,
        ...(['POST', 'PUT', 'PATCH'].includes(r.method) ? { payload: { nonsense: ['\u0000'] } } : {}),
      });
      expect(res.statusCode, `${r.method} ${r.url}`).toBe(401);
      expect(res.headers['www-authenticate']).toMatch(/^Bearer/);
      catalogShape(res.json());
    }
  });

  it('a route that would validate before authenticating cannot be registered', async () => {
    const { requireAuthFirst, requireAdmin } = await import('../src/plugins/auth.ts');
    const Fastify = (await import('fastify')).default;
    const app = Fastify();
    const build = async () => {
      await app.register(async (scope) => {
        requireAuthFirst(scope);
        const late = { preHandler: requireAdmin(t.app.services.access, 'admin') };
        scope.post('/late', late, async () => ({}));
      });
      await app.ready();
    };
    await expect(build()).rejects.toThrow(/authenticate in onRequest/);
    await app.close();
  });
});

describe('postback URLs', () => {
  it('HEAD is refused without recording anything', async () => {
    const log = await count('postback_log');
    const conv = await count('conversions');
    const res = await t.app.inject({
      method: 'HEAD',
      url: `/api/postback/${program.slug}/${program.postbackToken}?transaction_id=h1&event=ftd`,
    });
    expect(res.statusCode).toBe(405);
    expect(res.headers.allow).toBe('GET, POST');
    expect(await count('postback_log')).toBe(log);
    expect(await count('conversions')).toBe(conv);
  });

  it.each(['PUT', 'DELETE', 'OPTIONS', 'PATCH'])(
    '%s is a 405 that never repeats the token',
    async (method) => {
      const res = await t.app.inject({
        method: method as 'PUT',
        url: `/api/postback/${program.slug}/${program.postbackToken}`,
      });
      expect(res.statusCode).toBe(405);
      catalogShape(res.json());
      expect(res.body).not.toContain(program.postbackToken);
      expect(JSON.stringify(res.headers)).not.toContain(program.postbackToken);
    },
  );

  it('an unknown path below a postback URL is a 404 that never repeats the token', async () => {
    const res = await t.app.inject({
      method: 'GET',
      url: `/api/postback/${program.slug}/${program.postbackToken}/extra`,
    });
    expect(res.statusCode).toBe(404);
    expect(res.body).not.toContain(program.postbackToken);
  });
});

describe("errors from Node's HTTP parser", () => {
  let port: number;
  beforeAll(async () => {
    await t.app.listen({ port: 0, host: '127.0.0.1' });
    port = (t.app.server.address() as AddressInfo).port;
  });
  async function raw(request: string): Promise<string> {
    return new Promise((resolve, reject) => {
      const socket = connect(port, '127.0.0.1', () => socket.write(request));
      let out = '';
      socket.setEncoding('utf8');
      socket.on('data', (d) => {
        out += d;
      });
      socket.on('end', () => resolve(out));
      socket.on('error', reject);
      socket.setTimeout(5000, () => {
        socket.destroy();
        resolve(out);
      });
    });
  }
  const bodyOf = (response: string) => JSON.parse(response.slice(response.indexOf('\r\n\r\n') + 4));

  it('over-large headers are a 431 in the error catalog shape', async () => {
    const res = await raw(`GET /healthz HTTP/1.1\r\nHost: x\r\nX-Big: ${'a'.repeat(20_000)}\r\n\r\n`);
    expect(res).toMatch(/^HTTP\/1\.1 431 /);
    expect(bodyOf(res)).toEqual({ code: 'headers_too_large', message: expect.any(String) });
  });

  it('broken framing is a 400 in the error catalog shape', async () => {
    const res = await raw(
      'GET /healthz HTTP/1.1\r\nHost: x\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\n',
    );
    expect(res).toMatch(/^HTTP\/1\.1 400 /);
    expect(bodyOf(res)).toEqual({ code: 'bad_request', message: expect.any(String) });
  });
});

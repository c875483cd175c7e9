import { randomBytes } from 'node:crypto';
import fc from 'fast-check';
import type { InjectOptions } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { authOf } from '../src/plugins/auth.ts';
import type { RouteEntry } from '../src/plugins/route-table.ts';
import { DB_KIND, type TestApp, testApp } from './helpers.ts';
import { trackingFixture } from './tracking-fixture.ts';

/**
 * Schema-driven fuzzing of every route in Fastify's route table: hostile values for each path,
 * query and body field, generated from the route's own schema. Every answer must be below 500,
 * arrive in time, be a JSON error in the catalog's shape when refused, and a refused request must
 * leave every table as it was.
 *
 * `PODIUM_FUZZ_RUNS` (requests per route, default 12: about a minute for the suite) turns it up,
 * `PODIUM_FUZZ_SEED` replays a run, `PODIUM_FUZZ_ROUTES` (a regex over `METHOD url`) narrows it:
 * `PODIUM_FUZZ_RUNS=300 npx vitest run test/fuzz.test.ts`.
 */
const RUNS = Number(process.env.PODIUM_FUZZ_RUNS ?? 12);
const SEED = process.env.PODIUM_FUZZ_SEED ? Number(process.env.PODIUM_FUZZ_SEED) : undefined;
const ONLY = process.env.PODIUM_FUZZ_ROUTES ? new RegExp(process.env.PODIUM_FUZZ_ROUTES) : undefined;
const ANSWER_WITHIN_MS = 10_000;

type Schema = Record<string, unknown> & {
  type?: string | string[];
  properties?: Record<string, Schema>;
  patternProperties?: Record<string, Schema>;
  required?: string[];
  items?: Schema;
  anyOf?: Schema[];
  enum?: unknown[];
};

/* ---------- values ---------- */

const HOSTILE_TEXT = [
  '\u0000',
  'a\u0000b',
  '\ud800',
  'x\udc00',
  '\u0001\u001f\u007f\u0085',
  '\u202e\ufeff',
  '0000-01-01',
  '10000-01-01',
  '0000-12-31T23:00:00Z',
  '0001-01-01T00:00:00+01:00',
  '9999-12-31T23:59:59-01:00',
  '+275760-09-13T00:00:00Z',
  '2026-02-30',
  '2026-13-01',
  '99999999999999999999',
  '-1',
  '1e309',
  'NaN',
  '0x10',
  ' 7',
  '',
  ' ',
  'US/Pacific-New',
  '+02:00',
  '../../etc/passwd',
  "' OR 1=1 --",
  '<script>alert(1)</script>',
  'asc_00000000000000000000000000',
  'bkg_ZZZZZZZZZZZZZZZZZZZZZZZZZZ',
];

/** Any UTF-16 code units, so control characters and lone surrogates come up often. */
const codeUnits = fc
  .array(fc.integer({ min: 0, max: 0xffff }), { maxLength: 12 })
  .map((units) => String.fromCharCode(...units));

/** Names every plain object inherits: a lookup by untrusted name must not find them. */
const PROTO_NAMES = ['__proto__', 'constructor', 'prototype', 'toString', 'hasOwnProperty', 'valueOf'];

const hostileString = fc.oneof(
  { weight: 4, arbitrary: fc.constantFrom(...HOSTILE_TEXT) },
  { weight: 2, arbitrary: fc.constantFrom(...PROTO_NAMES) },
  { weight: 2, arbitrary: codeUnits },
  { weight: 1, arbitrary: fc.constantFrom('x'.repeat(5_000), 'y'.repeat(300_000)) },
);

const hostileNumber = fc.constantFrom(2 ** 31, 2 ** 53 + 2, 1e20, 1e308, -1, -(2 ** 63), 0, 0.5, -0.000001);

function nested(depth: number, array: boolean): unknown {
  let v: unknown = 1;
  for (let i = 0; i < depth; i++) v = array ? [v] : { a: v };
  return v;
}

/** An object whose own keys are the prototype's names, as JSON.parse would hand it over. */
const PROTO_OBJECT = JSON.parse(
  '{"__proto__": {"polluted": true}, "constructor": {"prototype": {"polluted": true}}, "toString": 1}',
);

const wrongType = fc.constantFrom<unknown>(null, true, false, [], {}, [[]], { a: {} }, PROTO_OBJECT);
const deep = fc.constantFrom(nested(200, true), nested(200, false), nested(5_000, true));

const hostile: fc.Arbitrary<unknown> = fc.oneof(
  { weight: 5, arbitrary: hostileString },
  { weight: 2, arbitrary: hostileNumber },
  { weight: 2, arbitrary: wrongType },
  { weight: 1, arbitrary: deep },
);

const safeInt = (min: number, max: number) =>
  min >= -(2 ** 31) && max < 2 ** 31
    ? fc.integer({ min, max })
    : fc.double({ min, max, noNaN: true }).map((n) => Math.min(max, Math.max(min, Math.round(n))));

/** Values the schema accepts (or nearly): they carry the hostile ones past the first checks. */
function valid(s: Schema | undefined, depth = 0): fc.Arbitrary<unknown> {
  if (!s || depth > 6) return fc.constant(null);
  if (s.anyOf) return fc.oneof(...s.anyOf.map((x) => valid(x, depth + 1)));
  if ('const' in s) return fc.constant(s.const);
  if (s.enum) return fc.constantFrom(...s.enum);
  const type = [s.type].flat()[0];
  const min = (k: string, d: number) => (typeof s[k] === 'number' ? (s[k] as number) : d);
  switch (type) {
    case 'string': {
      if (s.format === 'date')
        return fc
          .date({ min: new Date('2000-01-01'), max: new Date('2035-12-31'), noInvalidDate: true })
          .map((d) => d.toISOString().slice(0, 10));
      if (s.format === 'date-time')
        return fc
          .date({ min: new Date('2000-01-01'), max: new Date('2035-12-31'), noInvalidDate: true })
          .map((d) => d.toISOString());
      const maxLength = Math.min(min('maxLength', 24), 24);
      const minLength = Math.min(min('minLength', 0), maxLength);
      if (typeof s.pattern === 'string') {
        try {
          return fc
            .stringMatching(new RegExp(s.pattern))
            .filter((x) => x.length >= minLength && x.length <= min('maxLength', 1e9));
        } catch {
          // fast-check cannot build strings for every regex (lookaheads): plain text then.
        }
      }
      return fc.string({ minLength, maxLength });
    }
    case 'integer':
      return safeInt(min('minimum', -1000), min('maximum', 1000));
    case 'number':
      return fc.double({ min: min('minimum', -1000), max: min('maximum', 1000), noNaN: true });
    case 'boolean':
      return fc.boolean();
    case 'null':
      return fc.constant(null);
    case 'array':
      return fc.array(valid(s.items, depth + 1), {
        minLength: Math.min(min('minItems', 0), 3),
        maxLength: Math.max(Math.min(min('maxItems', 3), 3), Math.min(min('minItems', 0), 3)),
      });
    case 'object':
      return record(s, depth, (x) => valid(x, depth + 1));
    default:
      return fc.constant('x');
  }
}

/** An object per the schema's properties, each value built by `value`. */
function record(s: Schema, depth: number, value: (s: Schema) => fc.Arbitrary<unknown>) {
  const props = s.properties ?? {};
  const keys = Object.keys(props);
  if (!keys.length && s.patternProperties) {
    const [sub] = Object.values(s.patternProperties);
    return fc.dictionary(fc.oneof(fc.string({ maxLength: 8 }), hostileString), value(sub!), { maxKeys: 3 });
  }
  const shape = Object.fromEntries(keys.map((k) => [k, value(props[k]!)]));
  return fc.record(shape, { requiredKeys: (s.required ?? []).filter((k) => k in shape) }).map((o) => {
    void depth;
    return o as Record<string, unknown>;
  });
}

/** A field's value: usually hostile, sometimes valid so that the other fields get looked at. */
const field = (s: Schema): fc.Arbitrary<unknown> =>
  fc.oneof({ weight: 3, arbitrary: hostile }, { weight: 2, arbitrary: valid(s) });

/** A field deep inside: hostile values anywhere in the tree. */
function mixed(s: Schema | undefined, depth = 0): fc.Arbitrary<unknown> {
  if (!s || depth > 4) return hostile;
  const type = [s.type].flat()[0];
  if (type === 'object' && (s.properties || s.patternProperties))
    return fc.oneof(
      { weight: 1, arbitrary: hostile },
      { weight: 3, arbitrary: record(s, depth, (x) => mixed(x, depth + 1)) },
    );
  if (type === 'array' && s.items)
    return fc.oneof(hostile, fc.array(mixed(s.items, depth + 1), { maxLength: 3 }));
  return field(s);
}

/* ---------- requests ---------- */

/** Text for a URL: well-formed text percent-encoded, plus raw sequences that decode to nothing valid. */
const urlText = (v: unknown): string => {
  const s = typeof v === 'string' ? v : typeof v === 'object' ? JSON.stringify(v) : String(v);
  return encodeURIComponent(s.toWellFormed());
};
const RAW_URL_PIECES = ['%00', '%ED%A0%80', '%C0%80', '%FF', '%', '%zz', '..%2F..%2F'];

const RAW_BODIES: [string | undefined, string][] = [
  ['application/json', '{'],
  ['application/json', 'null'],
  ['application/json', '"text"'],
  ['application/json', '[]'],
  ['application/json', `${'['.repeat(20_000)}${']'.repeat(20_000)}`],
  ['application/json', `{"a":"${'z'.repeat(2_000_000)}"}`],
  ['application/json', '{"name":"\\u0000","__proto__":{"x":1}}'],
  ['text/plain', 'hello'],
  ['application/x-www-form-urlencoded', 'a=%00&b=%ED%A0%80'],
  [undefined, '{"a":1}'],
];

const rpcMethod = fc.oneof(
  fc.constantFrom('initialize', 'ping', 'tools/list', 'tools/call', 'notifications/initialized'),
  fc.constantFrom(...PROTO_NAMES),
  hostileString,
);
const UNTYPED_BODY = fc.oneof(
  fc.record(
    {
      jsonrpc: fc.oneof({ weight: 4, arbitrary: fc.constant('2.0') }, { weight: 1, arbitrary: hostile }),
      id: fc.oneof({ weight: 4, arbitrary: fc.constantFrom(1, 'a') }, { weight: 1, arbitrary: hostile }),
      method: rpcMethod,
      params: fc.oneof(
        hostile,
        fc.record({
          name: fc.oneof(fc.constantFrom('list_pages', 'search_docs', 'get_page'), hostileString),
          arguments: fc.dictionary(fc.constantFrom('query', 'path', '__proto__'), hostile, { maxKeys: 2 }),
        }),
      ),
    },
    { requiredKeys: ['jsonrpc', 'method'] },
  ),
  fc.dictionary(
    fc.constantFrom('transaction_id', 'event', 'click_id', 'amount', 'currency', 'player_id', '__proto__'),
    fc.oneof(hostile, fc.constantFrom('ftd', 'EUR', '10.00')),
    { maxKeys: 6 },
  ),
);

const BODY = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);

/** `arb` one time in six, undefined otherwise. */
const rarely = <T>(arb: fc.Arbitrary<T>) =>
  fc.oneof({ weight: 5, arbitrary: fc.constant(undefined) }, { weight: 1, arbitrary: arb });

interface Generated {
  params: Record<string, unknown>;
  rawParam: string | undefined;
  query: Record<string, unknown>;
  rawQuery: string | undefined;
  body: { json: unknown } | { raw: [string | undefined, string] } | undefined;
  auth: 'good' | 'none' | 'garbage';
}

function requestFor(entry: RouteEntry): fc.Arbitrary<Generated> {
  const schema = (entry.route.schema ?? {}) as Record<string, Schema | undefined>;
  const paramNames = [...entry.url.matchAll(/:([A-Za-z_]+)/g)].map((m) => m[1]!);
  const paramSchema = schema.params?.properties ?? {};
  const params = fc.record(
    Object.fromEntries(paramNames.map((n) => [n, paramSchema[n] ? field(paramSchema[n]) : hostile])),
  );
  const querySchema = schema.querystring;
  const query = querySchema
    ? record(querySchema, 0, field)
    : fc.dictionary(fc.constantFrom('q', 'page', 'id', '__proto__', 'transaction_id', 'event'), hostile, {
        maxKeys: 3,
      });
  const takesBody = BODY.has(entry.method);
  // A body read without a schema (the MCP endpoint, postbacks) gets envelopes of their shape too.
  const shaped = schema.body
    ? mixed(schema.body)
    : fc.oneof({ weight: 1, arbitrary: hostile }, { weight: 4, arbitrary: UNTYPED_BODY });
  const body: fc.Arbitrary<Generated['body']> = takesBody
    ? fc.oneof(
        { weight: 5, arbitrary: shaped.map((json) => ({ json })) },
        { weight: 1, arbitrary: fc.constantFrom(...RAW_BODIES).map((raw) => ({ raw })) },
        { weight: 1, arbitrary: fc.constant(undefined) },
      )
    : fc.constant(undefined);
  return fc.record({
    params,
    rawParam: rarely(fc.constantFrom(...RAW_URL_PIECES)),
    query,
    rawQuery: rarely(fc.constantFrom(...RAW_URL_PIECES)),
    body,
    auth: fc.constantFrom<Generated['auth']>('good', 'good', 'good', 'good', 'none', 'garbage'),
  });
}

function injectOptions(entry: RouteEntry, g: Generated, tokens: { admin: string; site: string }) {
  let first = true;
  const path = entry.url
    .replace(/:([A-Za-z_]+)/g, (_m, name: string) => {
      const raw = first && g.rawParam;
      first = false;
      return raw ? `a${raw}` : urlText(g.params[name]);
    })
    .replace(/\*$/, () => urlText(g.params['*'] ?? 'x'));
  const parts: string[] = [];
  for (const [k, v] of Object.entries(g.query)) {
    if (v === undefined) continue;
    for (const one of Array.isArray(v) && v.length < 4 ? v : [v]) parts.push(`${urlText(k)}=${urlText(one)}`);
  }
  if (g.rawQuery) parts.push(`page=${g.rawQuery}`);
  const url = parts.length ? `${path}?${parts.join('&')}` : path;
  const auth = authOf(entry.route);
  const headers: Record<string, string> = { accept: 'application/json, text/event-stream' };
  if (g.auth === 'garbage') headers.authorization = 'Bearer pda_not-a-real-token';
  if (g.auth === 'good' && auth)
    headers.authorization = `Bearer ${auth.kind === 'site' ? tokens.site : tokens.admin}`;
  const opts: InjectOptions = { method: entry.method as InjectOptions['method'], url, headers };
  if (g.body && 'json' in g.body && g.body.json !== undefined) {
    headers['content-type'] = 'application/json';
    opts.payload = JSON.stringify(g.body.json);
  } else if (g.body && 'raw' in g.body) {
    const [type, text] = g.body.raw;
    if (type) headers['content-type'] = type;
    opts.payload = text;
  }
  return opts;
}

/* ---------- checks ---------- */

let t: TestApp;
let tokens: { admin: string; site: string };
let tables: string[];

/** A digest of every table's rows, in one statement. */
async function snapshot(except: ReadonlySet<string>): Promise<Map<string, string>> {
  const sql = tables
    .filter((name) => !except.has(name))
    .map(
      (name) =>
        `SELECT '${name}' AS t, count(*)::int AS n, md5(coalesce(string_agg(x::text, '|' ORDER BY x::text), '')) AS h FROM "${name}" x`,
    )
    .join(' UNION ALL ');
  const rows = await t.db.query<{ t: string; n: number; h: string }>(sql);
  return new Map(rows.map((r) => [r.t, `${r.n}:${r.h}`]));
}

/** Tables a refused request may legitimately write: postbacks are logged even when rejected. */
const LOGGED_WHEN_REFUSED: Record<string, string[]> = {
  '/api/postback/:program/:token': ['postback_log', 'postback_outcomes', 'tracking_keys'],
};

const isCatalogError = (body: unknown): boolean => {
  if (!body || typeof body !== 'object' || Array.isArray(body)) return false;
  const b = body as Record<string, unknown>;
  return (
    typeof b.code === 'string' &&
    /^[a-z][a-z_]*$/.test(b.code) &&
    typeof b.message === 'string' &&
    b.message.length > 0 &&
    Object.keys(b).every(
      (k) => k === 'code' || k === 'message' || (k === 'details' && typeof b.details === 'object'),
    )
  );
};

/** A JSON-RPC error object: what the MCP endpoint answers instead (its protocol says so). */
const isRpcError = (body: unknown): boolean =>
  !!body && typeof body === 'object' && (body as { jsonrpc?: unknown }).jsonrpc === '2.0' && 'error' in body;

function within<T>(p: Promise<T>, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const limit = new Promise<never>((_, reject) => {
    timer = setTimeout(
      () => reject(new Error(`no answer within ${ANSWER_WITHIN_MS} ms: ${what}`)),
      ANSWER_WITHIN_MS,
    );
  });
  return Promise.race([p, limit]).finally(() => clearTimeout(timer));
}

beforeAll(async () => {
  t = await testApp(
    // Docs rate limit off (it would answer most requests 429); sealing keys as in production.
    { docsRateLimit: 0, secretKeys: [{ version: 1, key: randomBytes(32) }] },
    // Every host resolves to a documentation address the SSRF guard refuses: no call leaves.
    { outboundTestOnly: { resolver: async () => [{ address: '192.0.2.1', family: 4 }] } },
  );
  const f = await trackingFixture(t.app.services, t.db);
  const site = await t.app.services.access.createSiteToken(f.siteId, 'fuzz');
  tokens = { admin: f.adminToken, site: site.token };
  tables = (
    await t.db.query<{ name: string }>(
      `SELECT table_name AS name FROM information_schema.tables
        WHERE table_schema = current_schema() AND table_type = 'BASE TABLE' ORDER BY 1`,
    )
  ).map((r) => r.name);
}, 300_000);
afterAll(async () => t?.close());

describe(`fuzz every route (${DB_KIND}, ${RUNS} runs per route)`, () => {
  it('no input makes any route answer 5xx, hang, answer outside the error shape or write when refused', async () => {
    expect(t.app.routeTable.length).toBeGreaterThan(80);
    const routes = t.app.routeTable.filter((r) => !ONLY || ONLY.test(`${r.method} ${r.url}`));
    const failures: string[] = [];
    let before = await snapshot(new Set());
    let requests = 0;
    for (const entry of routes) {
      const except = new Set(LOGGED_WHEN_REFUSED[entry.url] ?? []);
      await fc
        .assert(
          fc.asyncProperty(requestFor(entry), async (g) => {
            const opts = injectOptions(entry, g, tokens);
            const what = `${opts.method} ${String(opts.url).slice(0, 300)}`;
            const res = await within(t.app.inject(opts), what);
            requests++;
            const problems: string[] = [];
            let body: unknown;
            try {
              body = res.body ? JSON.parse(res.body) : undefined;
            } catch {
              body = undefined;
            }
            const consoleNotBuilt =
              entry.url.startsWith('/console') && (body as { code?: string })?.code === 'service_unavailable';
            if (res.statusCode >= 500 && !consoleNotBuilt)
              problems.push(`status ${res.statusCode} ${res.body.slice(0, 300)}`);
            if (res.statusCode >= 400 && entry.method !== 'HEAD') {
              const rpc = entry.url.endsWith('/mcp') && isRpcError(body);
              if (!String(res.headers['content-type']).startsWith('application/json'))
                problems.push(`error as ${res.headers['content-type']}`);
              else if (!isCatalogError(body) && !rpc) problems.push(`error body ${res.body.slice(0, 300)}`);
            }
            const after = await snapshot(new Set());
            if (res.statusCode >= 400) {
              for (const [name, digest] of after)
                if (!except.has(name) && before.get(name) !== digest)
                  problems.push(`refused (${res.statusCode}) but wrote ${name}`);
            }
            before = after;
            if (problems.length) failures.push(`${what}\n  ${problems.join('\n  ')}`);
            return problems.length === 0;
          }),
          // A body without a schema is guessed at, so it gets more tries.
          {
            numRuns: entry.route.schema?.body || !BODY.has(entry.method) ? RUNS : RUNS * 3,
            seed: SEED,
            endOnFailure: true,
            verbose: 0,
          },
        )
        .catch(() => {
          // Collected in `failures` with the request; keep fuzzing the other routes.
        });
    }
    expect(failures, failures.slice(0, 15).join('\n')).toEqual([]);
    expect(requests).toBeGreaterThanOrEqual(routes.length);
  }, 900_000);
});

import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type CheckReport, type ReferenceServer, runChecks } from '../src/index.ts';
import { type Answer, type Breakage, brokenServer, type Exchange, editJson } from './broken-proxy.ts';
import { selfSignedCert, testServer } from './helpers.ts';

const tls = selfSignedCert();
let ref: ReferenceServer;
let limitedKey: string;

beforeAll(async () => {
  ref = await testServer({ tls, rateLimit: { max: 100_000, windowMs: 60_000 } });
  limitedKey = (await ref.issueKey({ scopes: ['inventory:read'] })).key;
});
afterAll(() => ref.close());

const check = (baseUrl: string, extra: { allowWrites?: boolean; limitedKey?: string } = {}) =>
  runChecks({ baseUrl, apiKey: ref.apiKey, ca: tls.cert, allowWrites: true, limitedKey, ...extra });

function failed(rep: CheckReport): string[] {
  return rep.results.filter((r) => r.status === 'fail').map((r) => r.id);
}

describe('adserver-check against the reference server', () => {
  it('passes every check over HTTPS on loopback, writes included', async () => {
    const rep = await check(ref.url);
    expect(failed(rep)).toEqual([]);
    expect(rep.ok).toBe(true);
    expect(rep.results.filter((r) => r.status === 'skip')).toEqual([]);
    expect(rep.counts.pass).toBeGreaterThanOrEqual(25);
  });

  it('read-only by default: order scenarios skipped, no draft created', async () => {
    const before = await ref.store.query<{ n: number }>('SELECT count(*)::int AS n FROM orders');
    const rep = await check(ref.url, { allowWrites: false });
    expect(rep.ok).toBe(true);
    expect(rep.results.find((r) => r.id === 'orders')?.status).toBe('skip');
    const after = await ref.store.query<{ n: number }>('SELECT count(*)::int AS n FROM orders');
    expect(after[0]!.n).toBe(before[0]!.n);
  });

  it('never prints the key, even when the server echoes it', async () => {
    const echo = await brokenServer(ref.url, tls, {
      response: (ex, res) =>
        res.status === 401
          ? editJson(res, (b) => ({ ...b, message: `bad key ${ex.headers.authorization}` }))
          : res,
    });
    try {
      const rep = await check(echo.url);
      expect(failed(rep)).toContain('auth.key_never_echoed');
      expect(JSON.stringify(rep)).not.toContain(ref.apiKey);
      expect(JSON.stringify(rep)).not.toMatch(/checker-wrong-[0-9a-f]{24}/);
    } finally {
      await echo.close();
    }
  });
});

const isPath = (ex: Exchange, p: string) => new URL(ex.path, 'https://x').pathname.endsWith(p);
const rid = () => `x_${randomBytes(6).toString('hex')}`;
const onPath = (p: string, fn: (ex: Exchange, res: Answer) => Answer): Breakage => ({
  response: (ex, res) => (isPath(ex, p) ? fn(ex, res) : res),
});

/** Answers `to` wherever the server answered `from`. */
const statusInstead = (from: number, to: number): Breakage => ({
  response: (_e, r) => (r.status === from ? { ...r, status: to } : r),
});

/** Edits the JSON body of the answers on path `p` that have `status`. */
const editAnswer = (p: string, status: number, edit: Parameters<typeof editJson>[1]): Breakage =>
  onPath(p, (_e, r) => (r.status === status ? editJson(r, edit) : r));

const healthCapability = (cap: string, value: boolean): Breakage =>
  onPath('/health', (_e, r) =>
    editJson(r, (b) => ({ ...b, capabilities: { ...b.capabilities, [cap]: value } })),
  );

/** Wraps a /go/ link in a redirect of the server's own, as a server that rewrites click links does. */
const rewriteGo = (tag: string) => tag.replace(/%2Fgo%2F/gi, '%2Fredirect%3Fto%3D%2Fgo%2F');
/** Adds to each answered line the creatives its request sent, through `edit`: a server showing what it stored. */
// biome-ignore lint/suspicious/noExplicitAny: edits the order answer's JSON
function echoCreatives(ex: Exchange, b: any, edit: (s: string) => string) {
  const sent = JSON.parse(ex.body) as { line_items: { external_ref: string; creatives?: object[] }[] };
  return {
    ...b,
    line_items: b.line_items.map((l: { external_ref: string }) => ({
      ...l,
      creatives: JSON.parse(
        edit(JSON.stringify(sent.line_items.find((x) => x.external_ref === l.external_ref)?.creatives ?? [])),
      ),
    })),
  };
}
/** Days in an inclusive `YYYY-MM-DD` range. */
const daysIn = (start: string, end: string) => (Date.parse(end) - Date.parse(start)) / 86_400_000 + 1;

/** Each deliberately broken variant and the check that must name it. */
const VARIANTS: [string, string, Breakage][] = [
  [
    'timezone UTC+2',
    'health.fields',
    onPath('/health', (_e, r) => editJson(r, (b) => ({ ...b, timezone: 'UTC+2' }))),
  ],
  [
    'currency EURO',
    'health.fields',
    onPath('/health', (_e, r) => editJson(r, (b) => ({ ...b, currency: 'EURO' }))),
  ],
  ['reporting: false', 'health.fields', healthCapability('reporting', false)],
  [
    '302 on /health',
    'health.reachable',
    onPath('/health', () => ({
      status: 302,
      headers: { location: 'https://127.0.0.1/elsewhere' },
      body: '',
    })),
  ],
  ['403 instead of 401 for a wrong key', 'auth.wrong_key', statusInstead(401, 403)],
  [
    'cursor that never ends',
    'inventory.walk',
    editAnswer('/inventory', 200, (b) => ({ ...b, next_cursor: 'again' })),
  ],
  [
    'size not WIDTHxHEIGHT',
    'inventory.walk',
    editAnswer('/inventory', 200, (b) => ({
      ...b,
      data: b.data.map((d: object) => ({ ...d, sizes: ['300*250'] })),
    })),
  ],
  [
    'duplicate inventory ids',
    'inventory.unique_ids',
    editAnswer('/inventory', 200, (b) => ({ ...b, data: [...b.data, ...b.data] })),
  ],
  [
    'available > forecasted',
    'forecast.invariants',
    editAnswer('/forecast', 200, (b) => ({ ...b, available_impressions: b.forecasted_impressions + 1 })),
  ],
  [
    '200 for an unknown inventory_id',
    'forecast.unknown_id',
    onPath('/forecast', (ex, r) =>
      r.status === 404
        ? {
            status: 200,
            headers: r.headers,
            body: JSON.stringify({
              inventory_id: JSON.parse(ex.body).inventory_id,
              available_impressions: 10,
              forecasted_impressions: 20,
            }),
          }
        : r,
    ),
  ],
  [
    'replay that creates a second order',
    'orders.replay',
    onPath('/orders', (_e, r) =>
      r.headers['idempotent-replayed'] ? editJson(r, (b) => ({ ...b, order_id: rid() })) : r,
    ),
  ],
  [
    'missing 409 (new body applied under a used key)',
    'orders.conflict',
    {
      request: (ex) => {
        if (!isPath(ex, '/orders')) return ex;
        const key = rid();
        return {
          ...ex,
          headers: { ...ex.headers, 'idempotency-key': key },
          body: JSON.stringify({ ...JSON.parse(ex.body), idempotency_key: key }),
        };
      },
    },
  ],
  [
    'new line_item_id on update',
    'orders.update_by_external_ref',
    onPath('/orders', (_e, r) =>
      r.status === 200 && !r.headers['idempotent-replayed']
        ? editJson(r, (b) => ({
            ...b,
            line_items: b.line_items.map((l: object) => ({ ...l, line_item_id: rid() })),
          }))
        : r,
    ),
  ],
  [
    'status ACTIVE instead of DRAFT',
    'orders.create',
    editAnswer('/orders', 201, (b) => ({ ...b, status: 'ACTIVE' })),
  ],
  [
    'report totals ≠ daily sum',
    'reports.total_equals_daily',
    onPath('/reports', (ex, r) =>
      r.status === 200 && !JSON.parse(ex.body).granularity
        ? editJson(r, (b) => ({
            ...b,
            rows: b.rows.map((x: { impressions: number }) => ({ ...x, impressions: x.impressions + 1 })),
          }))
        : r,
    ),
  ],
  [
    '200 for an unknown line_item_id',
    'reports.unknown_id',
    onPath('/reports', (_e, r) =>
      r.status === 404 ? { status: 200, headers: r.headers, body: '{"rows":[]}' } : r,
    ),
  ],
  [
    'inventory limit 0 or 201 clamped instead of refused',
    'inventory.limit_bounds',
    {
      request: (ex) => {
        if (!isPath(ex, '/inventory')) return ex;
        const u = new URL(ex.path, 'https://x');
        const limit = u.searchParams.get('limit');
        if (limit && !/^([1-9]|[1-9][0-9]|1[0-9]{2}|200)$/.test(limit)) u.searchParams.set('limit', '50');
        return { ...ex, path: u.pathname + u.search };
      },
    },
  ],
  [
    'inventory limit ignored',
    'inventory.page_size',
    {
      request: (ex) => {
        if (!isPath(ex, '/inventory')) return ex;
        const u = new URL(ex.path, 'https://x');
        u.searchParams.delete('limit');
        return { ...ex, path: u.pathname + u.search };
      },
    },
  ],
  [
    'a read that changes what the next read sees',
    'reads.repeatable',
    editAnswer('/inventory', 200, (b) => ({
      ...b,
      data: [...b.data, { inventory_id: rid(), name: 'new', sizes: ['300x250'], status: 'archived' }],
    })),
  ],
  [
    'key accepted from the query string',
    'auth.key_in_url_refused',
    {
      request: (ex) => {
        const u = new URL(ex.path, 'https://x');
        const key = u.searchParams.get('api_key');
        if (!key) return ex;
        u.searchParams.delete('api_key');
        return {
          ...ex,
          path: u.pathname + u.search,
          headers: { ...ex.headers, authorization: `Bearer ${key}` },
        };
      },
    },
  ],
  ['422 instead of 400 for invalid JSON', 'errors.bad_request', statusInstead(400, 422)],
  [
    '501 with another code than forecast_unsupported',
    'forecast.unsupported_code',
    editAnswer('/forecast', 501, (b) => ({ ...b, code: 'not_supported' })),
  ],
  [
    'figures for an inverted date range',
    'forecast.invalid_range',
    onPath('/forecast', (ex, r) =>
      r.status === 422
        ? {
            status: 200,
            headers: r.headers,
            body: JSON.stringify({
              inventory_id: JSON.parse(ex.body).inventory_id,
              available_impressions: 1,
              forecasted_impressions: 2,
            }),
          }
        : r,
    ),
  ],
  [
    'Idempotency-Key header not required',
    'orders.idempotency_header',
    {
      request: (ex) =>
        isPath(ex, '/orders')
          ? { ...ex, headers: { ...ex.headers, 'idempotency-key': JSON.parse(ex.body).idempotency_key } }
          : ex,
    },
  ],
  [
    'a line without creative refused',
    'orders.empty_line',
    {
      request: (ex) =>
        isPath(ex, '/orders') &&
        JSON.parse(ex.body).line_items?.some((l: { creatives?: unknown }) => l.creatives === undefined)
          ? {
              status: 422,
              headers: { 'content-type': 'application/json' },
              body: '{"code":"creative_required","message":"a line needs a creative"}',
            }
          : ex,
    },
  ],
  [
    'a size that does not fit accepted',
    'orders.size_misfit',
    onPath('/orders', (ex, r) => {
      if (r.status !== 422) return r;
      const b = JSON.parse(ex.body);
      return {
        status: 201,
        headers: r.headers,
        body: JSON.stringify({
          order_id: rid(),
          status: 'DRAFT',
          line_items: b.line_items.map((l: { external_ref: string }) => ({
            external_ref: l.external_ref,
            line_item_id: rid(),
            status: 'DRAFT',
          })),
        }),
      };
    }),
  ],
  [
    'reports limit ignored',
    'reports.page_size',
    {
      request: (ex) => {
        if (!isPath(ex, '/reports')) return ex;
        const { limit: _limit, ...rest } = JSON.parse(ex.body);
        return { ...ex, body: JSON.stringify(rest) };
      },
    },
  ],
  [
    'reports limit 201 accepted',
    'reports.limit_bounds',
    {
      request: (ex) => {
        if (!isPath(ex, '/reports')) return ex;
        const b = JSON.parse(ex.body);
        return b.limit > 200 ? { ...ex, body: JSON.stringify({ ...b, limit: 200 }) } : ex;
      },
    },
  ],
  [
    'revenue in report rows',
    'reports.integers_only',
    editAnswer('/reports', 200, (b) => ({
      ...b,
      rows: b.rows.map((x: object) => ({ ...x, revenue: '1.00' })),
    })),
  ],
  [
    'daily rows leave out the last day of the range',
    'reports.inclusive_range',
    onPath('/reports', (ex, r) => {
      const req = JSON.parse(ex.body);
      return r.status === 200 && req.granularity === 'daily'
        ? editJson(r, (b) => ({
            ...b,
            rows: b.rows.filter((x: { date: string }) => x.date !== req.date_range.end_date),
          }))
        : r;
    }),
  ],
  [
    '200 for an unknown order_id',
    'reports.order_id',
    onPath('/reports', (ex, r) =>
      r.status === 404 && JSON.parse(ex.body).order_id
        ? { status: 200, headers: r.headers, body: '{"rows":[]}' }
        : r,
    ),
  ],
  [
    'the /go link rewritten in the tag, the rewritten creative echoed',
    'orders.click_link_kept',
    onPath('/orders', (ex, r) => (r.status < 300 ? editJson(r, (b) => echoCreatives(ex, b, rewriteGo)) : r)),
  ],
  [
    'never-activated draft lines report 1 200 impressions a day',
    'reports.drafts_deliver_nothing',
    onPath('/reports', (ex, r) => {
      if (r.status !== 200) return r;
      const req = JSON.parse(ex.body);
      // Consistent with itself (total = Σ daily, a one-day total = its daily row), so only the
      // draft rule can see it.
      const days = daysIn(req.date_range.start_date, req.date_range.end_date);
      const n = req.granularity === 'daily' ? 1 : days;
      return editJson(r, (b) => ({
        ...b,
        rows: b.rows.map((x: object) => ({ ...x, impressions: 1200 * n, clicks: 3 * n })),
      }));
    }),
  ],
  [
    'error body without code',
    'errors.body_shape',
    { response: (_e, r) => (r.status === 404 ? editJson(r, (b) => ({ error: b.message })) : r) },
  ],
];

describe('adserver-check against a server without forecasting', () => {
  it('never calls /forecast when capabilities.forecast is false, whatever it would answer', async () => {
    const noForecast = await testServer({ tls, account: { forecast: false } });
    const paths: string[] = [];
    // A degraded server whose /forecast answers garbage: the checker must not go there at all.
    const degraded = await brokenServer(noForecast.url, tls, {
      request: (ex) => {
        paths.push(new URL(ex.path, 'https://x').pathname);
        return isPath(ex, '/forecast')
          ? { status: 500, headers: { 'content-type': 'text/html' }, body: '<h1>oops' }
          : ex;
      },
    });
    try {
      const limited = (await noForecast.issueKey({ scopes: ['inventory:read'] })).key;
      const rep = await runChecks({
        baseUrl: degraded.url,
        apiKey: noForecast.apiKey,
        ca: tls.cert,
        allowWrites: true,
        limitedKey: limited,
      });
      expect(failed(rep)).toEqual([]);
      expect(rep.ok).toBe(true);
      expect(paths.filter((p) => p.endsWith('/forecast'))).toEqual([]);
      expect(paths.some((p) => p.endsWith('/reports'))).toBe(true);
      const forecastChecks = rep.results.filter((r) => r.id.startsWith('forecast.'));
      expect(forecastChecks.length).toBeGreaterThanOrEqual(7);
      expect(forecastChecks.every((r) => r.status === 'skip')).toBe(true);
      expect(rep.results.find((r) => r.id === 'auth.missing_scope')?.status).toBe('skip');
      // The malformed-body check still runs, on /reports.
      expect(rep.results.find((r) => r.id === 'errors.bad_request')?.status).toBe('pass');
    } finally {
      await degraded.close();
      await noForecast.close();
    }
  }, 180_000); // boots a second store: slow on a loaded two-core machine
});

describe('adserver-check orders rule 6 where a server shows what it stored', () => {
  it('passes a server that echoes the creatives exactly as sent', async () => {
    const faithful = await brokenServer(
      ref.url,
      tls,
      onPath('/orders', (ex, r) => (r.status < 300 ? editJson(r, (b) => echoCreatives(ex, b, (x) => x)) : r)),
    );
    try {
      const rep = await check(faithful.url);
      const kept = rep.results.find((r) => r.id === 'orders.click_link_kept');
      expect(kept).toMatchObject({ status: 'pass' });
      expect(kept?.detail).toMatch(/^\d+ echoed \/go\/ link\(s\) kept exactly as sent$/);
      expect(failed(rep)).toEqual([]);
    } finally {
      await faithful.close();
    }
  });
});

describe('adserver-check rate-limit probe', () => {
  it('sees 429 with Retry-After in seconds; a 429 without it fails limits.rate_limited', async () => {
    const small = await testServer({ tls, rateLimit: { max: 120, windowMs: 60_000 } });
    const probe = (baseUrl: string, apiKey: string) =>
      runChecks({ baseUrl, apiKey, ca: tls.cert, rateLimitProbe: 300 });
    const noRetryAfter = await brokenServer(small.url, tls, {
      response: (_e, r) => {
        if (r.status !== 429) return r;
        const { 'retry-after': _gone, ...headers } = r.headers;
        return { ...r, headers };
      },
    });
    try {
      const good = await probe(small.url, small.apiKey);
      expect(good.results.find((r) => r.id === 'limits.rate_limited')).toMatchObject({ status: 'pass' });
      const bad = await probe(noRetryAfter.url, (await small.issueKey()).key);
      expect(failed(bad)).toContain('limits.rate_limited');
    } finally {
      await noRetryAfter.close();
      await small.close();
    }
  }, 180_000); // boots a second store: slow on a loaded two-core machine
});

describe('adserver-check against deliberately broken servers', () => {
  for (const [name, checkId, breakage] of VARIANTS) {
    it(`fails "${checkId}" for: ${name}`, async () => {
      const broken = await brokenServer(ref.url, tls, breakage);
      try {
        const rep = await check(broken.url);
        expect(failed(rep)).toContain(checkId);
        // An optional check (order_id, agreed per publisher) informs without failing the run.
        expect(rep.ok).toBe(!rep.results.find((r) => r.id === checkId)!.required);
      } finally {
        await broken.close();
      }
    });
  }
});

describe('adserver-check command', () => {
  const bin = path.resolve(import.meta.dirname, '../bin/adserver-check.js');
  const caFile = path.join(mkdtempSync(path.join(tmpdir(), 'adk-ca-')), 'ca.pem');
  writeFileSync(caFile, tls.cert);
  const run = (args: string[], env: Record<string, string>) =>
    promisify(execFile)(process.execPath, [bin, ...args], { env: { ...process.env, ...env } }).then(
      (r) => ({ code: 0, ...r }),
      (e: { code: number; stdout: string; stderr: string }) => e,
    );

  it('exits 0 with a JSON report for a conforming server, key from the environment', async () => {
    const r = await run([ref.url, '--json', '--ca', caFile], { ADSERVER_API_KEY: ref.apiKey });
    expect(r.code).toBe(0);
    const rep = JSON.parse(r.stdout) as CheckReport;
    expect(rep.ok).toBe(true);
    expect(r.stdout).not.toContain(ref.apiKey);
  });

  it('exits non-zero naming the failed check in the human report', async () => {
    const broken = await brokenServer(ref.url, tls, VARIANTS[0]![2]);
    try {
      const r = await run(['--base-url', broken.url, '--ca', caFile], { ADSERVER_API_KEY: ref.apiKey });
      expect(r.code).toBe(1);
      expect(r.stdout).toMatch(/FAIL {2}health\.fields — .*UTC\+2/);
      expect(r.stdout).toContain('see spec: Account context');
      expect(r.stdout).toContain('DOES NOT CONFORM');
    } finally {
      await broken.close();
    }
  });
});

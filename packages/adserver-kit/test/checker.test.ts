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

const healthCapability = (cap: string, value: boolean): Breakage =>
  onPath('/health', (_e, r) =>
    editJson(r, (b) => ({ ...b, capabilities: { ...b.capabilities, [cap]: value } })),
  );

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
  [
    '403 instead of 401 for a wrong key',
    'auth.wrong_key',
    { response: (_e, r) => (r.status === 401 ? { ...r, status: 403 } : r) },
  ],
  [
    'cursor that never ends',
    'inventory.walk',
    onPath('/inventory', (_e, r) =>
      r.status === 200 ? editJson(r, (b) => ({ ...b, next_cursor: 'again' })) : r,
    ),
  ],
  [
    'size not WIDTHxHEIGHT',
    'inventory.walk',
    onPath('/inventory', (_e, r) =>
      r.status === 200
        ? editJson(r, (b) => ({ ...b, data: b.data.map((d: object) => ({ ...d, sizes: ['300*250'] })) }))
        : r,
    ),
  ],
  [
    'duplicate inventory ids',
    'inventory.unique_ids',
    onPath('/inventory', (_e, r) =>
      r.status === 200 ? editJson(r, (b) => ({ ...b, data: [...b.data, ...b.data] })) : r,
    ),
  ],
  [
    'available > forecasted',
    'forecast.invariants',
    onPath('/forecast', (_e, r) =>
      r.status === 200
        ? editJson(r, (b) => ({ ...b, available_impressions: b.forecasted_impressions + 1 }))
        : r,
    ),
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
  ['forecast: false but numbers served', 'forecast.capability', healthCapability('forecast', false)],
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
    onPath('/orders', (_e, r) => (r.status === 201 ? editJson(r, (b) => ({ ...b, status: 'ACTIVE' })) : r)),
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
    'error body without code',
    'errors.body_shape',
    { response: (_e, r) => (r.status === 404 ? editJson(r, (b) => ({ error: b.message })) : r) },
  ],
];

describe('adserver-check against a server without forecasting', () => {
  it('passes when capabilities.forecast is false and /forecast answers 501', async () => {
    const noForecast = await testServer({ tls, account: { forecast: false } });
    try {
      const rep = await runChecks({
        baseUrl: noForecast.url,
        apiKey: noForecast.apiKey,
        ca: tls.cert,
        allowWrites: true,
      });
      expect(failed(rep)).toEqual([]);
      expect(rep.results.find((r) => r.id === 'forecast.capability')?.status).toBe('pass');
    } finally {
      await noForecast.close();
    }
  });
});

describe('adserver-check against deliberately broken servers', () => {
  for (const [name, checkId, breakage] of VARIANTS) {
    it(`fails "${checkId}" for: ${name}`, async () => {
      const broken = await brokenServer(ref.url, tls, breakage);
      try {
        const rep = await check(broken.url);
        expect(rep.ok).toBe(false);
        expect(failed(rep)).toContain(checkId);
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

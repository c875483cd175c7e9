import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { OutboundClient } from '../src/lib/outbound.ts';
import { Sealer } from '../src/lib/seal.ts';
import { AdserverService } from '../src/modules/adserver/service.ts';
import { admin, type ReferenceServer, startServers, stopServers } from './adserver-fixture.ts';
import { type TestApp, testApp } from './helpers.ts';
import { json, type LoopbackServer, loopbackServer } from './hostile-server.ts';

const KEY = 'rsk_hostileTestKey_0123456789abcdefABCDEF';
const HEALTH = {
  account_id: 'acc-1',
  account_name: 'Hostile Ltd',
  timezone: 'Europe/Malta',
  currency: 'EUR',
  capabilities: { forecast: true, reporting: true, draft_booking: true },
};

let t: TestApp & { admin: string };
let ref: ReferenceServer;
let hostile: LoopbackServer;

beforeAll(async () => {
  ({ t, ref, hostile } = await startServers());
});
afterAll(() => stopServers({ t, ref, hostile }));

/** Every stored text of the ad-server tables, to prove a key is nowhere in the database. */
async function storedText(): Promise<string> {
  const rows = await t.db.query<{ j: string }>(
    `SELECT row_to_json(c)::text AS j FROM adserver_connections c
     UNION ALL SELECT row_to_json(a)::text FROM audit_log a
     UNION ALL SELECT row_to_json(s)::text FROM adserver_syncs s`,
  );
  return rows.map((r) => r.j).join('\n');
}

let seq = 0;
const connect = (base_url: string, api_key = KEY) =>
  admin(t, 'POST', '/adserver/connections', { publisher: `pub-${++seq}`, base_url, api_key });

describe('connections against the reference ad server', () => {
  it('connects: /health fills the record, the inventory probe confirms inventory_read, the key is never shown', async () => {
    const res = await connect(ref.url, ref.apiKey);
    expect(res.status).toBe(201);
    const c = res.body.data;
    expect(c).toMatchObject({
      environment: 'production',
      base_url: ref.url,
      account_id: ref.accountId,
      timezone: 'Europe/Malta',
      currency: 'EUR',
      forecast_declared: true,
      status: 'connected',
      state: 'connected',
      last_error: null,
      capabilities: {
        inventory_read: 'confirmed',
        forecast: 'not_verified',
        reporting: 'not_verified',
        draft_booking: 'not_verified',
      },
    });
    expect(c.id).toMatch(/^asc_/);
    expect(res.raw).not.toContain(ref.apiKey);
    expect(JSON.stringify(c)).not.toMatch(/api_key/);
    const got = await admin(t, 'GET', `/adserver/connections/${c.id}`);
    expect(got.body.data).toEqual(c);
    expect(await storedText()).not.toContain(ref.apiKey);
    const [row] = await t.db.query<{ api_key_sealed: string }>(
      'SELECT api_key_sealed FROM adserver_connections WHERE id = $1',
      [c.id],
    );
    expect(row!.api_key_sealed).toMatch(/^gcm1:1:/);
    // The probe's two calls are counted by peer kind and outcome; no URL or key in the series.
    const metrics = (await t.app.inject('/metrics')).body;
    expect(metrics).toMatch(
      /podium_outbound_request_duration_seconds_count\{target="adserver",outcome="ok"\} [1-9]/,
    );
    expect(metrics).not.toContain(ref.apiKey);
    expect(metrics).not.toContain('127.0.0.1');
  });

  it('a second production connection for the publisher is a conflict; a sandbox is fine', async () => {
    const body = { publisher: 'dup-pub', base_url: ref.url, api_key: ref.apiKey };
    expect((await admin(t, 'POST', '/adserver/connections', body)).status).toBe(201);
    const again = await admin(t, 'POST', '/adserver/connections', body);
    expect(again.status).toBe(409);
    expect(again.body.details.field).toBe('environment');
    const sandbox = await admin(t, 'POST', '/adserver/connections', { ...body, environment: 'sandbox' });
    expect(sandbox.status).toBe(201);
    const list = await admin(t, 'GET', '/adserver/connections?publisher=dup-pub');
    expect(list.body.data.map((c: { environment: string }) => c.environment)).toEqual([
      'production',
      'sandbox',
    ]);
  });

  it('a revoked key: 401 on a later call puts the connection in error; a new key and Re-verify bring it back', async () => {
    const issued = await ref.issueKey({ label: 'rotating' });
    const c = (await connect(ref.url, issued.key)).body.data;
    expect(c.status).toBe('connected');
    await ref.revokeKey(issued.id);
    const sync = await admin(t, 'POST', `/adserver/connections/${c.id}/inventory/sync`);
    expect(sync.body.data.ok).toBe(false);
    let now = (await admin(t, 'GET', `/adserver/connections/${c.id}`)).body.data;
    expect(now).toMatchObject({ status: 'error', state: 'auth_error' });
    expect(now.last_error).toContain('401');
    const fresh = await ref.issueKey({ label: 'fresh' });
    const patched = await admin(t, 'PATCH', `/adserver/connections/${c.id}`, { api_key: fresh.key });
    expect(patched.body.data).toMatchObject({ status: 'connected', state: 'connected', last_error: null });
    now = (await admin(t, 'POST', `/adserver/connections/${c.id}/verify`)).body.data;
    expect(now.status).toBe('connected');
    expect(await storedText()).not.toContain(fresh.key);
  });

  it('a key without inventory:read connects but a 403 on the probe sets status error (forbidden)', async () => {
    const limited = await ref.issueKey({ scopes: ['forecast'] });
    const c = (await connect(ref.url, limited.key)).body.data;
    expect(c).toMatchObject({ status: 'error', state: 'forbidden' });
    expect(c.capabilities.inventory_read).toBe('not_verified');
  });

  it('admin scopes: a read-only token cannot create or verify', async () => {
    const { token } = await t.app.services.access.createAdminToken('ro', ['adserver:read'], null);
    const res = await t.app.inject({
      method: 'POST',
      url: '/api/admin/v1/adserver/connections',
      headers: { authorization: `Bearer ${token}` },
      payload: { publisher: 'x', base_url: ref.url, api_key: ref.apiKey },
    });
    expect(res.statusCode).toBe(403);
    expect(
      (await t.app.inject({ method: 'GET', url: '/api/admin/v1/adserver/connections' })).statusCode,
    ).toBe(401);
  });

  it('writes are audited without their values', async () => {
    const rows = await t.db.query<{ action: string; fields: string[] }>(
      `SELECT action, fields FROM audit_log WHERE action LIKE '%adserver/connections'`,
    );
    expect(rows.length).toBeGreaterThan(0);
    expect(rows[0]!.fields).toContain('api_key');
  });
});

describe('verify probe: the /health failure table against a hostile server', () => {
  /** A hostile server setup: every request answered with `status` and the JSON `body`. */
  const answers = (status: number, body: unknown, headers?: Record<string, string>) => (h: LoopbackServer) =>
    h.handle((_q, r) => json(r, status, body, headers));
  /** A healthy /health answer but for one capability. */
  const capability = (flags: Record<string, unknown>) => ({
    ...HEALTH,
    capabilities: { ...HEALTH.capabilities, ...flags },
  });
  const cases: [string, (h: LoopbackServer) => void, string][] = [
    ['401', answers(401, { code: 'unauthorized', message: 'no' }), 'auth_error'],
    ['403', answers(403, { code: 'forbidden', message: 'no' }), 'forbidden'],
    ['400', answers(400, { code: 'bad_request', message: 'x' }), 'unreachable'],
    ['404', answers(404, { code: 'not_found', message: 'x' }), 'unreachable'],
    ['418', answers(418, {}), 'unreachable'],
    ['429', answers(429, { code: 'rate_limited', message: 'x' }, { 'retry-after': '1' }), 'unreachable'],
    ['500', answers(500, { code: 'server_error', message: 'x' }), 'unreachable'],
    ['503', answers(503, 'down'), 'unreachable'],
    ['201 instead of 200', answers(201, HEALTH), 'unreachable'],
    [
      'redirect to metadata',
      (h) =>
        h.handle((_q, r) => {
          r.writeHead(302, { location: 'http://169.254.169.254/latest/meta-data/' });
          r.end();
        }),
      'unreachable',
    ],
    ['no answer (timeout)', (h) => h.handle(() => {}), 'unreachable'],
    ['invalid JSON', answers(200, '{"account_id":'), 'invalid_response'],
    ['empty account_id', answers(200, { ...HEALTH, account_id: '' }), 'invalid_response'],
    ['timezone UTC+2', answers(200, { ...HEALTH, timezone: 'UTC+2' }), 'invalid_response'],
    ['timezone +02:00', answers(200, { ...HEALTH, timezone: '+02:00' }), 'invalid_response'],
    ['timezone Mars/Base', answers(200, { ...HEALTH, timezone: 'Mars/Base' }), 'invalid_response'],
    ['currency EURO', answers(200, { ...HEALTH, currency: 'EURO' }), 'invalid_response'],
    ['currency eur', answers(200, { ...HEALTH, currency: 'eur' }), 'invalid_response'],
    ['string flag', answers(200, capability({ forecast: 'true' })), 'invalid_response'],
    ['reporting false', answers(200, capability({ reporting: false })), 'invalid_response'],
    ['draft_booking false', answers(200, capability({ draft_booking: false })), 'invalid_response'],
    ['array body', answers(200, [HEALTH]), 'invalid_response'],
  ];

  it.each(cases.map(([name, setup, state]) => [`${name} → ${state}`, setup, state] as const))(
    '%s',
    async (_name, setup, state) => {
      setup(hostile);
      const res = await connect(`${hostile.origin}/api/v1`);
      expect(res.status).toBe(201);
      expect(res.body.data).toMatchObject({ state, status: 'error' });
      expect(typeof res.body.data.last_error).toBe('string');
      expect(res.raw).not.toContain(KEY);
    },
  );

  it('a host that does not resolve to a public address, and a refused port, are unreachable', async () => {
    const blocked = await connect('http://10.1.2.3/api/v1');
    expect(blocked.status).toBe(422);
    const byName = await connect(`http://private.test:${hostile.port}/api/v1`);
    expect(byName.body.data).toMatchObject({ state: 'unreachable', status: 'error' });
    const closed = await loopbackServer();
    const port = closed.port;
    await closed.close();
    expect((await connect(`http://127.0.0.1:${port}/api/v1`)).body.data.state).toBe('unreachable');
  });

  it('health fine, inventory probe failing: connected with inventory_read not_verified (no retry)', async () => {
    hostile.handle((req, r) =>
      req.url?.includes('/inventory')
        ? json(r, 500, { code: 'server_error', message: 'x' })
        : json(r, 200, HEALTH),
    );
    const before = hostile.hits.length;
    const c = (await connect(`${hostile.origin}/api/v1?tenant=7`)).body.data;
    expect(c).toMatchObject({ status: 'connected', capabilities: { inventory_read: 'not_verified' } });
    expect(hostile.hits.slice(before).map((h) => h.url)).toEqual([
      '/api/v1/health?tenant=7',
      '/api/v1/inventory?tenant=7&limit=1',
    ]);
  });

  it('a server echoing the key back: redacted in last_error, responses and the database', async () => {
    hostile.handle((req, r) =>
      json(
        r,
        401,
        { code: 'unauthorized', message: `key ${req.headers.authorization} is wrong: ${KEY}` },
        { 'x-echo': KEY },
      ),
    );
    const res = await connect(`${hostile.origin}/api/v1`);
    expect(res.body.data.state).toBe('auth_error');
    expect(res.body.data.last_error).toContain('[redacted]');
    expect(res.raw).not.toContain(KEY);
    expect(await storedText()).not.toContain(KEY);
  });
});

describe('https and key rotation', () => {
  it('a production app refuses a base URL that is not https://', async () => {
    const prod = await testApp({ secretKeys: [{ version: 1, key: randomBytes(32) }] });
    const { token } = await prod.app.services.access.createAdminToken('a', ['adserver:write'], null);
    const res = await prod.app.inject({
      method: 'POST',
      url: '/api/admin/v1/adserver/connections',
      headers: { authorization: `Bearer ${token}` },
      payload: { publisher: 'p', base_url: 'http://ads.example.com/api/v1', api_key: KEY },
    });
    expect(res.statusCode).toBe(422);
    expect(JSON.parse(res.body)).toMatchObject({ code: 'validation_failed', details: { field: 'base_url' } });
    await prod.close();
  });

  it('rotate-keys re-seals every key with the new current key; the old key can then be dropped', async () => {
    const v1 = { version: 1, key: randomBytes(32) };
    const v2 = { version: 2, key: randomBytes(32) };
    const http = new OutboundClient({ testOnly: { allowHttp: true, allowAddresses: ['127.0.0.1'] } });
    const old = new AdserverService(t.db, new Sealer({ keys: [v1], dataDir: '/nonexistent' }), http);
    const c = await old.connections.create({ publisher: 'rotating', base_url: ref.url, api_key: ref.apiKey });
    const both = new AdserverService(t.db, new Sealer({ keys: [v2, v1], dataDir: '/nonexistent' }), http);
    const r = await both.connections.rotateKeys();
    expect(r.resealed).toBeGreaterThanOrEqual(1);
    const again = await both.connections.rotateKeys();
    expect(again.resealed).toBe(0);
    expect(again.unreadable).not.toContain(c.id);
    const onlyNew = new AdserverService(t.db, new Sealer({ keys: [v2], dataDir: '/nonexistent' }), http);
    expect((await onlyNew.connections.verify(c.id)).status).toBe('connected');
    await http.close();
  });
});

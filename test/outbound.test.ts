import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig, withLoopbackAllowance } from '../src/config.ts';
import { OutboundClient, type OutboundOptions, outboundOptionsFrom } from '../src/lib/outbound.ts';
import type { Resolver } from '../src/lib/ssrf.ts';
import { drip, json, type LoopbackServer, loopbackServer, rawServer } from './hostile-server.ts';

const KEY = 'rsk_TestOnlyKey_9f8e7d6c5b4a39281706f5e4d3c2b1a0';
const FAST: OutboundOptions = { connectTimeoutMs: 300, totalTimeoutMs: 800, maxBodyBytes: 1024 * 1024 };
const resolverOf =
  (table: Record<string, string[]>): Resolver =>
  async (host) =>
    (table[host] ?? []).map((address) => ({ address, family: address.includes(':') ? 6 : 4 }));

let srv: LoopbackServer;
let trusted: OutboundClient;

beforeAll(async () => {
  srv = await loopbackServer();
  trusted = new OutboundClient({ ...FAST, testOnly: { allowHttp: true, allowAddresses: ['127.0.0.1'] } });
});
afterAll(async () => {
  await trusted.close();
  await srv.close();
});

describe('outbound client: SSRF guard on loopback', () => {
  // Every host below names the loopback server: a URL on it reaches the server if the guard lets it through.
  const LOOPBACK_NOTATIONS = [
    '127.0.0.1',
    '127.0.0.2',
    '2130706433',
    '0x7f.1',
    '0x7f000001',
    '017700000001',
    '0177.0.0.1',
    '127.1',
    '127.000.000.001',
    '127.0.0.1.',
    '0.0.0.0',
    '0',
    '[::]',
    '[::1]',
    '[::ffff:127.0.0.1]',
    '[::ffff:7f00:1]',
    '[0:0:0:0:0:ffff:127.0.0.1]',
    '①②⑦.0.0.1',
  ];
  const literalTricks = () => LOOPBACK_NOTATIONS.map((host) => `http://${host}:${srv.port}/api/v1`);

  it('refuses every loopback notation before connecting (no allow-list)', async () => {
    const guarded = new OutboundClient({ ...FAST, testOnly: { allowHttp: true } });
    const before = srv.hits.length;
    for (const baseUrl of literalTricks()) {
      const o = await guarded.send({ method: 'GET', baseUrl, path: '/health', apiKey: KEY });
      expect(o.kind, baseUrl).toBe('blocked_address');
    }
    expect(srv.hits.length).toBe(before);
    await guarded.close();
  });

  it('refuses names that resolve to any non-public address, checked in the socket lookup', async () => {
    const resolver = resolverOf({
      'localhost.test': ['127.0.0.1'],
      'mixed.test': ['93.184.216.34', '127.0.0.1'],
      'v6loop.test': ['::1'],
      'mapped.test': ['::ffff:127.0.0.1'],
      'nat64.test': ['64:ff9b::7f00:1'],
      'sixtofour.test': ['2002:7f00:1::1'],
      'teredo.test': ['2001:0:4136:e378:8000:63bf:3fff:fdd2'],
      'metadata.test': ['169.254.169.254'],
      'cgnat.test': ['100.100.100.200'],
      'imds6.test': ['fd00:ec2::254'],
      'private.test': ['10.0.0.8'],
      'zero.test': ['0.0.0.0'],
    });
    const guarded = new OutboundClient({ ...FAST, testOnly: { allowHttp: true, resolver } });
    const before = srv.hits.length;
    for (const host of [
      'localhost.test',
      'mixed.test',
      'v6loop.test',
      'mapped.test',
      'nat64.test',
      'sixtofour.test',
      'teredo.test',
      'metadata.test',
      'cgnat.test',
      'imds6.test',
      'private.test',
      'zero.test',
    ]) {
      const o = await guarded.send({
        method: 'GET',
        baseUrl: `http://${host}:${srv.port}/api/v1`,
        path: '/health',
      });
      expect(o.kind, host).toBe('blocked_address');
      expect('message' in o && o.message).toContain(host);
    }
    expect(srv.hits.length).toBe(before);
    await guarded.close();
  });

  it('real localhost through the system resolver is refused too', async () => {
    const guarded = new OutboundClient({ ...FAST, testOnly: { allowHttp: true } });
    const o = await guarded.send({ method: 'GET', baseUrl: `http://localhost:${srv.port}`, path: '/health' });
    expect(o.kind).toBe('blocked_address');
    await guarded.close();
  });

  it('DNS rebinding: each connection is checked on the address it resolves to at connect time', async () => {
    const other = await loopbackServer('127.0.0.2');
    let calls = 0;
    // First answer: the allowed fixture address; every later one: an address that is not allowed.
    const resolver: Resolver = async () => [
      { address: calls++ === 0 ? '127.0.0.1' : '127.0.0.2', family: 4 },
    ];
    const opts = { ...FAST, testOnly: { allowHttp: true, allowAddresses: ['127.0.0.1'], resolver } };
    const first = new OutboundClient(opts);
    srv.handle((_q, res) => json(res, 200, { ok: true }));
    expect(
      (await first.send({ method: 'GET', baseUrl: `http://rebind.test:${srv.port}`, path: '/x' })).kind,
    ).toBe('ok');
    await first.close();
    const second = new OutboundClient(opts);
    const o = await second.send({ method: 'GET', baseUrl: `http://rebind.test:${other.port}`, path: '/x' });
    expect(o.kind).toBe('blocked_address');
    expect(other.hits).toHaveLength(0);
    await second.close();
    await other.close();
  });

  it('https only unless the test-only switch is on; no credentials in the URL', async () => {
    const prod = new OutboundClient(FAST);
    for (const baseUrl of [
      `http://example.com/api/v1`,
      'ftp://example.com/',
      'not a url',
      'https://user:pw@example.com/',
    ])
      expect((await prod.send({ method: 'GET', baseUrl, path: '/health' })).kind).toBe('invalid_url');
    expect(
      (await prod.send({ method: 'GET', baseUrl: 'https://169.254.169.254/latest', path: '/health' })).kind,
    ).toBe('blocked_address');
    await prod.close();
  });
});

describe('outbound client: hostile answers', () => {
  const base = () => `${srv.origin}/api/v1?tenant=a%20b`;

  it('puts the endpoint path before the base query string and sends the key only in Authorization', async () => {
    srv.handle((_q, res) => json(res, 200, { data: [] }));
    const o = await trusted.send({
      method: 'GET',
      baseUrl: base(),
      path: '/inventory',
      query: { limit: '1' },
      apiKey: KEY,
    });
    expect(o.kind).toBe('ok');
    const hit = srv.hits.at(-1)!;
    expect(hit.url).toBe('/api/v1/inventory?tenant=a+b&limit=1');
    expect(hit.headers.authorization).toBe(`Bearer ${KEY}`);
    expect(hit.url).not.toContain(KEY);
  });

  it('does not follow redirects, to a metadata address or anywhere', async () => {
    for (const status of [301, 302, 303, 307, 308]) {
      srv.handle((_q, res) => {
        res.writeHead(status, { location: 'http://169.254.169.254/latest/meta-data/' });
        res.end();
      });
      const before = srv.hits.length;
      const o = await trusted.send({ method: 'GET', baseUrl: base(), path: '/health', apiKey: KEY });
      expect(o).toMatchObject({ kind: 'redirect', status });
      expect(srv.hits.length).toBe(before + 1);
    }
  });

  it('classifies invalid JSON, a 2xx without a body, and error statuses with their body', async () => {
    srv.handle((_q, res) => json(res, 200, '{"account_id": "a",'));
    expect((await trusted.send({ method: 'GET', baseUrl: base(), path: '/health' })).kind).toBe(
      'invalid_json',
    );
    srv.handle((_q, res) => json(res, 200, { data: 'x'.repeat(50_000) }));
    const long = await trusted.send({ method: 'GET', baseUrl: base(), path: '/inventory', apiKey: KEY });
    expect(long.kind === 'ok' && (long.json as { data: string }).data).toHaveLength(50_000);
    srv.handle((_q, res) => res.writeHead(204).end());
    expect((await trusted.send({ method: 'GET', baseUrl: base(), path: '/health' })).kind).toBe(
      'invalid_json',
    );
    srv.handle((_q, res) => json(res, 404, { code: 'inventory_not_found', message: 'no such slot' }));
    const o = await trusted.send({ method: 'GET', baseUrl: base(), path: '/inventory' });
    expect(o).toMatchObject({
      kind: 'http_status',
      status: 404,
      message: 'GET /inventory: HTTP 404 inventory_not_found: no such slot',
    });
  });

  it('parses a JSON answer far longer than an error message, still scrubbing an echoed key', async () => {
    const data = Array.from({ length: 40 }, (_, i) => ({ inventory_id: `slot-${i}`, name: `Slot ${i}` }));
    srv.handle((_q, res) => json(res, 200, { data, echo: KEY }));
    const o = await trusted.send({ method: 'GET', baseUrl: base(), path: '/inventory', apiKey: KEY });
    expect(o.kind).toBe('ok');
    expect(o).toMatchObject({ json: { data, echo: '[redacted]' } });
  });

  it('caps the answer size: a 50 MB body fails as too_large', async () => {
    srv.handle((_q, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      const chunk = Buffer.alloc(1024 * 1024, 0x20);
      let sent = 0;
      const pump = () => {
        while (sent < 50 && !res.destroyed) {
          sent++;
          if (!res.write(chunk)) return res.once('drain', pump);
        }
        res.end();
      };
      res.on('error', () => {});
      pump();
    });
    const o = await trusted.send({ method: 'GET', baseUrl: base(), path: '/inventory' });
    expect(o.kind).toBe('too_large');
    srv.handle((_q, res) => {
      res.writeHead(200, { 'content-type': 'application/json', 'content-length': String(50 * 1024 * 1024) });
      res.on('error', () => {});
      res.write('[');
    });
    expect((await trusted.send({ method: 'GET', baseUrl: base(), path: '/inventory' })).kind).toBe(
      'too_large',
    );
  });

  it('times out on headers dripped past the total budget, and on a body dripped past it', async () => {
    const headers = await rawServer((s) =>
      drip(s, 'HTTP/1.1 200 OK\r\ncontent-type: application/json\r\n', 60),
    );
    expect(
      (await trusted.send({ method: 'GET', baseUrl: `http://127.0.0.1:${headers.port}`, path: '/health' }))
        .kind,
    ).toBe('timeout');
    await headers.close();
    const body = await rawServer((s) => {
      s.write('HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: 100000\r\n\r\n');
      drip(s, `{"data":[${' '.repeat(99_000)}]}`, 50);
    });
    expect(
      (await trusted.send({ method: 'GET', baseUrl: `http://127.0.0.1:${body.port}`, path: '/health' })).kind,
    ).toBe('timeout');
    await body.close();
  });

  it('times out on a TLS handshake that never comes (connect timeout), and reports refused connections', async () => {
    const hole = await rawServer(() => {});
    const o = await trusted.send({
      method: 'GET',
      baseUrl: `https://127.0.0.1:${hole.port}`,
      path: '/health',
    });
    expect(o).toMatchObject({ kind: 'timeout', message: 'GET /health: no connection within 300 ms' });
    await hole.close();
    const closed = await rawServer(() => {});
    const port = closed.port;
    await closed.close();
    expect(
      (await trusted.send({ method: 'GET', baseUrl: `http://127.0.0.1:${port}`, path: '/health' })).kind,
    ).toBe('refused');
  });

  it('ignores proxy environment variables', async () => {
    const proxy = await loopbackServer();
    const saved = { ...process.env };
    Object.assign(process.env, {
      HTTP_PROXY: proxy.origin,
      HTTPS_PROXY: proxy.origin,
      ALL_PROXY: proxy.origin,
      http_proxy: proxy.origin,
    });
    try {
      srv.handle((_q, res) => json(res, 200, {}));
      const client = new OutboundClient({
        ...FAST,
        testOnly: { allowHttp: true, allowAddresses: ['127.0.0.1'] },
      });
      expect((await client.send({ method: 'GET', baseUrl: base(), path: '/health' })).kind).toBe('ok');
      await client.close();
      expect(proxy.hits).toHaveLength(0);
    } finally {
      for (const k of ['HTTP_PROXY', 'HTTPS_PROXY', 'ALL_PROXY', 'http_proxy']) delete process.env[k];
      Object.assign(process.env, saved);
      await proxy.close();
    }
  });

  it('scrubs a key the server echoes back (body, headers, any encoding) from everything it reports', async () => {
    srv.handle((req, res) =>
      json(
        res,
        401,
        {
          code: 'unauthorized',
          message: `bad key ${req.headers.authorization} / ${encodeURIComponent(KEY)} / ${Buffer.from(KEY).toString('base64')}`,
          details: { echoed: KEY },
        },
        { 'www-authenticate': `Bearer realm="${KEY}"`, 'x-echo': String(req.headers.authorization) },
      ),
    );
    const o = await trusted.send({ method: 'GET', baseUrl: base(), path: '/health', apiKey: KEY });
    expect(o).toMatchObject({ kind: 'http_status', status: 401 });
    const all = JSON.stringify(o);
    expect(all).not.toContain(KEY);
    expect(all).not.toContain(encodeURIComponent(KEY));
    expect(all).not.toContain(Buffer.from(KEY).toString('base64').replace(/=+$/, ''));
    expect(all).toContain('[redacted]');
    srv.handle((_q, res) => {
      res.writeHead(302, { location: `https://evil.example/?k=${KEY}` });
      res.end();
    });
    expect(
      JSON.stringify(await trusted.send({ method: 'GET', baseUrl: base(), path: '/health', apiKey: KEY })),
    ).not.toContain(KEY);
  });

  it('stops when the caller cancels', async () => {
    srv.handle(() => {});
    const ac = new AbortController();
    const pending = trusted.send({ method: 'GET', baseUrl: base(), path: '/health', signal: ac.signal });
    setTimeout(() => ac.abort(), 50);
    expect((await pending).kind).toBe('aborted');
  });
});

describe('outbound client: the source address', () => {
  it('binds every connection to PODIUM_OUTBOUND_ADDRESS when set, and to the system choice otherwise', async () => {
    const peers: string[] = [];
    const server = createServer((req, res) => {
      peers.push(req.socket.remoteAddress ?? '');
      res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as AddressInfo;
    const testOnly = { allowHttp: true, allowAddresses: ['127.0.0.1'] };
    const config = loadConfig({ PODIUM_OUTBOUND_ADDRESS: '127.0.0.2' });
    const pinned = new OutboundClient({ ...FAST, ...outboundOptionsFrom(config, testOnly) });
    const free = new OutboundClient({ ...FAST, testOnly });
    try {
      const baseUrl = `http://127.0.0.1:${port}/api/v1`;
      expect((await pinned.send({ method: 'GET', baseUrl, path: '/health' })).kind).toBe('ok');
      expect((await free.send({ method: 'GET', baseUrl, path: '/health' })).kind).toBe('ok');
      expect(peers).toEqual(['127.0.0.2', '127.0.0.1']);
    } finally {
      await pinned.close();
      await free.close();
      await new Promise((resolve) => server.close(resolve));
    }
  });

  it('refuses a PODIUM_OUTBOUND_ADDRESS that is not an IP address', () => {
    expect(() => loadConfig({ PODIUM_OUTBOUND_ADDRESS: 'eth0' })).toThrow(/PODIUM_OUTBOUND_ADDRESS/);
    expect(loadConfig({ PODIUM_OUTBOUND_ADDRESS: '2001:db8::0001' }).outboundAddress).toBe('2001:db8::1');
  });
});

describe('outbound client: the local-only loopback allowance', () => {
  let other: LoopbackServer;
  beforeAll(async () => {
    other = await loopbackServer();
  });
  afterAll(() => other.close());
  const clientOf = (env: NodeJS.ProcessEnv) =>
    new OutboundClient({ ...FAST, ...outboundOptionsFrom(loadConfig(env)) });

  it('refuses loopback without it, accepts exactly the listed pair (plain http), refuses another port on the same address', async () => {
    srv.handle((_q, res) => json(res, 200, { ok: true }));
    other.handle((_q, res) => json(res, 200, { ok: true }));
    const none = clientOf({});
    const listed = clientOf({ PODIUM_OUTBOUND_LOOPBACK_ALLOW: `127.0.0.1:${srv.port}` });
    try {
      const hitsBefore = srv.hits.length + other.hits.length;
      const refused = await none.send({ method: 'GET', baseUrl: `${srv.origin}/api/v1`, path: '/health' });
      expect(refused.kind).toBe('invalid_url');
      const refusedTls = await none.send({
        method: 'GET',
        baseUrl: `https://127.0.0.1:${srv.port}/api/v1`,
        path: '/health',
      });
      expect(refusedTls).toMatchObject({ kind: 'blocked_address' });

      const ok = await listed.send({ method: 'GET', baseUrl: `${srv.origin}/api/v1`, path: '/health' });
      expect(ok).toMatchObject({ kind: 'ok', json: { ok: true } });
      expect(srv.hits.at(-1)!.url).toBe('/api/v1/health');

      const otherPort = await listed.send({
        method: 'GET',
        baseUrl: `${other.origin}/api/v1`,
        path: '/health',
      });
      expect(otherPort.kind).toBe('invalid_url');
      const otherPortTls = await listed.send({
        method: 'GET',
        baseUrl: `https://127.0.0.1:${other.port}/api/v1`,
        path: '/health',
      });
      expect(otherPortTls).toMatchObject({ kind: 'blocked_address' });
      expect((otherPortTls as { message: string }).message).toContain('PODIUM_OUTBOUND_LOOPBACK_ALLOW');
      // Plain http stays refused everywhere else, public addresses included.
      const publicHttp = await listed.send({
        method: 'GET',
        baseUrl: 'http://8.8.8.8/api/v1',
        path: '/health',
      });
      expect(publicHttp).toMatchObject({ kind: 'invalid_url', message: 'base_url must start with https://' });
      // Another notation of another loopback address, and names, stay refused.
      for (const host of ['127.0.0.2', 'localhost', '[::1]']) {
        const o = await listed.send({
          method: 'GET',
          baseUrl: `http://${host}:${srv.port}/api/v1`,
          path: '/x',
        });
        expect(o.kind, host).not.toBe('ok');
      }
      // Only the one allowed request arrived anywhere.
      expect(srv.hits.length + other.hits.length).toBe(hitsBefore + 1);
    } finally {
      await none.close();
      await listed.close();
    }
  });

  it('takes only exact loopback address:port pairs, and is refused under NODE_ENV=production', () => {
    expect(
      loadConfig({ PODIUM_OUTBOUND_LOOPBACK_ALLOW: '127.0.0.1:3201, [0:0:0:0:0:0:0:1]:3202' })
        .outboundLoopbackAllow,
    ).toEqual(['127.0.0.1:3201', '[::1]:3202']);
    expect(loadConfig({}).outboundLoopbackAllow).toEqual([]);
    for (const bad of [
      '10.0.0.1:80',
      'localhost:3201',
      '127.0.0.1',
      '127.0.0.1:0',
      '127.0.0.1:*',
      '8.8.8.8:53',
    ])
      expect(() => loadConfig({ PODIUM_OUTBOUND_LOOPBACK_ALLOW: bad }), bad).toThrow(
        /PODIUM_OUTBOUND_LOOPBACK_ALLOW/,
      );
    expect(() =>
      loadConfig({ NODE_ENV: 'production', PODIUM_OUTBOUND_LOOPBACK_ALLOW: '127.0.0.1:3201' }),
    ).toThrow(/PODIUM_OUTBOUND_LOOPBACK_ALLOW: refused when NODE_ENV=production/);
    const base = loadConfig({});
    expect(withLoopbackAllowance(base, ['127.0.0.1:3201'], {}).outboundLoopbackAllow).toEqual([
      '127.0.0.1:3201',
    ]);
    expect(() => withLoopbackAllowance(base, ['127.0.0.1:3201'], { NODE_ENV: 'production' })).toThrow(
      /NODE_ENV=production/,
    );
  });
});

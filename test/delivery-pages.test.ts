import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApp } from '../src/app.ts';
import { loadDemo } from '../src/modules/catalog/demo.ts';
import { httpRequest, type TestApp, testApp } from './helpers.ts';

const get = httpRequest;

// A list page is written from the stored buffers of its toplists straight to the socket (routes.ts,
// `send`): over real HTTP, its headers, length, log line and metrics must be those of any route.
describe('toplist list pages over HTTP', () => {
  let t: TestApp;
  let app: Awaited<ReturnType<typeof buildApp>>;
  let base: string;
  let auth: Record<string, string>;
  let siteId: number;
  const lines: Record<string, unknown>[] = [];

  beforeAll(async () => {
    t = await testApp();
    const demo = await loadDemo(t.app.services);
    siteId = demo.siteTokens[0]!.siteId;
    auth = { authorization: `Bearer ${demo.siteTokens[0]!.token}` };
    app = await buildApp({
      config: t.config,
      db: t.db,
      bus: t.bus,
      logger: { stream: { write: (l: string) => lines.push(JSON.parse(l)) } },
    });
    base = await app.listen({ host: '127.0.0.1', port: 0 });
  }, 120_000);

  afterAll(async () => {
    await app?.close();
    await t?.close();
  });

  it('answers a page with every header, the exact length, the log line and the metrics of a route', async () => {
    lines.length = 0;
    const a = await get(base, '/api/v1/toplists?per_page=15&page=1', auth);
    expect(a.status).toBe(200);
    expect(a.headers['content-length']).toBe(String(a.body.length));
    expect(a.headers['transfer-encoding']).toBeUndefined();
    expect(a.headers['content-type']).toBe('application/json; charset=utf-8');
    expect(a.headers['cache-control']).toBe('private');
    expect(a.headers.vary).toBe('Authorization, Accept-Encoding');
    expect(a.headers.etag).toMatch(/^"[A-Za-z0-9_-]{22}"$/);
    const body = JSON.parse(a.body.toString('utf8'));
    expect(body.data).toHaveLength(15);
    expect(body.meta).toMatchObject({ current_page: 1, per_page: 15 });
    // The same page through inject (no socket) is byte for byte the same.
    const injected = await app.inject({ url: '/api/v1/toplists?per_page=15&page=1', headers: auth });
    expect(injected.rawPayload.equals(a.body)).toBe(true);
    expect(injected.headers.etag).toBe(a.headers.etag);

    await new Promise((r) => setTimeout(r, 50));
    const line = lines.find((l) => l.msg === 'request' && l.reqId === a.headers['x-request-id']);
    expect(line).toMatchObject({ route: '/api/v1/toplists', status: 200, method: 'GET', siteId });
    const metrics = await app.services.metrics.registry.getSingleMetricAsString(
      'podium_http_request_duration_seconds',
    );
    expect(metrics).toMatch(
      /podium_http_request_duration_seconds_count\{[^}]*route="\/api\/v1\/toplists"[^}]*status="200"[^}]*\} [1-9]/,
    );
  });

  it('answers 304 to its ETag and HEAD with the length but no body', async () => {
    const path = '/api/v1/toplists?per_page=100&page=1';
    const a = await get(base, path, auth);
    expect(a.status).toBe(200);
    const again = await get(base, path, { ...auth, 'if-none-match': a.headers.etag as string });
    expect(again.status).toBe(304);
    expect(again.body.length).toBe(0);
    const head = await get(base, path, auth, 'HEAD');
    expect(head.status).toBe(200);
    expect(head.body.length).toBe(0);
    expect(head.headers['content-length']).toBe(String(a.body.length));
    expect(head.headers.etag).toBe(a.headers.etag);
  });
});

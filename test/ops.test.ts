import { Writable } from 'node:stream';
import type { FastifyInstance } from 'fastify';
import parsePrometheus from 'parse-prometheus-text-format';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApp } from '../src/app.ts';
import { loadConfig } from '../src/config.ts';
import { ChangeBus } from '../src/db/changes.ts';
import { loggerOptions } from '../src/lib/logger.ts';
import { type DemoTokens, loadDemo } from '../src/modules/catalog/demo.ts';
import { expectContract } from './contract.ts';
import { DB_KIND, type TestDb, testDb } from './helpers.ts';

describe(`operations: health, readiness, metrics, request logs (${DB_KIND})`, () => {
  let t: TestDb;
  let app: FastifyInstance;
  let bus: ChangeBus;
  let demo: DemoTokens;
  const lines: Record<string, unknown>[] = [];
  const raw: string[] = [];
  const METRICS_TOKEN = 'metrics-token-0123456789';

  beforeAll(async () => {
    t = await testDb();
    bus = new ChangeBus(t.db);
    const config = loadConfig(
      {},
      { publicUrl: 'https://podium.test', logLevel: 'info', metricsToken: METRICS_TOKEN },
    );
    const stream = new Writable({
      write(chunk, _enc, done) {
        for (const l of String(chunk).split('\n').filter(Boolean)) {
          raw.push(l);
          lines.push(JSON.parse(l));
        }
        done();
      },
    });
    app = await buildApp({ config, db: t.db, bus, logger: { ...loggerOptions(config), stream } });
    await app.ready();
    demo = await loadDemo(app.services);
  });
  afterAll(async () => {
    await app.close();
    await t.close();
  });

  it('/healthz and /readyz answer without a token and without data', async () => {
    expect((await app.inject('/healthz')).json()).toEqual({ status: 'ok' });
    const ready = await app.inject('/readyz');
    expect(ready.statusCode).toBe(200);
    expect(ready.json()).toEqual({
      status: 'ready',
      checks: { database: 'ok', click_buffer: 'ok', migrations: 'ok' },
    });
  });

  it('/readyz answers 503 naming the failing part', async () => {
    let full = true;
    app.services.readiness.register('click_buffer', async () =>
      full ? '12000 clicks pending (bound 10000)' : null,
    );
    const res = await app.inject('/readyz');
    expect(res.statusCode).toBe(503);
    expectContract('error', res.json());
    expect(res.json().message).toContain('click_buffer');
    expect(res.json().details.checks.database).toBe('ok');
    full = false;
    expect((await app.inject('/readyz')).statusCode).toBe(200);
  });

  it('/readyz names a database that refuses statements (PGlite after a failed flush)', async () => {
    const db = t.db;
    const healthy = db.diskProblem;
    expect(healthy()).toBeNull();
    db.diskProblem = () => 'The database could not flush a file to disk (EIO); it is refused until a restart';
    try {
      const res = await app.inject('/readyz');
      expect(res.statusCode).toBe(503);
      expectContract('error', res.json());
      expect(res.json().details.checks.database).toMatch(/could not flush a file to disk/);
    } finally {
      db.diskProblem = healthy;
    }
    expect((await app.inject('/readyz')).statusCode).toBe(200);
  });

  it('/metrics needs the configured token and counts requests per route pattern', async () => {
    const site = demo.siteTokens[0]!.token;
    await app.inject({
      url: '/api/v1/toplists/by-slug/best-casinos-se',
      headers: { authorization: `Bearer ${site}` },
    });
    await app.inject({
      url: '/api/v1/toplists/by-slug/best-casinos-fi',
      headers: { authorization: `Bearer ${site}` },
    });
    expect((await app.inject('/metrics')).statusCode).toBe(401);
    expect(
      (await app.inject({ url: '/metrics', headers: { authorization: 'Bearer wrong-token-123456' } }))
        .statusCode,
    ).toBe(401);
    const res = await app.inject({ url: '/metrics', headers: { authorization: `Bearer ${METRICS_TOKEN}` } });
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toContain('text/plain');
    const count =
      /podium_http_request_duration_seconds_count\{method="GET",route="\/api\/v1\/toplists\/by-slug\/:slug",status="200"\} (\d+)/.exec(
        res.body,
      );
    expect(Number(count?.[1])).toBe(2);
    expect(res.body).toMatch(/podium_edition_cache_hits_total \d+/);
    expect(res.body).not.toContain('best-casinos-se');
  });

  it('/metrics parses as Prometheus exposition text and its counters move with traffic', async () => {
    const scrape = async () =>
      (await app.inject({ url: '/metrics', headers: { authorization: `Bearer ${METRICS_TOKEN}` } })).body;
    const requests = (text: string) =>
      Number(
        /podium_http_request_duration_seconds_count\{method="GET",route="\/api\/v1\/toplists",status="200"\} (\d+)/.exec(
          text,
        )?.[1] ?? 0,
      );
    const hits = (text: string) =>
      Number(
        parsePrometheus(text).find((f) => f.name === 'podium_edition_cache_hits_total')?.metrics[0]?.value,
      );
    const before = await scrape();
    const families = parsePrometheus(before);
    expect(families.find((f) => f.name === 'podium_http_request_duration_seconds')?.type).toBe('HISTOGRAM');
    expect(families.find((f) => f.name === 'podium_edition_cache_hits_total')?.type).toBe('COUNTER');
    expect(families.find((f) => f.name === 'podium_process_resident_memory_bytes')?.type).toBe('GAUGE');
    for (let i = 0; i < 3; i++) {
      await app.inject({
        url: '/api/v1/toplists',
        headers: { authorization: `Bearer ${demo.siteTokens[0]!.token}` },
      });
    }
    const after = await scrape();
    expect(requests(after) - requests(before)).toBe(3);
    expect(hits(after)).toBeGreaterThan(hits(before));
  });

  it('freezes the embedded database (no autovacuum there) and exports its transaction age; PostgreSQL has its own', async () => {
    const embedded = DB_KIND === 'pglite';
    expect(Object.keys(app.services.scheduler.jobStats()).includes('pglite-freeze')).toBe(embedded);
    const text = (
      await app.inject({ url: '/metrics', headers: { authorization: `Bearer ${METRICS_TOKEN}` } })
    ).body;
    const age = parsePrometheus(text).find((f) => f.name === 'podium_db_xid_age');
    expect(age?.type).toBe(embedded ? 'GAUGE' : undefined);
  });

  it('logs one line per request with route, status, duration and site id; never a token or query', async () => {
    const site = demo.siteTokens[0]!.token;
    lines.length = 0;
    raw.length = 0;
    const res = await app.inject({
      url: '/api/v1/toplists?per_page=2&geo_code=SE&geo_type=country',
      headers: { authorization: `Bearer ${site}`, 'x-request-id': 'edge-req-42' },
    });
    expect(res.headers['x-request-id']).toBe('edge-req-42');
    const requestLines = lines.filter((l) => l.msg === 'request');
    expect(requestLines).toHaveLength(1);
    expect(requestLines[0]).toMatchObject({
      reqId: 'edge-req-42',
      method: 'GET',
      route: '/api/v1/toplists',
      status: 200,
      siteId: 1,
    });
    expect(typeof requestLines[0]!.ms).toBe('number');
    expect(raw.join('\n')).not.toContain(site);
    expect(raw.join('\n')).not.toContain('per_page');

    const minted = await app.inject({ url: '/healthz', headers: { 'x-request-id': 'bad id with spaces' } });
    expect(minted.headers['x-request-id']).toMatch(/^[0-9A-HJKMNP-TV-Z]{26}$/);
  });

  it('scrubs secrets by value even inside logged error messages', async () => {
    const site = demo.siteTokens[0]!.token;
    raw.length = 0;
    app.log.error(
      { err: new Error(`upstream rejected ${site}`), header: `Bearer ${site}` },
      `failed with ${site}`,
    );
    const out = raw.join('\n');
    expect(out).toContain('upstream rejected');
    expect(out).not.toContain(site);
  });
});

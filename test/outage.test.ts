import type { AddressInfo } from 'node:net';
import { connect, createServer, type Server, type Socket } from 'node:net';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApp } from '../src/app.ts';
import { loadConfig } from '../src/config.ts';
import { ChangeBus } from '../src/db/changes.ts';
import { type Db, openDb } from '../src/db/index.ts';
import { type DemoTokens, loadDemo } from '../src/modules/catalog/demo.ts';
import { expectContract } from './contract.ts';
import { eventually, schemaOf, servicesOn, type TestDb, testDb } from './helpers.ts';

/** A loopback TCP proxy in front of PostgreSQL that the test can cut and restore. */
class CuttableProxy {
  private server: Server | undefined;
  private readonly sockets = new Set<Socket>();
  port = 0;

  constructor(
    private readonly host: string,
    private readonly targetPort: number,
  ) {}

  async open(): Promise<void> {
    this.server = createServer((client) => {
      const upstream = connect(this.targetPort, this.host);
      for (const s of [client, upstream]) {
        this.sockets.add(s);
        s.on('close', () => this.sockets.delete(s));
        s.on('error', () => {});
      }
      client.pipe(upstream).pipe(client);
    });
    await new Promise<void>((r) => this.server!.listen(this.port, '127.0.0.1', r));
    this.port = (this.server.address() as AddressInfo).port;
  }

  /** Stops accepting and drops every live connection: the database "is down". */
  async cut(): Promise<void> {
    const closed = new Promise((r) => this.server?.close(r));
    for (const s of this.sockets) s.destroy();
    await closed;
  }
}

// Stopping a database needs a real server (through a proxy, so other suites keep theirs).
describe.runIf(process.env.DATABASE_URL)('database outage and recovery', () => {
  let t: TestDb;
  let proxy: CuttableProxy;
  let db: Db;
  let bus: ChangeBus;
  let app: FastifyInstance;
  let demo: DemoTokens;

  beforeAll(async () => {
    t = await testDb();
    demo = await loadDemo(servicesOn(t.db));
    const schema = await schemaOf(t.db);
    const target = new URL(process.env.DATABASE_URL!);
    proxy = new CuttableProxy(target.hostname, Number(target.port || 5432));
    await proxy.open();
    const viaProxy = new URL(target);
    viaProxy.hostname = '127.0.0.1';
    viaProxy.port = String(proxy.port);
    db = await openDb({ url: viaProxy.toString(), schema, poolSize: 4 });
    bus = new ChangeBus(db);
    await bus.start();
    app = await buildApp({
      config: loadConfig({}, { publicUrl: 'https://podium.test', logLevel: 'silent' }),
      db,
      bus,
      logger: false,
    });
    await app.ready();
  });
  afterAll(async () => {
    await app.close();
    await bus.stop();
    await db.close();
    await proxy.cut().catch(() => {});
    await t.close();
  });

  const admin = () =>
    app.inject({
      url: '/api/admin/v1/brands?per_page=1',
      headers: { authorization: `Bearer ${demo.adminToken}` },
    });

  it('answers 503 with a clear body while the database is down, and recovers without a restart', async () => {
    expect((await app.inject('/readyz')).statusCode).toBe(200);
    expect((await admin()).statusCode).toBe(200);

    await proxy.cut();
    expect(await eventually(async () => (await app.inject('/readyz')).statusCode === 503, 5000)).toBe(true);
    const down = await app.inject('/readyz');
    expect(down.json().details.checks.database).not.toBe('ok');
    const started = Date.now();
    const failed = await admin();
    expect(Date.now() - started).toBeLessThan(5000);
    expect(failed.statusCode).toBe(503);
    expectContract('error', failed.json());
    expect(failed.json().code).toBe('service_unavailable');
    expect(failed.headers['retry-after']).toBe('5');

    await proxy.open();
    expect(await eventually(async () => (await app.inject('/readyz')).statusCode === 200, 10_000)).toBe(true);
    expect((await admin()).statusCode).toBe(200);
  });

  it('listens again after the outage: a publish elsewhere still reaches this cache', async () => {
    const site = { authorization: `Bearer ${demo.siteTokens[0]!.token}` };
    const slug = '/api/v1/toplists/by-slug/best-casinos-fi';
    const before = (await app.inject({ url: slug, headers: site })).json().data;
    const elsewhere = servicesOn(t.db).catalog;
    await elsewhere.publish(before.id);
    const seen = await eventually(
      async () => (await app.inject({ url: slug, headers: site })).json().data.version !== before.version,
      5000,
    );
    expect(seen).toBe(true);
  });
});

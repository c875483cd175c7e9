import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import type { Config } from '../config.ts';
import { ChangeBus } from '../db/changes.ts';
import type { Db } from '../db/index.ts';
import { demoSiteId } from '../modules/catalog/demo.ts';
import { type MarketDemo, seedMarketDemo } from '../modules/market/demo.ts';
import { createServices } from '../services.ts';

/** The reference ad server `podium start` runs beside a demo database, in this process. */
export interface DemoAdServerRun {
  /** Base URL of its API (`http://127.0.0.1:<port>/api/v1`). */
  url: string;
  apiKey: string;
  /** Its `address:port`, the pair the loopback allowance lists. */
  pair: string;
  /** True when its store was created by this start (the marketplace is to be seeded). */
  fresh: boolean;
  activate(orderId: string): Promise<boolean>;
  /** Stops accepting, finishes the requests in flight, closes its store. */
  close(): Promise<void>;
}

/** What the demo keeps beside the reference ad server's store: the port the connection names. */
const STATE_FILE = 'podium-demo.json';

/** Directory of the demo's reference ad server: beside the embedded database, never inside it. */
export function demoAdServerDir(dataDir: string): string {
  return `${resolve(dataDir)}-adserver-reference`;
}

/**
 * Starts the demo's reference ad server on loopback when `podium start` runs the embedded demo:
 * on the start that created the demo database (`fresh`), and on every later start of it (its
 * connection names the same port). Never with DATABASE_URL, and not under NODE_ENV=production,
 * where the loopback allowance it needs is refused. Null when it does not run.
 */
export async function startDemoAdServer(
  config: Pick<Config, 'databaseUrl' | 'dataDir' | 'port'>,
  fresh: boolean,
  log: (msg: string) => void,
): Promise<DemoAdServerRun | null> {
  if (config.databaseUrl) return null;
  const dir = demoAdServerDir(config.dataDir);
  const state = join(dir, STATE_FILE);
  if (!fresh && !existsSync(state)) return null;
  if (process.env.NODE_ENV === 'production') {
    log(
      'demo: the reference ad server is not started under NODE_ENV=production (its loopback allowance is local-only)',
    );
    return null;
  }
  // A new demo database gets a new ad server: one left by an earlier database would not know its orders.
  if (fresh) rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir, { recursive: true });
  const saved = existsSync(state)
    ? (JSON.parse(readFileSync(state, 'utf8')) as { port?: number }).port
    : undefined;
  // Loaded only here: a server that never runs the demo never loads the reference ad server.
  const { startReferenceServer } = await import('../../packages/adserver-kit/src/reference/server.ts');
  const start = (port: number) =>
    startReferenceServer({ store: { dataDir: join(dir, 'store') }, host: '127.0.0.1', port, logger: false });
  let ref: Awaited<ReturnType<typeof start>>;
  try {
    ref = await start(saved ?? (config.port ? config.port + 201 : 0));
  } catch (err) {
    // The first start takes any free port when the usual one is taken; later ones need theirs.
    if (saved !== undefined || (err as { code?: string }).code !== 'EADDRINUSE') throw err;
    ref = await start(0);
  }
  const port = Number(new URL(ref.url).port);
  writeFileSync(state, `${JSON.stringify({ port })}\n`);
  log(`demo: reference ad server at ${ref.url} (store ${join(dir, 'store')})`);
  return {
    url: ref.url,
    apiKey: ref.apiKey,
    pair: `127.0.0.1:${port}`,
    fresh,
    activate: (orderId) => ref.activate(orderId),
    close: () => ref.close(),
  };
}

/**
 * Seeds the demo marketplace on `db` against the demo's reference ad server, with a service graph
 * of its own whose clock the seeding moves (see `seedMarketDemo`); the server's own services never
 * see that clock. A failure is reported and leaves the rest of the demo serving.
 */
export async function seedDemoMarket(
  config: Config,
  db: Db,
  ads: DemoAdServerRun,
  log: (msg: string) => void,
): Promise<MarketDemo | null> {
  const clock = { now: new Date() };
  const services = await createServices({
    config,
    db,
    bus: new ChangeBus(db),
    log: { warn: (msg) => log(msg), error: (msg) => log(msg) },
    now: () => clock.now,
  });
  try {
    const siteId = await demoSiteId(services.catalog);
    return await seedMarketDemo(services, ads, clock, { log, ...(siteId ? { siteId } : {}) });
  } catch (err) {
    log(`demo: the marketplace could not be seeded: ${(err as Error).message}`);
    return null;
  } finally {
    await services.close();
  }
}

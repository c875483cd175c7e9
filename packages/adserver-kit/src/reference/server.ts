import type { FastifyInstance } from 'fastify';
import { openStore, type Store, type StoreOptions } from '../db.ts';
import type { Scope } from '../schemas.ts';
import { type AccountInput, createAccount, DEMO_SLOTS, type IssuedKey, issueKey, putSlots } from './admin.ts';
import { buildReferenceApp } from './app.ts';
import * as repo from './repository.ts';

export interface ReferenceServerOptions {
  /** Store: PostgreSQL URL or PGlite directory; in-memory PGlite when absent. */
  store?: StoreOptions;
  /** Listen address (default 127.0.0.1) and port (default 0 = any free port). */
  host?: string;
  port?: number;
  /** Serve HTTPS with this PEM key and certificate; plain HTTP (behind a proxy) when absent. */
  tls?: { key: string | Buffer; cert: string | Buffer };
  /** Account to seed when the store has none (default: Europe/Malta, EUR, forecast on). */
  account?: AccountInput;
  /** Seed the demo slots into a new account (default true). */
  demoSlots?: boolean;
  /** Per-key request budget (default 600 per minute). */
  rateLimit?: { max: number; windowMs: number };
  /** Clock for key expiry and "today" in reports. */
  now?: () => Date;
  logger?: boolean;
}

export interface ReferenceServer {
  /** Base URL of the API, ending in `/api/v1`. */
  url: string;
  /** A fresh all-scopes key of the seeded account (a new one on every start; shown once). */
  apiKey: string;
  accountId: string;
  store: Store;
  app: FastifyInstance;
  /** Issues another key of the account (for rotation and scope tests). */
  issueKey(opts?: { scopes?: Scope[]; label?: string; expiresAt?: Date | null }): Promise<IssuedKey>;
  /** Revokes a key by id. */
  revokeKey(id: string): Promise<boolean>;
  /** The console action: moves an order's lines to live so the delivery simulator reports them. */
  activate(orderId: string): Promise<boolean>;
  close(): Promise<void>;
}

/**
 * Starts the reference ad server: opens (and migrates) the store, seeds an account with demo
 * slots when there is none, issues a key and listens. Used by the CLI and by other packages' tests.
 */
export async function startReferenceServer(options: ReferenceServerOptions = {}): Promise<ReferenceServer> {
  const store = await openStore(options.store);
  try {
    let account = (await repo.listAccounts(store))[0];
    if (!account) {
      account = await createAccount(store, options.account);
      if (options.demoSlots !== false) await putSlots(store, account.id, DEMO_SLOTS);
    }
    const accountId = account.id;
    const first = await issueKey(store, accountId, { label: 'issued at start' });
    const app = await buildReferenceApp({
      store,
      rateLimit: options.rateLimit,
      now: options.now,
      logger: options.logger,
      https: options.tls ?? null,
    });
    const host = options.host ?? '127.0.0.1';
    await app.listen({ host, port: options.port ?? 0 });
    const addr = app.server.address();
    const port = typeof addr === 'object' && addr ? addr.port : options.port;
    const shownHost = host.includes(':') ? `[${host}]` : host;
    return {
      url: `${options.tls ? 'https' : 'http'}://${shownHost}:${port}/api/v1`,
      apiKey: first.key,
      accountId,
      store,
      app,
      issueKey: (opts) => issueKey(store, accountId, opts),
      revokeKey: (id) => repo.revokeKey(store, id, (options.now ?? (() => new Date()))()),
      activate: (orderId) => store.tx((q) => repo.activateOrder(q, orderId)),
      async close() {
        await app.close();
        await store.close();
      },
    };
  } catch (err) {
    await store.close();
    throw err;
  }
}

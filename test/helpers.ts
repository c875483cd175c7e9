import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { type Agent, request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { FastifyInstance } from 'fastify';
import { type AppDeps, buildApp } from '../src/app.ts';
import { type Config, loadConfig } from '../src/config.ts';
import { ChangeBus } from '../src/db/changes.ts';
import { type Db, openDb } from '../src/db/index.ts';
import { listMigrations, migrate } from '../src/db/migrate.ts';
import { loggerOptions } from '../src/lib/logger.ts';
import type { ClickRow } from '../src/modules/tracking/types.ts';
import { createServices, type Services } from '../src/services.ts';
import { suiteLogStream } from './log-capture.ts';

/** Which database this run uses: PGlite in memory, or the server named by DATABASE_URL. */
export const DB_KIND = process.env.DATABASE_URL ? 'postgres' : 'pglite';

/**
 * PGlite's files in a throwaway directory instead of memory (`PODIUM_TEST_PGLITE=disk`), as
 * `podium start` runs it: the disk watch, the flushes and the directory lock only run there, and
 * a bug in them (every SQL error refusing the database) once hid from an in-memory suite.
 */
const PGLITE_ON_DISK = DB_KIND === 'pglite' && process.env.PODIUM_TEST_PGLITE === 'disk';

/** Opens a test database (see {@link testDb}); `drop` removes what it leaves behind once it is closed. */
async function openTestDb(): Promise<{ db: Db; drop: (db: Db) => Promise<void> }> {
  const url = process.env.DATABASE_URL;
  if (url) {
    const schema = `t_${randomBytes(6).toString('hex')}`;
    return {
      db: await openDb({ url, schema, poolSize: 4 }),
      drop: async (db) => {
        await db.exec(`DROP SCHEMA "${schema}" CASCADE`);
        await db.close();
      },
    };
  }
  const dataDir = PGLITE_ON_DISK ? mkdtempSync(join(tmpdir(), 'podium-test-db-')) : undefined;
  return {
    db: await openDb({ dataDir, poolSize: 4 }),
    drop: async (db) => {
      try {
        await db.close();
      } finally {
        if (dataDir) rmSync(dataDir, { recursive: true, force: true });
      }
    },
  };
}

export interface TestDb {
  db: Db;
  close(): Promise<void>;
}

/**
 * A fresh, migrated database: PGlite (in memory, or on disk with `PODIUM_TEST_PGLITE=disk`), or a
 * throwaway schema on the real server (dropped on close) when DATABASE_URL is set.
 */
export async function testDb(): Promise<TestDb> {
  const { db, drop } = await openTestDb();
  await migrate(db);
  return { db, close: () => drop(db) };
}

/** A database migrated only up to (not including) `version`, as an installation from before it. */
export async function dbBefore(version: string): Promise<TestDb> {
  const { db, drop } = await openTestDb();
  await db.exec(
    'CREATE TABLE schema_migrations (version text PRIMARY KEY, applied_at timestamptz NOT NULL DEFAULT now())',
  );
  for (const m of listMigrations().filter((m) => m.version < version)) {
    await db.tx(async (q) => {
      await q.exec(m.sql);
      await q.query('INSERT INTO schema_migrations (version) VALUES ($1)', [m.version]);
    });
  }
  return { db, close: () => drop(db) };
}

/** A click row on link 1 at `at` (ISO), with `extra` fields. */
export function click(id: string, at: string, extra: Partial<ClickRow> = {}): ClickRow {
  return {
    id,
    kind: 'click',
    at: new Date(at),
    linkId: 1,
    trackerId: 1,
    offerId: 1,
    brandId: 1,
    siteId: null,
    toplistId: null,
    position: 1,
    programId: null,
    subId: null,
    referrer: null,
    userAgent: null,
    country: null,
    flag: null,
    ...extra,
  };
}

export interface TestApp extends TestDb {
  app: FastifyInstance;
  config: Config;
  bus: ChangeBus;
  clock: { now: Date };
}

/** A migrated database and a built app around it, with a settable clock. */
export async function testApp(
  overrides: Partial<Config> = {},
  extra: Pick<AppDeps, 'outboundTestOnly' | 'consoleDir'> & {
    /** Runs on the built app before it is ready: where a test adds hooks of its own. */
    beforeReady?: (app: FastifyInstance) => void;
  } = {},
): Promise<TestApp> {
  const t = await testDb();
  const config = loadConfig({}, { publicUrl: 'https://podium.test', logLevel: 'silent', ...overrides });
  const bus = new ChangeBus(t.db);
  await bus.start();
  const clock = { now: new Date() };
  // Real log output (info and up) goes to the suite's log files, which are checked for secrets.
  const logger = { ...loggerOptions({ ...config, logLevel: 'info' }), stream: suiteLogStream() };
  const { beforeReady, ...deps } = extra;
  const app = await buildApp({ config, db: t.db, bus, now: () => clock.now, logger, ...deps });
  beforeReady?.(app);
  await app.ready();
  return {
    ...t,
    app,
    config,
    bus,
    clock,
    async close() {
      await app.close();
      await bus.stop();
      await t.close();
    },
  };
}

/** The service graph straight on a database (no HTTP), as another process (the CLI) would have. */
export function servicesOn(db: Db, overrides: Partial<Config> = {}): Promise<Services> {
  const config = loadConfig({}, { publicUrl: 'https://podium.test', logLevel: 'silent', ...overrides });
  return createServices({ config, db, bus: new ChangeBus(db), log: { warn() {}, error() {} } });
}

/** The schema a test database works in (the throwaway one on PostgreSQL). */
export async function schemaOf(db: Db): Promise<string> {
  const [row] = await db.query<{ schema: string }>('SELECT current_schema() AS schema');
  return row!.schema;
}

/** One admin API call (path under /api/admin/v1) with a bearer token: the status and the parsed body. */
export async function adminCall(
  app: FastifyInstance,
  token: string,
  method: 'GET' | 'POST' | 'PATCH' | 'DELETE',
  url: string,
  payload?: object,
  // biome-ignore lint/suspicious/noExplicitAny: tests read whatever the route answered
): Promise<{ status: number; body: any }> {
  const res = await app.inject({
    method,
    url: `/api/admin/v1${url}`,
    headers: { authorization: `Bearer ${token}` },
    ...(payload ? { payload } : {}),
  });
  return { status: res.statusCode, body: res.json() };
}

/** Polls `probe` until it returns true, at most `ms` milliseconds; false when time runs out. */
export async function eventually(probe: () => Promise<boolean>, ms = 5000): Promise<boolean> {
  const end = Date.now() + ms;
  while (Date.now() < end) {
    if (await probe()) return true;
    await new Promise((r) => setTimeout(r, 50));
  }
  return false;
}

/** An answer read off a real socket. */
export interface HttpAnswer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: Buffer;
  /** The request went on a connection an earlier request used (keep-alive). */
  reusedSocket: boolean;
}

/** One real HTTP request: the server's own socket handling (keep-alive, lengths on the wire) is in its answer. */
export function httpRequest(
  base: string,
  path: string,
  headers: Record<string, string>,
  method = 'GET',
  agent?: Agent,
): Promise<HttpAnswer> {
  return new Promise((resolve, reject) => {
    const req = request(`${base}${path}`, { method, headers, agent }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () =>
        resolve({
          status: res.statusCode ?? 0,
          headers: res.headers,
          body: Buffer.concat(chunks),
          reusedSocket: req.reusedSocket,
        }),
      );
    });
    req.on('error', reject);
    req.end();
  });
}

import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type Db, openDb } from '../src/db/index.ts';
import { migrate } from '../src/db/migrate.ts';
import { schemaOf, testDb } from './helpers.ts';
import { suiteLogStream } from './log-capture.ts';

const BIN = join(import.meta.dirname, '..', 'bin', 'podium-dev.js');

/** Starts `podium serve` on a free port; resolves with its base URL once it listens. */
export async function serve(
  env: NodeJS.ProcessEnv,
  args: string[] = [],
): Promise<{ proc: ChildProcess; url: string; exit: Promise<number> }> {
  const proc = spawn(process.execPath, [BIN, 'serve', '--port', '0', ...args], {
    env,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const exit = once(proc, 'exit').then(([code]) => code as number);
  let out = '';
  const url = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`serve did not start: ${out}`)), 60_000);
    const onData = (chunk: Buffer) => {
      out += chunk;
      const m = /Server listening at (http:\/\/127\.0\.0\.1:\d+)/.exec(out);
      if (m) {
        clearTimeout(timer);
        resolve(m[1]!);
      }
    };
    proc.stdout!.on('data', onData);
    proc.stderr!.on('data', onData);
    proc.stdout!.pipe(suiteLogStream(), { end: false });
    proc.stderr!.pipe(suiteLogStream(), { end: false });
    proc.once('exit', () => reject(new Error(`serve exited: ${out}`)));
  });
  return { proc, url, exit };
}

/** The environment of a `podium serve` on `db`'s throwaway schema of DATABASE_URL (PostgreSQL runs only). */
export async function sharedSchemaEnv(db: Db, extra: NodeJS.ProcessEnv = {}): Promise<NodeJS.ProcessEnv> {
  const url = new URL(process.env.DATABASE_URL!);
  url.searchParams.set('options', `-c search_path=${await schemaOf(db)}`);
  return { ...process.env, DATABASE_URL: url.toString(), LOG_LEVEL: 'info', ...extra };
}

/** A migrated database for a `podium serve` process and the environment that points it there. */
export interface ServedDb {
  db: Db;
  env: NodeJS.ProcessEnv;
  /** The embedded database's directory (PGlite runs only). */
  dir?: string;
  /** Drops the schema (PostgreSQL) or removes the directory (PGlite); `db` must be closed first on PGlite. */
  remove(): Promise<void>;
}

/** A throwaway schema on DATABASE_URL, else an embedded data directory named after `prefix`. */
export async function servedDb(prefix: string): Promise<ServedDb> {
  const env: NodeJS.ProcessEnv = { ...process.env, LOG_LEVEL: 'info' };
  if (process.env.DATABASE_URL) {
    const pg = await testDb();
    return { db: pg.db, env: await sharedSchemaEnv(pg.db), remove: () => pg.close() };
  }
  const dir = mkdtempSync(join(tmpdir(), `${prefix}-`));
  const db = await openDb({ dataDir: dir });
  await migrate(db);
  env.PODIUM_DATA_DIR = dir;
  delete env.DATABASE_URL;
  return { db, env, dir, remove: async () => rmSync(dir, { recursive: true, force: true }) };
}

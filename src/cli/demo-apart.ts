import { spawn } from 'node:child_process';
import { existsSync, readdirSync, renameSync, rmSync } from 'node:fs';
import { join, resolve } from 'node:path';
import type { Config } from '../config.ts';
import type { DemoTokens } from '../modules/catalog/demo.ts';

/**
 * `podium start` on an embedded database that does not exist yet: creates it and loads the demo
 * in a process of its own (`podium demo --json`), then returns that load's tokens; null when the
 * database exists (or is PostgreSQL) and the server loads or finds the demo itself.
 *
 * Why apart: creating the cluster (initdb), the migrations and 30 days of history grow a process
 * for good — PGlite's WebAssembly memory never shrinks and malloc keeps its arenas — so a first
 * start that loaded the demo in process peaked at 767 MB and served at 350–410 MB, where a server
 * opening the loaded database peaks at ~285 MB and settles at 230–250 MB.
 *
 * The load writes beside the data directory and is moved into place once whole, so a first start
 * interrupted (Ctrl-C, a failed load) leaves no half-loaded database for the next start to serve.
 */
export async function loadDemoApart(
  config: Pick<Config, 'databaseUrl' | 'dataDir' | 'port'>,
): Promise<DemoTokens | null> {
  if (config.databaseUrl || existsSync(join(config.dataDir, 'PG_VERSION'))) return null;
  const target = resolve(config.dataDir);
  // A directory holding something else is left to PGlite, in place, as before.
  const inPlace = existsSync(target) && readdirSync(target).length > 0;
  const dir = inPlace ? target : `${target}.loading-${process.pid}`;
  try {
    const tokens = await runDemo(dir, config.port);
    // Replaces an empty directory; fails if another process created the database meanwhile.
    if (!inPlace) renameSync(dir, target);
    return tokens;
  } catch (err) {
    if (inPlace) throw err;
    rmSync(dir, { recursive: true, force: true });
    throw new Error(`${(err as Error).message}; nothing was written to ${target}`);
  }
}

/** Runs `podium demo --json` on `dataDir` and returns the tokens it printed. */
async function runDemo(dataDir: string, port: number): Promise<DemoTokens> {
  // The entry script this process runs (bin/podium.js, or bin/podium-dev.js with its loader).
  const args = [...process.execArgv, process.argv[1]!, 'demo', '--json'];
  const env = { ...process.env, PODIUM_DATA_DIR: dataDir, PORT: String(port) };
  const child = spawn(process.execPath, args, { env, stdio: ['ignore', 'pipe', 'inherit'] });
  let out = '';
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
    out += chunk;
  });
  // A stop asked of this process while the demo loads stops the load (whose directory then goes).
  const forward = (signal: NodeJS.Signals) => child.kill(signal);
  process.on('SIGINT', forward).on('SIGTERM', forward);
  const [code, signal] = await new Promise<[number | null, NodeJS.Signals | null]>((done, fail) => {
    child.once('error', fail);
    child.once('close', (c, s) => done([c, s]));
  }).finally(() => process.off('SIGINT', forward).off('SIGTERM', forward));
  if (signal) throw new Error(`loading the demo was stopped (${signal})`);
  if (code !== 0) throw new Error(`loading the demo failed (exit code ${code})`);
  // `demo --json` prints its tokens as the one JSON line of its standard output.
  const line = out.trim().split('\n').pop() ?? '';
  try {
    return JSON.parse(line) as DemoTokens;
  } catch {
    throw new Error('loading the demo: no tokens in its output');
  }
}

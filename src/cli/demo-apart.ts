import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
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
 * opening the loaded database peaks at ~275 MB and settles at 220–250 MB.
 */
export async function loadDemoApart(
  config: Pick<Config, 'databaseUrl' | 'dataDir' | 'port'>,
): Promise<DemoTokens | null> {
  if (config.databaseUrl || existsSync(join(config.dataDir, 'PG_VERSION'))) return null;
  // The entry script this process runs (bin/podium.js, or bin/podium-dev.js with its loader).
  const args = [...process.execArgv, process.argv[1]!, 'demo', '--json'];
  const env = { ...process.env, PODIUM_DATA_DIR: config.dataDir, PORT: String(config.port) };
  const child = spawn(process.execPath, args, { env, stdio: ['ignore', 'pipe', 'inherit'] });
  let out = '';
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
    out += chunk;
  });
  const code = await new Promise<number | null>((resolve, reject) => {
    child.once('error', reject);
    child.once('close', resolve);
  });
  if (code !== 0) throw new Error(`loading the demo into ${config.dataDir} failed (exit code ${code})`);
  // `demo --json` prints its tokens as the one JSON line of its standard output.
  const line = out.trim().split('\n').pop() ?? '';
  try {
    return JSON.parse(line) as DemoTokens;
  } catch {
    throw new Error(`loading the demo into ${config.dataDir}: no tokens in its output`);
  }
}

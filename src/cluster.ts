import cluster, { type Worker } from 'node:cluster';
import type { Config } from './config.ts';
import { openConfiguredDb } from './db/open.ts';

/** A worker that dies this soon after its start counts as a crash loop. */
const CRASH_WINDOW_MS = 10_000;
const MAX_QUICK_RESTARTS = 5;

/**
 * The primary of `podium serve --workers N`: applies migrations once, forks N workers that each
 * run the whole server on the shared port (node:cluster hands out connections), replaces a worker
 * that dies, and on SIGTERM lets every worker drain before exiting. A second SIGTERM kills them.
 */
export async function runPrimary(config: Config, log: (msg: string) => void): Promise<void> {
  // Migrate before forking so workers never race each other on the schema.
  const db = await openConfiguredDb(config, log);
  await db.close();

  let stopping = false;
  let quickRestarts = 0;
  const started = new Map<number, number>();
  const fork = (): Worker => {
    const worker = cluster.fork();
    started.set(worker.id, Date.now());
    return worker;
  };
  cluster.on('exit', (worker, code, signal) => {
    const ranMs = Date.now() - (started.get(worker.id) ?? 0);
    started.delete(worker.id);
    if (stopping) {
      if (!Object.keys(cluster.workers ?? {}).length) process.exit(0);
      return;
    }
    log(`worker ${worker.process.pid} exited (${signal ?? code}); starting a new one`);
    quickRestarts = ranMs < CRASH_WINDOW_MS ? quickRestarts + 1 : 0;
    if (quickRestarts > MAX_QUICK_RESTARTS) {
      log('workers keep crashing at start; giving up');
      process.exit(1);
    }
    fork();
  });
  for (let i = 0; i < config.workers; i++) fork();
  log(`podium: ${config.workers} workers (primary ${process.pid})`);

  const stop = (signal: NodeJS.Signals, forward: boolean) => {
    if (stopping) {
      log(`${signal} again: killing workers`);
      for (const w of Object.values(cluster.workers ?? {})) w?.process.kill('SIGKILL');
      process.exit(1);
    }
    stopping = true;
    log(`${signal}: workers draining`);
    // A terminal's Ctrl+C already reached every worker (same process group); forwarding it
    // would count as their second signal and cut the drain short.
    if (forward) for (const w of Object.values(cluster.workers ?? {})) w?.process.kill('SIGTERM');
    if (!Object.keys(cluster.workers ?? {}).length) process.exit(0);
  };
  process.on('SIGTERM', () => stop('SIGTERM', true));
  process.on('SIGINT', () => stop('SIGINT', false));
}

/**
 * Podium as deployed, for the measured runs: the production build (dist/src, compiled by
 * `npm run build`) on plain node, no TypeScript loader in the process (tsx adds ~100 MB of RSS and
 * its own hooks). Runs `startServer` (log lines at info to stdout, metrics, scheduler, change bus)
 * on the dataset `podium.ts build` wrote: PGlite in BENCH_DATA_DIR or the schema BENCH_SCHEMA on
 * DATABASE_URL. Driven over IPC: `count`, `stop`, `profile-start` / `profile-stop` (profiler.mjs),
 * and `stalls-reset` / `stalls` (stalls.mjs, and stall-log.mjs when BENCH_STALL_LOG names a file).
 */
import { join } from 'node:path';
import './profiler.mjs';
import './stalls.mjs';

// BENCH_STALL_LOG=<file>: what filled each long event-loop turn (stall-log.mjs).
if (process.env.BENCH_STALL_LOG) await import('./stall-log.mjs');

const root = process.env.BENCH_PODIUM_DIST ?? join(import.meta.dirname, '..', '..', 'dist', 'src');
const { loadConfig } = await import(join(root, 'config.js'));
const { openDb } = await import(join(root, 'db', 'index.js'));
const { startServer } = await import(join(root, 'server.js'));

const SCHEMA = process.env.BENCH_SCHEMA ?? 'bench';
const log = (m) => process.stderr.write(`${m}\n`);
const send = (m) => process.send?.(m);

const url = process.env.DATABASE_URL;
const config = loadConfig({ ...process.env, HOST: '127.0.0.1', PORT: '0' });
const db = await openDb({ url, schema: url ? SCHEMA : undefined, dataDir: url ? undefined : config.dataDir });
const server = await startServer(config, { db, log });
process.on('message', async (m) => {
  if (m.cmd === 'count') {
    const [r] = await db.query(
      `SELECT (SELECT count(*)::int FROM clicks WHERE kind = 'click') AS clicks,
              (SELECT count(*)::int FROM clicks WHERE kind = 'impression') AS impressions,
              (SELECT count(*)::int FROM conversions) AS conversions,
              (SELECT count(DISTINCT l.query->>'transaction_id')::int FROM postback_log l
                 JOIN postback_outcomes o ON o.log_id = l.id WHERE o.status = 200) AS accepted_ids,
              (SELECT count(*)::int FROM postback_log l
                 LEFT JOIN postback_outcomes o ON o.log_id = l.id WHERE o.log_id IS NULL) AS undecided`,
    );
    send({ counted: r });
  }
  if (m.cmd === 'stop') {
    await server.close();
    if (url) {
      const admin = await openDb({ url });
      await admin.exec(`DROP SCHEMA IF EXISTS ${SCHEMA} CASCADE`);
      await admin.close();
    }
    process.exit(0);
  }
});
send({ ready: true, url: server.url, pid: process.pid });

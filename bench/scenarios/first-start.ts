/**
 * What a new user's `npm start` costs: `podium start` (the built CLI) on an empty data directory,
 * which creates the embedded database and loads the demo, then serves. Reports the time to the
 * banner and the serving process's resident memory, peak and settled.
 */
import { spawn } from 'node:child_process';
import { mkdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import type { Scenario } from '../lib/harness.ts';
import { load1, rssMb } from '../lib/proc.ts';
import { SERVER_CPU } from '../lib/wrk.ts';

const BIN = join(import.meta.dirname, '..', '..', 'bin', 'podium.js');
/** As for `idle`: V8's memory reducer gives memory back ~45 s after start; read RSS after it. */
const SETTLE_SECONDS = Number(process.env.BENCH_IDLE_SETTLE_SECONDS ?? 60);
const BANNER_TIMEOUT_MS = 300_000;

export const firstStart: Scenario = {
  name: 'first-start',
  about: `\`podium start\` on an empty data directory: seconds to the banner, RSS of the server (peak, and after ${SETTLE_SECONDS} s)`,
  async run(ctx) {
    const dataDir = join(ctx.settings.dir, 'first-start-db');
    rmSync(dataDir, { recursive: true, force: true });
    mkdirSync(dataDir, { recursive: true });
    const env: NodeJS.ProcessEnv = { ...process.env, PODIUM_DATA_DIR: dataDir, PORT: '0', LOG_LEVEL: 'info' };
    delete env.DATABASE_URL;
    const started = performance.now();
    // Pinned like every server of the run; the demo loader it spawns inherits the core.
    const proc = spawn('taskset', ['-c', SERVER_CPU, process.execPath, BIN, 'start'], {
      env,
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    try {
      const banner = await new Promise<string>((resolve, reject) => {
        let out = '';
        const timer = setTimeout(() => reject(new Error('first-start: no banner')), BANNER_TIMEOUT_MS);
        proc.once('exit', (code) => reject(new Error(`first-start: podium start exited with ${code}`)));
        // Log lines follow the banner on stdout: kept until the banner is whole, then drained.
        const read = (chunk: string) => {
          out += chunk;
          if (!out.includes('Tokens are shown only now')) return;
          clearTimeout(timer);
          proc.stdout.off('data', read).resume();
          resolve(out);
        };
        proc.stdout.setEncoding('utf8').on('data', read);
      });
      const seconds = (performance.now() - started) / 1000;
      const url = /Podium is running at (http:\/\/\S+)/.exec(banner)?.[1];
      const token = /Site token:\s+(pds_\S+)/.exec(banner)?.[1];
      if (!url || !token) throw new Error(`first-start: no URL or site token in the banner:\n${banner}`);
      const auth = { authorization: `Bearer ${token}` };
      // Every toplist of the site read once, as a site would.
      for (let page = 1; ; page++) {
        const res = await fetch(`${url}/api/v1/toplists?per_page=100&page=${page}`, { headers: auth });
        const body = (await res.json()) as { data: { slug: string }[]; meta: { last_page: number } };
        for (const t of body.data)
          await fetch(`${url}/api/v1/toplists/by-slug/${t.slug}`, { headers: auth }).then((r) =>
            r.arrayBuffer(),
          );
        if (page >= body.meta.last_page) break;
      }
      const served = rssMb(proc.pid!);
      await new Promise((r) => setTimeout(r, SETTLE_SECONDS * 1000));
      const settled = rssMb(proc.pid!);
      return [
        {
          scenario: 'first-start',
          dataset: 'demo',
          db: 'pglite',
          seconds_to_banner: Math.round(seconds * 10) / 10,
          settle_seconds: SETTLE_SECONDS,
          podium: { rss_mb_served: served.rss_mb, rss_mb: settled.rss_mb, peak_rss_mb: settled.peak_rss_mb },
          goal_rss_mb: 300,
          load1: load1(),
        },
      ];
    } finally {
      const exited = new Promise((r) => proc.once('exit', r));
      if (proc.exitCode === null) proc.kill('SIGTERM');
      await exited;
    }
  },
};

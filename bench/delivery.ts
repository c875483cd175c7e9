/**
 * Delivery benchmark: Podium's public toplist API against a bare node:http server answering
 * the identical bytes for the same URLs, in the same run. Each server is its own child
 * process; the load comes from this process (autocannon) over loopback.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import autocannon from 'autocannon';
import { child as fork, reply, stop } from './children.ts';

interface Measured {
  rps: number;
  p50_ms: number;
  p99_ms: number;
  mb_per_s: number;
  errors: number;
  non2xx: number;
}

const CONNECTIONS = 50;
const SECONDS = Number(process.env.BENCH_SECONDS ?? 5);
const SERVER = join(import.meta.dirname, 'delivery-server.ts');
const child = (mode: string, env: NodeJS.ProcessEnv) => fork(SERVER, mode, env);

async function load(base: string, token: string, paths: string[]): Promise<Measured> {
  const r = await autocannon({
    url: base,
    connections: CONNECTIONS,
    duration: SECONDS,
    headers: { authorization: `Bearer ${token}` },
    requests: paths.map((path) => ({ method: 'GET', path })),
  });
  return {
    rps: Math.round(r.requests.average),
    p50_ms: r.latency.p50,
    p99_ms: r.latency.p99,
    mb_per_s: Math.round((r.throughput.average / 1e6) * 10) / 10,
    errors: r.errors + r.timeouts,
    non2xx: r.non2xx,
  };
}

/** Runs the delivery benchmark and returns its JSON report. */
export async function run(log: (m: string) => void = () => {}): Promise<Record<string, unknown>> {
  const dir = mkdtempSync(join(tmpdir(), 'podium-bench-'));
  const env = { ...process.env, BENCH_DATA_DIR: join(dir, 'db') };
  try {
    const built = await reply<{ slugs: string[]; ids: number[]; token: string }>(
      child('build', env),
      'built',
    );
    const podium = child('podium', env);
    const podiumUrl = (await reply<{ url: string }>(podium, 'ready')).url;
    const scenarios: Record<string, { paths: string[]; target: number }> = {
      by_slug: { paths: built.slugs.map((s) => `/api/v1/toplists/by-slug/${s}`), target: 0.8 },
      by_id: { paths: built.ids.map((id) => `/api/v1/toplists/${id}`), target: 0.8 },
      list_per_page_15: {
        paths: Array.from({ length: 14 }, (_, p) => `/api/v1/toplists?per_page=15&page=${p + 1}`),
        target: 0.7,
      },
      list_per_page_100: {
        paths: ['/api/v1/toplists?per_page=100&page=1', '/api/v1/toplists?per_page=100&page=2'],
        target: 0.7,
      },
    };
    const bare = child('bare', env);
    const bareReady = await reply<{ url: string; avgToplistBytes: number }>(bare, 'ready', {
      podiumUrl,
      token: built.token,
      urls: Object.values(scenarios).flatMap((s) => s.paths),
    });
    log(`bench: dataset ready, average toplist ${Math.round(bareReady.avgToplistBytes / 1024)} KB`);

    const results: Record<string, unknown> = {};
    for (const [name, s] of Object.entries(scenarios)) {
      await load(podiumUrl, built.token, s.paths.slice(0, 5)); // warm-up: JIT and caches
      const b = await load(bareReady.url, built.token, s.paths);
      const p = await load(podiumUrl, built.token, s.paths);
      const ratio = Math.round((p.rps / Math.max(1, b.rps)) * 100) / 100;
      results[name] = {
        podium: p,
        bare: b,
        ratio_rps: ratio,
        target_ratio: s.target,
        meets_target: ratio >= s.target,
      };
      log(`bench: ${name} podium ${p.rps} rps vs bare ${b.rps} rps (ratio ${ratio})`);
    }
    const rss = await reply<{ readyRss: number; servingPeakRss: number }>(podium, 'servingPeakRss', {
      cmd: 'rss',
    });
    await stop(bare);
    await stop(podium);
    return {
      benchmark: 'delivery',
      database: process.env.DATABASE_URL ? 'postgres' : 'pglite',
      connections: CONNECTIONS,
      seconds_per_run: SECONDS,
      toplists: built.slugs.length,
      avg_toplist_kb: Math.round(bareReady.avgToplistBytes / 1024),
      scenarios: results,
      podium_rss_at_ready_mb: Math.round(rss.readyRss / 1048576),
      podium_peak_rss_mb: Math.round(rss.servingPeakRss / 1048576),
    };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

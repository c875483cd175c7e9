/**
 * A fixture is one dataset on one database, served by a pinned Podium process, with a pinned bare
 * server beside it. Fixtures start on first use and are shared by every scenario of the run.
 */
import type { ChildProcess } from 'node:child_process';
import { createHash } from 'node:crypto';
import { cpSync, existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { basename, join } from 'node:path';
import { pinnedChild, reply, stop } from './children.ts';
import type { LoadSpec } from './wrk.ts';

export type Dataset = 'demo' | 'big';
export type DbKind = 'pglite' | 'postgres';

/** What the build step tells about its dataset. */
export interface FixtureInfo {
  siteToken: string;
  /** Live toplists of the benchmark site. */
  slugs: string[];
  ids: number[];
  /** Slugs of registered /go (and /imp) links on that site. */
  goSlugs: string[];
  /** `/api/postback/bench/<token>`. */
  postbackPath: string;
}

/** What held Podium's event loop over a run (servers/stalls.mjs). */
export interface Stalls {
  loop_delay_p99_ms: number;
  loop_delay_max_ms: number;
  gc_ms_per_s: number;
  gc_max_ms: number;
}

/** A server under load: where to send requests, which process to read CPU time from. */
export interface Side {
  url: string;
  pid: number;
}

export interface Fixture {
  dataset: Dataset;
  db: DbKind;
  info: FixtureInfo;
  podium: Side;
  bare: Side;
  /** Makes the bare server answer these requests with the bytes Podium answers for them. */
  can(spec: LoadSpec): Promise<void>;
  /**
   * Starts a CPU profile of the Podium and the bare process; the returned function writes
   * Podium's to `file` and bare's beside it (`….bare.cpuprofile`).
   */
  profile(): Promise<(file: string) => Promise<void>>;
  /** Row counts of clicks, impressions and postbacks (for the nothing-lost checks). */
  count(): Promise<Record<string, number>>;
  /** Restarts Podium's event-loop and collection figures (servers/stalls.mjs). */
  resetStalls(label?: string): Promise<void>;
  /** Podium's event-loop delay and collection pauses since `resetStalls`. */
  stalls(): Promise<Stalls>;
  close(): Promise<void>;
}

const PODIUM = join(import.meta.dirname, '..', 'servers', 'podium.ts');
const SERVE = join(import.meta.dirname, '..', 'servers', 'serve.mjs');
const BARE = join(import.meta.dirname, '..', 'servers', 'bare.ts');

/**
 * Builds the dataset. With BENCH_CACHE_DIR set, a PGlite dataset built once (per dataset and set of
 * migrations) is copied from there instead, which saves minutes when profiling one scenario.
 */
async function buildOnce(
  dataset: Dataset,
  db: DbKind,
  env: NodeJS.ProcessEnv,
  logFile: string,
  log: (m: string) => void,
): Promise<{ built: FixtureInfo }> {
  const cacheRoot = db === 'pglite' ? process.env.BENCH_CACHE_DIR : undefined;
  const cache = cacheRoot && join(cacheRoot, `${dataset}-${datasetKey()}`);
  const dataDir = env.BENCH_DATA_DIR!;
  if (cache && existsSync(join(cache, 'info.json'))) {
    cpSync(join(cache, 'db'), dataDir, { recursive: true });
    log(`bench: ${dataset} dataset copied from ${cache}`);
    return JSON.parse(readFileSync(join(cache, 'info.json'), 'utf8'));
  }
  log(`bench: building the ${dataset} dataset on ${db}`);
  const started = Date.now();
  const built = await reply<{ built: FixtureInfo }>(
    pinnedChild(PODIUM, ['build', dataset], env, logFile),
    'built',
  );
  log(`bench: ${dataset} on ${db} built in ${Math.round((Date.now() - started) / 1000)} s`);
  if (cache) {
    cpSync(dataDir, join(cache, 'db'), { recursive: true });
    writeFileSync(join(cache, 'info.json'), JSON.stringify(built));
  }
  return built;
}

/**
 * Names what a dataset is made of (the shipped migrations and the code that writes the demo and the
 * bench's own data), so a cached dataset is never used with another schema or another loader.
 */
function datasetKey(): string {
  const src = join(import.meta.dirname, '..', '..', 'src');
  const dir = join(src, 'db', 'migrations');
  const files = [
    ...readdirSync(dir)
      .sort()
      .map((f) => join(dir, f)),
    join(src, 'modules', 'catalog', 'demo.ts'),
    join(src, 'modules', 'catalog', 'demo-history.ts'),
    PODIUM,
  ];
  const hash = createHash('sha1');
  for (const f of files) hash.update(basename(f)).update(readFileSync(f));
  return hash.digest('hex').slice(0, 12);
}

/** Builds the dataset, then starts Podium and the bare server on it. */
export async function startFixture(
  dataset: Dataset,
  db: DbKind,
  dir: string,
  log: (m: string) => void,
): Promise<Fixture> {
  const { DATABASE_URL, ...rest } = process.env;
  const schema = `bench_${dataset}_${process.pid}`;
  const env: NodeJS.ProcessEnv =
    db === 'postgres'
      ? { ...rest, DATABASE_URL, BENCH_SCHEMA: schema }
      : { ...rest, BENCH_DATA_DIR: join(dir, `${dataset}-db`), PODIUM_DATA_DIR: join(dir, `${dataset}-db`) };
  env.PODIUM_PUBLIC_URL = 'http://127.0.0.1';
  // The docs server's per-IP budget (60 per 10 s) would refuse wrk's one address within a second;
  // the highest budget keeps the limiter's work in every request without ever blocking.
  env.PODIUM_DOCS_RATE_LIMIT = '1000000';
  env.LOG_LEVEL = process.env.BENCH_LOG_LEVEL ?? 'info';
  const logFile = join(dir, `${dataset}-${db}.log`);
  const built = await buildOnce(dataset, db, env, logFile, log);
  // Node flags for Podium alone (A/B runs of a runtime setting); bare keeps Node's defaults.
  const podiumFlags = (process.env.BENCH_PODIUM_NODE_FLAGS ?? '').split(' ').filter(Boolean);
  const podiumProc = pinnedChild(SERVE, [], env, logFile, podiumFlags);
  const podium = await reply<Side>(podiumProc, 'ready');
  const bareProc = pinnedChild(BARE, [], env, logFile);
  const bare = await reply<Side>(bareProc, 'ready');
  const procs: ChildProcess[] = [podiumProc, bareProc];
  return {
    dataset,
    db,
    info: built.built,
    podium: { url: podium.url, pid: podium.pid },
    bare: { url: bare.url, pid: bare.pid },
    async can(spec) {
      const requests = spec.paths.map((path) => ({
        path: spec.transactionIds ? `${path}${path.includes('?') ? '&' : '?'}transaction_id=canned` : path,
        method: spec.method ?? 'GET',
        headers: spec.headers ?? {},
        body: spec.body,
      }));
      await reply(bareProc, 'canned', { cmd: 'can', podiumUrl: podium.url, requests });
    },
    async profile() {
      await reply(podiumProc, 'profiling', { cmd: 'profile-start' });
      await reply(bareProc, 'profiling', { cmd: 'profile-start' });
      return async (file) => {
        await reply(podiumProc, 'profiled', { cmd: 'profile-stop', file });
        await reply(bareProc, 'profiled', {
          cmd: 'profile-stop',
          file: file.replace(/\.cpuprofile$/, '.bare.cpuprofile'),
        });
      };
    },
    async count() {
      return (await reply<{ counted: Record<string, number> }>(podiumProc, 'counted', { cmd: 'count' }))
        .counted;
    },
    async resetStalls(label?: string) {
      await reply(podiumProc, 'stallsReset', { cmd: 'stalls-reset', label });
    },
    async stalls() {
      return (await reply<{ stalls: Stalls }>(podiumProc, 'stalls', { cmd: 'stalls' })).stalls;
    },
    async close() {
      await Promise.all(procs.map(stop));
    },
  };
}

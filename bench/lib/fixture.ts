/**
 * A fixture is one dataset on one database, served by a pinned Podium process, with a pinned bare
 * server beside it. Fixtures start on first use and are shared by every scenario of the run.
 */
import type { ChildProcess } from 'node:child_process';
import { join } from 'node:path';
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
  /** Row counts of clicks, impressions and postbacks (for the nothing-lost checks). */
  count(): Promise<Record<string, number>>;
  close(): Promise<void>;
}

const PODIUM = join(import.meta.dirname, '..', 'servers', 'podium.ts');
const BARE = join(import.meta.dirname, '..', 'servers', 'bare.ts');

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
  env.LOG_LEVEL = 'info';
  const logFile = join(dir, `${dataset}-${db}.log`);
  log(`bench: building the ${dataset} dataset on ${db}`);
  const started = Date.now();
  const built = await reply<{ built: FixtureInfo }>(
    pinnedChild(PODIUM, ['build', dataset], env, logFile),
    'built',
  );
  log(`bench: ${dataset} on ${db} built in ${Math.round((Date.now() - started) / 1000)} s`);
  // BENCH_CPU_PROF=<dir>: Podium writes a V8 CPU profile there when it stops (`npm run bench:top`).
  const prof = process.env.BENCH_CPU_PROF;
  const podiumProc = pinnedChild(
    PODIUM,
    ['serve'],
    env,
    logFile,
    prof ? ['--cpu-prof', `--cpu-prof-dir=${prof}`] : [],
  );
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
    async count() {
      return (await reply<{ counted: Record<string, number> }>(podiumProc, 'counted', { cmd: 'count' }))
        .counted;
    },
    async close() {
      await Promise.all(procs.map(stop));
    },
  };
}

/**
 * `npm run bench:ab -- <baseline-checkout> [go|imp|by-slug|by-id|resolve|list|list-gzip|brands]`: this checkout's build against
 * another's, both serving at once, in many short pinned wrk runs that alternate between them
 * (A B, B A, …), on PGlite with the demo dataset each checkout builds itself. On this virtual
 * machine a build's CPU per response moves by up to 40 % from one run to the next, with the
 * machine's phase; two builds measured minutes apart differ by more than most changes do. Pairs a
 * few seconds apart see the same phase, so the median of their ratios (and how many pairs favour
 * one build) shows a change of a few per cent (bench/README.md, "Comparing builds").
 *
 * The baseline is a checkout with its own `dist/` (`git worktree add /tmp/base <rev>`, its
 * node_modules linked to this one's, `npm run build -- server` in it). This checkout's `dist/`
 * is built first unless BENCH_NO_BUILD=1. BENCH_AB_PAIRS (default 20), BENCH_SECONDS (per run,
 * default 2), BENCH_CONNECTIONS (default 50). One JSON line on stdout; progress on stderr.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { pinnedChild, reply, stop } from './lib/children.ts';
import type { FixtureInfo } from './lib/fixture.ts';
import { median } from './lib/harness.ts';
import { cpuMicros, load1 } from './lib/proc.ts';
import { signTestP } from './lib/sign-test.ts';
import { ensureWrk, type LoadSpec, runWrk } from './lib/wrk.ts';
import { pagePaths, resolvePaths } from './scenarios/delivery.ts';
import { UA } from './scenarios/tracking.ts';

const log = (m: string) => process.stderr.write(`${m}\n`);
const [baseArg, scenario = 'go'] = process.argv.slice(2);
const SCENARIOS = ['go', 'imp', 'by-slug', 'by-id', 'resolve', 'list', 'list-gzip', 'brands'];
/** The listings measured by their pages of 15, and whether gzipped (as `npm run bench` does). */
const PAGES: Record<string, { resource: 'toplists' | 'brands'; gzip: boolean }> = {
  list: { resource: 'toplists', gzip: false },
  'list-gzip': { resource: 'toplists', gzip: true },
  brands: { resource: 'brands', gzip: true },
};
if (!baseArg || !SCENARIOS.includes(scenario)) {
  log(`usage: npm run bench:ab -- <baseline-checkout> [${SCENARIOS.join('|')}]`);
  process.exit(2);
}
const here = resolve(import.meta.dirname, '..');
const base = resolve(baseArg);
for (const root of [base, here])
  if (
    !existsSync(join(root, 'bench', 'servers', 'serve.mjs')) ||
    (root === base && !existsSync(join(root, 'dist', 'src')))
  )
    throw new Error(`${root}: not a Podium checkout with bench/ and a built dist/`);
const PAIRS = Number(process.env.BENCH_AB_PAIRS ?? 20);
const SECONDS = Number(process.env.BENCH_SECONDS ?? 2);
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 50);

interface Server {
  name: 'baseline' | 'this';
  url: string;
  pid: number;
  info: FixtureInfo;
  /** `resolve`, `brands`: the paths its dataset answers (`resolvePaths`, `pagePaths`). */
  paths?: string[];
  stop(): Promise<void>;
}

/** Builds the demo dataset with a checkout's own code, then serves it with that checkout's build. */
async function start(name: Server['name'], root: string, dir: string): Promise<Server> {
  const data = join(dir, `${name}-db`);
  const { DATABASE_URL: _, BENCH_PODIUM_DIST: __, ...rest } = process.env;
  const env = {
    ...rest,
    BENCH_DATA_DIR: data,
    PODIUM_DATA_DIR: data,
    PODIUM_PUBLIC_URL: 'http://127.0.0.1',
    LOG_LEVEL: 'info',
  };
  const logFile = join(dir, `${name}.log`);
  log(`bench:ab: building the demo dataset with ${root}`);
  const builder = pinnedChild(join(root, 'bench', 'servers', 'podium.ts'), ['build', 'demo'], env, logFile);
  const { built } = await reply<{ built: FixtureInfo }>(builder, 'built');
  // The dataset is closed before `built` is sent; the builder only idles on its IPC channel now.
  builder.kill();
  const proc = pinnedChild(join(root, 'bench', 'servers', 'serve.mjs'), [], env, logFile);
  const side = await reply<{ url: string; pid: number }>(proc, 'ready');
  return { name, url: side.url, pid: side.pid, info: built, stop: () => stop(proc) };
}

function load(s: Server): LoadSpec {
  if (scenario === 'go' || scenario === 'imp')
    return { paths: s.info.goSlugs.map((x) => `/${scenario}/${x}`), headers: { 'user-agent': UA } };
  return {
    paths: s.paths
      ? s.paths
      : scenario === 'by-slug'
        ? s.info.slugs.map((x) => `/api/v1/toplists/by-slug/${x}`)
        : s.info.ids.map((x) => `/api/v1/toplists/${x}`),
    headers: headersOf(s),
  };
}

/** A site's request headers (gzip asked for the gzipped listings). */
function headersOf(s: Server): Record<string, string> {
  const headers: Record<string, string> = { authorization: `Bearer ${s.info.siteToken}` };
  if (PAGES[scenario]?.gzip) headers['accept-encoding'] = 'gzip';
  return headers;
}

const round = (x: number, d = 3) => Math.round(x * 10 ** d) / 10 ** d;

ensureWrk(log);
if (!process.env.BENCH_NO_BUILD) {
  log('bench:ab: building this checkout (dist/src)');
  execFileSync(process.execPath, [join(here, 'scripts', 'build.js'), 'server'], {
    stdio: ['ignore', 'ignore', 'inherit'],
  });
}
const dir = mkdtempSync(join(tmpdir(), 'podium-bench-ab-'));
const servers: Server[] = [];
try {
  servers.push(await start('baseline', base, dir), await start('this', here, dir));
  const [a, b] = servers as [Server, Server];
  for (const s of servers)
    if (scenario === 'resolve') s.paths = await resolvePaths(s.url, s.info.ids, headersOf(s));
    else if (PAGES[scenario]) s.paths = await pagePaths(s.url, PAGES[scenario].resource, 15, headersOf(s));
  const run = async (s: Server, seconds = SECONDS) => {
    const c0 = cpuMicros(s.pid);
    const w = await runWrk(s.url, load(s), { seconds, connections: CONNECTIONS, dir });
    return { rps: w.rps, us: (cpuMicros(s.pid) - c0) / Math.max(1, w.requests), p99_ms: w.p99_ms };
  };
  for (const s of servers) await run(s, 2);
  const pairs: { a: Awaited<ReturnType<typeof run>>; b: Awaited<ReturnType<typeof run>> }[] = [];
  for (let i = 0; i < PAIRS; i++) {
    // The order alternates, so neither build always runs first after the other.
    const first = i % 2 ? b : a;
    const r1 = await run(first);
    const r2 = await run(first === a ? b : a);
    pairs.push(first === a ? { a: r1, b: r2 } : { a: r2, b: r1 });
    log(
      `bench:ab: pair ${i + 1}/${PAIRS}: baseline ${Math.round(pairs[i]!.a.rps)}/s ${round(pairs[i]!.a.us, 1)} µs, this ${Math.round(pairs[i]!.b.rps)}/s ${round(pairs[i]!.b.us, 1)} µs`,
    );
  }
  const ratios = pairs.map((p) => p.b.us / p.a.us);
  const cheaper = ratios.filter((r) => r < 1).length;
  const side = (k: 'a' | 'b') => ({
    rps: Math.round(median(pairs.map((p) => p[k].rps))),
    cpu_us_per_resp: round(median(pairs.map((p) => p[k].us)), 1),
    p99_ms: round(median(pairs.map((p) => p[k].p99_ms)), 2),
  });
  process.stdout.write(
    `${JSON.stringify({
      scenario: `ab-${scenario}`,
      at: new Date().toISOString(),
      baseline: base,
      pairs: PAIRS,
      seconds: SECONDS,
      baseline_median: side('a'),
      this_median: side('b'),
      cpu_ratio_median: round(median(ratios)),
      rps_ratio_median: round(median(pairs.map((p) => p.b.rps / p.a.rps))),
      pairs_this_cheaper: cheaper,
      sign_test_p: round(signTestP(cheaper, PAIRS), 4),
      load1: load1(),
    })}\n`,
  );
} finally {
  for (const s of servers) await s.stop();
  rmSync(dir, { recursive: true, force: true });
}

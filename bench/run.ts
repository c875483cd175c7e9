/**
 * `npm run bench [-- scenario...]`: runs the registered scenarios (default: all; see
 * bench/scenarios/index.ts and `--list`) and prints one JSON line per result on stdout, then a
 * markdown table of them on stderr. Progress goes to stderr. bench/README.md explains the figures.
 * BENCH_SECONDS (per run, default 3), BENCH_ROUNDS (default 3), BENCH_CONNECTIONS (default 50).
 * Podium is measured as deployed: the production build, compiled first (BENCH_NO_BUILD=1 skips that
 * when dist/ is current).
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type Dataset, type DbKind, type Fixture, startFixture } from './lib/fixture.ts';
import type { BenchContext } from './lib/harness.ts';
import { table } from './lib/table.ts';
import { ensureWrk } from './lib/wrk.ts';
import { SCENARIOS } from './scenarios/index.ts';

const log = (m: string) => process.stderr.write(`${m}\n`);
const args = process.argv.slice(2);
if (args.includes('--list')) {
  for (const s of SCENARIOS) log(`${s.name.padEnd(12)} ${s.about}`);
  process.exit(0);
}
const unknown = args.filter((a) => !SCENARIOS.some((s) => s.name === a));
if (unknown.length) {
  log(`unknown scenario(s): ${unknown.join(', ')}; known: ${SCENARIOS.map((s) => s.name).join(', ')}`);
  process.exit(2);
}
ensureWrk(log);
if (!process.env.BENCH_NO_BUILD) {
  log('bench: building the server (dist/src) to measure what is deployed');
  execFileSync(process.execPath, [join(import.meta.dirname, '..', 'scripts', 'build.js'), 'server'], {
    stdio: ['ignore', 'ignore', 'inherit'],
  });
}

const dir = mkdtempSync(join(tmpdir(), 'podium-bench-'));
const fixtures = new Map<string, Promise<Fixture>>();
/** Fixtures that have started, for pauseOthers. */
const started = new Set<Fixture>();
const ctx: BenchContext = {
  settings: {
    seconds: Number(process.env.BENCH_SECONDS ?? 3),
    rounds: Number(process.env.BENCH_ROUNDS ?? 3),
    warmupSeconds: Number(process.env.BENCH_WARMUP_SECONDS ?? 5),
    connections: Number(process.env.BENCH_CONNECTIONS ?? 50),
    dir,
  },
  log,
  writeDbs: process.env.DATABASE_URL ? ['pglite', 'postgres'] : ['pglite'],
  fixture(dataset: Dataset, db: DbKind) {
    const key = `${dataset}/${db}`;
    let f = fixtures.get(key);
    if (!f) {
      f = startFixture(dataset, db, dir, log);
      f.then((x) => started.add(x)).catch(() => {});
      fixtures.set(key, f);
    }
    return f;
  },
  pauseOthers(fx) {
    const pids = [...started].filter((o) => o !== fx).flatMap((o) => [o.podium.pid, o.bare.pid]);
    signal(pids, 'SIGSTOP');
    for (const pid of pids) paused.add(pid);
    return () => {
      signal(pids, 'SIGCONT');
      for (const pid of pids) paused.delete(pid);
    };
  },
};

/** Processes pauseOthers stopped: resumed however the run ends, so none is left stopped. */
const paused = new Set<number>();
function signal(pids: Iterable<number>, sig: NodeJS.Signals): void {
  for (const pid of pids) {
    try {
      process.kill(pid, sig);
    } catch {
      // Already gone: nothing to pause or resume.
    }
  }
}
process.on('exit', () => signal(paused, 'SIGCONT'));
for (const sig of ['SIGINT', 'SIGTERM'] as const)
  process.once(sig, () => {
    signal(paused, 'SIGCONT');
    process.kill(process.pid, sig);
  });

const lines: Record<string, unknown>[] = [];
try {
  for (const s of SCENARIOS.filter((s) => (args.length ? args.includes(s.name) : !s.byNameOnly))) {
    for (const line of await s.run(ctx)) {
      const full = { node: process.version, at: new Date().toISOString(), ...line };
      lines.push(full);
      process.stdout.write(`${JSON.stringify(full)}\n`);
    }
  }
} finally {
  for (const f of fixtures.values()) await (await f.catch(() => undefined))?.close();
  rmSync(dir, { recursive: true, force: true });
}
log(`\n${table(lines)}`);

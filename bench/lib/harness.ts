/**
 * The measuring method (DESIGN.md, "Measuring speed"): Podium and a bare node:http server answering
 * the same bytes, both pinned to the server core, loaded in turn by wrk pinned to the other core;
 * the server's CPU time per response beside req/s and latency; the median of several rounds.
 */

import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import type { Dataset, DbKind, Fixture, Side, Stalls } from './fixture.ts';
import { cpuTimes, load1, rssMb } from './proc.ts';
import { type LoadSpec, runWrk, type WrkResult } from './wrk.ts';

export interface Settings {
  /** Seconds per wrk run. */
  seconds: number;
  /** Rounds per scenario (each: one bare run and one Podium run); the median is reported. */
  rounds: number;
  /**
   * Unmeasured load on each server before the rounds. With 1 s, the first two rounds' p99 read
   * 10–17 ms for Podium and 5.7–6.4 ms for bare, the later ones 3.7 and 2.3: the machine and both
   * processes take that long to settle under load.
   */
  warmupSeconds: number;
  connections: number;
  /** Scratch directory (wrk scripts, logs, PGlite data). */
  dir: string;
}

/** What a scenario gets: settings, shared fixtures and the comparison itself. */
export interface BenchContext {
  settings: Settings;
  log(m: string): void;
  /** The dataset served on that database (built and started on first use, then shared). */
  fixture(dataset: Dataset, db: DbKind): Promise<Fixture>;
  /** Databases the write scenarios run on: PGlite, and PostgreSQL when DATABASE_URL is set. */
  writeDbs: DbKind[];
  /**
   * Stops (SIGSTOP) the processes of every other started fixture until the returned function
   * resumes them: their background work (scheduled jobs, collections after a load) ran on the
   * server core and took a third off PostgreSQL's `/go` in a run where four other servers lived.
   */
  pauseOthers(fx: Fixture): () => void;
}

/** A scenario: one file under bench/scenarios/, registered in bench/scenarios/index.ts. */
export interface Scenario {
  name: string;
  /** One line for `--list`. */
  about: string;
  /** Too long or too special for a default run: runs only when named. */
  byNameOnly?: boolean;
  /** Runs the scenario; each returned object is printed as one JSON line. */
  run(ctx: BenchContext): Promise<Record<string, unknown>[]>;
}

/** One side's figures for one run (or the median of several). */
export interface Figures {
  rps: number;
  p50_ms: number;
  p99_ms: number;
  cpu_us_per_resp: number;
  /** The kernel's part of `cpu_us_per_resp` (system time: socket writes, file writes, page faults). */
  sys_us_per_resp: number;
  requests: number;
  errors: number;
  non_2xx_3xx: number;
  /** With a background load: its req/s and p99 over the same run. */
  background_rps?: number;
  background_p99_ms?: number;
}

/** Connections of a background load (`compare`'s `background`), beside the measured ones. */
const BACKGROUND_CONNECTIONS = 20;

/** The median of `xs` (the mean of the middle two when their number is even). */
export const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  const m = Math.floor(s.length / 2);
  return s.length % 2 ? s[m]! : (s[m - 1]! + s[m]!) / 2;
};
const round = (x: number, digits = 2) => Math.round(x * 10 ** digits) / 10 ** digits;

/**
 * One wrk run against `side`, with the server's CPU time over the run; with `background`, a second
 * wrk sends that load to the same server from a second before the run to a second after it (its
 * CPU is in the run's CPU time).
 */
export async function measure(
  side: Side,
  spec: LoadSpec,
  settings: Settings,
  seconds = settings.seconds,
  background?: LoadSpec,
) {
  const behind = background
    ? runWrk(side.url, background, {
        seconds: seconds + 2,
        connections: BACKGROUND_CONNECTIONS,
        dir: settings.dir,
      })
    : undefined;
  if (behind) await new Promise((resolve) => setTimeout(resolve, 1000));
  const cpu0 = cpuTimes(side.pid);
  const w: WrkResult = await runWrk(side.url, spec, {
    seconds,
    connections: settings.connections,
    dir: settings.dir,
  });
  const cpu1 = cpuTimes(side.pid);
  const system = cpu1.system - cpu0.system;
  const cpu = cpu1.user - cpu0.user + system;
  const perResp = (us: number) => round(us / Math.max(1, w.requests), 1);
  const b = behind ? await behind : undefined;
  const figures: Figures = {
    rps: w.rps,
    p50_ms: w.p50_ms,
    p99_ms: w.p99_ms,
    cpu_us_per_resp: perResp(cpu),
    sys_us_per_resp: perResp(system),
    requests: w.requests,
    errors: w.errors,
    non_2xx_3xx: w.non_2xx_3xx,
    ...(b ? { background_rps: b.rps, background_p99_ms: b.p99_ms } : {}),
  };
  return figures;
}

function medianOf(runs: Figures[]): Figures {
  const pick = (k: keyof Figures) => median(runs.map((r) => r[k] ?? 0));
  return {
    rps: Math.round(pick('rps')),
    p50_ms: round(pick('p50_ms')),
    p99_ms: round(pick('p99_ms')),
    cpu_us_per_resp: round(pick('cpu_us_per_resp'), 1),
    sys_us_per_resp: round(pick('sys_us_per_resp'), 1),
    requests: runs.reduce((n, r) => n + r.requests, 0),
    errors: runs.reduce((n, r) => n + r.errors, 0),
    non_2xx_3xx: runs.reduce((n, r) => n + r.non_2xx_3xx, 0),
    ...(runs[0]?.background_rps === undefined
      ? {}
      : {
          background_rps: Math.round(pick('background_rps')),
          background_p99_ms: round(pick('background_p99_ms')),
        }),
  };
}

let runSeq = 0;

/**
 * Podium against bare on `spec`: a short warm-up of each, then `rounds` rounds (the order of the
 * two alternates), reporting the medians, the ratios and the machine's load. With `background`,
 * each measured run of either server has that load sent to it at the same time.
 */
export async function compare(
  ctx: BenchContext,
  name: string,
  fx: Fixture,
  spec: LoadSpec,
  goal: number | undefined,
  background?: LoadSpec,
): Promise<Record<string, unknown>> {
  const { settings } = ctx;
  await fx.can(spec);
  if (background) await fx.can(background);
  // A postback run sends ids no earlier run sent, so every run does the same work.
  const fresh = (): LoadSpec =>
    spec.transactionIds
      ? { ...spec, transactionIds: { prefix: `${spec.transactionIds.prefix}${++runSeq}` } }
      : spec;
  const loadBefore = load1();
  const podium: Figures[] = [];
  const bare: Figures[] = [];
  const stalls: Stalls[] = [];
  // BENCH_CPU_PROF=<dir>: a V8 CPU profile of Podium over the measured rounds (`npm run bench:top`).
  const profDir = process.env.BENCH_CPU_PROF;
  let writeProfile: ((file: string) => Promise<void>) | undefined;
  let warm: Figures;
  const resume = ctx.pauseOthers(fx);
  try {
    warm = await measure(fx.podium, fresh(), settings, settings.warmupSeconds);
    await measure(fx.bare, fresh(), settings, settings.warmupSeconds);
    writeProfile = profDir ? await fx.profile() : undefined;
    for (let r = 0; r < settings.rounds; r++) {
      const run = (side: Side) => measure(side, fresh(), settings, settings.seconds, background);
      const runPodium = async () => {
        await fx.resetStalls(`${name} ${fx.dataset}/${fx.db} round ${r + 1}`);
        podium.push(await run(fx.podium));
        stalls.push(await fx.stalls());
      };
      if (r % 2 === 0) {
        bare.push(await run(fx.bare));
        await runPodium();
      } else {
        await runPodium();
        bare.push(await run(fx.bare));
      }
    }
  } finally {
    resume();
  }
  if (writeProfile && profDir) {
    mkdirSync(profDir, { recursive: true });
    const file = join(profDir, `${name}-${fx.dataset}-${fx.db}.cpuprofile`);
    await writeProfile(file);
    ctx.log(`bench: profile written to ${file}`);
  }
  const p = medianOf(podium);
  const b = medianOf(bare);
  const ratio = round(p.rps / Math.max(1, b.rps));
  const line = {
    scenario: name,
    dataset: fx.dataset,
    db: fx.db,
    connections: settings.connections,
    seconds: settings.seconds,
    rounds: settings.rounds,
    podium: p,
    bare: b,
    ratio_rps: ratio,
    ratio_cpu: round(b.cpu_us_per_resp / Math.max(0.1, p.cpu_us_per_resp)),
    goal_ratio: goal ?? null,
    meets_goal: goal === undefined ? null : ratio >= goal,
    rounds_rps: { podium: podium.map((f) => f.rps), bare: bare.map((f) => f.rps) },
    rounds_p99_ms: { podium: podium.map((f) => f.p99_ms), bare: bare.map((f) => f.p99_ms) },
    /** Every response Podium gave wrk in this scenario, warm-up included (for the nothing-lost checks). */
    podium_answered: warm.requests + p.requests - warm.non_2xx_3xx - p.non_2xx_3xx,
    podium_rss_mb: rssMb(fx.podium.pid).rss_mb,
    /** Podium's event-loop delay and collection pauses: the median of the rounds, the max of maxima. */
    podium_event_loop: {
      loop_delay_p99_ms: median(stalls.map((s) => s.loop_delay_p99_ms)),
      loop_delay_max_ms: Math.max(...stalls.map((s) => s.loop_delay_max_ms)),
      gc_ms_per_s: median(stalls.map((s) => s.gc_ms_per_s)),
      gc_max_ms: Math.max(...stalls.map((s) => s.gc_max_ms)),
    },
    load1: [loadBefore, load1()],
  };
  const behind = (f: Figures) =>
    f.background_rps === undefined
      ? ''
      : ` (+ ${f.background_rps} req/s behind, p99 ${f.background_p99_ms} ms)`;
  const loop = line.podium_event_loop;
  ctx.log(
    `bench: ${name} ${fx.dataset}/${fx.db}: podium ${p.rps} req/s ${p.cpu_us_per_resp} µs/resp (sys ${p.sys_us_per_resp}) p99 ${p.p99_ms} ms${behind(p)} (loop p99 ${loop.loop_delay_p99_ms} max ${loop.loop_delay_max_ms} ms, gc ${loop.gc_ms_per_s} ms/s) | bare ${b.rps} req/s ${b.cpu_us_per_resp} µs/resp (sys ${b.sys_us_per_resp})${behind(b)} | ratio ${ratio} (load ${line.load1.join(' → ')})`,
  );
  return line;
}

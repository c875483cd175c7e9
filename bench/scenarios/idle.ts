/** An idle server: CPU used with no request at all, and resident memory, with the demo loaded. */
import type { Scenario } from '../lib/harness.ts';
import { cpuMicros, load1, rssMb } from '../lib/proc.ts';

/**
 * Whole minutes: the once-a-minute jobs start once in any 60 s window (their slots follow the
 * clock). A 30 s window held them or not, and read 0.67 or 6.7–8.3 ms/s of the same server in one
 * session (session 26). Three of them, each reported, so a one-off (below) shows as one minute's
 * figure beside the settled ones instead of being the whole reading (session 28).
 */
const SECONDS = Number(process.env.BENCH_IDLE_SECONDS ?? 180);
/** The measured window is read in parts of this length (`*_by_minute`). */
const PART_SECONDS = 60;
/**
 * Wait before measuring: start-up's own work (the first runs of the scheduled jobs, the webhook
 * worker's polls backing off from 1 s to 15 s) is not what an idle server costs. Two one-offs
 * come later and fall inside the window: V8's memory reducer, a full collection 45–100 s after
 * start that costs 250–300 ms of CPU once and gives ~35 MB back, and V8 compiling PGlite's
 * WebAssembly functions to optimised code in background threads the first few times a minute's
 * jobs run them (~50 ms a minute, session 28). Settled, the server uses ~3 ms/s.
 */
const SETTLE_SECONDS = Number(process.env.BENCH_IDLE_SETTLE_SECONDS ?? 60);

export const idle: Scenario = {
  name: 'idle',
  about: `CPU of an idle server over ${SECONDS} s (after ${SETTLE_SECONDS} s to settle) and its RSS, demo dataset on PGlite`,
  async run(ctx) {
    const fx = await ctx.fixture('demo', 'pglite');
    // Load each toplist once, as a site would, so the caches a serving process holds are there.
    for (const slug of fx.info.slugs)
      await fetch(`${fx.podium.url}/api/v1/toplists/by-slug/${slug}`, {
        headers: { authorization: `Bearer ${fx.info.siteToken}` },
      }).then((r) => r.arrayBuffer());
    await new Promise((r) => setTimeout(r, SETTLE_SECONDS * 1000));
    const p0 = cpuMicros(fx.podium.pid);
    const b0 = cpuMicros(fx.bare.pid);
    const perS = (us: number, seconds: number) => Math.round((us / seconds / 1000) * 100) / 100;
    const podiumParts: number[] = [];
    const bareParts: number[] = [];
    for (let done = 0; done < SECONDS; done += PART_SECONDS) {
      const part = Math.min(PART_SECONDS, SECONDS - done);
      const p = cpuMicros(fx.podium.pid);
      const b = cpuMicros(fx.bare.pid);
      await new Promise((r) => setTimeout(r, part * 1000));
      podiumParts.push(perS(cpuMicros(fx.podium.pid) - p, part));
      bareParts.push(perS(cpuMicros(fx.bare.pid) - b, part));
    }
    return [
      {
        scenario: 'idle',
        dataset: fx.dataset,
        db: fx.db,
        seconds: SECONDS,
        settle_seconds: SETTLE_SECONDS,
        podium_cpu_ms_per_s: perS(cpuMicros(fx.podium.pid) - p0, SECONDS),
        bare_cpu_ms_per_s: perS(cpuMicros(fx.bare.pid) - b0, SECONDS),
        podium_cpu_ms_per_s_by_minute: podiumParts,
        bare_cpu_ms_per_s_by_minute: bareParts,
        podium: rssMb(fx.podium.pid),
        goal_rss_mb: 300,
        load1: load1(),
      },
    ];
  },
};

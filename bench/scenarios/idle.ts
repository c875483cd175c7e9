/** An idle server: CPU used with no request at all, and resident memory, with the demo loaded. */
import type { Scenario } from '../lib/harness.ts';
import { cpuMicros, load1, rssMb } from '../lib/proc.ts';

/**
 * One whole minute: the once-a-minute jobs start once in any 60 s window (their slots follow the
 * clock). A 30 s window held them or not, and read 0.67 or 6.7–8.3 ms/s of the same server in one
 * session (session 26).
 */
const SECONDS = Number(process.env.BENCH_IDLE_SECONDS ?? 60);
/**
 * Wait before measuring: start-up's own work (the first runs of the scheduled jobs, the webhook
 * worker's polls backing off from 1 s to 15 s, and V8's memory reducer, a full collection ~45 s
 * after start that costs ~300 ms of CPU once and gives ~35 MB back) is not what an idle server
 * costs. A 30 s window after 30 s caught that collection and read 28 ms/s; settled, the server
 * uses 1–5 ms/s (the once-a-minute jobs).
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
    await new Promise((r) => setTimeout(r, SECONDS * 1000));
    const perS = (us: number) => Math.round((us / SECONDS / 1000) * 100) / 100;
    return [
      {
        scenario: 'idle',
        dataset: fx.dataset,
        db: fx.db,
        seconds: SECONDS,
        settle_seconds: SETTLE_SECONDS,
        podium_cpu_ms_per_s: perS(cpuMicros(fx.podium.pid) - p0),
        bare_cpu_ms_per_s: perS(cpuMicros(fx.bare.pid) - b0),
        podium: rssMb(fx.podium.pid),
        goal_rss_mb: 300,
        load1: load1(),
      },
    ];
  },
};

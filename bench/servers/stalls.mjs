/**
 * What held a bench server's event loop, driven over IPC: `stalls-reset` before a measured run,
 * `stalls` after it answers the loop's delay (p99 and max, from Node's own histogram) and V8's
 * collection pauses over the run. A p99 well above the loop's own says requests queue behind a
 * saturated core; a loop max near the p99 says a stall (a collection, a long statement) caused it.
 */
import { monitorEventLoopDelay, PerformanceObserver, performance } from 'node:perf_hooks';

// Node's histogram records the whole interval between its timer's firings, resolution included
// (an idle loop reads 1 ms at resolution 1), so the figures below subtract it. The timer runs
// only between `stalls-reset` and `stalls`, so an idle server is not woken by it.
const RESOLUTION_MS = 1;
const delay = monitorEventLoopDelay({ resolution: RESOLUTION_MS });
let since = performance.now();
let gcMs = 0;
let gcMax = 0;
new PerformanceObserver((list) => {
  for (const e of list.getEntries()) {
    gcMs += e.duration;
    gcMax = Math.max(gcMax, e.duration);
  }
}).observe({ entryTypes: ['gc'] });

const ms = (ns) => Math.round(Math.max(0, ns - RESOLUTION_MS * 1e6) / 1e4) / 100;
process.on('message', (m) => {
  if (m.cmd === 'stalls-reset') {
    delay.reset();
    delay.enable();
    since = performance.now();
    gcMs = 0;
    gcMax = 0;
    process.send?.({ stallsReset: true });
  }
  if (m.cmd === 'stalls') {
    delay.disable();
    const seconds = (performance.now() - since) / 1000;
    process.send?.({
      stalls: {
        loop_delay_p99_ms: ms(delay.percentile(99)),
        loop_delay_max_ms: ms(delay.max),
        gc_ms_per_s: Math.round((gcMs / Math.max(seconds, 0.001)) * 10) / 10,
        gc_max_ms: Math.round(gcMax * 10) / 10,
      },
    });
  }
});

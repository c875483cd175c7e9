import { describe, expect, it } from 'vitest';
import { Metrics } from './metrics.ts';

/** The `_count` of each HTTP series, by its labels as Prometheus prints them. */
async function counts(m: Metrics): Promise<Record<string, number>> {
  const out: Record<string, number> = {};
  for (const line of (await m.registry.metrics()).split('\n')) {
    const hit = /^podium_http_request_duration_seconds_count\{(.*)\} (\d+)$/.exec(line);
    if (hit) out[hit[1]!] = Number(hit[2]);
  }
  return out;
}

describe('Metrics.observeHttp', () => {
  it('counts each route, method and status apart, and keeps counting after a reset', async () => {
    const m = new Metrics();
    m.observeHttp('GET', '/go/:slug', 302, 0.001);
    m.observeHttp('GET', '/go/:slug', 302, 0.002);
    m.observeHttp('HEAD', '/go/:slug', 302, 0.001);
    m.observeHttp('GET', '/go/:slug', 404, 0.001);
    m.observeHttp('GET', '/imp/:slug', 302, 0.001);
    expect(await counts(m)).toEqual({
      'method="GET",route="/go/:slug",status="302"': 2,
      'method="HEAD",route="/go/:slug",status="302"': 1,
      'method="GET",route="/go/:slug",status="404"': 1,
      'method="GET",route="/imp/:slug",status="302"': 1,
    });
    m.registry.resetMetrics();
    m.observeHttp('GET', '/go/:slug', 302, 0.001);
    expect(await counts(m)).toEqual({ 'method="GET",route="/go/:slug",status="302"': 1 });
  });
});

/** The event-loop lag series of one scrape, by statistic (`min`, `max`, `p99`, …). */
async function lag(m: Metrics): Promise<Record<string, number>> {
  const out: Record<string, number> = {};
  for (const line of (await m.registry.metrics()).split('\n')) {
    const hit = /^podium_nodejs_eventloop_lag_(\w+)_seconds (\S+)$/.exec(line);
    if (hit) out[hit[1]!] = Number(hit[2]);
  }
  return out;
}

describe('event-loop lag series', () => {
  it('read how late the once-a-second sample fired, not the second itself, and 0 with no sample', async () => {
    const m = new Metrics();
    const started = performance.now();
    // Node records the time between two firings, so the first (at 1 s) only starts the count. The
    // loop is blocked across the second (at 2 s): it fires ~200 ms late; the third is on time.
    await new Promise((r) => setTimeout(r, 1800));
    while (performance.now() - started < 2200);
    await new Promise((r) => setTimeout(r, 1100));
    const first = await lag(m);
    expect(Object.keys(first).sort()).toEqual(['max', 'mean', 'min', 'p50', 'p90', 'p99', 'stddev']);
    // Node's histogram holds whole intervals (~1 s each): the series subtract the interval.
    expect(first.min).toBeLessThan(0.05);
    expect(first.max).toBeGreaterThan(0.1);
    expect(first.max).toBeLessThan(0.6);
    // Two firings, one on time and one late: their spread is half the lateness.
    expect(first.stddev).toBeCloseTo(first.max! / 2, 1);
    // A scrape starts the next window: right after one, no firing yet, every series 0.
    const next = await lag(m);
    expect(Object.values(next)).toEqual([0, 0, 0, 0, 0, 0, 0]);
  });
});

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

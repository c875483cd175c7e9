import { Histogram, type Metric, Registry } from 'prom-client';
import { describe, expect, it } from 'vitest';
import { KeyedHistogram } from './keyed-histogram.ts';

const BUCKETS = [0.001, 0.01, 0.1, 1];

describe('KeyedHistogram', () => {
  it('exposes exactly what prom-client’s own histogram exposes for the same observations', async () => {
    const theirs = new Registry();
    const ours = new Registry();
    const reference = new Histogram({
      name: 'h_seconds',
      help: 'test',
      labelNames: ['method', 'route', 'status'],
      buckets: BUCKETS,
      registers: [theirs],
    });
    const keyed = new KeyedHistogram('h_seconds', 'test', BUCKETS, { method: 'o', route: 'o', status: 'o' });
    ours.registerMetric(keyed as unknown as Metric);
    const seen: [string, string, string, number][] = [
      ['GET', '/a', '200', 0.0005],
      ['GET', '/a', '200', 0.001],
      ['GET', '/a', '200', 0.05],
      ['POST', '/b/:id', '422', 3],
      ['GET', '/a', '304', 0.1],
    ];
    for (const [method, route, status, v] of seen) {
      reference.labels(method, route, status).observe(v);
      const key = `${method} ${status} ${route}`;
      keyed.record(keyed.find(key) ?? keyed.add(key, { method, route, status }), v);
    }
    const sorted = async (r: Registry) => (await r.metrics()).split('\n').sort();
    expect(await sorted(ours)).toEqual(await sorted(theirs));
  });

  it('folds series past its bound into one overflow series', () => {
    const keyed = new KeyedHistogram('h', 'test', BUCKETS, { route: 'overflow' });
    for (let i = 0; i < 10_005; i++) keyed.add(`k${i}`, { route: `/r${i}` });
    const last = keyed.add('k-late', { route: '/late' });
    expect(last.labels).toEqual({ route: 'overflow' });
    expect(keyed.add('k-later', { route: '/later' })).toBe(last);
  });
});

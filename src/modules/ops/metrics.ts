import { Counter, collectDefaultMetrics, Histogram, Registry } from 'prom-client';

/**
 * The app's Prometheus registry (one per app, so tests and several apps in one process never
 * share counters). Modules add their own metrics to `registry`.
 */
export class Metrics {
  readonly registry = new Registry();
  readonly httpDuration = new Histogram({
    name: 'podium_http_request_duration_seconds',
    help: 'HTTP requests by route pattern, method and status',
    labelNames: ['method', 'route', 'status'] as const,
    buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5],
    registers: [this.registry],
  });

  constructor() {
    collectDefaultMetrics({ register: this.registry, prefix: 'podium_' });
  }

  /** A counter whose value is read from elsewhere at scrape time (monotonic sources only). */
  counterFrom(name: string, help: string, read: () => number): void {
    new Counter({
      name,
      help,
      registers: [this.registry],
      collect() {
        this.reset();
        this.inc(read());
      },
    });
  }
}

import { type IntervalHistogram, monitorEventLoopDelay } from 'node:perf_hooks';
import { Counter, collectDefaultMetrics, Gauge, Histogram, Registry } from 'prom-client';

/** How often the event loop's delay is sampled: one timer firing a second (see the constructor). */
const LAG_SAMPLE_MS = 1000;
/** The longest timer interval Node takes: a monitor with it never fires in a process's life. */
const NEVER_MS = 2 ** 31 - 1;

/**
 * The lag series prom-client names, each read from a delay histogram in nanoseconds past the
 * interval `i` (the histogram holds whole intervals; their spread is the lateness's spread).
 */
const LAG_STATS: Record<string, (h: IntervalHistogram, i: number) => number> = {
  min: (h, i) => h.min - i,
  max: (h, i) => h.max - i,
  mean: (h, i) => h.mean - i,
  stddev: (h) => h.stddev,
  p50: (h, i) => h.percentile(50) - i,
  p90: (h, i) => h.percentile(90) - i,
  p99: (h, i) => h.percentile(99) - i,
};

/**
 * prom-client's event-loop lag series (`podium_nodejs_eventloop_lag_{min,…,p99}_seconds`), from a
 * delay monitor firing every LAG_SAMPLE_MS: each firing's lateness, so an idle loop reads ~0. A
 * stall shows when a firing falls in it (once a second catches a 100 ms stall one time in ten):
 * the series are a sample; request durations and slow-statement lines show single stalls.
 */
function eventLoopLag(registry: Registry): void {
  const delay = monitorEventLoopDelay({ resolution: LAG_SAMPLE_MS });
  delay.enable();
  let taken: Record<string, number> = {};
  for (const [i, stat] of Object.keys(LAG_STATS).entries()) {
    new Gauge({
      name: `podium_nodejs_eventloop_lag_${stat}_seconds`,
      help: `The ${stat} of the event loop's delay past a timer firing every ${LAG_SAMPLE_MS} ms, since the last scrape.`,
      registers: [registry],
      collect() {
        // The first series of a scrape takes every figure and starts the next window.
        if (i === 0) {
          taken = {};
          if (delay.count > 0)
            for (const [name, get] of Object.entries(LAG_STATS))
              taken[name] = Math.max(0, get(delay, LAG_SAMPLE_MS * 1e6)) / 1e9;
          delay.reset();
        }
        this.set(taken[stat] ?? 0);
      },
    });
  }
}

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

  /**
   * Records one answered request. `route` is the route pattern (or `unmatched`), never the raw
   * URL, and methods and statuses are few: the series stay bounded.
   */
  observeHttp(method: string, route: string, status: number, seconds: number): void {
    this.httpDuration.observe({ method, route, status }, seconds);
  }

  readonly outbound = new Histogram({
    name: 'podium_outbound_request_duration_seconds',
    help: 'Calls to ad servers and operators by peer kind and outcome (ok, http_status, timeout, blocked_address, ...)',
    labelNames: ['target', 'outcome'] as const,
    buckets: [0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
    registers: [this.registry],
  });

  constructor() {
    // The event-loop delay monitor is a timer firing every `precision` ms, each firing a wake-up of
    // an idle server: prom-client's 10 ms woke it 100 times a second, and at 100 ms its 10 were most
    // of an idle server's wake-ups and most of its CPU. A stall is recorded when a firing falls in it, so
    // once a second catches a 100 ms stall one time in ten: the lag series are a sample, and the
    // request durations and slow-statement lines are where single stalls show.
    // Node's delay histogram records each whole interval between firings, not the delay past it:
    // prom-client reports those values as they are, so at one firing a second every lag series
    // read ~1 s on an idle server and a 150 ms stall did not show. Its own monitor is left with a
    // firing it never reaches and its series replaced by `eventLoopLag`'s, which subtract the interval.
    collectDefaultMetrics({
      register: this.registry,
      prefix: 'podium_',
      eventLoopMonitoringPrecision: NEVER_MS,
    });
    for (const stat of Object.keys(LAG_STATS))
      this.registry.removeSingleMetric(`podium_nodejs_eventloop_lag_${stat}_seconds`);
    eventLoopLag(this.registry);
  }

  /** Scheduled-job runs, failures and lag, read from the scheduler at scrape time. */
  jobGauges(read: () => Record<string, { runs: number; failures: number; lastLagMs: number }>): void {
    const series = (
      name: string,
      help: string,
      pick: (s: { runs: number; failures: number; lastLagMs: number }) => number,
    ) =>
      new Gauge({
        name,
        help,
        labelNames: ['job'] as const,
        registers: [this.registry],
        collect() {
          this.reset();
          for (const [job, s] of Object.entries(read())) this.labels(job).set(pick(s));
        },
      });
    series('podium_job_runs', 'Scheduled job runs started by this process', (s) => s.runs);
    series('podium_job_failures', 'Scheduled job runs that failed in this process', (s) => s.failures);
    series(
      'podium_job_lag_seconds',
      'Delay between slot start and run start, last run',
      (s) => s.lastLagMs / 1000,
    );
  }

  /** Name, help and registry of a series this class registers. */
  private scraped(name: string, help: string) {
    return { name, help, registers: [this.registry] };
  }

  /** A counter whose value is read from elsewhere at scrape time (monotonic sources only). */
  counterFrom(name: string, help: string, read: () => number): void {
    new Counter({
      ...this.scraped(name, help),
      collect() {
        this.reset();
        this.inc(read());
      },
    });
  }

  /** A gauge whose value is read from elsewhere at scrape time. */
  gaugeFrom(name: string, help: string, read: () => number): void {
    new Gauge({
      ...this.scraped(name, help),
      collect() {
        this.set(read());
      },
    });
  }

  /**
   * Affiliate tracking series: rows per group-commit batch (by kind), batch commit latency (by
   * outcome), the pending click buffer and postbacks by outcome. Returns the hooks the
   * tracking service calls.
   */
  tracking(pending: () => number): TrackingMetrics {
    const batchRows = new Histogram({
      name: 'podium_tracking_batch_rows',
      help: 'Clicks or impressions per group-commit batch',
      labelNames: ['kind'] as const,
      buckets: [1, 2, 5, 10, 25, 50, 100, 250, 500],
      registers: [this.registry],
    });
    const commitSeconds = new Histogram({
      name: 'podium_tracking_batch_commit_seconds',
      help: 'Time to write one group-commit batch of clicks and impressions',
      labelNames: ['outcome'] as const,
      buckets: [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 1],
      registers: [this.registry],
    });
    this.gaugeFrom(
      'podium_tracking_pending_hits',
      'Clicks and impressions waiting for or in their group commit',
      pending,
    );
    const blocked = new Counter({
      name: 'podium_clicks_blocked_total',
      help: "Clicks kept from the operator because the brand may not be advertised in the visitor's country",
      registers: [this.registry],
    });
    const postbacks = new Counter({
      name: 'podium_postbacks_total',
      help: 'Inbound postbacks by outcome (accepted, duplicate, or the error code)',
      labelNames: ['outcome'] as const,
      registers: [this.registry],
    });
    return {
      batch(kinds, seconds, ok) {
        for (const [kind, n] of Object.entries(kinds)) if (n) batchRows.labels(kind).observe(n);
        commitSeconds.labels(ok ? 'committed' : 'failed').observe(seconds);
      },
      postback(outcome) {
        postbacks.labels(outcome).inc();
      },
      blockedClick() {
        blocked.inc();
      },
    };
  }
}

/** What the tracking service reports to metrics. */
export interface TrackingMetrics {
  /** One written batch: rows per kind, write time, committed or not. */
  batch(kinds: Record<string, number>, seconds: number, ok: boolean): void;
  /** One postback's outcome: `accepted`, `duplicate` or an error code. */
  postback(outcome: string): void;
  /** One click sent to the compliant fallback instead of the operator. */
  blockedClick(): void;
}

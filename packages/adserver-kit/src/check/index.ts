import { httpClient } from './http.ts';
import {
  badRequests,
  forecastRules,
  inventoryBounds,
  keyInUrl,
  ordersRules,
  rateLimitProbe,
  repeatableReads,
  reportsRules,
} from './rules.ts';
import { type CheckResult, Run } from './runner.ts';
import {
  authScenario,
  forecastScenario,
  healthScenario,
  inventoryScenario,
  ordersScenario,
  reportsScenario,
  runWideChecks,
} from './scenarios.ts';

export { classifyHealth, type HealthState } from './health.ts';
export type { CheckResult } from './runner.ts';

export interface CheckOptions {
  /** The ad server's base URL (for example `https://ads.example.com/api/v1`). */
  baseUrl: string;
  apiKey: string;
  /** Run the `POST /orders` scenarios (creates drafts: point it at a sandbox). */
  allowWrites?: boolean;
  /** A key without the `forecast` scope, to check 403. */
  limitedKey?: string;
  /** Extra trusted CA certificates (PEM), for sandboxes with a private CA. */
  ca?: string | Buffer;
  /**
   * Probe the rate limit with up to this many `GET /health` calls at the end of the run (spends
   * the key's budget: off by default).
   */
  rateLimitProbe?: number;
  /** Called after each check (progress). */
  onResult?: (r: CheckResult) => void;
}

export interface CheckReport {
  baseUrl: string;
  /** True when no required check failed. */
  ok: boolean;
  counts: { pass: number; fail: number; skip: number };
  results: CheckResult[];
}

/** Runs every scenario that applies against an ad server and returns the report. */
export async function runChecks(opts: CheckOptions): Promise<CheckReport> {
  const http = httpClient(opts.baseUrl, opts.apiKey, opts.ca);
  const run = new Run(http, [opts.apiKey, opts.limitedKey ?? ''], opts.onResult);
  try {
    if (await healthScenario(run, opts.baseUrl)) {
      await inventoryScenario(run);
      await inventoryBounds(run);
      await repeatableReads(run);
      await authScenario(run, opts.limitedKey);
      await keyInUrl(run, opts.limitedKey ?? (opts.allowWrites ? opts.apiKey : undefined));
      await badRequests(run);
      await forecastScenario(run);
      await forecastRules(run);
      let order: Awaited<ReturnType<typeof ordersScenario>>;
      if (opts.allowWrites) {
        order = await ordersScenario(run);
        await ordersRules(run);
      } else
        run.skip(
          'orders',
          'POST /orders',
          'read-only run: pass --allow-writes against a sandbox to check drafts and idempotency',
          false,
        );
      await reportsScenario(run, order);
      await reportsRules(run, order);
      if (opts.rateLimitProbe) await rateLimitProbe(run, opts.rateLimitProbe);
    } else {
      for (const group of ['inventory', 'auth', 'forecast', 'orders', 'reports'])
        run.skip(
          group,
          'GET /health',
          'not run: /health gave no 200 answer, so the marketplace would stop here',
        );
    }
    runWideChecks(run);
  } finally {
    await http.close();
  }
  const counts = { pass: 0, fail: 0, skip: 0 };
  for (const r of run.results) counts[r.status]++;
  return {
    baseUrl: opts.baseUrl,
    ok: !run.results.some((r) => r.status === 'fail' && r.required),
    counts,
    results: run.results,
  };
}

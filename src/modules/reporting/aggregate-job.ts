import type { Config } from '../../config.ts';
import type { Scheduler } from '../../lib/jobs.ts';
import type { OperatorAggregates } from './aggregates.ts';

export const AGGREGATE_JOB = 'operator-aggregates';

/**
 * Registers the trailing-window pull with the PostgreSQL-backed scheduler: one run per period
 * across every process sharing the database. A run with failed days still succeeds as a job;
 * each day's failure is recorded as a pull with its reason.
 */
export function registerAggregateJob(
  scheduler: Scheduler,
  aggregates: OperatorAggregates,
  config: Pick<Config, 'aggregatePullMinutes'>,
): void {
  scheduler.register({
    name: AGGREGATE_JOB,
    everyMs: config.aggregatePullMinutes * 60_000,
    run: async (signal) => {
      await aggregates.pullWindow(signal);
    },
  });
}

import type { Scheduler } from '../../lib/jobs.ts';
import { quarterStart } from '../tracking/repository.ts';
import type { RollupZoneRepository } from './rollup-zone-repository.ts';

export const ROLLUP_ZONE_JOB = 'tracking-rollup-zones';

/** How long after a quarter hour ends its clicks are folded: batches in flight still write to it. */
export const FOLD_GRACE_MS = 120_000;

/** The quarter-hour edge a fold at `now` moves the zones to: the last one `FOLD_GRACE_MS` ago. */
export function foldTarget(now: Date): Date {
  return new Date(quarterStart(now.getTime() - FOLD_GRACE_MS));
}

/**
 * Keeps the daily rollups' zones those in use. A zone a site or programme starts using is
 * maintained by every batch from then on and built from the 15-minute rollups before reports
 * read it (they cut days from the 15-minute buckets until then); an unused zone is dropped.
 * Ready zones' clicks are then folded into their daily rows a quarter hour at a time.
 */
export class RollupZones {
  constructor(
    private readonly repo: RollupZoneRepository,
    private readonly now: () => Date = () => new Date(),
  ) {}

  /**
   * Adds and drops zones as in use, builds every zone not ready yet, then folds the ready zones'
   * ended quarter hours; returns the zones built.
   */
  async sync(signal?: AbortSignal): Promise<string[]> {
    const built: string[] = [];
    const pending = await this.repo.reconcileZones();
    if (pending.length) {
      await this.repo.barrier();
      for (const zone of pending) {
        if (signal?.aborted) return built;
        if (await this.repo.build(zone)) built.push(zone);
      }
    }
    if (!signal?.aborted) await this.repo.fold(foldTarget(this.now()));
    return built;
  }
}

/** Registers the zone upkeep with the scheduler: once a minute across every process sharing the database. */
export function registerRollupZoneJob(scheduler: Scheduler, zones: RollupZones): void {
  scheduler.register({
    name: ROLLUP_ZONE_JOB,
    everyMs: 60_000,
    run: async (signal) => void (await zones.sync(signal)),
  });
}

import type { Scheduler } from '../../lib/jobs.ts';
import type { RollupZoneRepository } from './rollup-zone-repository.ts';

export const ROLLUP_ZONE_JOB = 'tracking-rollup-zones';

/**
 * Keeps the daily rollups' zones those in use. A zone a site or programme starts using is
 * maintained by every batch from then on and built from the 15-minute rollups before reports
 * read it (they cut days from the 15-minute buckets until then); an unused zone is dropped.
 */
export class RollupZones {
  constructor(private readonly repo: RollupZoneRepository) {}

  /** Adds and drops zones as in use, then builds every zone not ready yet; returns the zones built. */
  async sync(signal?: AbortSignal): Promise<string[]> {
    const pending = await this.repo.reconcileZones();
    if (!pending.length) return [];
    await this.repo.barrier();
    const built: string[] = [];
    for (const zone of pending) {
      if (signal?.aborted) break;
      if (await this.repo.build(zone)) built.push(zone);
    }
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

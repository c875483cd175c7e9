import type { Db, Queryable } from '../../db/index.ts';
import { databaseTimezones } from '../../db/timezones.ts';
import type { CatalogService } from '../catalog/service.ts';
import type { LoggedPostback, ReplayOutcome } from '../tracking/postback-intake.ts';
import { ClickDeltaRepository } from './click-delta-repository.ts';
import { ClickDeltaMover } from './click-deltas.ts';
import { TrackingRecords } from './records.ts';
import { RecordsRepository } from './records-repository.ts';
import { RollupZoneRepository } from './rollup-zone-repository.ts';
import { RollupZones } from './rollup-zones.ts';
import { TrackingStats } from './stats.ts';
import { StatsRepository } from './stats-repository.ts';
import { SuggestedOrders } from './suggested-order.ts';
import { SuggestedOrderRepository } from './suggested-order-repository.ts';

/** What reporting needs from tracking ingestion: a logged postback processed again. */
export type Replayer = (entry: LoggedPostback) => Promise<ReplayOutcome>;

/**
 * Reporting over what tracking ingestion wrote: stats by day and dimension, suggested toplist
 * orders, the conversions and raw postback log as the admin API lists them, and the rollups
 * behind them. Ingestion's click statement appends each batch's counts to the rollup deltas in
 * the same statement as its rows (so no report sees a batch half-counted); this service moves the
 * deltas into the 15-minute rollups and keeps each reporting zone's daily rollups. Report queries
 * run on `reads` (the read replica when there is one); writes and replays on `db`.
 */
export class ReportingService {
  /** Stats by day and dimension, and sites' reporting zones. */
  readonly stats: TrackingStats;
  /** Toplist orders suggested by shrunk EPC (read from the rollups, never published). */
  readonly suggestedOrders: SuggestedOrders;
  /** Conversions and the raw postback log as the admin API lists them, and replays. */
  readonly records: TrackingRecords;
  /** The zones whose daily rollups are maintained: added, built and dropped as sites and programmes use them. */
  readonly rollupZones: RollupZones;
  /** Moves the deltas click batches append into the 15-minute rollups (migration 0085). */
  private readonly deltas: ClickDeltaMover;

  constructor(
    db: Db,
    reads: Queryable,
    catalog: CatalogService,
    now: () => Date,
    replay: Replayer,
    /** Where failures of background work (moving click deltas) are reported. */
    warn: (msg: string, err: unknown) => void,
  ) {
    this.stats = new TrackingStats(new StatsRepository(db), new StatsRepository(reads), catalog, () =>
      databaseTimezones(db),
    );
    this.suggestedOrders = new SuggestedOrders(new SuggestedOrderRepository(reads), catalog, now);
    this.records = new TrackingRecords(new RecordsRepository(reads), new RecordsRepository(db), replay, now);
    this.rollupZones = new RollupZones(new RollupZoneRepository(db), now);
    this.deltas = new ClickDeltaMover(
      new ClickDeltaRepository(db),
      // Reports scan the deltas unindexed: a few thousand cost them well under a millisecond, and
      // a move on PGlite empties the table by TRUNCATE (a new file each time): rarely when quiet.
      { everyMs: 60_000, maxDeltas: 2_000 },
      (err) => warn('moving click rollup deltas failed', err),
    );
  }

  /** Told after each committed click batch how many rollup deltas it appended. */
  clicksWritten(deltas: number): void {
    this.deltas.appended(deltas);
  }

  /**
   * Moves every click rollup delta into the rollup rows now (after a bulk history write: reports
   * scan the deltas unindexed). A failure is reported and leaves them to the next move.
   */
  async moveDeltas(): Promise<void> {
    await this.deltas.moveNow();
  }

  /** Moves the last deltas into the rollups (after ingestion drained, at shutdown). */
  stop(): Promise<void> {
    return this.deltas.stop();
  }
}

import type { Db, Queryable } from '../../db/index.ts';
import type { TrackingPartitions } from './partitions.ts';
import { type PostbackJob, TrackingRepository } from './repository.ts';
import type { ClickRow } from './types.ts';

/** A toplist position's tracking link with what a click on it is attributed to. */
export interface PositionLink {
  linkId: number;
  trackerId: number;
  offerId: number;
  brandId: number;
  siteId: number;
  toplistId: number;
  position: number;
  programId: number | null;
}

/**
 * Writes a past history of clicks, impressions and postbacks in bulk (the demo dataset): the
 * same set-based statements as the group commit, so the rollup deltas are appended with the rows
 * (the caller has reporting move them into the rollup rows once written).
 */
export class HistoryWriter {
  constructor(
    private readonly db: Db,
    private readonly partitions: TrackingPartitions,
  ) {}

  /** The first tracking link of every position of the toplists with these slugs, in toplist and position order. */
  async positionLinks(slugs: readonly string[]): Promise<(PositionLink & { slug: string })[]> {
    return this.db.query<PositionLink & { slug: string }>(
      `SELECT DISTINCT ON (l.toplist_id, l.position) t.slug,
              l.id AS "linkId", l.tracker_id AS "trackerId", tr.offer_id AS "offerId", o.brand_id AS "brandId",
              l.site_id AS "siteId", l.toplist_id AS "toplistId", l.position, pt.program_id AS "programId"
       FROM tracking_links l
       JOIN toplists t ON t.id = l.toplist_id
       JOIN trackers tr ON tr.id = l.tracker_id
       JOIN offers o ON o.id = tr.offer_id
       LEFT JOIN program_trackers pt ON pt.tracker_id = l.tracker_id
       WHERE t.slug = ANY($1::text[]) AND l.position IS NOT NULL
       ORDER BY l.toplist_id, l.position, l.tracker_id`,
      [slugs],
    );
  }

  /** Writes the hits, then the postbacks (which attribute to them), in batches of `batch` rows. */
  async write(hits: readonly ClickRow[], postbacks: readonly PostbackJob[], batch = 5000): Promise<void> {
    const times = [...hits.map((h) => h.at), ...postbacks.map((p) => p.receivedAt)];
    if (!times.length) return;
    await this.partitions.ensureFor(times);
    await this.db.tx(async (q: Queryable) => {
      const repo = new TrackingRepository(q);
      for (let i = 0; i < hits.length; i += batch) await repo.insertClicks(hits.slice(i, i + batch));
      for (let i = 0; i < postbacks.length; i += batch)
        await repo.writePostbacks(postbacks.slice(i, i + batch));
    });
    // by=sub_id reads the raw clicks through their BRIN time index: summarise the history's ranges
    // now rather than at the partitions job's next hour.
    await this.partitions
      .summarizeTimeIndexes()
      .catch((err) => process.emitWarning(`summarising the clicks' time index failed: ${String(err)}`));
  }
}

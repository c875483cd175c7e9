import type { Db } from '../../db/index.ts';
import { ROLLUP_ORDER } from '../tracking/repository.ts';

/** The 15-minute click rollups' deltas summed into `source`'s keys of the rollup rows. */
const addTo = (source: string) =>
  `INSERT INTO click_rollups_base AS r (bucket, kind, site_id, toplist_id, position, brand_id, program_id, link_id, n)
   SELECT bucket, kind, site_id, toplist_id, position, brand_id, program_id, link_id, sum(n) FROM ${source}
   GROUP BY 1, 2, 3, 4, 5, 6, 7, 8
   ${ROLLUP_ORDER}
   ON CONFLICT ON CONSTRAINT click_rollups_key DO UPDATE SET n = r.n + EXCLUDED.n`;

/** Adds the deltas `source` yields to the rollup rows and counts them. */
const moveFrom = (source: string) =>
  `WITH moved AS (${source}), added AS (${addTo('moved')}) SELECT count(*)::int AS n FROM moved`;

/**
 * The tables behind the click_rollups view, in the one order every statement that locks both
 * takes them (the daily fold, the zone barrier, a move): two of them taking the two in turn in
 * opposite orders could wait on each other until PostgreSQL's deadlock check broke one.
 */
export const CLICK_ROLLUP_TABLES = 'click_rollups_base, click_rollup_deltas';

/** SQL of the click rollup deltas that click batches append (migration 0085). */
export class ClickDeltaRepository {
  /**
   * On PGlite nothing runs beside this process's statements (one connection), so the deltas are
   * emptied by TRUNCATE, which leaves no dead rows behind where no VACUUM runs.
   */
  private readonly exclusive: boolean;

  constructor(private readonly db: Db) {
    this.exclusive = db.kind === 'pglite';
  }

  /**
   * Moves every delta into the 15-minute rollup rows, summed per key, in one transaction; returns
   * how many it moved. Shared databases delete the deltas as they are read, so two processes
   * moving at once never move one twice (the second waits on the rows the first deleted and
   * skips them); the rows added meanwhile wait for the next move.
   */
  async move(): Promise<number> {
    if (!this.exclusive) {
      return this.db.tx(async (q) => {
        // The statement alone would lock the deltas before the rows, the daily fold the rows first.
        await q.exec(`LOCK TABLE ${CLICK_ROLLUP_TABLES} IN ROW EXCLUSIVE MODE`);
        const [r] = await q.query<{ n: number }>(moveFrom('DELETE FROM click_rollup_deltas RETURNING *'));
        return r?.n ?? 0;
      });
    }
    return this.db.tx(async (q) => {
      const [r] = await q.query<{ n: number }>(moveFrom('SELECT * FROM click_rollup_deltas'));
      const n = r?.n ?? 0;
      if (n > 0) await q.exec('TRUNCATE click_rollup_deltas');
      return n;
    });
  }
}

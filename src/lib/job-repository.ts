import { firstValue } from '../db/first-value.ts';
import type { Queryable } from '../db/index.ts';

/** Outcome of a job run as stored in `job_runs.status`. */
export type JobRunStatus = 'succeeded' | 'failed' | 'interrupted';

/**
 * SQL of the scheduler (table job_runs): one row per (job, slot), claimed by one process. Each
 * statement is prepared once: every job's slot runs them, and on PGlite planning them was most of
 * a minute boundary's work.
 */
export class JobRunRepository {
  constructor(private readonly db: Queryable) {}

  /**
   * Claims the (job, slot) row for `owner`: inserts it, or takes over a run that was
   * interrupted. Returns the run id, or undefined when another process holds the slot.
   */
  async claim(job: string, slot: number, owner: string): Promise<number | undefined> {
    return firstValue<number>(
      this.db,
      `INSERT INTO job_runs (job, slot, owner, status) VALUES ($1, $2, $3, 'running')
       ON CONFLICT (job, slot) DO UPDATE SET owner = EXCLUDED.owner, status = 'running', started_at = now(), error = NULL
         WHERE job_runs.status = 'interrupted'
       RETURNING id`,
      [job, slot, owner],
      'job_run_claim',
    );
  }

  /** The stored status of a (job, slot) run, if any. */
  async statusOf(job: string, slot: number): Promise<string | undefined> {
    return firstValue<string>(
      this.db,
      'SELECT status FROM job_runs WHERE job = $1 AND slot = $2',
      [job, slot],
      'job_run_status',
    );
  }

  /**
   * Deletes at most `limit` runs that no slot can need again: of each job in `keepFrom`, the runs
   * of slots before its bound; of any other job (renamed, removed), the runs started before
   * `unknownBefore`. Returns how many went.
   */
  async prune(keepFrom: ReadonlyMap<string, number>, unknownBefore: Date, limit: number): Promise<number> {
    const rows = await this.db.query(
      `DELETE FROM job_runs WHERE id IN (
         SELECT r.id FROM job_runs r
           LEFT JOIN unnest($1::text[], $2::bigint[]) AS k(job, keep_from) ON k.job = r.job
          WHERE CASE WHEN k.job IS NULL THEN r.started_at < $3 ELSE r.slot < k.keep_from END
          LIMIT $4)
       RETURNING id`,
      [[...keepFrom.keys()], [...keepFrom.values()], unknownBefore, limit],
      'job_run_prune',
    );
    return rows.length;
  }

  /** Records how a claimed run ended. */
  async finish(id: number, status: JobRunStatus, error: string | null): Promise<void> {
    await this.db.query(
      'UPDATE job_runs SET status = $2, finished_at = now(), error = $3 WHERE id = $1',
      [id, status, error],
      'job_run_finish',
    );
  }
}

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
   * Deletes at most `limit` runs started more than `olderThanMs` ago by the database's clock, the one
   * `started_at` is written by; returns how many went.
   */
  async prune(olderThanMs: number, limit: number): Promise<number> {
    const rows = await this.db.query(
      `DELETE FROM job_runs WHERE id IN (
         SELECT id FROM job_runs WHERE started_at < now() - make_interval(secs => $1::float8 / 1000) LIMIT $2)
       RETURNING id`,
      [olderThanMs, limit],
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

import type { Queryable } from '../../db/index.ts';

/** A requested backfill of a programme's operator aggregates, with its progress. */
export interface Backfill {
  id: number;
  programId: number;
  from: string;
  to: string;
  status: 'queued' | 'running' | 'done' | 'failed';
  daysTotal: number;
  /** Days pulled so far (ok or failed), in order from `from`. */
  daysDone: number;
  daysFailed: number;
  error: string | null;
  createdAt: string;
  startedAt: string | null;
  finishedAt: string | null;
}

const SELECT = `SELECT id::int AS id, program_id AS "programId", to_char(from_day, 'YYYY-MM-DD') AS "from",
                       to_char(to_day, 'YYYY-MM-DD') AS "to", status, days_total AS "daysTotal",
                       days_done AS "daysDone", days_failed AS "daysFailed", error, created_at AS "createdAt",
                       started_at AS "startedAt", finished_at AS "finishedAt"`;

const iso = (d: Date | string | null) => (d === null ? null : new Date(d).toISOString());
const row = (r: Backfill): Backfill => ({
  ...r,
  createdAt: iso(r.createdAt) as string,
  startedAt: iso(r.startedAt),
  finishedAt: iso(r.finishedAt),
});

/** SQL of backfill requests (table aggregate_backfills): queue, claim with a lease, progress. */
export class BackfillRepository {
  constructor(private readonly db: Queryable) {}

  async insert(programId: number, from: string, to: string, daysTotal: number): Promise<Backfill> {
    const [r] = await this.db.query<Backfill>(
      `INSERT INTO aggregate_backfills (program_id, from_day, to_day, days_total) VALUES ($1, $2, $3, $4)
       RETURNING ${SELECT.slice('SELECT '.length)}`,
      [programId, from, to, daysTotal],
    );
    return row(r as Backfill);
  }

  /** A programme's requests, newest first. */
  async list(programId: number, limit: number): Promise<Backfill[]> {
    const rows = await this.db.query<Backfill>(
      `${SELECT} FROM aggregate_backfills WHERE program_id = $1 ORDER BY id DESC LIMIT $2`,
      [programId, limit],
    );
    return rows.map(row);
  }

  /** How many of a programme's requests are queued or running. */
  async openCount(programId: number): Promise<number> {
    const [r] = await this.db.query<{ n: number }>(
      `SELECT count(*)::int AS n FROM aggregate_backfills WHERE program_id = $1 AND status IN ('queued', 'running')`,
      [programId],
    );
    return r?.n ?? 0;
  }

  /**
   * Gives the oldest queued request (or a running one whose lease ran out: its process is gone)
   * to `owner` until `leaseUntil`; undefined when there is none.
   */
  async claim(owner: string, now: Date, leaseUntil: Date): Promise<Backfill | undefined> {
    const [r] = await this.db.query<Backfill>(
      `UPDATE aggregate_backfills SET status = 'running', owner = $1, lease_until = $3,
              started_at = coalesce(started_at, $2)
       WHERE id = (SELECT id FROM aggregate_backfills
                   WHERE status = 'queued' OR (status = 'running' AND lease_until < $2)
                   ORDER BY id LIMIT 1 FOR UPDATE SKIP LOCKED)
       RETURNING ${SELECT.slice('SELECT '.length)}`,
      [owner, now.toISOString(), leaseUntil.toISOString()],
    );
    return r && row(r);
  }

  /** Records progress and extends the lease; false when `owner` no longer holds the request. */
  async progress(
    id: number,
    owner: string,
    p: { daysDone: number; daysFailed: number; error: string | null },
    leaseUntil: Date,
  ): Promise<boolean> {
    const rows = await this.db.query(
      `UPDATE aggregate_backfills SET days_done = $3, days_failed = $4, error = $5, lease_until = $6
       WHERE id = $1 AND owner = $2 AND status = 'running' RETURNING id`,
      [id, owner, p.daysDone, p.daysFailed, p.error, leaseUntil.toISOString()],
    );
    return rows.length > 0;
  }

  /** Ends a request: done or failed with its error. */
  async finish(id: number, owner: string, status: 'done' | 'failed', error: string | null, at: Date) {
    await this.db.query(
      `UPDATE aggregate_backfills SET status = $3, error = $4, finished_at = $5, owner = NULL, lease_until = NULL
       WHERE id = $1 AND owner = $2`,
      [id, owner, status, error, at.toISOString()],
    );
  }

  /** Gives a request back to the queue (shutdown): the next claim resumes after its done days. */
  async release(id: number, owner: string): Promise<void> {
    await this.db.query(
      `UPDATE aggregate_backfills SET status = 'queued', owner = NULL, lease_until = NULL
       WHERE id = $1 AND owner = $2 AND status = 'running'`,
      [id, owner],
    );
  }
}

import type { Scheduler } from '../lib/jobs.ts';
import type { Db } from './index.ts';

/**
 * When PGlite checkpoints. Embedded PostgreSQL runs as a single-user backend: there is no
 * checkpointer, so neither `checkpoint_timeout` nor `max_wal_size` ever starts a checkpoint and the
 * write-ahead log grew without bound while a server ran (433 MB of it after 800 000 click rows,
 * the redo point still where the server started): disk a server never gave back, all of it
 * replayed by the next start after a crash. Five minutes is `checkpoint_timeout`'s default, but a
 * checkpoint on time waits for 1 MB of log, so an idle server (a few job rows a minute) does not
 * write its buffers every five minutes for nothing; 256 MB bounds what a crash leaves to replay
 * (a checkpoint here is one pass on the serving thread, its flushes included: 8–75 ms measured
 * with 16 MB of buffers before it flushed, 73 ms after 129 MB of log with the data directory
 * flushed ahead in the thread pool, pglite-fsync.ts).
 */
export interface CheckpointPolicy {
  /** Log written since the last checkpoint's redo point that calls for one at once. */
  maxWalBytes: number;
  /** Age of the last checkpoint that calls for one, once `minWalBytes` of log were written since. */
  maxAgeMs: number;
  minWalBytes: number;
}

export const PGLITE_CHECKPOINTS: CheckpointPolicy = {
  maxWalBytes: 256 * 1024 * 1024,
  maxAgeMs: 5 * 60_000,
  minWalBytes: 1024 * 1024,
};

/** Checkpoints the database when `policy` says one is due; returns whether it did. */
export async function checkpointIfDue(
  db: Db,
  policy: CheckpointPolicy = PGLITE_CHECKPOINTS,
): Promise<boolean> {
  const [r] = await db.query<{ behind: string; age_ms: number }>(
    `SELECT (pg_current_wal_lsn() - redo_lsn)::text AS behind,
            (extract(epoch FROM clock_timestamp() - checkpoint_time) * 1000)::float8 AS age_ms
     FROM pg_control_checkpoint()`,
    [],
    'wal_checkpoint_due',
  );
  const behind = Number(r?.behind ?? 0);
  const due =
    behind >= policy.maxWalBytes || (behind >= policy.minWalBytes && (r?.age_ms ?? 0) >= policy.maxAgeMs);
  if (due) await db.exec('CHECKPOINT');
  return due;
}

/** Checks every minute whether the embedded database needs a checkpoint (PostgreSQL has its own checkpointer). */
export function registerCheckpointJob(scheduler: Scheduler, db: Db): void {
  if (db.kind !== 'pglite') return;
  scheduler.register({
    name: 'pglite-checkpoint',
    everyMs: 60_000,
    run: async () => void (await checkpointIfDue(db)),
  });
}

import type { Scheduler } from '../lib/jobs.ts';
import type { Db } from './index.ts';

/**
 * When PGlite checkpoints. Embedded PostgreSQL runs as a single-user backend: there is no
 * checkpointer, so neither `checkpoint_timeout` nor `max_wal_size` ever starts a checkpoint and the
 * write-ahead log grew without bound while a server ran (750 MB after ~1.4 M click rows, the redo
 * point where the server started) — disk a server never gave back, and all of it replayed by the
 * next start after a crash. These are PostgreSQL's own defaults for the two triggers, except that
 * a checkpoint on time waits for 1 MB of log, so an idle server (a few job rows a minute) does not
 * write its buffers every five minutes for nothing.
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

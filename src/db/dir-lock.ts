import { join } from 'node:path';
import lockfile from 'proper-lockfile';

/** Thrown when another live process holds the embedded database. */
export class DirLockedError extends Error {
  constructor(readonly dir: string) {
    super(
      `the embedded database in ${dir} is in use by another process; stop that process first ` +
        '(or use the admin API while it runs, or a PostgreSQL server via DATABASE_URL)',
    );
    this.name = 'DirLockedError';
  }
}

/**
 * How old a lock may grow before it counts as left by a crashed process. The holder touches it
 * every half of that; an event loop held longer than this (a very long synchronous statement on
 * the embedded database) lets another process take the directory, so it is generous.
 */
export const LOCK_STALE_MS = 10_000;

/**
 * Takes an exclusive lock on a PGlite data directory (proper-lockfile: a `podium.lock`
 * directory, made atomically and kept fresh while this process runs): two processes writing one
 * embedded database would corrupt it. A start right after a crash waits until the dead
 * process's lock is stale (at most ~LOCK_STALE_MS) and takes it over; a directory a live process
 * holds is refused with DirLockedError once that wait is over. The lock is also removed at exit.
 * Resolves to the (synchronous) release. `staleMs` is shortened by tests only (2 s at least).
 */
export async function lockDir(dir: string, staleMs = LOCK_STALE_MS): Promise<() => void> {
  const lockfilePath = join(dir, 'podium.lock');
  try {
    await lockfile.lock(dir, {
      lockfilePath,
      stale: staleMs,
      // Once a second, until a dead process's lock has certainly gone stale.
      retries: { retries: Math.ceil(staleMs / 1000) + 5, factor: 1, minTimeout: 1000, maxTimeout: 1000 },
      // A lost lock (its refresh failed or came too late) is reported, not thrown from a timer.
      onCompromised: (err) => process.emitWarning(`data directory lock of ${dir}: ${err.message}`),
    });
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ELOCKED') throw new DirLockedError(dir);
    throw err;
  }
  return () => {
    try {
      lockfile.unlockSync(dir, { lockfilePath });
    } catch (err) {
      // Released already (or taken from us after a compromise): nothing left to release.
      if ((err as NodeJS.ErrnoException).code !== 'ENOTACQUIRED') throw err;
    }
  };
}

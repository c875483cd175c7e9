import { closeSync, openSync, readFileSync, rmSync, writeSync } from 'node:fs';
import { join } from 'node:path';

/** Thrown when another live process holds the embedded database. */
export class DirLockedError extends Error {
  constructor(
    readonly dir: string,
    readonly pid: number,
  ) {
    super(
      `the embedded database in ${dir} is in use by process ${pid}; stop that process first ` +
        '(or use the admin API while it runs, or a PostgreSQL server via DATABASE_URL)',
    );
    this.name = 'DirLockedError';
  }
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/**
 * Takes an exclusive pid-file lock on a PGlite data directory: two processes writing one
 * embedded database would corrupt it. A lock left by a dead process is taken over.
 * Returns the release function.
 */
export function lockDir(dir: string): () => void {
  const file = join(dir, 'podium.pid');
  for (let attempt = 0; attempt < 2; attempt++) {
    try {
      const fd = openSync(file, 'wx');
      writeSync(fd, String(process.pid));
      closeSync(fd);
      return () => rmSync(file, { force: true });
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
      const pid = Number.parseInt(readFileSync(file, 'utf8'), 10);
      if (Number.isInteger(pid) && pid > 0 && pid !== process.pid && alive(pid))
        throw new DirLockedError(dir, pid);
      rmSync(file, { force: true });
    }
  }
  throw new Error(`could not lock ${dir}`);
}

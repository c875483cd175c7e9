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

/** Who holds the lock: the PID plus what tells this process apart from a later one with the same PID. */
export interface LockOwner {
  pid: number;
  /** Start time of the process in clock ticks since boot (`/proc/<pid>/stat` field 22); Linux only. */
  start?: string;
  /** `/proc/sys/kernel/random/boot_id`: a lock from before a reboot is stale whatever its PID. */
  boot?: string;
}

function readProc(path: string): string | undefined {
  try {
    return readFileSync(path, 'utf8').trim();
  } catch {
    return undefined;
  }
}

/** Start time of process `pid` (field 22 of /proc/<pid>/stat; the name in field 2 may hold spaces). */
export function processStart(pid: number): string | undefined {
  const stat = readProc(`/proc/${pid}/stat`);
  if (!stat) return undefined;
  return stat.slice(stat.lastIndexOf(')') + 2).split(' ')[19];
}

const bootId = () => readProc('/proc/sys/kernel/random/boot_id');

/** This process as a lock owner. */
export function currentOwner(): LockOwner {
  return { pid: process.pid, start: processStart(process.pid), boot: bootId() };
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** Reads a lock file: JSON `{pid, start, boot}`, or a bare PID as older versions wrote it. */
function parseOwner(text: string): LockOwner | undefined {
  try {
    const v = JSON.parse(text) as LockOwner;
    if (typeof v === 'number') return { pid: v };
    return Number.isInteger(v.pid) && v.pid > 0 ? v : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Whether the recorded owner still runs: its PID is alive and, where recorded, it is the same
 * boot and the process at that PID started when the owner did (a PID reused by an unrelated
 * process after a crash or reboot does not hold the lock).
 */
export function ownerAlive(owner: LockOwner): boolean {
  if (owner.pid === process.pid || !alive(owner.pid)) return false;
  if (owner.boot && bootId() && owner.boot !== bootId()) return false;
  if (owner.start) {
    const now = processStart(owner.pid);
    if (now && now !== owner.start) return false;
  }
  return true;
}

/**
 * Takes an exclusive pid-file lock on a PGlite data directory: two processes writing one
 * embedded database would corrupt it. A lock left by a dead process, or by one whose PID now
 * belongs to another process, is taken over. Returns the release function.
 */
export function lockDir(dir: string): () => void {
  const file = join(dir, 'podium.pid');
  for (let attempt = 0; attempt < 2; attempt++) {
    try {
      const fd = openSync(file, 'wx');
      writeSync(fd, JSON.stringify(currentOwner()));
      closeSync(fd);
      return () => rmSync(file, { force: true });
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
      const owner = parseOwner(readFileSync(file, 'utf8'));
      if (owner && ownerAlive(owner)) throw new DirLockedError(dir, owner.pid);
      rmSync(file, { force: true });
    }
  }
  throw new Error(`could not lock ${dir}`);
}

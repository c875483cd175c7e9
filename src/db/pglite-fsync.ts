import fs from 'node:fs';
import { type FileHandle, open } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { type Extension, PGlite } from '@electric-sql/pglite';
import { AppError } from '../lib/errors.ts';

/**
 * PGlite never flushes a file to disk by itself: it starts PostgreSQL with `fsync=off` (`-F`), and
 * Emscripten's file system answers `fsync` and `fdatasync` without a system call even when it is
 * on (strace: none either way). A commit then reaches the page cache only: it survives the process
 * being killed, not a power cut. This module makes both calls real for files on disk and starts
 * PostgreSQL with `fsync=on`, so the embedded database keeps PostgreSQL's own ordering: the log
 * flushed at every commit before it is answered and before a changed page is written out of the
 * buffers, every file a checkpoint wrote flushed before `pg_control` records it.
 *
 * A commit's flush of the log runs in the thread pool, not on the serving thread: PostgreSQL is
 * told it is done and the flush is owed; the handle answers the statement (and any statement
 * that finished after it) only once `settle` has it on disk, and until then anything that could
 * depend on it flushes it first, on this thread: the next message into PostgreSQL, any write to
 * a file other than the log, any other flush, any other change to a file (`logFirst`). With
 * clicks and toplist reads together, reads went from 3 600–4 100/s at p99 23–32 ms to
 * 6 300–8 700/s at p99 11–12 ms (bench/README.md, session 17).
 */

/**
 * PGlite's start parameters with `fsync` on (the `-F` removed, `fsync=on` said last), and the two
 * settings the flush at commit depends on pinned to PostgreSQL's defaults.
 */
export const DURABLE_START_PARAMS: readonly string[] = [
  ...PGlite.defaultStartParams.filter((p) => p !== '-F'),
  ...['-c', 'fsync=on', '-c', 'wal_sync_method=fdatasync', '-c', 'synchronous_commit=on'],
];

/** Emscripten's imports of the wasm module, by name: the calls replaced or watched. */
type SyscallImports = Record<string, ((...args: number[]) => number) | undefined>;

/** The parts of Emscripten's module this reads. */
interface EmscriptenModule {
  FS: {
    getStream(fd: number): EmscriptenStream | null | undefined;
    isDir(mode: number): boolean;
  };
  /** The file system that maps files to real ones on disk: its streams' `nfd` is a real descriptor. */
  NODEFS: { realPath(node: EmscriptenNode): string };
}

interface LogFds {
  here: number;
  pool: number;
  flushing: number;
}

interface EmscriptenNode {
  mode: number;
  mount?: { type: unknown };
}

interface EmscriptenStream {
  nfd?: number;
  /** The path inside Emscripten's file system (`/pglite/data/pg_wal/…`). */
  path?: string;
  node?: EmscriptenNode;
}

/** Emscripten's file-system imports (`logFirst` looks at every one). */
const CHANGES_FILES = /^(__syscall_|fd_|_munmap_js$|_msync_js$)/;

/**
 * The file-system imports that change no file, or are handled on their own (the two flushes, the
 * two writes): every other one flushes an owed log first.
 */
const UNCHANGING = new Set([
  ...['__syscall_fdatasync', 'fd_sync', 'fd_write', 'fd_pwrite'],
  ...['fd_close', 'fd_fdstat_get', 'fd_pread', 'fd_read', 'fd_seek'],
  ...['__syscall_accept4', '__syscall_bind', '__syscall_chdir', '__syscall_connect', '__syscall_dup'],
  ...['__syscall_dup3', '__syscall_faccessat', '__syscall_fadvise64', '__syscall_fcntl64'],
  ...['__syscall_fstat64', '__syscall_getcwd', '__syscall_getdents64', '__syscall_getegid32'],
  ...['__syscall_geteuid32', '__syscall_getgid32', '__syscall_getuid32', '__syscall_ioctl'],
  ...['__syscall_listen', '__syscall_lstat64', '__syscall_newfstatat', '__syscall_pipe2', '__syscall_poll'],
  ...['__syscall_readlinkat', '__syscall_recvfrom', '__syscall_sendto', '__syscall_socket'],
  ...['__syscall_stat64', '__syscall_statfs64', '__syscall_umask'],
]);

/** A log segment's path inside Emscripten's file system. */
const LOG_SEGMENT = /\/pg_wal\/[0-9A-F]{24}$/;

/**
 * The flushes of one PGlite data directory: `extension` (passed to PGlite) replaces Emscripten's
 * `fdatasync` and `fsync` with the real calls on the file's descriptor and watches for PostgreSQL
 * stopping; `guard` makes the PGlite instance refuse every call after the first flush that failed
 * or after PostgreSQL stopped, until a restart.
 */
export class DiskSync {
  private failed: AppError | undefined;
  /** The message of PostgreSQL's last PANIC or FATAL line on its standard error. */
  private lastWord: string | undefined;
  private module: EmscriptenModule | undefined;
  /** Whether the whole directory was flushed, before PostgreSQL's first flush of this run. */
  private treeFlushed = false;
  /**
   * Log segments a commit asked to flush that are not on disk yet (real path → the number of
   * that ask): `settle` flushes them in the thread pool, `payLogSync` at once.
   */
  private readonly owed = new Map<string, number>();
  private asks = 0;
  /**
   * Descriptors of log segments opened here, by real path (flushed without PostgreSQL's own, which
   * it may close meanwhile): one for flushes on this thread, one for the thread pool, so a failed
   * write-back is reported to both (Linux reports it once per open file), and the number of
   * flushes running in the thread pool.
   */
  private readonly logFds = new Map<string, LogFds>();
  private settling: Promise<void> | undefined;

  constructor(private readonly dataDir: string) {}

  /** The PGlite extension that installs the calls; PGlite must be started with DURABLE_START_PARAMS. */
  readonly extension: Extension = {
    name: 'podium_disk_sync',
    setup: async (_pg, opts) => ({ emscriptenOpts: this.install(opts) }),
  };

  /** Why the database is refused (a flush failed), or null. */
  problem(): string | null {
    return this.failed?.message ?? null;
  }

  /**
   * Throws once a flush failed. A failed fsync may have dropped the pages it could not write (Linux
   * marks them clean), so nothing later may be answered as stored: PostgreSQL stops (PANIC) and
   * recovers from its last checkpoint at the next start, which is what a restart does here.
   */
  refuseIfFailed(): void {
    if (this.failed) throw this.failed;
  }

  /**
   * Refuses every message into `lite`'s backend once a flush failed, inside PGlite's own queue (a
   * statement waiting behind the one that failed, a transaction's ROLLBACK, LISTEN): the backend
   * was left mid-flush, holding the log's lock, and must not run anything again.
   */
  guard(lite: PGlite): void {
    const raw = lite.execProtocolRawSync.bind(lite);
    lite.execProtocolRawSync = (message) => {
      this.refuseIfFailed();
      // A statement that got in before the last commit's flush finished must not read it undurable
      // (a lone Sync, which PGlite sends after each simple query, reads nothing).
      if (this.owed.size && !isSync(message)) this.payLog();
      return raw(message);
    };
  }

  /**
   * Flushes, in the thread pool, the log of every commit whose flush was left owed, and resolves
   * once it is on disk (the caller answers nothing before); rejects and refuses the database when a
   * flush failed.
   */
  async settle(): Promise<void> {
    // After a failed flush nothing is retried: a retry can succeed for pages the kernel dropped.
    this.refuseIfFailed();
    for (;;) {
      if (this.settling) await this.settling;
      else if (this.owed.size) {
        this.settling = this.payLogAsync().finally(() => {
          this.settling = undefined;
        });
      } else return;
    }
  }

  /** Closes the log descriptors opened here, once no flush in the thread pool uses them (at close). */
  async release(): Promise<void> {
    await this.settling?.catch(() => {});
    for (const e of this.logFds.values()) closeLogFds(e);
    this.logFds.clear();
  }

  private install(opts: Record<string, unknown>): Record<string, unknown> {
    const instantiate = opts.instantiateWasm as (
      imports: Record<string, SyscallImports>,
      done: unknown,
    ) => unknown;
    const preRun = (opts.preRun as unknown[] | undefined) ?? [];
    const printErr = opts.printErr as ((line: string) => void) | undefined;
    return {
      ...opts,
      printErr: (line: string) => {
        // PostgreSQL's last word before it stops, for the reason given from then on.
        const last = /\b(?:PANIC|FATAL):\s+(.*)$/.exec(line);
        if (last) this.lastWord = last[1];
        printErr?.(line);
      },
      preRun: [
        ...preRun,
        (mod: EmscriptenModule) => {
          this.module = mod;
        },
      ],
      instantiateWasm: (imports: Record<string, SyscallImports>, done: unknown) => {
        const env = imports.env;
        const datasync = env?.__syscall_fdatasync;
        const fsync = env?.fd_sync;
        // Another PGlite build names its calls differently: refuse to start rather than run unflushed.
        if (!env || !datasync || !fsync)
          throw new Error(
            'PGlite no longer imports __syscall_fdatasync and fd_sync: its files cannot be flushed',
          );
        env.__syscall_fdatasync = (fd) => this.flush(fd, true, datasync);
        env.fd_sync = (fd) => this.flush(fd, false, fsync);
        const wasi = imports.wasi_snapshot_preview1;
        if (wasi?.fd_sync) wasi.fd_sync = env.fd_sync;
        this.watchForStop(env, wasi);
        this.logFirst(env);
        return instantiate(imports, done);
      },
    };
  }

  /**
   * PostgreSQL stopping inside PGlite (a PANIC aborts, a FATAL exits): PGlite swallows it and the
   * next message spins the serving thread at full CPU forever (seen after the disk filled up), so
   * it is marked as a failure and `guard` refuses every later call.
   */
  private watchForStop(env: SyscallImports, wasi: SyscallImports | undefined): void {
    const stopping = (name: string, stopsWith: (code: number) => boolean) => {
      const original = env[name];
      if (!original) return;
      const hooked = (...args: number[]) => {
        if (stopsWith(args[0] as number)) this.stopped();
        return original(...args);
      };
      env[name] = hooked;
      if (wasi?.[name]) wasi[name] = hooked;
    };
    stopping('_abort_js', () => true);
    stopping('__assert_fail', () => true);
    // 0: PGlite's close; 99: PostgreSQL's main returning once started (PGlite's PGLITE_EXIT_ALIVE);
    // 100: any ERROR unwinding to the main loop, which PGlite recovers from (POSTGRES_MAIN_LONGJMP:
    // a unique violation or a failed VACUUM takes that way, and was once taken for a stop).
    const failure = (code: number) => code !== 0 && code !== 99 && code !== 100;
    stopping('exit', failure);
    stopping('proc_exit', failure);
  }

  /**
   * PostgreSQL's rule that a change's log is on disk before the change itself, kept while a
   * commit's flush is owed: every call that could change a file (a write to a file other than a
   * log segment, a truncation, rename, unlink, open, a directory made or removed…) first flushes
   * the owed log at once. A page written out of the buffers, a checkpoint's `pg_control`, a
   * TRUNCATE or DROP emptying the old files after its commit. Every file-system import is covered
   * but those known to change nothing, so a call a later PGlite adds is covered too.
   */
  private logFirst(env: SyscallImports): void {
    for (const name of ['fd_write', 'fd_pwrite']) {
      const original = env[name];
      if (!original) throw new Error(`PGlite no longer imports ${name}: the log could be flushed late`);
      env[name] = (fd: number, ...rest: number[]) => {
        if (this.owed.size) {
          const stream = this.module?.FS.getStream(fd);
          if (this.onDisk(stream) && !this.isLogSegment(stream)) this.payLog();
        }
        return original(fd, ...rest);
      };
    }
    for (const [name, original] of Object.entries(env)) {
      if (!original || !CHANGES_FILES.test(name) || UNCHANGING.has(name)) continue;
      env[name] = (...args: number[]) => {
        if (this.owed.size) this.payLog();
        return original(...args);
      };
    }
  }

  /** Whether `stream` is a file on disk (a NODEFS stream, with a real descriptor). */
  private onDisk(stream: EmscriptenStream | null | undefined): stream is EmscriptenStream & { nfd: number } {
    return stream?.nfd !== undefined && stream.node?.mount?.type === this.module?.NODEFS;
  }

  private isLogSegment(stream: EmscriptenStream | null | undefined): boolean {
    return stream?.path !== undefined && LOG_SEGMENT.test(stream.path);
  }

  private stopped(): void {
    this.refuse(
      `The embedded database stopped (PostgreSQL aborted${this.lastWord ? `: ${this.lastWord}` : ''})`,
    );
  }

  /** Records the first reason the database is refused (a later one does not replace it). */
  private refuse(reason: string): AppError {
    this.failed ??= new AppError('service_unavailable', `${reason}; it is refused until a restart`);
    return this.failed;
  }

  /**
   * One `fdatasync` (`data`) or `fsync` of a file PostgreSQL holds open; streams of other file
   * systems (standard output, in-memory files) get Emscripten's own answer.
   */
  private flush(fd: number, data: boolean, emscripten: (fd: number) => number): number {
    const mod = this.module;
    if (!mod) return this.fail(new Error('a flush came before PGlite started'));
    const stream = mod.FS.getStream(fd);
    if (!this.onDisk(stream)) return emscripten(fd);
    this.refuseIfFailed();
    // Anything flushed after a commit's log is flushed after it.
    if (this.owed.size) this.payLog();
    try {
      // What a first start's database creation (PGlite writes it without a flush) or an earlier run
      // left in the page cache, on disk before anything PostgreSQL orders after it.
      if (!this.treeFlushed) {
        for (const path of treePaths(this.dataDir)) syncPathSync(path);
        this.treeFlushed = true;
      }
      // A commit's log flush is owed rather than waited for on the serving thread: the caller is
      // answered only after `settle`, and everything PostgreSQL writes meanwhile waits for it.
      if (data && this.isLogSegment(stream) && stream.node) {
        const path = mod.NODEFS.realPath(stream.node);
        // Opened now, before the disk could fail this write-back, so both hear of it.
        this.logFd(path);
        this.owed.set(path, ++this.asks);
        return 0;
      }
      if (data) fs.fdatasyncSync(stream.nfd);
      else fs.fsyncSync(stream.nfd);
    } catch (err) {
      // PostgreSQL ignores these for a directory (some file systems cannot flush one).
      const code = (err as NodeJS.ErrnoException).code;
      if ((code === 'EINVAL' || code === 'EBADF') && stream.node && mod.FS.isDir(stream.node.mode)) return 0;
      // Thrown into PostgreSQL, not returned as an error: a PANIC inside PGlite never returns (it
      // spun at full CPU when tried), while the throw unwinds the statement before a checkpoint
      // could record itself done. `guard` keeps anything else from running in that backend.
      this.fail(err);
    }
    return 0;
  }

  /** A segment's descriptors opened here (read-only: enough to flush it), kept while it is written. */
  private logFd(path: string): LogFds {
    let entry = this.logFds.get(path);
    if (entry === undefined) {
      // Segments neither owed nor being flushed are done with: PostgreSQL writes one at a time.
      for (const [old, e] of this.logFds)
        if (!this.owed.has(old) && e.flushing === 0) {
          closeLogFds(e);
          this.logFds.delete(old);
        }
      const here = fs.openSync(path, 'r');
      try {
        entry = { here, pool: fs.openSync(path, 'r'), flushing: 0 };
      } catch (err) {
        fs.closeSync(here);
        throw err;
      }
      this.logFds.set(path, entry);
    }
    return entry;
  }

  /** Flushes the owed log at once, on this thread (throws into PostgreSQL when it fails). */
  private payLog(): void {
    try {
      this.payLogSync();
    } catch (err) {
      this.fail(err);
    }
  }

  private payLogSync(): void {
    for (const path of this.owed.keys()) fs.fdatasyncSync(this.logFd(path).here);
    this.owed.clear();
  }

  private async payLogAsync(): Promise<void> {
    const asked = [...this.owed];
    try {
      await Promise.all(
        asked.map(([path]) => {
          const entry = this.logFd(path);
          entry.flushing += 1;
          return new Promise<void>((resolve, reject) =>
            fs.fdatasync(entry.pool, (err) => {
              entry.flushing -= 1;
              if (err) reject(err);
              else resolve();
            }),
          );
        }),
      );
    } catch (err) {
      this.fail(err);
    }
    // An ask made while this ran is still owed.
    for (const [path, ask] of asked) if (this.owed.get(path) === ask) this.owed.delete(path);
  }

  private fail(err: unknown): never {
    throw this.refuse(`The database could not flush a file to disk (${(err as Error).message})`);
  }

  /**
   * Flushes every file and directory of the data directory in the thread pool, before a
   * checkpoint: what the checkpoint would otherwise flush on the serving thread (one after 129 MB of
   * log held it 205 ms, 73 ms after this).
   */
  async flushDataDir(): Promise<void> {
    this.refuseIfFailed();
    try {
      const paths = treePaths(this.dataDir);
      // A few at a time: each is a system call waiting on the disk, not CPU.
      for (let i = 0; i < paths.length; i += 8) await Promise.all(paths.slice(i, i + 8).map(syncPath));
    } catch (err) {
      this.fail(err);
    }
  }
}

function closeLogFds(e: LogFds): void {
  fs.closeSync(e.here);
  fs.closeSync(e.pool);
}

/** Whether `message` is the protocol's Sync alone ('S', length 4). */
function isSync(message: Uint8Array): boolean {
  return message.length === 5 && message[0] === 0x53 && message[4] === 4;
}

/**
 * Every file and directory under `dataDir`, each directory after its own files, then the directory
 * holding `dataDir` (a first start creates it).
 */
function treePaths(dataDir: string): string[] {
  const out: string[] = [];
  const dirs = [dataDir];
  for (let i = 0; i < dirs.length; i++) {
    const dir = dirs[i] as string;
    for (const e of fs.readdirSync(dir, { withFileTypes: true })) {
      if (e.isDirectory()) dirs.push(join(dir, e.name));
      else if (e.isFile()) out.push(join(dir, e.name));
    }
    out.push(dir);
  }
  out.push(dirname(dataDir));
  return out;
}

const ENOENT = (err: unknown) => (err as NodeJS.ErrnoException).code === 'ENOENT';

/** Flushes a file or directory through a read-only descriptor; gone since it was listed is fine. */
function syncPathSync(path: string): void {
  let fd: number;
  try {
    fd = fs.openSync(path, 'r');
  } catch (err) {
    if (ENOENT(err)) return;
    throw err;
  }
  try {
    fs.fdatasyncSync(fd);
  } finally {
    fs.closeSync(fd);
  }
}

/** syncPathSync in the thread pool (also the click journal's directory after it creates a file). */
export async function syncPath(path: string): Promise<void> {
  let file: FileHandle;
  try {
    file = await open(path, 'r');
  } catch (err) {
    if (ENOENT(err)) return;
    throw err;
  }
  try {
    await file.datasync();
  } finally {
    await file.close();
  }
}

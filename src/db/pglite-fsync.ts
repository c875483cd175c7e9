import fs from 'node:fs';
import { dirname, join } from 'node:path';
import { type Extension, PGlite } from '@electric-sql/pglite';
import { AppError } from '../lib/errors.ts';

/**
 * PGlite never flushes a file to disk by itself: it starts PostgreSQL with `fsync=off` (`-F`), and
 * Emscripten's file system answers `fsync` and `fdatasync` without a system call even when it is
 * on. A commit would then reach the page cache only: it survives the process being killed, not a
 * power cut. This module makes both calls real, synchronous system calls on the file's descriptor
 * and starts PostgreSQL with `fsync=on`, so the embedded database keeps PostgreSQL's own ordering
 * unchanged: the log flushed at every commit before the statement returns, before a changed page
 * is written out, and every file a checkpoint wrote flushed before `pg_control` records it.
 *
 * The calls replaced are Emscripten imports named by PGlite's build (`__syscall_fdatasync`,
 * `fd_sync`): the PGlite version is pinned exactly in package.json, and a build without them
 * refuses to start rather than run unflushed.
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
  NODEFS: unknown;
}

interface EmscriptenStream {
  nfd?: number;
  node?: { mode: number; mount?: { type: unknown } };
}

/**
 * The flushes of one PGlite data directory: `extension` (passed to PGlite) replaces Emscripten's
 * `fdatasync` and `fsync` with the real calls and watches for PostgreSQL stopping; `guard` makes
 * the PGlite instance refuse every call after the first flush that failed or after PostgreSQL
 * stopped, until a restart.
 */
export class DiskSync {
  private failed: AppError | undefined;
  /** The message of PostgreSQL's last PANIC or FATAL line on its standard error. */
  private lastWord: string | undefined;
  private module: EmscriptenModule | undefined;
  /** Whether the whole directory was flushed, before PostgreSQL's first flush of this run. */
  private treeFlushed = false;

  constructor(private readonly dataDir: string) {}

  /** The PGlite extension that installs the calls; PGlite must be started with DURABLE_START_PARAMS. */
  readonly extension: Extension = {
    name: 'podium_disk_sync',
    setup: async (_pg, opts) => ({ emscriptenOpts: this.install(opts) }),
  };

  /** Why the database is refused (a flush failed, PostgreSQL stopped), or null. */
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
   * was left mid-flush and must not run anything again.
   */
  guard(lite: PGlite): void {
    const raw = lite.execProtocolRawSync.bind(lite);
    lite.execProtocolRawSync = (message) => {
      this.refuseIfFailed();
      return raw(message);
    };
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
        if (!env || !datasync || !fsync)
          throw new Error(
            'PGlite no longer imports __syscall_fdatasync and fd_sync: its files cannot be flushed',
          );
        env.__syscall_fdatasync = (fd) => this.flush(fd, true, datasync);
        env.fd_sync = (fd) => this.flush(fd, false, fsync);
        const wasi = imports.wasi_snapshot_preview1;
        if (wasi?.fd_sync) wasi.fd_sync = env.fd_sync;
        this.watchForStop(env, wasi);
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
    // a unique violation or a failed VACUUM takes that way).
    const failure = (code: number) => code !== 0 && code !== 99 && code !== 100;
    stopping('exit', failure);
    stopping('proc_exit', failure);
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
   * One `fdatasync` (`data`) or `fsync` of a file PostgreSQL holds open, on this thread: the
   * statement that asked for it returns only once it is on disk. Streams of other file systems
   * (standard output, in-memory files) get Emscripten's own answer.
   */
  private flush(fd: number, data: boolean, emscripten: (fd: number) => number): number {
    const mod = this.module;
    if (!mod) return this.fail(new Error('a flush came before PGlite started'));
    const stream = mod.FS.getStream(fd);
    if (stream?.nfd === undefined || stream.node?.mount?.type !== mod.NODEFS) return emscripten(fd);
    this.refuseIfFailed();
    try {
      // What a first start's database creation (PGlite writes it without a flush) or an earlier run
      // left in the page cache, on disk before anything PostgreSQL orders after it.
      if (!this.treeFlushed) {
        for (const path of treePaths(this.dataDir)) syncPath(path);
        this.treeFlushed = true;
      }
      if (data) fs.fdatasyncSync(stream.nfd);
      else fs.fsyncSync(stream.nfd);
    } catch (err) {
      // PostgreSQL ignores these for a directory (some file systems cannot flush one).
      const code = (err as NodeJS.ErrnoException).code;
      if ((code === 'EINVAL' || code === 'EBADF') && stream.node && mod.FS.isDir(stream.node.mode)) return 0;
      // Thrown into PostgreSQL, not returned as an error: a PANIC inside PGlite never returns (it
      // spins at full CPU), while the throw unwinds the statement before a checkpoint could record
      // itself done. `guard` keeps anything else from running in that backend.
      this.fail(err);
    }
    return 0;
  }

  private fail(err: unknown): never {
    throw this.refuse(`The database could not flush a file to disk (${(err as Error).message})`);
  }
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

/** Flushes a file or directory through a read-only descriptor; gone since it was listed is fine. */
function syncPath(path: string): void {
  let fd: number;
  try {
    fd = fs.openSync(path, 'r');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return;
    throw err;
  }
  try {
    fs.fdatasyncSync(fd);
  } finally {
    fs.closeSync(fd);
  }
}

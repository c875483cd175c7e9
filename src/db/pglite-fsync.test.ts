import fs, { mkdtempSync, readlinkSync, rmSync } from 'node:fs';
import { type FileHandle, open } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { type Db, openDb } from './index.ts';
import { DURABLE_START_PARAMS } from './pglite-fsync.ts';

/**
 * The real fdatasync and fsync calls, with the path of the file each flushed, and, while
 * `writes.on`, every write to a file that is not a log segment. Every flush is synchronous: a call
 * into the thread pool (`pool`, `handle`) would be a flush the statement did not wait for.
 */
async function watchFlushes() {
  const seen: { call: 'fdatasync' | 'fsync' | 'handle' | 'pool' | 'write' | 'truncate'; path: string }[] = [];
  const writes = { on: false };
  const path = (fd: number) => readlinkSync(`/proc/self/fd/${fd}`);
  const datasync = fs.fdatasyncSync;
  const fsync = fs.fsyncSync;
  const pool = fs.fdatasync;
  const write = fs.writeSync as (...a: unknown[]) => number;
  const truncate = fs.truncateSync;
  const spies = [
    vi.spyOn(fs, 'fdatasyncSync').mockImplementation((fd) => {
      seen.push({ call: 'fdatasync', path: path(fd) });
      datasync(fd);
    }),
    vi.spyOn(fs, 'fsyncSync').mockImplementation((fd) => {
      seen.push({ call: 'fsync', path: path(fd) });
      fsync(fd);
    }),
    vi.spyOn(fs, 'fdatasync').mockImplementation(((fd: number, done: (err: Error | null) => void) => {
      const p = path(fd);
      pool(fd, (err) => {
        seen.push({ call: 'pool', path: p });
        done(err);
      });
    }) as typeof fs.fdatasync),
    vi.spyOn(fs, 'writeSync').mockImplementation(((fd: number, ...rest: unknown[]) => {
      if (writes.on && !/\/pg_wal\//.test(path(fd))) seen.push({ call: 'write', path: path(fd) });
      return write(fd, ...rest);
    }) as typeof fs.writeSync),
    vi.spyOn(fs, 'truncateSync').mockImplementation((file, len) => {
      if (writes.on) seen.push({ call: 'truncate', path: String(file) });
      truncate(file, len);
    }),
  ];
  const probe = await open(__filename, 'r');
  const proto = Object.getPrototypeOf(probe) as { datasync(this: FileHandle): Promise<void> };
  await probe.close();
  const handle = proto.datasync;
  proto.datasync = function (this: FileHandle) {
    seen.push({ call: 'handle', path: path(this.fd) });
    return handle.call(this);
  };
  return {
    seen,
    writes,
    restore: () => {
      for (const s of spies) s.mockRestore();
      proto.datasync = handle;
    },
  };
}

describe('PGlite on disk flushes where PostgreSQL flushes', { timeout: 60_000 }, () => {
  const dir = mkdtempSync(join(tmpdir(), 'podium-fsync-'));
  const data = join(dir, 'data');
  let flushes: Awaited<ReturnType<typeof watchFlushes>>;
  beforeAll(async () => {
    flushes = await watchFlushes();
  });
  afterEach(() => {
    flushes.seen.length = 0;
  });
  afterAll(() => {
    flushes.restore();
    rmSync(dir, { recursive: true, force: true });
  });

  it('starts PostgreSQL with fsync on', () => {
    expect(DURABLE_START_PARAMS).not.toContain('-F');
    expect(DURABLE_START_PARAMS.join(' ')).toContain('-c fsync=on');
  });

  it('flushes the log at each commit, not for reads, and every file a checkpoint wrote', async () => {
    const db = await openDb({ dataDir: data });
    try {
      expect(await db.query('SHOW fsync')).toEqual([{ fsync: 'on' }]);
      expect(await db.query('SHOW wal_sync_method')).toEqual([{ wal_sync_method: 'fdatasync' }]);
      expect(await db.query('SHOW synchronous_commit')).toEqual([{ synchronous_commit: 'on' }]);
      expect(await db.query('SHOW wal_init_zero')).toEqual([{ wal_init_zero: 'off' }]);
      await db.exec('CREATE TABLE t (id int)');
      flushes.seen.length = 0;

      // On this thread, before the statement returns.
      const log = { call: 'fdatasync', path: expect.stringMatching(/\/pg_wal\/[0-9A-F]{24}$/) };
      await db.query('INSERT INTO t VALUES ($1)', [1]);
      expect(flushes.seen).toEqual([log]);
      flushes.seen.length = 0;
      await db.query('INSERT INTO t VALUES ($1)', [2], 'insert_t');
      expect(flushes.seen).toEqual([log]);
      flushes.seen.length = 0;
      await db.tx(async (q) => {
        await q.query('INSERT INTO t VALUES ($1)', [3]);
        await q.query('INSERT INTO t VALUES ($1)', [4]);
      });
      expect(flushes.seen).toEqual([log]);
      flushes.seen.length = 0;

      expect(await db.query('SELECT count(*)::int AS n FROM t')).toEqual([{ n: 4 }]);
      expect(flushes.seen).toEqual([]);

      const [rel] = await db.query<{ p: string }>("SELECT pg_relation_filepath('t') AS p");
      await db.exec('CHECKPOINT');
      expect(flushes.seen.map((f) => f.call)).not.toContain('pool');
      expect(flushes.seen.map((f) => f.call)).not.toContain('handle');
      const paths = flushes.seen.map((f) => f.path);
      expect(paths).toContain(join(data, rel!.p));
      // pg_control after the table's file: the checkpoint is recorded once what it wrote is on disk.
      expect(paths.indexOf(join(data, rel!.p))).toBeLessThan(
        paths.lastIndexOf(join(data, 'global', 'pg_control')),
      );
      flushes.seen.length = 0;
    } finally {
      await db.close();
    }
    // The shutdown checkpoint.
    expect(flushes.seen.map((f) => f.path)).toContain(join(data, 'global', 'pg_control'));
  });

  it("flushes the log before what PostgreSQL orders after it: pg_control, a TRUNCATE's emptied files", async () => {
    const db = await openDb({ dataDir: data });
    try {
      await db.exec('CREATE TABLE IF NOT EXISTS u (id int)');
      flushes.seen.length = 0;
      // A checkpoint: its record flushed before `pg_control`, which points at the record, is written.
      flushes.writes.on = true;
      await db.exec('CHECKPOINT');
      flushes.writes.on = false;
      const control = flushes.seen.findLastIndex(
        (f) => f.call === 'write' && f.path === join(data, 'global', 'pg_control'),
      );
      expect(control).toBeGreaterThan(0);
      expect(flushes.seen[control - 1]).toEqual({
        call: 'fdatasync',
        path: expect.stringMatching(/\/pg_wal\/[0-9A-F]{24}$/),
      });

      // A TRUNCATE empties the table's old files right after its commit.
      await db.query('INSERT INTO u SELECT generate_series(1, 1000)');
      flushes.seen.length = 0;
      flushes.writes.on = true;
      await db.query('TRUNCATE u');
      flushes.writes.on = false;
      const emptied = flushes.seen.findIndex((f) => f.call === 'truncate' && f.path.includes('/base/'));
      expect(emptied).toBeGreaterThan(0);
      expect(flushes.seen.slice(0, emptied)).toContainEqual({
        call: 'fdatasync',
        path: expect.stringMatching(/\/pg_wal\/[0-9A-F]{24}$/),
      });
    } finally {
      flushes.writes.on = false;
      await db.close();
    }
  });

  it('flushes the whole data directory and its parent once at open', async () => {
    const db = await openDb({ dataDir: data });
    try {
      const paths = flushes.seen.map((f) => f.path);
      expect(paths).toContain(join(data, 'global', 'pg_control'));
      expect(paths).toContain(join(data, 'base'));
      expect(paths).toContain(dir);
    } finally {
      await db.close();
    }
  });

  it('takes an error PostgreSQL recovers from (a unique violation, a failed VACUUM) for an error, not a stop', async () => {
    // PGlite unwinds every ERROR to PostgreSQL's main loop through exit code 100; taken for a stop,
    // the first 409 of an admin request refused the whole database until a restart.
    const db = await openDb({ dataDir: data });
    try {
      await db.exec('CREATE TABLE IF NOT EXISTS once (id int PRIMARY KEY)');
      await db.query('INSERT INTO once VALUES (1) ON CONFLICT DO NOTHING');
      await expect(db.query('INSERT INTO once VALUES ($1)', [1])).rejects.toMatchObject({ code: '23505' });
      await expect(db.query('INSERT INTO once VALUES ($1)', [1], 'insert_once')).rejects.toMatchObject({
        code: '23505',
      });
      await expect(
        db.tx(async (q) => {
          await q.query('INSERT INTO once VALUES (2)');
          await q.query('SELECT 1 / 0');
        }),
      ).rejects.toMatchObject({ code: '22012' });
      await expect(db.exec('VACUUM (FREEZE) public.no_such_table')).rejects.toMatchObject({ code: '42P01' });
      expect(db.diskProblem()).toBeNull();
      expect(await db.query('SELECT count(*)::int AS n FROM once')).toEqual([{ n: 1 }]);
    } finally {
      await db.close();
    }
  });
});

describe('PGlite on disk when the disk fails a flush', { timeout: 60_000 }, () => {
  const root = mkdtempSync(join(tmpdir(), 'podium-fsync-eio-'));
  /** Which flush fails (the call and the file's path); the disk's EIO is the one thing made up. */
  let fails: ((call: string, path: string) => boolean) | undefined;
  const spies: { mockRestore(): void }[] = [];
  beforeAll(() => {
    const eio = () => Object.assign(new Error('EIO: i/o error, fsync'), { code: 'EIO' });
    const path = (fd: number) => readlinkSync(`/proc/self/fd/${fd}`);
    const datasync = fs.fdatasyncSync;
    const fsync = fs.fsyncSync;
    const pool = fs.fdatasync;
    const write = fs.writeSync as (...a: unknown[]) => number;
    spies.push(
      vi.spyOn(fs, 'writeSync').mockImplementation(((fd: number, ...rest: unknown[]) => {
        if (fails?.('write', path(fd)))
          throw Object.assign(new Error('ENOSPC: no space left on device, write'), { code: 'ENOSPC' });
        return write(fd, ...rest);
      }) as typeof fs.writeSync),
      vi.spyOn(fs, 'fdatasyncSync').mockImplementation((fd) => {
        if (fails?.('fdatasync', path(fd))) throw eio();
        datasync(fd);
      }),
      vi.spyOn(fs, 'fsyncSync').mockImplementation((fd) => {
        if (fails?.('fsync', path(fd))) throw eio();
        fsync(fd);
      }),
      vi.spyOn(fs, 'fdatasync').mockImplementation(((fd: number, done: (err: Error | null) => void) => {
        if (fails?.('fdatasync', path(fd))) setImmediate(() => done(eio()));
        else pool(fd, done);
      }) as typeof fs.fdatasync),
    );
  });
  afterEach(() => {
    fails = undefined;
  });
  afterAll(() => {
    for (const s of spies) s.mockRestore();
    rmSync(root, { recursive: true, force: true });
  });
  /** A database with rows 1 to 3 committed, in a directory of its own. */
  async function seeded(name: string): Promise<{ db: Db; data: string }> {
    const data = join(root, name);
    const db = await openDb({ dataDir: data });
    await db.exec('CREATE TABLE t (id int)');
    for (const id of [1, 2, 3]) await db.query('INSERT INTO t VALUES ($1)', [id]);
    return { db, data };
  }
  /** The rows the next start finds (after recovery from the last checkpoint). */
  async function afterRestart(data: string): Promise<number[]> {
    const db = await openDb({ dataDir: data });
    try {
      expect(db.diskProblem()).toBeNull();
      const ids = (await db.query<{ id: number }>('SELECT id FROM t ORDER BY id')).map((r) => r.id);
      await db.query('INSERT INTO t VALUES ($1)', [99]);
      return ids;
    } finally {
      await db.close();
    }
  }
  const once = () => {
    let fired = false;
    return (call: string) => {
      if (call !== 'fdatasync' || fired) return false;
      fired = true;
      return true;
    };
  };

  it('fails the write whose commit it was, and every statement after it until a restart', async () => {
    const { db, data } = await seeded('commit');
    try {
      expect(db.diskProblem()).toBeNull();
      fails = once();
      await expect(db.query('INSERT INTO t VALUES ($1)', [4], 'insert_t')).rejects.toMatchObject({
        code: 'service_unavailable',
        status: 503,
      });
      expect(db.diskProblem()).toMatch(/^The database could not flush a file to disk \(EIO: i\/o error/);
      await expect(db.query('SELECT 1')).rejects.toThrow(/refused until a restart/);
      await expect(db.exec('SELECT 1')).rejects.toThrow(/refused until a restart/);
      await expect(db.tx(async (q) => q.query('INSERT INTO t VALUES (5)'))).rejects.toThrow(/refused/);
    } finally {
      await db.close();
    }
    // Row 4's commit reached the page cache before its flush failed: it may or may not be there.
    const ids = await afterRestart(data);
    expect(ids.filter((id) => id !== 4)).toEqual([1, 2, 3]);
  });

  it('refuses a statement already waiting behind the one whose flush failed', async () => {
    const { db, data } = await seeded('queued');
    try {
      // A disk that failed a log flush fails the next ones too.
      fails = (call, path) => call === 'fdatasync' && path.includes('/pg_wal/');
      const first = db.query('INSERT INTO t VALUES ($1)', [4]);
      const queued = db.query('INSERT INTO t VALUES ($1)', [5]);
      // Both awaited at once: either may be refused first.
      await Promise.all(
        [first, queued].map((p) => expect(p).rejects.toMatchObject({ code: 'service_unavailable' })),
      );
    } finally {
      await db.close();
    }
    fails = undefined;
    expect(await afterRestart(data)).not.toContain(5);
  });

  it('fails a transaction whose commit it was', async () => {
    const { db, data } = await seeded('tx');
    try {
      fails = once();
      await expect(
        db.tx(async (q) => {
          await q.query('INSERT INTO t VALUES ($1)', [4]);
          await q.query('INSERT INTO t VALUES ($1)', [5]);
        }),
      ).rejects.toMatchObject({ code: 'service_unavailable' });
    } finally {
      await db.close();
    }
    const ids = await afterRestart(data);
    expect(ids.filter((id) => id !== 4 && id !== 5)).toEqual([1, 2, 3]);
  });

  it('stops answering, without spinning, when PostgreSQL aborts on a full disk', async () => {
    const { db, data } = await seeded('full');
    try {
      fails = (call, path) => call === 'write' && path.includes('/pg_wal/');
      const big = 'INSERT INTO t SELECT g FROM generate_series(10, 200000) g';
      await expect(db.query(big)).rejects.toMatchObject({
        code: 'service_unavailable',
        message: expect.stringMatching(
          /^The embedded database stopped \(PostgreSQL aborted: .*No space left on device/,
        ),
      });
      fails = undefined;
      expect(db.diskProblem()).toMatch(/No space left on device/);
      // Refused at once: before this guard, the next message spun the serving thread forever.
      await expect(db.query('SELECT 1')).rejects.toThrow(/stopped .*refused until a restart/);
    } finally {
      await db.close();
    }
    expect(await afterRestart(data)).toEqual([1, 2, 3]);
  });

  it('fails a checkpoint whose data file it was, and the next start recovers every commit', async () => {
    const { db, data } = await seeded('checkpoint');
    try {
      fails = (call, path) => call === 'fsync' && path.startsWith(join(data, 'base'));
      await expect(db.exec('CHECKPOINT')).rejects.toMatchObject({ code: 'service_unavailable' });
      await expect(db.query('SELECT 1')).rejects.toThrow(/refused until a restart/);
    } finally {
      await db.close();
    }
    fails = undefined;
    expect(await afterRestart(data)).toEqual([1, 2, 3]);
  });
});

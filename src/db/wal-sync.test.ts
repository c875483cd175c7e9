import { mkdtempSync, rmSync } from 'node:fs';
import { open } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PGlite } from '@electric-sql/pglite';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { openDb } from './index.ts';
import { mayWrite, type OpenForSync, openForSync, WalSync, WRITE_POSITION_SQL } from './wal-sync.ts';

describe('mayWrite', () => {
  it('tells statements that can write from reads', () => {
    for (const sql of [
      'INSERT INTO clicks (id) VALUES ($1)',
      'WITH ins AS (INSERT INTO t VALUES (1) RETURNING *) SELECT * FROM ins',
      "UPDATE sites SET name = 'x'",
      'delete from t',
      'CREATE TABLE t (id int)',
      "SELECT nextval('s')",
      'CHECKPOINT',
    ])
      expect(mayWrite(sql), sql).toBe(true);
    for (const sql of [
      'SELECT created_at, updated_at, deleted FROM toplists WHERE id = $1',
      'SELECT 1',
      'WITH x AS (SELECT 1) SELECT * FROM x',
    ])
      expect(mayWrite(sql), sql).toBe(false);
  });
});

describe('WalSync on a real PGlite data directory', { timeout: 60_000 }, () => {
  const dir = mkdtempSync(join(tmpdir(), 'podium-walsync-'));
  const data = join(dir, 'data');
  let lite: PGlite;
  /** Paths flushed, in order: the real flush, observed. */
  const flushed: string[] = [];
  const recording: OpenForSync = async (path) => {
    const file = await openForSync(path);
    return (
      file && {
        datasync: async () => {
          await file.datasync();
          flushed.push(path);
        },
        close: () => file.close(),
      }
    );
  };
  let sync: WalSync;
  const position = async () =>
    (await lite.query<{ segment: string; lsn: string }>(WRITE_POSITION_SQL)).rows[0]!;
  const segment = async () => (await position()).segment;

  beforeAll(async () => {
    lite = new PGlite(data);
    await lite.exec('CREATE TABLE t (id serial PRIMARY KEY, pad text)');
    sync = new WalSync(data, position, 16 * 1024 * 1024, recording);
  });
  afterEach(() => {
    flushed.length = 0;
  });
  afterAll(async () => {
    await sync.close();
    await lite.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('flushes the segment a commit was written to, and the log directory the first time', async () => {
    await lite.query("INSERT INTO t (pad) VALUES ('a')");
    await sync.afterWrite();
    expect(flushed).toContain(join(data, 'pg_wal', await segment()));
    expect(flushed).toContain(join(data, 'pg_wal'));
    flushed.length = 0;
    await lite.query("INSERT INTO t (pad) VALUES ('b')");
    await sync.afterWrite();
    expect(flushed).toEqual([join(data, 'pg_wal', await segment())]);
  });

  it('flushes every segment written since the last flush when the log moved on', async () => {
    const first = await segment();
    await lite.query("INSERT INTO t (pad) VALUES ('c')");
    await lite.query('SELECT pg_switch_wal()');
    await lite.query("INSERT INTO t (pad) VALUES ('d')");
    await lite.query('SELECT pg_switch_wal()');
    await lite.query("INSERT INTO t (pad) VALUES ('e')");
    const last = await segment();
    await sync.afterWrite();
    const segments = flushed.filter((p) => /\/pg_wal\/[0-9A-F]{24}$/.test(p)).map((p) => p.slice(-24));
    const between = `${first.slice(0, 16)}${(Number.parseInt(first.slice(16), 16) + 1).toString(16).toUpperCase().padStart(8, '0')}`;
    expect(segments.sort()).toEqual([first, between, last].sort());
    // A new segment's directory entry is flushed with it.
    expect(flushed).toContain(join(data, 'pg_wal'));
    flushed.length = 0;
    // The log has not moved since: nothing to flush.
    await sync.afterWrite();
    expect(flushed).toEqual([]);
    await lite.query("INSERT INTO t (pad) VALUES ('f')");
    await sync.afterWrite();
    expect(flushed).toEqual([join(data, 'pg_wal', last)]);
  });

  it('flushes the data files and their directories', async () => {
    const [rel] = (await lite.query<{ p: string }>("SELECT pg_relation_filepath('t') AS p")).rows;
    await lite.exec('CHECKPOINT');
    await sync.dataFiles();
    expect(flushed).toContain(join(data, rel!.p));
    expect(flushed).toContain(join(data, 'global', 'pg_control'));
    expect(flushed).toContain(data);
    expect(flushed).toContain(join(data, 'base'));
    // The data directory's own entry (a first start moves the database into place).
    expect(flushed).toContain(dir);
  });
});

describe('WalSync when the disk fails a flush', { timeout: 60_000 }, () => {
  it('refuses every later write, as PostgreSQL stops after a failed fsync', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'podium-walsync-eio-'));
    const lite = new PGlite(join(dir, 'data'));
    try {
      await lite.exec('CREATE TABLE t (id int)');
      // The disk's answer is the one thing this test makes up: an EIO from fdatasync.
      let failing = true;
      const flaky: OpenForSync = async (path) => {
        const file = await openForSync(path);
        return (
          file && {
            datasync: () =>
              failing
                ? Promise.reject(Object.assign(new Error('EIO: i/o error'), { code: 'EIO' }))
                : file.datasync(),
            close: () => file.close(),
          }
        );
      };
      const sync = new WalSync(
        join(dir, 'data'),
        async () => (await lite.query<{ segment: string; lsn: string }>(WRITE_POSITION_SQL)).rows[0]!,
        16 * 1024 * 1024,
        flaky,
      );
      await lite.query('INSERT INTO t VALUES (1)');
      expect(sync.problem()).toBeNull();
      await expect(sync.afterWrite()).rejects.toMatchObject({ code: 'service_unavailable', status: 503 });
      expect(sync.problem()).toMatch(/^The database could not flush its log to disk \(EIO/);
      failing = false;
      await lite.query('INSERT INTO t VALUES (2)');
      await expect(sync.afterWrite()).rejects.toThrow(/could not flush its log to disk \(EIO: i\/o error\)/);
      expect(() => sync.refuseIfFailed()).toThrow(/writes are refused until a restart/);
      await sync.close();
    } finally {
      await lite.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('WalSync when flushing the data files or the current segment fails', { timeout: 60_000 }, () => {
  const dir = mkdtempSync(join(tmpdir(), 'podium-walsync-fail-'));
  let lite: PGlite;
  const position = async () =>
    (await lite.query<{ segment: string; lsn: string }>(WRITE_POSITION_SQL)).rows[0]!;
  beforeAll(async () => {
    lite = new PGlite(join(dir, 'data'));
    await lite.exec('CREATE TABLE t (id int)');
  });
  afterAll(async () => {
    await lite.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('a data file the disk cannot flush refuses every later write (a checkpoint must not drop the log)', async () => {
    const eio: OpenForSync = async (path) => {
      const file = await openForSync(path);
      return (
        file && {
          datasync: () =>
            path.includes('/base/') ? Promise.reject(new Error('EIO: i/o error')) : file.datasync(),
          close: () => file.close(),
        }
      );
    };
    const sync = new WalSync(join(dir, 'data'), position, 16 * 1024 * 1024, eio);
    await expect(sync.dataFiles()).rejects.toMatchObject({ code: 'service_unavailable' });
    await lite.query('INSERT INTO t VALUES (1)');
    await expect(sync.afterWrite()).rejects.toThrow(/writes are refused until a restart/);
    await sync.close();
  });

  it('a missing current segment is a failed flush, not a silent one; close still resolves', async () => {
    const noSegments: OpenForSync = async (path) =>
      /\/pg_wal\/[0-9A-F]{24}$/.test(path) ? undefined : openForSync(path);
    const sync = new WalSync(join(dir, 'data'), position, 16 * 1024 * 1024, noSegments);
    await lite.query('INSERT INTO t VALUES (2)');
    await expect(sync.afterWrite()).rejects.toThrow(/log segment .* is missing/);
    const unopenable: OpenForSync = async () => {
      throw Object.assign(new Error('EMFILE: too many open files'), { code: 'EMFILE' });
    };
    const other = new WalSync(join(dir, 'data'), position, 16 * 1024 * 1024, unopenable);
    await expect(other.afterWrite()).rejects.toThrow(/EMFILE/);
    await expect(other.close()).resolves.toBeUndefined();
  });
});

describe('openDb on PGlite with a data directory', { timeout: 60_000 }, () => {
  const dir = mkdtempSync(join(tmpdir(), 'podium-walsync-db-'));
  const calls: number[] = [];
  let restore: () => void;
  beforeAll(async () => {
    // Watches the real fdatasync of every file handle: the flushes the database handle makes.
    const probe = await open(__filename, 'r');
    const proto = Object.getPrototypeOf(probe) as { datasync: () => Promise<void> };
    await probe.close();
    const real = proto.datasync;
    proto.datasync = function (this: unknown) {
      calls.push(Date.now());
      return real.call(this);
    };
    restore = () => {
      proto.datasync = real;
    };
  });
  afterAll(() => {
    restore();
    rmSync(dir, { recursive: true, force: true });
  });

  it('flushes the log after writes and transactions, not after reads, and the data files on close', async () => {
    const db = await openDb({ dataDir: join(dir, 'data') });
    try {
      await db.exec('CREATE TABLE t (id int)');
      calls.length = 0;
      await db.query('INSERT INTO t VALUES ($1)', [1]);
      expect(calls.length).toBeGreaterThan(0);
      calls.length = 0;
      await db.query('INSERT INTO t VALUES ($1)', [2], 'insert_t');
      expect(calls.length).toBeGreaterThan(0);
      calls.length = 0;
      await db.tx(async (q) => {
        await q.query('INSERT INTO t VALUES ($1)', [3]);
        await q.query('INSERT INTO t VALUES ($1)', [4]);
      });
      expect(calls.length).toBe(1);
      calls.length = 0;
      expect(await db.query('SELECT count(*)::int AS n FROM t')).toEqual([{ n: 4 }]);
      expect(calls).toEqual([]);
      // A write that wrote nothing (no row matched) leaves the log where it was: no flush.
      await db.query('UPDATE t SET id = id WHERE id < $1', [0]);
      expect(calls).toEqual([]);
      // PostgreSQL's checkpoint flushes the data files it wrote; so does the embedded one's now.
      await db.exec('CHECKPOINT');
      expect(calls.length).toBeGreaterThan(100);
      calls.length = 0;
    } finally {
      await db.close();
    }
    expect(calls.length).toBeGreaterThan(100);
  });
});

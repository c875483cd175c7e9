import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Scheduler } from '../lib/jobs.ts';
import { type Db, openDb } from './index.ts';
import { type CheckpointPolicy, checkpointIfDue, registerCheckpointJob } from './wal-checkpoint.ts';

const MB = 1024 * 1024;
const NEVER = Number.MAX_SAFE_INTEGER;

describe('PGlite checkpoints (a single-user backend has no checkpointer)', { timeout: 120_000 }, () => {
  const dir = mkdtempSync(join(tmpdir(), 'podium-wal-'));
  let db: Db;
  beforeAll(async () => {
    db = await openDb({ dataDir: join(dir, 'data') });
    await db.exec('CREATE TABLE filler (id bigserial PRIMARY KEY, pad text)');
  });
  afterAll(async () => {
    await db.close();
    rmSync(dir, { recursive: true, force: true });
  });

  const redo = async () =>
    (await db.query<{ redo: string }>('SELECT redo_lsn::text AS redo FROM pg_control_checkpoint()'))[0]!.redo;
  /** Writes about `mb` MB of log. */
  const write = (mb: number) =>
    db.exec(
      `INSERT INTO filler (pad) SELECT repeat('x', 1000) FROM generate_series(1, ${Math.ceil(mb * 900)})`,
    );
  const segments = () =>
    readdirSync(join(dir, 'data', 'pg_wal')).filter((f) => /^[0-9A-F]{24}$/.test(f)).length;

  it('does not checkpoint by itself as log is written', async () => {
    const before = await redo();
    await write(70);
    expect(await redo()).toBe(before);
    expect(segments()).toBeGreaterThan(4);
  });

  it('checkpoints once the log since the last checkpoint reaches maxWalBytes, and not again before', async () => {
    const policy: CheckpointPolicy = { maxWalBytes: 8 * MB, maxAgeMs: NEVER, minWalBytes: NEVER };
    const before = await redo();
    expect(await checkpointIfDue(db, policy)).toBe(true);
    expect(await redo()).not.toBe(before);
    const after = await redo();
    expect(await checkpointIfDue(db, policy)).toBe(false);
    await write(2);
    expect(await checkpointIfDue(db, policy)).toBe(false);
    expect(await redo()).toBe(after);
    await write(7);
    expect(await checkpointIfDue(db, policy)).toBe(true);
  });

  it('checkpoints an old checkpoint only once minWalBytes of log were written since', async () => {
    const policy: CheckpointPolicy = { maxWalBytes: NEVER, maxAgeMs: 0, minWalBytes: MB };
    await checkpointIfDue(db, { ...policy, minWalBytes: 0 });
    const quiet = await redo();
    await db.exec("INSERT INTO filler (pad) VALUES ('a job row')");
    expect(await checkpointIfDue(db, policy)).toBe(false);
    expect(await redo()).toBe(quiet);
    await write(1.5);
    expect(await checkpointIfDue(db, policy)).toBe(true);
    expect(await redo()).not.toBe(quiet);
    // Not old enough yet: the same log volume waits.
    await write(1.5);
    expect(await checkpointIfDue(db, { ...policy, maxAgeMs: 60_000 })).toBe(false);
  });

  it('is a job of servers on PGlite', () => {
    const scheduler = new Scheduler(db);
    registerCheckpointJob(scheduler, db);
    expect(Object.keys(scheduler.jobStats())).toEqual(['pglite-checkpoint']);
  });
});

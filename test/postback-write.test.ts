import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ulid } from '../src/lib/ids.ts';
import {
  type PostbackJob,
  type PostbackWritten,
  TrackingRepository,
} from '../src/modules/tracking/repository.ts';
import type { Services } from '../src/services.ts';
import { servicesOn, type TestDb, testDb } from './helpers.ts';

/** A valid postback for `programId` holding `transactionId`, as the intake hands it to the write. */
function job(programId: number, transactionId: string): PostbackJob {
  return {
    log: {
      program: 'race-op',
      method: 'GET',
      contentType: null,
      query: { txid: transactionId },
      body: null,
      remoteIp: null,
    },
    receivedAt: new Date(),
    conversion: {
      id: ulid(),
      programId,
      transactionId,
      event: 'ftd',
      amount: '25.00',
      currency: 'EUR',
      playerRef: null,
      clickId: null,
    },
  };
}

// On PostgreSQL the batch's statement starts while the other writer's key is uncommitted; the
// embedded database has one connection, so there the batch simply runs after the other commits.
describe('a postback batch racing another writer for a transaction id', () => {
  let t: TestDb;
  let services: Services;
  let programId: number;

  beforeAll(async () => {
    t = await testDb();
    services = await servicesOn(t.db);
    programId = (await services.tracking.createProgram({ slug: 'race-op', name: 'Race operator' })).id;
  });

  afterAll(async () => {
    await services.close();
    await t.close();
  });

  it('waits for the other writer and answers with its conversion, not a second one', async () => {
    const repo = new TrackingRepository(t.db);
    const mine = job(programId, 'RACE-1');
    let settled = false;
    let write: Promise<(PostbackWritten | null)[]> | undefined;
    await t.db.tx(async (q) => {
      // The other writer holds the key, not yet committed, when this batch's statement starts.
      await q.query(
        `INSERT INTO conversion_keys (program_id, transaction_id, conversion_id, attributed, received_at)
         VALUES ($1, 'RACE-1', 'HOLDER', true, now())`,
        [programId],
      );
      write = repo.writePostbacks([mine]).finally(() => {
        settled = true;
      });
      await new Promise((r) => setTimeout(r, 300));
      expect(settled).toBe(false);
    });
    const [written] = (await write) ?? [];
    // The key committed after the statement's snapshot was taken, and is still found and reported.
    expect(written).toEqual({ conversionId: 'HOLDER', duplicate: true, attributed: true });
    const outcomes = await t.db.query<{ code: string; conversion_id: string; duplicate: boolean }>(
      `SELECT o.code, o.conversion_id, o.duplicate FROM postback_outcomes o
       JOIN postback_log l ON l.id = o.log_id WHERE l.query->>'txid' = 'RACE-1'`,
    );
    expect(outcomes).toEqual([{ code: 'duplicate', conversion_id: 'HOLDER', duplicate: true }]);
    const inserted = await t.db.query('SELECT 1 FROM conversions WHERE id = $1', [mine.conversion!.id]);
    expect(inserted).toHaveLength(0);
  });

  it('in one batch the earliest of equal transaction ids holds it; the rest are its duplicates', async () => {
    const repo = new TrackingRepository(t.db);
    const batch = [job(programId, 'RACE-2'), job(programId, 'RACE-3'), job(programId, 'RACE-2')];
    const written = await repo.writePostbacks(batch);
    expect(written.map((w) => w?.duplicate)).toEqual([false, false, true]);
    expect(written[2]!.conversionId).toBe(batch[0]!.conversion!.id);
    const rows = await t.db.query<{ transaction_id: string; log_id: string }>(
      `SELECT v.transaction_id, v.log_id::text FROM conversions v
       WHERE v.program_id = $1 AND v.transaction_id IN ('RACE-2', 'RACE-3') ORDER BY v.transaction_id`,
      [programId],
    );
    expect(rows.map((r) => r.transaction_id)).toEqual(['RACE-2', 'RACE-3']);
    // Each conversion points at its own postback's log row.
    const logs = await t.db.query<{ id: string; txid: string }>(
      `SELECT id::text, query->>'txid' AS txid FROM postback_log WHERE id = ANY($1::bigint[])`,
      [rows.map((r) => r.log_id)],
    );
    expect(new Map(logs.map((l) => [l.id, l.txid]))).toEqual(
      new Map(rows.map((r) => [r.log_id, r.transaction_id])),
    );
  });
});

import { describe, expect, it } from 'vitest';
import { GroupCommit, type GroupCommitOptions } from './group-commit.ts';

/** A group commit whose writes only record their batches. */
function recording(opts: GroupCommitOptions<number>) {
  const written: number[][] = [];
  const gc = new GroupCommit<number>(async (rows) => {
    written.push(rows);
  }, opts);
  return { gc, written };
}

describe('GroupCommit', () => {
  it('resolves callers only after their shared batch is written, in few writes', async () => {
    const { gc, written } = recording({ maxWaitMs: 5, maxBatch: 100, maxInFlight: 2 });
    await Promise.all(Array.from({ length: 250 }, (_, i) => gc.add(i)));
    expect(written.flat().sort((a, b) => a - b)).toEqual(Array.from({ length: 250 }, (_, i) => i));
    expect(written.length).toBeLessThanOrEqual(5);
    expect(Math.max(...written.map((b) => b.length))).toBeLessThanOrEqual(100);
  });

  it('gives each caller what the write returned for its own row, across batches', async () => {
    const batches: number[][] = [];
    const gc = new GroupCommit<number, string>(
      async (rows) => {
        batches.push(rows);
        return rows.map((r) => `wrote ${r}`);
      },
      { maxWaitMs: 5, maxBatch: 3, maxInFlight: 2 },
    );
    const rows = Array.from({ length: 8 }, (_, i) => i);
    expect(await Promise.all(rows.map((r) => gc.add(r)))).toEqual(rows.map((r) => `wrote ${r}`));
    expect(batches.length).toBeGreaterThan(1);
  });

  it('writes at the end of the turn when no answered caller is owed, sharing one batch per turn', async () => {
    const { gc, written } = recording({ maxWaitMs: 60_000, maxBatch: 100, maxInFlight: 4 });
    await gc.add(1);
    expect(written).toEqual([[1]]);
    // Its caller came back: nobody else is owed, so the next row goes at once too.
    await gc.add(2);
    await Promise.all([gc.add(3), gc.add(4), gc.add(5)]);
    expect(written).toEqual([[1], [2], [3, 4, 5]]);
  });

  it("waits for the last batch's callers to come back, and at most maxWaitMs for those that do not", async () => {
    const { gc, written } = recording({ maxWaitMs: 30, maxBatch: 100, maxInFlight: 4 });
    await Promise.all([gc.add(1), gc.add(2), gc.add(3)]);
    const turn = () => new Promise((r) => setImmediate(r));
    const back = [gc.add(4), gc.add(5)];
    await turn();
    expect(written).toEqual([[1, 2, 3]]);
    back.push(gc.add(6));
    await Promise.all(back);
    expect(written).toEqual([
      [1, 2, 3],
      [4, 5, 6],
    ]);
    // Two of these three callers never come back: the one that did waits out maxWaitMs, no longer.
    const lone = gc.add(7);
    await turn();
    expect(written).toHaveLength(2);
    await lone;
    expect(written).toEqual([[1, 2, 3], [4, 5, 6], [7]]);
  });

  it('gives each batch in flight a lane no other batch in flight holds, and reuses freed lanes', async () => {
    const held = new Set<number>();
    const seen: number[] = [];
    let clash = false;
    const gc = new GroupCommit<number>(
      async (_rows, lane) => {
        if (held.has(lane)) clash = true;
        held.add(lane);
        seen.push(lane);
        await new Promise((r) => setTimeout(r, 2));
        held.delete(lane);
      },
      { maxWaitMs: 0, maxBatch: 3, maxInFlight: 3 },
    );
    await Promise.all(Array.from({ length: 60 }, (_, i) => gc.add(i)));
    expect(clash).toBe(false);
    expect(seen.length).toBeGreaterThanOrEqual(20);
    expect(new Set(seen)).toEqual(new Set([0, 1, 2]));
  });

  it('rejects every caller of a failed batch and keeps serving later ones', async () => {
    let fail = true;
    const gc = new GroupCommit<number>(
      async () => {
        if (fail) throw new Error('disk on fire');
      },
      { maxWaitMs: 1, maxBatch: 10, maxInFlight: 1 },
    );
    const first = await Promise.allSettled([gc.add(1), gc.add(2)]);
    expect(first.map((r) => r.status)).toEqual(['rejected', 'rejected']);
    fail = false;
    await expect(gc.add(3)).resolves.toBeUndefined();
  });

  it('drain writes what is queued without waiting out the timer', async () => {
    const written: number[] = [];
    let release: () => void = () => {};
    const gate = new Promise<void>((r) => {
      release = r;
    });
    const gc = new GroupCommit<number>(
      async (rows) => {
        await gate;
        written.push(...rows);
      },
      { maxWaitMs: 60_000, maxBatch: 1000, maxInFlight: 1 },
    );
    // A first batch leaves its three callers owed, so the next rows would wait out the timer.
    const first = [gc.add(-3), gc.add(-2), gc.add(-1)];
    release();
    await Promise.all(first);
    written.length = 0;
    const adds = [gc.add(1), gc.add(2)];
    const drained = gc.drain();
    expect(gc.pending).toBe(2);
    await drained;
    await Promise.all(adds);
    expect(written).toEqual([1, 2]);
    expect(gc.pending).toBe(0);
    await gc.add(3);
    expect(written).toEqual([1, 2, 3]);
  });

  it('refuses rows beyond its bound at once and reports every batch', async () => {
    const batches: [number, boolean][] = [];
    let release: () => void = () => {};
    const gate = new Promise<void>((r) => {
      release = r;
    });
    const gc = new GroupCommit<number>(
      async () => {
        await gate;
      },
      {
        maxWaitMs: 1,
        maxBatch: 2,
        maxInFlight: 1,
        maxPending: 3,
        onBatch: (rows, _s, ok) => batches.push([rows.length, ok]),
      },
    );
    const accepted = [gc.add(1), gc.add(2), gc.add(3)];
    await expect(gc.add(4)).rejects.toThrow(/buffer full/);
    expect(gc.pending).toBe(3);
    release();
    await Promise.all(accepted);
    expect(batches).toEqual([
      [2, true],
      [1, true],
    ]);
    await gc.add(5);
    expect(gc.pending).toBe(0);
  });
});

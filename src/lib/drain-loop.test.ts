import { describe, expect, it } from 'vitest';
import { DrainLoop } from './drain-loop.ts';

describe('DrainLoop', () => {
  it('runs one pass at a time and turns kicks during a run into one more pass', async () => {
    let passes = 0;
    let release: () => void = () => {};
    const loop = new DrainLoop(
      async () => {
        passes++;
        if (passes === 1) await new Promise<void>((r) => (release = r));
      },
      new AbortController().signal,
      () => {},
    );
    const first = loop.kick();
    const second = loop.kick();
    const third = loop.kick();
    expect(second).toBe(first);
    expect(third).toBe(first);
    release();
    await first;
    expect(passes).toBe(2);
  });

  it('reports a failed pass instead of throwing, and does nothing once aborted', async () => {
    const errors: unknown[] = [];
    const abort = new AbortController();
    let passes = 0;
    const loop = new DrainLoop(
      async () => {
        passes++;
        throw new Error('boom');
      },
      abort.signal,
      (err) => errors.push(err),
    );
    await loop.kick();
    expect((errors[0] as Error).message).toBe('boom');
    abort.abort();
    await loop.kick();
    await loop.idle();
    expect(passes).toBe(1);
  });
});

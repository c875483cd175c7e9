import { describe, expect, it } from 'vitest';
import type { Outcome } from './outbound.ts';
import { parseRetryAfter, withRetries } from './retry.ts';

const NOW = Date.parse('2026-11-23T10:00:00Z');

describe('parseRetryAfter', () => {
  it('reads seconds and HTTP dates, clamped to [1 s, 1 h]', () => {
    expect(parseRetryAfter('5', NOW)).toBe(5000);
    expect(parseRetryAfter('0', NOW)).toBe(1000);
    expect(parseRetryAfter('99999', NOW)).toBe(3_600_000);
    expect(parseRetryAfter('Mon, 23 Nov 2026 10:00:30 GMT', NOW)).toBe(30_000);
    expect(parseRetryAfter('Mon, 23 Nov 2026 09:00:00 GMT', NOW)).toBe(1000);
    expect(parseRetryAfter('Tue, 24 Nov 2026 10:00:00 GMT', NOW)).toBe(3_600_000);
  });

  it('ignores garbage', () => {
    for (const v of [
      undefined,
      '',
      'soon',
      '-5',
      '1.5',
      '1e3',
      '2026-11-23',
      'Mon, 99 Nov 2026 10:00:30 GMT',
      '5 s',
    ])
      expect(parseRetryAfter(v, NOW)).toBeUndefined();
  });
});

describe('withRetries', () => {
  /** `send` answers the outcomes in turn (the last one for ever); Retry-After waits are recorded. */
  const fake = (outcomes: Outcome[]) => {
    const asked: number[] = [];
    let i = 0;
    return {
      asked,
      calls: () => i,
      send: async () => outcomes[Math.min(i++, outcomes.length - 1)]!,
      sleep: async (ms: number) => {
        asked.push(ms);
      },
    };
  };
  const status = (s: number, headers: Record<string, string> = {}): Outcome => ({
    kind: 'http_status',
    status: s,
    headers,
    json: undefined,
    message: `HTTP ${s}`,
  });
  const ok: Outcome = { kind: 'ok', status: 200, headers: {}, json: {} };
  const quick = { budgetMs: 60_000, baseMs: 1, capMs: 5 };

  it('retries 5xx and transport failures, then succeeds', async () => {
    const f = fake([status(503), { kind: 'refused', message: 'refused' }, ok]);
    const r = await withRetries(f.send, { ...quick, attempts: 5, sleep: f.sleep });
    expect(r).toEqual({ outcome: ok, calls: 3 });
    expect(f.asked).toEqual([]);
  });

  it('never retries a 409 or another 4xx', async () => {
    for (const s of [400, 401, 404, 409, 422]) {
      const f = fake([status(s), ok]);
      const r = await withRetries(f.send, { ...quick, attempts: 5 });
      expect(r).toEqual({ outcome: status(s), calls: 1 });
    }
  });

  it('waits what Retry-After asks instead of the backoff, and still stops after the attempts', async () => {
    const f = fake([status(429, { 'retry-after': '2' }), ok]);
    expect((await withRetries(f.send, { ...quick, attempts: 3, sleep: f.sleep })).calls).toBe(2);
    expect(f.asked).toEqual([2000]);
    const g = fake([status(429, { 'retry-after': '1' })]);
    const r = await withRetries(g.send, { ...quick, attempts: 3, sleep: g.sleep });
    expect(r.calls).toBe(3);
    expect(g.asked).toEqual([1000, 1000]);
  });

  it('stops at once when Retry-After would pass the budget, saying until when', async () => {
    const f = fake([status(429, { 'retry-after': '3600' }), ok]);
    const r = await withRetries(f.send, { ...quick, attempts: 3, budgetMs: 10_000, sleep: f.sleep });
    expect(r.calls).toBe(1);
    expect(f.asked).toEqual([]);
    expect(r.outcome.kind === 'http_status' && r.outcome.message).toMatch(/\(rate limited until \d{4}-/);
  });

  it('falls back to backoff for a garbage Retry-After and stops after the attempts', async () => {
    const f = fake([status(500, { 'retry-after': 'later' })]);
    const r = await withRetries(f.send, { ...quick, attempts: 3, sleep: f.sleep });
    expect(r).toEqual({ outcome: status(500, { 'retry-after': 'later' }), calls: 3 });
    expect(f.asked).toEqual([]);
  });

  it('an abort during the backoff ends the retries with the last answer', async () => {
    const ac = new AbortController();
    const f = fake([status(503)]);
    const pending = withRetries(f.send, {
      attempts: 5,
      budgetMs: 600_000,
      baseMs: 60_000,
      signal: ac.signal,
    });
    await new Promise((r) => setImmediate(r));
    ac.abort();
    expect(await pending).toEqual({ outcome: status(503), calls: 1 });
  });
});

import { describe, expect, it } from 'vitest';
import type { Outcome } from './outbound.ts';
import { backoffMs, parseRetryAfter, withRetries } from './retry.ts';

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

describe('backoffMs', () => {
  it('doubles per attempt within ±25 % and stops at the cap', () => {
    expect(backoffMs(0, { baseMs: 1000 }, () => 0)).toBe(750);
    expect(backoffMs(0, { baseMs: 1000 }, () => 1)).toBe(1250);
    expect(backoffMs(3, { baseMs: 1000 }, () => 0.5)).toBe(8000);
    expect(backoffMs(40, { baseMs: 1000, capMs: 60_000 }, () => 0.5)).toBe(60_000);
  });
});

describe('withRetries', () => {
  const fake = (outcomes: Outcome[]) => {
    let clock = NOW;
    const waits: number[] = [];
    let i = 0;
    return {
      waits,
      send: async () => outcomes[Math.min(i++, outcomes.length - 1)]!,
      now: () => clock,
      sleep: async (ms: number) => {
        waits.push(ms);
        clock += ms;
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

  it('retries 5xx and transport failures, then succeeds', async () => {
    const f = fake([status(503), { kind: 'refused', message: 'refused' }, ok]);
    const r = await withRetries(f.send, {
      attempts: 5,
      budgetMs: 60_000,
      baseMs: 100,
      now: f.now,
      sleep: f.sleep,
    });
    expect(r).toEqual({ outcome: ok, calls: 3 });
    expect(f.waits).toHaveLength(2);
  });

  it('never retries a 409 or another 4xx', async () => {
    for (const s of [400, 401, 404, 409, 422]) {
      const f = fake([status(s), ok]);
      const r = await withRetries(f.send, { attempts: 5, budgetMs: 60_000, now: f.now, sleep: f.sleep });
      expect(r.calls).toBe(1);
    }
  });

  it('honours Retry-After, and stops when the wait would pass the budget', async () => {
    const f = fake([status(429, { 'retry-after': '2' }), ok]);
    expect(
      (await withRetries(f.send, { attempts: 3, budgetMs: 10_000, now: f.now, sleep: f.sleep })).calls,
    ).toBe(2);
    expect(f.waits).toEqual([2000]);
    const g = fake([status(429, { 'retry-after': '3600' }), ok]);
    const r = await withRetries(g.send, { attempts: 3, budgetMs: 10_000, now: g.now, sleep: g.sleep });
    expect(r.calls).toBe(1);
    expect(g.waits).toEqual([]);
    expect(r.outcome.kind === 'http_status' && r.outcome.message).toMatch(
      /rate limited until 2026-11-23T11:00:00/,
    );
  });

  it('falls back to backoff for a garbage Retry-After and stops after the attempts', async () => {
    const f = fake([status(500, { 'retry-after': 'later' })]);
    const r = await withRetries(f.send, {
      attempts: 3,
      budgetMs: 600_000,
      baseMs: 100,
      now: f.now,
      sleep: f.sleep,
    });
    expect(r.calls).toBe(3);
    expect(f.waits.every((w) => w >= 75 && w <= 250)).toBe(true);
  });
});

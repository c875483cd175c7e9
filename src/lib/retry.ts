import type { Outcome } from './outbound.ts';

/** Bounds of a server-requested wait (`Retry-After`): at least 1 s, at most 1 h. */
export const RETRY_AFTER_MIN_MS = 1000;
export const RETRY_AFTER_MAX_MS = 3_600_000;

/**
 * `Retry-After` in milliseconds from delay-seconds or an HTTP date, clamped to [1 s, 1 h];
 * undefined when absent or garbage (callers then use their own backoff).
 */
export function parseRetryAfter(value: string | undefined, nowMs: number): number | undefined {
  if (value === undefined) return undefined;
  const v = value.trim();
  let ms: number;
  if (/^\d{1,10}$/.test(v)) ms = Number(v) * 1000;
  else if (
    /^[A-Za-z]{3}, \d{2} [A-Za-z]{3} \d{4} \d{2}:\d{2}:\d{2} GMT$/.test(v) &&
    !Number.isNaN(Date.parse(v))
  )
    ms = Date.parse(v) - nowMs;
  else return undefined;
  return Math.min(RETRY_AFTER_MAX_MS, Math.max(RETRY_AFTER_MIN_MS, ms));
}

/** Exponential backoff with ±25 % jitter: `base × 2^attempt`, capped (attempt counts from 0). */
export function backoffMs(
  attempt: number,
  opts: { baseMs?: number; capMs?: number } = {},
  random: () => number = Math.random,
): number {
  const base = opts.baseMs ?? 1000;
  const cap = opts.capMs ?? 60_000;
  const raw = Math.min(cap, base * 2 ** Math.min(attempt, 30));
  return Math.round(raw * (0.75 + random() * 0.5));
}

export interface RetryPolicy {
  /** Most calls in all (first one included). */
  attempts: number;
  /** Wall-clock budget: no wait may end after it (a longer `Retry-After` ends the retries). */
  budgetMs: number;
  baseMs?: number;
  capMs?: number;
  signal?: AbortSignal;
  now?: () => number;
  sleep?: (ms: number, signal?: AbortSignal) => Promise<void>;
}

/** True for outcomes worth repeating unchanged: transport failures, 429 and 5xx. Never 409 or other 4xx. */
export function isRetryable(o: Outcome): boolean {
  if (o.kind === 'timeout' || o.kind === 'refused' || o.kind === 'network') return true;
  return o.kind === 'http_status' && (o.status === 429 || o.status >= 500);
}

const defaultSleep = (ms: number, signal?: AbortSignal): Promise<void> =>
  new Promise((resolve) => {
    const t = setTimeout(done, ms);
    function done() {
      clearTimeout(t);
      signal?.removeEventListener('abort', done);
      resolve();
    }
    signal?.addEventListener('abort', done, { once: true });
  });

/**
 * Calls `send` until it gives a non-retryable outcome, the attempts run out, or the next wait
 * would pass the budget. `send` must repeat the very same request (same idempotency key, same
 * bytes). Resolves to the last outcome and how many calls were made.
 */
export async function withRetries(
  send: () => Promise<Outcome>,
  policy: RetryPolicy,
): Promise<{ outcome: Outcome; calls: number }> {
  const now = policy.now ?? Date.now;
  const sleep = policy.sleep ?? defaultSleep;
  const deadline = now() + policy.budgetMs;
  let calls = 0;
  for (;;) {
    const outcome = await send();
    calls++;
    if (outcome.kind === 'ok' || !isRetryable(outcome) || calls >= policy.attempts || policy.signal?.aborted)
      return { outcome, calls };
    const asked =
      outcome.kind === 'http_status' ? parseRetryAfter(outcome.headers['retry-after'], now()) : undefined;
    const wait = asked ?? backoffMs(calls - 1, policy);
    if (now() + wait > deadline) {
      if (asked === undefined) return { outcome, calls };
      const until = new Date(now() + wait).toISOString();
      return { outcome: { ...outcome, message: `${outcome.message} (rate limited until ${until})` }, calls };
    }
    await sleep(wait, policy.signal);
    if (policy.signal?.aborted) return { outcome, calls };
  }
}

import pRetry from 'p-retry';
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

export interface RetryPolicy {
  /** Most calls in all (first one included). */
  attempts: number;
  /** Wall-clock budget: no wait may end after it (a longer `Retry-After` ends the retries). */
  budgetMs: number;
  /** First backoff wait (doubled per retry, randomised ×1–2 by p-retry), and its cap. */
  baseMs?: number;
  capMs?: number;
  signal?: AbortSignal;
  /** How a server's `Retry-After` is waited out (tests record it instead of sleeping). */
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

/** Carries a failed outcome through p-retry, which retries on a thrown error. */
class Failed extends Error {
  constructor(readonly outcome: Outcome) {
    super(outcome.kind);
  }
}

/**
 * Calls `send` until it gives a non-retryable outcome, the attempts run out, or the budget is
 * spent; resolves to the last outcome and how many calls were made. `send` must repeat the very
 * same request (same idempotency key, same bytes). Backoff, jitter, the budget and the abort are
 * p-retry's. A server's `Retry-After` replaces the backoff for that retry (p-retry has no per-try
 * delay, so the wait is taken here and that retry is not counted as one of p-retry's); a
 * `Retry-After` that would end past the budget ends the retries, saying until when.
 */
export async function withRetries(
  send: () => Promise<Outcome>,
  policy: RetryPolicy,
): Promise<{ outcome: Outcome; calls: number }> {
  const sleep = policy.sleep ?? defaultSleep;
  const deadline = Date.now() + policy.budgetMs;
  let calls = 0;
  let last: Outcome | undefined;
  let waitedAsked = false;
  try {
    const outcome = await pRetry(
      async () => {
        const o = await send();
        calls++;
        last = o;
        if (o.kind !== 'ok' && isRetryable(o)) throw new Failed(o);
        return o;
      },
      {
        retries: policy.attempts - 1,
        factor: 2,
        minTimeout: policy.baseMs ?? 1000,
        maxTimeout: policy.capMs ?? 60_000,
        randomize: true,
        maxRetryTime: policy.budgetMs,
        signal: policy.signal,
        onFailedAttempt: async ({ error }) => {
          waitedAsked = false;
          if (!(error instanceof Failed) || calls >= policy.attempts) throw error;
          const o = error.outcome;
          if (o.kind !== 'http_status') return;
          const asked = parseRetryAfter(o.headers['retry-after'], Date.now());
          if (asked === undefined) return;
          if (Date.now() + asked > deadline) {
            const until = new Date(Date.now() + asked).toISOString();
            throw new Failed({ ...o, message: `${o.message} (rate limited until ${until})` });
          }
          await sleep(asked, policy.signal);
          waitedAsked = true;
        },
        shouldConsumeRetry: () => !waitedAsked,
      },
    );
    return { outcome, calls };
  } catch (err) {
    if (err instanceof Failed) return { outcome: err.outcome, calls };
    // Aborted (p-retry throws the signal's reason): the last answer stands, or one call tells.
    if (policy.signal?.aborted) return last ? { outcome: last, calls } : { outcome: await send(), calls: 1 };
    throw err;
  }
}

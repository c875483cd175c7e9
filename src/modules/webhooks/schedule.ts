/**
 * Retry schedule of a webhook delivery (the Standard Webhooks / Svix one): the first try at
 * once, then after 5 s, 5 min, 30 min, 2 h, 5 h, 10 h and 10 h: eight tries over about 27 hours.
 */
export const RETRY_DELAYS_MS: readonly number[] = [
  5_000,
  5 * 60_000,
  30 * 60_000,
  2 * 3_600_000,
  5 * 3_600_000,
  10 * 3_600_000,
  10 * 3_600_000,
];

/** Tries per delivery, the first included. */
export const MAX_ATTEMPTS = RETRY_DELAYS_MS.length + 1;

/** When the try after failed try number `attempt` (1-based) is due; null after the last one. */
export function nextAttemptAt(attempt: number, failedAt: Date, maxAttempts = MAX_ATTEMPTS): Date | null {
  if (attempt >= maxAttempts) return null;
  const delay = RETRY_DELAYS_MS[Math.min(attempt, RETRY_DELAYS_MS.length) - 1]!;
  return new Date(failedAt.getTime() + delay);
}

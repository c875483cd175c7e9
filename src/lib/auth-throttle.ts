import { BlockingStore, RedisBlockingStore } from './blocking-store.ts';
import { AppError } from './errors.ts';
import type { Redis } from './redis.ts';

/** The credentials whose failures are counted, each on its own budget per client address. */
export type CredentialKind =
  | 'admin_token'
  | 'site_token'
  | 'postback_token'
  | 'console_sign_in'
  | 'advertiser_token';

const LABEL: Record<CredentialKind, string> = {
  admin_token: 'admin tokens',
  site_token: 'site tokens',
  postback_token: 'postback tokens',
  console_sign_in: 'console sign-ins',
  advertiser_token: 'advertiser tokens',
};

/** Failures are counted in windows of one minute. */
export const AUTH_FAILURE_WINDOW_MS = 60_000;

type Store = Pick<BlockingStore, 'incr'>;

/**
 * Throttles failed authentication: once a client address has sent more than `max` wrong
 * credentials of one kind in a minute, each further failure of that kind is answered 429 with
 * `Retry-After` until its block of `blockMs` ends. Only failures are counted, so a client that
 * authenticates correctly is never refused by this, even from a blocked address. The counters are
 * in Redis when the fleet has one (shared by every process), else in this process; when Redis
 * fails, failures are answered 401 as usual (fail open).
 */
export class AuthThrottle {
  private constructor(
    private readonly store: Store | undefined,
    private readonly max: number,
    private readonly onError: (err: Error) => void,
  ) {}

  /** A throttle on the fleet's Redis, or in memory with `nowMs` as its clock; `max` 0 turns it off. */
  static create(opts: {
    max: number;
    blockMs: number;
    nowMs: () => number;
    redis?: { client: Redis; prefix: string } | undefined;
    onError: (err: Error) => void;
  }): AuthThrottle {
    const { max, blockMs, redis } = opts;
    const store =
      max === 0
        ? undefined
        : redis
          ? new RedisBlockingStore(
              redis.client,
              `${redis.prefix}auth-fail:`,
              max,
              AUTH_FAILURE_WINDOW_MS,
              blockMs,
            )
          : new BlockingStore(opts.nowMs, max, AUTH_FAILURE_WINDOW_MS, blockMs);
    return new AuthThrottle(store, max, opts.onError);
  }

  /**
   * Counts one failed authentication of `kind` from `client` and returns the error to answer:
   * `refusal` (the usual 401) while within budget, a 429 `rate_limited` once over it.
   */
  async refusal(kind: CredentialKind, client: string, refusal: AppError): Promise<AppError> {
    const store = this.store;
    if (!store) return refusal;
    const counted = await new Promise<{ current: number; ttl: number } | undefined>((resolve) =>
      store.incr(`${kind}:${client}`, (err, res) => {
        if (err) this.onError(err);
        resolve(err ? undefined : res);
      }),
    );
    if (!counted || counted.current <= this.max) return refusal;
    const retryAfterSeconds = Math.max(1, Math.ceil(counted.ttl / 1000));
    return new AppError(
      'rate_limited',
      `Too many failed ${LABEL[kind]} from this address: retry in ${retryAfterSeconds} s`,
      { retryAfterSeconds },
    );
  }
}

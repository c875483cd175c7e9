import { BlockingStore, RedisBlockingStore } from '../../lib/blocking-store.ts';
import { AppError } from '../../lib/errors.ts';
import type { Redis } from '../../lib/redis.ts';

type Store = Pick<BlockingStore, 'incr' | 'blockedMs'>;

/**
 * Budgets of failed password sign-ins. Per account: a short backoff after a burst, then a long
 * lockout after sustained guessing. Per address: the fleet-wide failure budget of every
 * credential (`PODIUM_AUTH_FAILURE_LIMIT` a minute, blocked `PODIUM_AUTH_BLOCK_SECONDS`).
 */
export const ACCOUNT_TIERS = [
  { name: 'backoff', max: 5, windowMs: 60_000, blockMs: 60_000 },
  { name: 'lockout', max: 20, windowMs: 3_600_000, blockMs: 3_600_000 },
] as const;

/**
 * Throttles password sign-ins per account (email) and per client address. Unlike token
 * throttling a blocked key refuses every attempt, the right password included, so guessing
 * cannot go on behind the 429s. Counters are in Redis when configured, shared by the fleet;
 * when Redis fails the attempt is let through (fail open) and the failure reported.
 */
export class SignInThrottle {
  private constructor(
    private readonly stores: { key: 'account' | 'address'; store: Store }[],
    private readonly onError: (err: Error) => void,
  ) {}

  /** The throttle on the fleet's Redis or in memory (`nowMs` its clock); `addressMax` 0 turns it off. */
  static create(opts: {
    addressMax: number;
    addressBlockMs: number;
    nowMs: () => number;
    redis?: { client: Redis; prefix: string } | undefined;
    onError: (err: Error) => void;
  }): SignInThrottle {
    if (opts.addressMax === 0) return new SignInThrottle([], opts.onError);
    const make = (name: string, max: number, windowMs: number, blockMs: number): Store =>
      opts.redis
        ? new RedisBlockingStore(
            opts.redis.client,
            `${opts.redis.prefix}sign-in-${name}:`,
            max,
            windowMs,
            blockMs,
          )
        : new BlockingStore(opts.nowMs, max, windowMs, blockMs);
    return new SignInThrottle(
      [
        ...ACCOUNT_TIERS.map((t) => ({
          key: 'account' as const,
          store: make(t.name, t.max, t.windowMs, t.blockMs),
        })),
        {
          key: 'address' as const,
          store: make('address', opts.addressMax, 60_000, opts.addressBlockMs),
        },
      ],
      opts.onError,
    );
  }

  private keyOf(which: 'account' | 'address', email: string, address: string): string {
    return which === 'account' ? email.trim().toLowerCase() : address;
  }

  /** The 429 to answer before checking the password when the account or address is blocked, else null. */
  async blocked(email: string, address: string): Promise<AppError | null> {
    let ms = 0;
    for (const { key, store } of this.stores) {
      try {
        ms = Math.max(ms, await store.blockedMs(this.keyOf(key, email, address)));
      } catch (err) {
        this.onError(err as Error);
      }
    }
    return ms > 0 ? tooMany(ms) : null;
  }

  /** Counts one failed sign-in; the 429 to answer when this failure went over a budget, else null. */
  async failed(email: string, address: string): Promise<AppError | null> {
    let ms = 0;
    for (const { key, store } of this.stores) {
      const res = await new Promise<{ current: number; ttl: number } | undefined>((resolve) =>
        store.incr(this.keyOf(key, email, address), (err, r) => {
          if (err) this.onError(err);
          resolve(err ? undefined : r);
        }),
      );
      if (res) ms = Math.max(ms, await store.blockedMs(this.keyOf(key, email, address)).catch(() => 0));
    }
    return ms > 0 ? tooMany(ms) : null;
  }
}

function tooMany(ms: number): AppError {
  const retryAfterSeconds = Math.max(1, Math.ceil(ms / 1000));
  return new AppError(
    'rate_limited',
    `Too many failed sign-ins for this account or from this address: retry in ${retryAfterSeconds} s`,
    { retryAfterSeconds },
  );
}

/**
 * Budgets of password-reset requests: per address an hour (over it: 429, which says nothing
 * about any account), per account an hour (over it: the same 202, no more mail, so a stranger
 * cannot flood someone's inbox and the answer never tells whether the account exists).
 */
export const RESET_BUDGET = { addressMax: 10, accountMax: 3, windowMs: 3_600_000 } as const;

/** Counts password-reset requests per client address and per email (Redis when configured). */
export class ResetThrottle {
  private constructor(
    private readonly address: Store | null,
    private readonly account: Store | null,
    private readonly onError: (err: Error) => void,
  ) {}

  /** The throttle on the fleet's Redis or in memory; `enabled` false (auth throttling off) counts nothing. */
  static create(opts: {
    enabled: boolean;
    nowMs: () => number;
    redis?: { client: Redis; prefix: string } | undefined;
    onError: (err: Error) => void;
  }): ResetThrottle {
    if (!opts.enabled) return new ResetThrottle(null, null, opts.onError);
    const { windowMs } = RESET_BUDGET;
    const make = (name: string, max: number): Store =>
      opts.redis
        ? new RedisBlockingStore(
            opts.redis.client,
            `${opts.redis.prefix}reset-${name}:`,
            max,
            windowMs,
            windowMs,
          )
        : new BlockingStore(opts.nowMs, max, windowMs, windowMs);
    return new ResetThrottle(
      make('address', RESET_BUDGET.addressMax),
      make('account', RESET_BUDGET.accountMax),
      opts.onError,
    );
  }

  private async over(store: Store | null, key: string): Promise<number> {
    if (!store) return 0;
    const counted = await new Promise<boolean>((resolve) =>
      store.incr(key, (err) => {
        if (err) this.onError(err);
        resolve(!err);
      }),
    );
    return counted ? store.blockedMs(key).catch(() => 0) : 0;
  }

  /** Counts one request; throws 429 when the address is over its budget, false when the account is. */
  async allow(email: string, address: string): Promise<boolean> {
    const ms = await this.over(this.address, address);
    if (ms > 0) {
      const retryAfterSeconds = Math.max(1, Math.ceil(ms / 1000));
      throw new AppError(
        'rate_limited',
        `Too many password-reset requests from this address: retry in ${retryAfterSeconds} s`,
        { retryAfterSeconds },
      );
    }
    return (await this.over(this.account, email.trim().toLowerCase())) === 0;
  }
}

import type { Redis } from './redis.ts';

/** Counter state of one client key. */
interface Entry {
  count: number;
  windowStartMs: number;
  /** Set when the key went over the budget: requests are refused until then. */
  blockedUntilMs: number | null;
}

type Callback = (err: Error | null, res?: { current: number; ttl: number }) => void;

/**
 * A counter per client key with a fixed window of `windowMs` holding `max` counts; the count
 * that goes over starts a block of `blockMs`, during which every count is over, whatever the
 * window. It is a `@fastify/rate-limit` store (the docs server's budget) and counts failed
 * authentications (`AuthThrottle`). The clock is injectable so tests need no sleeps.
 * Memory is bounded: expired keys are swept when the table reaches `maxKeys`.
 */
export class BlockingStore {
  private readonly entries = new Map<string, Entry>();

  constructor(
    private readonly now: () => number,
    private readonly max: number,
    private readonly windowMs: number,
    private readonly blockMs: number,
    private readonly maxKeys = 100_000,
  ) {}

  /** The store interface of `@fastify/rate-limit`: count one request and report `{current, ttl}`. */
  incr(key: string, cb: Callback): void {
    const { max, windowMs: timeWindow } = this;
    const now = this.now();
    let e = this.entries.get(key);
    if (e?.blockedUntilMs != null) {
      if (now < e.blockedUntilMs) {
        e.count++;
        cb(null, { current: e.count, ttl: e.blockedUntilMs - now });
        return;
      }
      e = undefined;
    } else if (e && now - e.windowStartMs >= timeWindow) {
      e = undefined;
    }
    if (!e) {
      if (this.entries.size >= this.maxKeys) this.sweep(now);
      e = { count: 0, windowStartMs: now, blockedUntilMs: null };
      this.entries.set(key, e);
    }
    e.count++;
    if (e.count > max) {
      e.blockedUntilMs = now + this.blockMs;
      cb(null, { current: e.count, ttl: this.blockMs });
      return;
    }
    cb(null, { current: e.count, ttl: timeWindow - (now - e.windowStartMs) });
  }

  /** Milliseconds left of the key's block (0 when it is not blocked), counting nothing. */
  async blockedMs(key: string): Promise<number> {
    const until = this.entries.get(key)?.blockedUntilMs;
    return until == null ? 0 : Math.max(0, until - this.now());
  }

  /** Route-level stores share this one table (the docs routes have one budget per IP). */
  child(): BlockingStore {
    return this;
  }

  private sweep(now: number): void {
    const timeWindow = this.windowMs;
    for (const [key, e] of this.entries) {
      const done = e.blockedUntilMs != null ? now >= e.blockedUntilMs : now - e.windowStartMs >= timeWindow;
      if (done) this.entries.delete(key);
    }
    // Still full of live keys (a flood of addresses): start over rather than grow without bound.
    if (this.entries.size >= this.maxKeys) this.entries.clear();
  }
}

/**
 * Counts one request and reports `[current, ttlMs]`. KEYS: window counter, block marker.
 * ARGV: window ms, max, block ms. Atomic in Redis, so every process shares one budget per key.
 */
const INCR_SCRIPT = `
local blocked = redis.call('PTTL', KEYS[2])
if blocked > 0 then return {tonumber(ARGV[2]) + 1, blocked} end
local c = redis.call('INCR', KEYS[1])
if c == 1 then redis.call('PEXPIRE', KEYS[1], ARGV[1]) end
if c > tonumber(ARGV[2]) then
  redis.call('SET', KEYS[2], '1', 'PX', ARGV[3])
  redis.call('DEL', KEYS[1])
  return {c, tonumber(ARGV[3])}
end
local ttl = redis.call('PTTL', KEYS[1])
if ttl < 0 then ttl = tonumber(ARGV[1]) end
return {c, ttl}
`;

type IncrCommand = (
  counter: string,
  block: string,
  windowMs: number,
  max: number,
  blockMs: number,
) => Promise<[number, number]>;

/**
 * The same policy as `BlockingStore`, with the counters in Redis under `prefix` (the deployment's
 * Redis prefix and the counter's own, such as `podium:docs-rate:`) so that a fleet of processes
 * shares one budget per client. Redis keeps time (key expiry), so no clock is injected.
 */
export class RedisBlockingStore {
  private readonly incrCommand: IncrCommand;

  constructor(
    private readonly redis: Redis,
    private readonly prefix: string,
    private readonly max: number,
    private readonly windowMs: number,
    private readonly blockMs: number,
  ) {
    if (!('podiumBlockingIncr' in redis))
      redis.defineCommand('podiumBlockingIncr', { numberOfKeys: 2, lua: INCR_SCRIPT });
    const command = (redis as unknown as { podiumBlockingIncr: IncrCommand }).podiumBlockingIncr;
    this.incrCommand = command.bind(redis);
  }

  /** The store interface of `@fastify/rate-limit`; a Redis error is passed on (the plugin fails open). */
  incr(key: string, cb: Callback): void {
    const base = `${this.prefix}${key}`;
    this.incrCommand(`${base}:n`, `${base}:block`, this.windowMs, this.max, this.blockMs).then(
      ([current, ttl]) => cb(null, { current, ttl }),
      (err: Error) => cb(err),
    );
  }

  /** Milliseconds left of the key's block (0 when it is not blocked), counting nothing. */
  async blockedMs(key: string): Promise<number> {
    return Math.max(0, await this.redis.pttl(`${this.prefix}${key}:block`));
  }

  child(): RedisBlockingStore {
    return this;
  }
}

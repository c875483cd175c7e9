import { randomFillSync } from 'node:crypto';

/**
 * ULIDs (26 characters of Crockford base32: 48-bit millisecond time, 80 random bits) for request,
 * click and conversion ids, minted on the hot path of every request.
 *
 * Monotonic, as in the ULID spec's monotonic factory: the first id of a millisecond takes 80 fresh
 * random bits, each further id of that millisecond the previous random part plus one, so ids of one
 * process sort in the order they were minted and never repeat. Random bytes come from a pooled
 * buffer refilled from the CSPRNG 256 ids' worth at a time, instead of one `crypto.randomBytes` call
 * per character (the `ulid` package): that cost a fifth of a request's CPU.
 *
 * Within a millisecond, ids are sequential and so guessable from one another; nothing in Podium
 * treats an id as a secret (tokens are separate, 256-bit).
 */

const ALPHABET = '0123456789ABCDEFGHJKMNPQRSTVWXYZ';
const TWO_40 = 2 ** 40;
const MAX_TIME = 2 ** 48 - 1;
const RANDOM_BYTES = 10;
const POOL_IDS = 256;

/** `n` (0 ≤ n < 32^width) as `width` base32 characters, most significant first. */
function encode(n: number, width: number): string {
  let out = '';
  for (let i = 0; i < width; i++) {
    out = ALPHABET[n % 32]! + out;
    n = Math.floor(n / 32);
  }
  return out;
}

/** A monotonic ULID source; the clock and the random filler are injectable for tests. */
export class UlidSource {
  private pool = Buffer.allocUnsafe(RANDOM_BYTES * POOL_IDS);
  private used = this.pool.length;
  private lastTime = -1;
  private timePart = '';
  /** The 80 random bits as two 40-bit halves (each exact in a double). */
  private hi = 0;
  private lo = 0;
  private hiPart = '';

  constructor(
    private readonly clock: () => number = Date.now,
    private readonly fill: (pool: Buffer) => void = randomFillSync,
  ) {}

  /** The next id: later than (sorts after) every id this source minted before. */
  next(): string {
    const now = this.clock();
    if (now > this.lastTime) {
      this.setTime(now);
      this.seed();
    } else if (++this.lo === TWO_40) {
      // The low half overflowed: carry into the high half.
      this.lo = 0;
      if (++this.hi === TWO_40) {
        // 2^80 ids in one millisecond cannot happen; a clock stuck far in the past could keep
        // us here, so move on to the next millisecond rather than repeat an id.
        this.setTime(this.lastTime + 1);
        this.seed();
      } else this.hiPart = encode(this.hi, 8);
    }
    return this.timePart + this.hiPart + encode(this.lo, 8);
  }

  private setTime(ms: number): void {
    if (ms > MAX_TIME) throw new Error('ULID time overflow');
    this.lastTime = ms;
    this.timePart = encode(ms, 10);
  }

  private seed(): void {
    if (this.used + RANDOM_BYTES > this.pool.length) {
      this.fill(this.pool);
      this.used = 0;
    }
    const b = this.pool;
    const i = this.used;
    this.used += RANDOM_BYTES;
    this.hi = b.readUIntBE(i, 5);
    this.lo = b.readUIntBE(i + 5, 5);
    this.hiPart = encode(this.hi, 8);
  }
}

const shared = new UlidSource();

/** A new ULID from the process-wide monotonic source. */
export function ulid(): string {
  return shared.next();
}

/**
 * Answers computed from one site's live editions (pages of the toplist list, the brands listing),
 * kept while the editions visible stay the same: from the last instant a publish window opened or
 * closed before the request to the next one after it. A site's set of editions is replaced on any
 * change (publish, unpublish, a window edited), and its memo with it, so a memo never outlives
 * the editions it was computed from. Bounded by entries and by the bytes its values hold.
 */
export class SetMemo {
  private readonly entries = new Map<string, unknown>();
  private bytes = 0;
  /** The window the entries hold for: `fromMs <= now < untilMs`. Empty until first used. */
  private fromMs = Number.POSITIVE_INFINITY;
  private untilMs = Number.NEGATIVE_INFINITY;
  /** The instants visibility changes at, ascending and distinct. */
  private readonly boundaries: number[];

  constructor(
    /** Every `live_from` and `live_until` of the set's editions, in any order. */
    instants: Iterable<number>,
    private readonly limits: { entries: number; bytes: number } = SET_MEMO_LIMITS,
  ) {
    this.boundaries = [...new Set(instants)].sort((a, b) => a - b);
  }

  /**
   * The value under `key` at `nowMs`: the one kept for this window, else `make()`'s, kept unless it
   * alone passes the byte bound. `size` tells the bytes a value holds that nothing else does.
   */
  get<V>(key: string, nowMs: number, make: () => V, size: (v: V) => number = () => 0): V {
    if (nowMs < this.fromMs || nowMs >= this.untilMs) this.enter(nowMs);
    if (this.entries.has(key)) return this.entries.get(key) as V;
    const value = make();
    const bytes = size(value);
    if (bytes > this.limits.bytes) return value;
    if (this.entries.size >= this.limits.entries || this.bytes + bytes > this.limits.bytes) this.clear();
    this.entries.set(key, value);
    this.bytes += bytes;
    return value;
  }

  /** Starts the window holding `nowMs`, with nothing kept. */
  private enter(nowMs: number): void {
    this.clear();
    // The first boundary after now: visibility is the same from the one before it up to it.
    let lo = 0;
    let hi = this.boundaries.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (this.boundaries[mid]! <= nowMs) lo = mid + 1;
      else hi = mid;
    }
    this.fromMs = lo > 0 ? this.boundaries[lo - 1]! : Number.NEGATIVE_INFINITY;
    this.untilMs = lo < this.boundaries.length ? this.boundaries[lo]! : Number.POSITIVE_INFINITY;
  }

  private clear(): void {
    this.entries.clear();
    this.bytes = 0;
  }
}

/**
 * Per site: a sync client walks every page of 15 of both lists (200 toplists: 14 pages), and a
 * page of 100 brands is ~150 KB of JSON.
 */
export const SET_MEMO_LIMITS = { entries: 64, bytes: 4 * 1024 * 1024 };

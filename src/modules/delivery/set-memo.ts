import { partitionPoint } from '../../lib/partition-point.ts';

/**
 * The bytes every site's memo may hold together. Sites are many and their sets stay loaded, so
 * the bound is one for all of them: when a value would pass it, every memo is emptied (the values
 * stay valid for whoever still holds them) and fills again from the pages asked for next.
 */
export class MemoBudget {
  used = 0;
  /** Memos holding bytes now: those `reserve` empties. */
  readonly holders = new Set<SetMemo>();

  constructor(readonly bytes: number) {}

  /** Makes room for `bytes` more, emptying every memo if they would not fit. */
  reserve(bytes: number): void {
    if (this.used + bytes <= this.bytes) return;
    for (const memo of [...this.holders]) memo.clear();
  }
}

/**
 * Answers computed from one site's live editions (pages of the toplist list, the brands listing),
 * kept while the editions visible stay the same: from the last instant a publish window opened or
 * closed before the request to the next one after it. A site's set of editions is replaced on any
 * change (publish, unpublish, a window edited), and its memo with it, so a memo never outlives
 * the editions it was computed from. Bounded by entries, and by the bytes its values hold in a
 * budget shared by every site.
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
    private readonly budget: MemoBudget,
    private readonly maxEntries = SET_MEMO_ENTRIES,
  ) {
    this.boundaries = [...new Set(instants)].sort((a, b) => a - b);
  }

  /**
   * The value under `key` at `nowMs`: the one kept for this window, else `make()`'s, kept unless it
   * alone passes the budget. `size` tells the bytes a value holds that nothing else does.
   */
  get<V>(key: string, nowMs: number, make: () => V, size: (v: V) => number = () => 0): V {
    if (nowMs < this.fromMs || nowMs >= this.untilMs) this.enter(nowMs);
    if (this.entries.has(key)) return this.entries.get(key) as V;
    const value = make();
    const bytes = size(value);
    if (bytes > this.budget.bytes) return value;
    if (this.entries.size >= this.maxEntries) this.clear();
    this.charge(bytes);
    this.entries.set(key, value);
    return value;
  }

  /** Counts `bytes` a kept value took on later (a page's gzip body, built once its toplists are deflated). */
  charge(bytes: number): void {
    if (bytes <= 0) return;
    this.budget.reserve(bytes);
    this.bytes += bytes;
    this.budget.used += bytes;
    this.budget.holders.add(this);
  }

  /** Drops every value kept and gives their bytes back to the budget. */
  clear(): void {
    this.entries.clear();
    this.budget.used -= this.bytes;
    this.bytes = 0;
    this.budget.holders.delete(this);
  }

  /** Starts the window holding `nowMs`, with nothing kept. */
  private enter(nowMs: number): void {
    this.clear();
    // The first boundary after now: visibility is the same from the one before it up to it.
    const lo = partitionPoint(this.boundaries.length, (i) => this.boundaries[i]! <= nowMs);
    this.fromMs = lo > 0 ? this.boundaries[lo - 1]! : Number.NEGATIVE_INFINITY;
    this.untilMs = lo < this.boundaries.length ? this.boundaries[lo]! : Number.POSITIVE_INFINITY;
  }
}

/** Values a site's memo keeps: a sync client walks every page of 15 of both lists (200 toplists: 14 pages). */
export const SET_MEMO_ENTRIES = 64;
/** Bytes all memos keep together (a page of 100 brands is ~150 KB of JSON, its gzip a fifth). */
export const MEMO_BUDGET_BYTES = 32 * 1024 * 1024;

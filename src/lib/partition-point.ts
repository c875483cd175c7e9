/**
 * The first index in `[0, length)` at which `before(i)` is false, for a predicate that is true on
 * a prefix of the range and false after it (binary search: log₂ length calls).
 */
export function partitionPoint(length: number, before: (i: number) => boolean): number {
  let lo = 0;
  let hi = length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (before(mid)) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

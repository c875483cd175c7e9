/**
 * Two-sided sign test: the chance that `n` fair coin flips come out at least as lopsided as `k`
 * heads. For paired runs of two builds, `k` is the pairs one build won: a small p says the
 * difference is not the machine's noise.
 */
export function signTestP(k: number, n: number): number {
  if (!Number.isInteger(k) || !Number.isInteger(n) || n < 1 || k < 0 || k > n)
    throw new RangeError(`sign test of ${k} in ${n}`);
  const tail = Math.min(k, n - k);
  let p = 0;
  let c = 1; // C(n, i), from i = 0
  for (let i = 0; i <= tail; i++) {
    p += c;
    c = (c * (n - i)) / (i + 1);
  }
  return Math.min(1, (2 * p) / 2 ** n);
}

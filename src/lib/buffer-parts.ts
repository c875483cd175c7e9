import type { ServerResponse } from 'node:http';

/** Bytes in `parts` together. */
export const lengthOf = (parts: readonly Buffer[]): number => parts.reduce((n, b) => n + b.length, 0);

/**
 * `parts` copied into one buffer of its own, never a slice of Node's shared 8 KB pool (where
 * `Buffer.concat` puts results under 4 KB): a kept buffer then holds only its own bytes.
 */
export function joinParts(parts: readonly Buffer[]): Buffer {
  const joined = Buffer.allocUnsafeSlow(lengthOf(parts));
  let at = 0;
  for (const part of parts) at += part.copy(joined, at);
  return joined;
}

/**
 * Ends `res` with `parts`, corked into one writev: neither copied into one buffer nor written
 * part by part (a write with its stream events per part cost a 15-toplist page 200 µs of its 260,
 * bench/README.md). Its head must already be written, its content-length `lengthOf(parts)`.
 */
export function endWithParts(res: ServerResponse, parts: readonly Buffer[]): void {
  res.cork();
  for (const part of parts) res.write(part);
  res.end();
  res.uncork();
}

import { gunzipSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { GZIP_MIN_BYTES, gzipOnce } from './gzip-once.ts';

const body = Buffer.from(JSON.stringify({ data: Array.from({ length: 200 }, (_, i) => ({ i, name: 'x' })) }));

describe('gzipOnce', () => {
  it('compresses once: asks while compressing share it, later asks get the same bytes at once', async () => {
    const kept: number[] = [];
    const gzip = gzipOnce(
      body,
      () => {},
      (bytes) => kept.push(bytes),
    );
    const first = gzip();
    const second = gzip();
    expect(first).toBeInstanceOf(Promise);
    expect(second).toBe(first);
    const gz = (await first) as Buffer;
    expect(gunzipSync(gz).equals(body)).toBe(true);
    expect(gzip()).toBe(gz);
    expect(kept).toEqual([gz.length]);
  });

  it('leaves a body under the threshold plain', () => {
    expect(gzipOnce(body.subarray(0, GZIP_MIN_BYTES - 1), () => {})()).toBeUndefined();
  });
});

import { randomBytes } from 'node:crypto';
import { crc32, gunzipSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { crc32Combine, deflatePart, gzipOf, storedPart } from './gzip-parts.ts';

const json = (n: number) =>
  Buffer.from(
    JSON.stringify(Array.from({ length: n }, (_, i) => ({ id: i, name: `Brand ${i}`, rating: i % 10 }))),
  );

describe('gzip joined from parts', () => {
  it('combines CRCs as the CRC of the joined bytes, for empty, short and long parts', () => {
    for (const [a, b] of [
      [0, 0],
      [0, 5],
      [7, 0],
      [1, 1],
      [100, 70_000],
      [65_536, 3],
    ] as const) {
      const x = randomBytes(a);
      const y = randomBytes(b);
      expect(crc32Combine(crc32(x), crc32(y), y.length)).toBe(crc32(Buffer.concat([x, y])));
    }
  });

  it('joins deflated and stored parts into a gzip body any gunzip reads back byte for byte', async () => {
    const docs = [json(3), json(2000), Buffer.alloc(0), json(1)];
    const deflated = await Promise.all(docs.map((d) => deflatePart(d)));
    // A stored part longer than one stored block (65 535 bytes) and an empty one.
    const long = randomBytes(150_000);
    const parts = [
      storedPart(Buffer.from('{"data":[')),
      deflated[0]!,
      storedPart(Buffer.from(',')),
      deflated[1]!,
      deflated[2]!,
      storedPart(long),
      storedPart(Buffer.alloc(0)),
      deflated[3]!,
      storedPart(Buffer.from(']}')),
    ];
    const body = Buffer.concat(gzipOf(parts));
    const expected = Buffer.concat([
      Buffer.from('{"data":['),
      docs[0]!,
      Buffer.from(','),
      docs[1]!,
      long,
      docs[3]!,
      Buffer.from(']}'),
    ]);
    expect(gunzipSync(body).equals(expected)).toBe(true);
    // The same deflated part joins a second body unchanged.
    expect(
      gunzipSync(Buffer.concat(gzipOf([deflated[1]!, deflated[1]!]))).equals(
        Buffer.concat([docs[1]!, docs[1]!]),
      ),
    ).toBe(true);
    // Compressed, the repetitive JSON is far smaller than itself.
    expect(deflated[1]!.data.length).toBeLessThan(docs[1]!.length / 4);
  });

  it('writes an empty body as a valid gzip of nothing', () => {
    expect(gunzipSync(Buffer.concat(gzipOf([]))).length).toBe(0);
  });
});

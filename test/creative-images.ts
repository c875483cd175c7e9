import { randomBytes } from 'node:crypto';
import { crc32, deflateSync } from 'node:zlib';

/** Test images made byte by byte, so each case states exactly what its file holds. */

function chunk(type: string, data: Buffer): Buffer {
  const len = Buffer.alloc(4);
  len.writeUInt32BE(data.length);
  const body = Buffer.concat([Buffer.from(type, 'latin1'), data]);
  const crc = Buffer.alloc(4);
  crc.writeUInt32BE(crc32(body));
  return Buffer.concat([len, body, crc]);
}

/**
 * A real RGB PNG of `width`×`height`: one colour, or random pixels (`noise`, which no deflate
 * shrinks: a heavy file). `extra` chunks go before the image data (a tEXt polyglot, say).
 */
export function png(
  width: number,
  height: number,
  opts: { rgb?: [number, number, number]; noise?: boolean; text?: string } = {},
): Buffer {
  const ihdr = Buffer.alloc(13);
  ihdr.writeUInt32BE(width, 0);
  ihdr.writeUInt32BE(height, 4);
  ihdr[8] = 8; // bit depth
  ihdr[9] = 2; // truecolour
  const [r, g, b] = opts.rgb ?? [200, 30, 60];
  const row = Buffer.alloc(1 + width * 3);
  for (let x = 0; x < width; x++) row.set([r, g, b], 1 + x * 3);
  const rows: Buffer[] = [];
  for (let y = 0; y < height; y++) {
    if (opts.noise) {
      const noisy = Buffer.concat([Buffer.from([0]), randomBytes(width * 3)]);
      rows.push(noisy);
    } else rows.push(row);
  }
  return Buffer.concat([
    Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
    chunk('IHDR', ihdr),
    ...(opts.text ? [chunk('tEXt', Buffer.from(`Comment\0${opts.text}`, 'latin1'))] : []),
    chunk('IDAT', deflateSync(Buffer.concat(rows))),
    chunk('IEND', Buffer.alloc(0)),
  ]);
}

/** A GIF89a of one colour (a 2-colour table and one LZW-coded frame). */
export function gif(width: number, height: number): Buffer {
  const head = Buffer.alloc(13);
  head.write('GIF89a', 0, 'latin1');
  head.writeUInt16LE(width, 6);
  head.writeUInt16LE(height, 8);
  head[10] = 0x80; // global colour table of 2 entries
  const palette = Buffer.from([255, 0, 0, 0, 0, 0]);
  const desc = Buffer.alloc(10);
  desc[0] = 0x2c;
  desc.writeUInt16LE(width, 5);
  desc.writeUInt16LE(height, 7);
  // Minimum code size 2, then a clear code and end-of-information: a frame of colour 0.
  const data = Buffer.from([0x02, 0x02, 0x4c, 0x01, 0x00]);
  return Buffer.concat([head, palette, desc, data, Buffer.from([0x3b])]);
}

/** A baseline JPEG's markers up to its frame header (what a decoder reads the size from). */
export function jpeg(width: number, height: number): Buffer {
  const app0 = Buffer.from([0xff, 0xe0, 0x00, 0x10, 0x4a, 0x46, 0x49, 0x46, 0x00, 1, 1, 0, 0, 1, 0, 1, 0, 0]);
  const sof = Buffer.from([
    0xff, 0xc0, 0x00, 0x11, 0x08, 0, 0, 0, 0, 0x03, 1, 0x22, 0, 2, 0x11, 1, 3, 0x11, 1,
  ]);
  sof.writeUInt16BE(height, 5);
  sof.writeUInt16BE(width, 7);
  return Buffer.concat([Buffer.from([0xff, 0xd8]), app0, sof, Buffer.from([0xff, 0xd9])]);
}

/** A lossless WebP (VP8L) header of `width`×`height`. */
export function webp(width: number, height: number): Buffer {
  const vp8l = Buffer.alloc(5);
  vp8l[0] = 0x2f;
  const bits = (width - 1) | ((height - 1) << 14);
  vp8l.writeUInt32LE(bits >>> 0, 1);
  const body = Buffer.concat([
    Buffer.from('VP8L', 'latin1'),
    Buffer.from([5, 0, 0, 0]),
    vp8l,
    Buffer.alloc(1),
  ]);
  const riff = Buffer.alloc(12);
  riff.write('RIFF', 0, 'latin1');
  riff.writeUInt32LE(4 + body.length, 4);
  riff.write('WEBP', 8, 'latin1');
  return Buffer.concat([riff, body]);
}

/** An SVG, which must never be accepted whatever it is called. */
export const SVG = Buffer.from(
  '<svg xmlns="http://www.w3.org/2000/svg" width="300" height="250"><script>alert(1)</script></svg>',
);

import { constants, crc32, deflateRaw } from 'node:zlib';

/**
 * Gzip bodies joined from parts compressed apart. A part deflated on its own and ended by a sync
 * flush ends on a byte boundary with no final block, and its back-references stay inside it, so
 * parts laid end to end are one valid deflate stream (what pigz does with its blocks). A toplist
 * is deflated once and then joins every page that lists it; only the CRC of the whole is computed
 * per answer, from the parts' CRCs.
 */

/** A part of a body, deflated on its own (or stored), with its CRC-32 and length before compression. */
export interface DeflatedPart {
  readonly data: Buffer;
  readonly crc: number;
  readonly length: number;
  /** x^(8·length) modulo the CRC polynomial: joining the part costs one product, not one per length bit. */
  readonly shift: number;
}

/** The part's description from its raw bytes and what they became. */
const partOf = (raw: Buffer, data: Buffer): DeflatedPart => ({
  data,
  crc: crc32(raw),
  length: raw.length,
  shift: x2nModP(raw.length, 3),
});

const PART_OPTIONS = { finishFlush: constants.Z_SYNC_FLUSH };

/** `raw` deflated in the thread pool, ended by a sync flush so that other parts may follow it. */
export function deflatePart(raw: Buffer): Promise<DeflatedPart> {
  return new Promise((resolve, reject) => {
    deflateRaw(raw, PART_OPTIONS, (err, data) => {
      if (err) reject(err);
      else resolve(partOf(raw, data));
    });
  });
}

/** The longest stored block deflate allows. */
const STORED_MAX = 0xffff;

/**
 * `raw` as stored (uncompressed) deflate blocks: no zlib call, for small parts made per answer
 * (a page's links and meta), where a compressor's set-up would cost more than it saves.
 */
export function storedPart(raw: Buffer): DeflatedPart {
  const blocks: Buffer[] = [];
  let at = 0;
  do {
    const chunk = raw.subarray(at, at + STORED_MAX);
    const head = Buffer.alloc(5);
    // BFINAL 0, BTYPE 00 (stored), padded to the byte; then LEN and its one's complement.
    head.writeUInt16LE(chunk.length, 1);
    head.writeUInt16LE(~chunk.length & 0xffff, 3);
    blocks.push(head, chunk);
    at += STORED_MAX;
  } while (at < raw.length);
  return partOf(raw, Buffer.concat(blocks));
}

/** The gzip header: deflate, no name or time, unknown OS (RFC 1952). */
const GZIP_HEADER = Buffer.from([0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 0xff]);
/** An empty final block with fixed codes: it ends the deflate stream after the sync-flushed parts. */
const FINAL_BLOCK = Buffer.from([0x03, 0x00]);

/** The gzip body of `parts` in order, as buffers to write one after the other (none copied). */
export function gzipOf(parts: readonly DeflatedPart[]): Buffer[] {
  let crc = 0;
  let length = 0;
  const out: Buffer[] = [GZIP_HEADER];
  for (const part of parts) {
    crc = (multModP(part.shift, crc) ^ part.crc) >>> 0;
    length += part.length;
    out.push(part.data);
  }
  const trailer = Buffer.alloc(10);
  FINAL_BLOCK.copy(trailer, 0);
  trailer.writeUInt32LE(crc >>> 0, 2);
  // ISIZE is the length modulo 2^32.
  trailer.writeUInt32LE(length % 0x1_0000_0000, 6);
  out.push(trailer);
  return out;
}

// CRC-32 of two strings joined from the CRCs of each (zlib's crc32_combine): the first CRC times
// x^(8·len2) modulo the CRC polynomial, plus the second, in GF(2) with bits reflected.
const POLY = 0xedb88320;

/** a(x)·b(x) modulo the polynomial, reflected (zlib's multmodp). */
function multModP(a: number, b: number): number {
  let m = 0x8000_0000;
  let p = 0;
  let bb = b >>> 0;
  for (;;) {
    if (a & m) {
      p ^= bb;
      if ((a & (m - 1)) === 0) break;
    }
    m >>>= 1;
    bb = bb & 1 ? (bb >>> 1) ^ POLY : bb >>> 1;
  }
  return p >>> 0;
}

/** x^(2^k) modulo the polynomial, k = 0..31. */
const X2N = (() => {
  const table = new Array<number>(32);
  let p = 0x4000_0000; // x^1
  for (let k = 0; k < 32; k++) {
    table[k] = p;
    p = multModP(p, p);
  }
  return table;
})();

/** x^(n·2^k) modulo the polynomial (zlib's x2nmodp). */
function x2nModP(n: number, k: number): number {
  let p = 0x8000_0000; // x^0
  let rest = n;
  let bit = k;
  while (rest > 0) {
    if (rest % 2 === 1) p = multModP(X2N[bit & 31]!, p);
    rest = Math.floor(rest / 2);
    bit++;
  }
  return p;
}

/** The CRC-32 of A followed by B from A's CRC, B's CRC and B's length. */
export function crc32Combine(crcA: number, crcB: number, lengthB: number): number {
  return (multModP(x2nModP(lengthB, 3), crcA >>> 0) ^ crcB) >>> 0;
}

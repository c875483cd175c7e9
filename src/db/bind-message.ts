import { protocol } from '@electric-sql/pglite';

const S = protocol.serialize;
/** Describe (portal ''), Execute (all rows) and Sync: what follows every Bind of a named statement. */
const AFTER_BIND = Buffer.concat([S.describe({ type: 'P' }), S.execute({}), S.sync()]);

/**
 * One Bind of the unnamed portal to prepared statement `name` with text parameters (null for
 * NULL), then Describe, Execute and Sync: the bytes PGlite's own serializer writes, built with
 * Buffer's native UTF-8 writer. PGlite's writer measured each string in a JavaScript loop and grew
 * its buffer by copies, ~1.5 µs of a 50-click batch's statement per click (bench/README.md).
 */
export function bindExecute(name: string, values: readonly (string | null)[]): Buffer {
  const nameBytes = Buffer.byteLength(name);
  const lengths = values.map((v) => (v === null ? -1 : Buffer.byteLength(v)));
  // Type byte, length, portal '' and statement names, format codes, values, result format count.
  let size = 1 + 4 + 1 + nameBytes + 1 + 2 + 2 * values.length + 2 + 2;
  for (const n of lengths) size += 4 + Math.max(0, n);
  const out = Buffer.allocUnsafe(size + AFTER_BIND.length);
  let at = out.writeUInt8(0x42, 0);
  at = out.writeInt32BE(size - 1, at);
  at = out.writeUInt8(0, at);
  at += out.write(name, at);
  at = out.writeUInt8(0, at);
  at = out.writeUInt16BE(values.length, at);
  for (let i = 0; i < values.length; i++) at = out.writeInt16BE(0, at);
  at = out.writeUInt16BE(values.length, at);
  for (let i = 0; i < values.length; i++) {
    const n = lengths[i]!;
    at = out.writeInt32BE(n, at);
    if (n > 0) at += out.write(values[i]!, at);
  }
  at = out.writeInt16BE(0, at);
  AFTER_BIND.copy(out, at);
  return out;
}

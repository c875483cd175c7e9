import { describe, expect, it } from 'vitest';
import { joinParts, lengthOf } from './buffer-parts.ts';

describe('joinParts', () => {
  it('copies the parts in order into a buffer of its own, outside the shared pool', () => {
    const parts = [Buffer.from('{"a":'), Buffer.alloc(0), Buffer.from('1'), Buffer.from('}')];
    const joined = joinParts(parts);
    expect(joined.toString()).toBe('{"a":1}');
    expect(joined.length).toBe(lengthOf(parts));
    // A pooled buffer is a view into a larger ArrayBuffer (Buffer.concat of small parts is one).
    expect(Buffer.concat(parts).buffer.byteLength).toBeGreaterThan(joined.length);
    expect(joined.buffer.byteLength).toBe(joined.length);
    parts[0]![0] = 0x5b;
    expect(joined.toString()).toBe('{"a":1}');
  });
});

import { constants, gunzipSync, inflateRawSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import type { LazyDeflate } from '../../lib/lazy-deflate.ts';
import { type DeflatedDoc, deflatedDocs } from './deflated-docs.ts';

const doc = (n: number) =>
  Buffer.from(JSON.stringify({ n, items: Array.from({ length: 200 }, (_, i) => `item ${i}`) }));

/** Asks for `tags` until each is deflated (each first ask queues it). */
async function settle(docs: LazyDeflate<DeflatedDoc>, tags: string[]): Promise<void> {
  for (let i = 0; i < 200 && tags.some((t, n) => !docs.get(t, doc(n))); i++)
    await new Promise((r) => setTimeout(r, 5));
}

describe('deflated toplist documents (LazyDeflate)', () => {
  it('answers undefined and deflates in the background once, then answers the deflated bytes', async () => {
    const docs = deflatedDocs(() => {});
    expect(docs.get('"a"', doc(0))).toBeUndefined();
    expect(docs.get('"a"', doc(0))).toBeUndefined();
    await settle(docs, ['"a"']);
    const { part, single } = docs.get('"a"', doc(0))!;
    // A sync-flushed raw deflate stream inflates to the document; the single answer gunzips whole.
    expect(inflateRawSync(part.data, { finishFlush: constants.Z_SYNC_FLUSH }).equals(doc(0))).toBe(true);
    expect(part.length).toBe(doc(0).length);
    expect(gunzipSync(single).toString()).toBe(`{"data":${doc(0).toString()}}`);
    expect(docs.stats()).toEqual({ documents: 1, bytes: part.data.length + single.length });
  });

  it('drops the oldest past its byte budget', async () => {
    const probe = deflatedDocs(() => {});
    await settle(probe, ['"0"']);
    const size = probe.stats().bytes;
    // Room for two documents and a bit; three are deflated one after the other.
    const docs = deflatedDocs(() => {}, size * 2 + size / 2);
    for (const tag of ['"0"', '"1"', '"2"']) await settle(docs, [tag]);
    expect(docs.stats()).toEqual({ documents: 2, bytes: size * 2 });
    const held = ['"0"', '"1"', '"2"'].map((t) => docs.get(t, doc(0)) !== undefined);
    expect(held).toEqual([false, true, true]);
  });
});

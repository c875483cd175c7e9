import { type DeflatedPart, gzipOf, storedPart } from '../../lib/gzip-parts.ts';
import { LazyDeflate } from '../../lib/lazy-deflate.ts';

/** Compressed bytes kept (a 16.6 KB demo toplist takes 2.8 KB twice: ~11 000 of them). */
export const DEFLATED_BUDGET_BYTES = 64 * 1024 * 1024;
/** What a single toplist's answer puts around its document, plain and as gzip parts. */
export const DATA_OPEN = '{"data":';
export const DATA_CLOSE = '}';
const SINGLE_OPEN = storedPart(Buffer.from(DATA_OPEN));
const SINGLE_CLOSE = storedPart(Buffer.from(DATA_CLOSE));

/** A document deflated: the part pages are joined from, and a single toplist's whole gzip answer. */
export interface DeflatedDoc {
  part: DeflatedPart;
  single: Buffer;
}

/**
 * Toplist documents deflated for gzip answers, by ETag (a tag names one document's bytes). They
 * outlive reloads of the site's set (a publish reloads every toplist of the site); the budget
 * counts both forms of each.
 */
export function deflatedDocs(
  onError: (err: unknown) => void,
  budget = DEFLATED_BUDGET_BYTES,
): LazyDeflate<DeflatedDoc> {
  return new LazyDeflate<DeflatedDoc>({
    build: (part) => ({ part, single: Buffer.concat(gzipOf([SINGLE_OPEN, part, SINGLE_CLOSE])) }),
    sizeOf: (doc) => doc.part.data.length + doc.single.length,
    budget,
    onError,
  });
}

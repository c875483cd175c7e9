import { type DeflatedPart, deflatePart, gzipOf, storedPart } from '../../lib/gzip-parts.ts';

/** Compressed bytes kept (a 16.6 KB demo toplist takes 2.8 KB twice: ~11 000 of them). */
export const DEFLATED_BUDGET_BYTES = 64 * 1024 * 1024;
/** Deflates run at once in the thread pool, which the database's flushes share. */
const CONCURRENT = 2;
/** Documents waiting for a deflate; past this a request for one more is served plain. */
const MAX_QUEUED = 1000;
/** A single toplist's answer around its document, `{"data":…}` (as service.ts builds it plain). */
const SINGLE_OPEN = storedPart(Buffer.from('{"data":'));
const SINGLE_CLOSE = storedPart(Buffer.from('}'));

/** A document deflated: the part pages are joined from, and a single toplist's whole gzip answer. */
export interface DeflatedDoc {
  part: DeflatedPart;
  single: Buffer;
}

/**
 * Toplist documents deflated for gzip answers, by ETag (a tag names one document's bytes). A
 * document is deflated in the thread pool on the first request that accepts gzip, which is
 * answered plain meanwhile; the deflated bytes outlive reloads of the site's set (a publish
 * reloads every toplist of the site), and the oldest are dropped past the byte budget, which
 * counts both forms of each.
 */
export class DeflatedDocs {
  private readonly done = new Map<string, DeflatedDoc>();
  /** Documents not yet started, in arrival order. */
  private readonly waiting = new Map<string, Buffer>();
  private readonly running = new Set<string>();
  private bytes = 0;

  constructor(
    private readonly onError: (err: unknown) => void,
    private readonly budget = DEFLATED_BUDGET_BYTES,
  ) {}

  /** The deflated document when it is ready; else queues it (once) and answers undefined. */
  get(tag: string, raw: Buffer): DeflatedDoc | undefined {
    const found = this.done.get(tag);
    if (found) return found;
    if (!this.waiting.has(tag) && !this.running.has(tag) && this.waiting.size < MAX_QUEUED) {
      this.waiting.set(tag, raw);
      this.pump();
    }
    return undefined;
  }

  /** Documents held deflated and their compressed bytes (for metrics). */
  stats(): { documents: number; bytes: number } {
    return { documents: this.done.size, bytes: this.bytes };
  }

  private pump(): void {
    for (const [tag, raw] of this.waiting) {
      if (this.running.size >= CONCURRENT) return;
      this.waiting.delete(tag);
      this.running.add(tag);
      deflatePart(raw)
        .then(
          (part) => this.keep(tag, part),
          (err) => this.onError(err),
        )
        .finally(() => {
          this.running.delete(tag);
          this.pump();
        });
    }
  }

  private keep(tag: string, part: DeflatedPart): void {
    const doc = { part, single: Buffer.concat(gzipOf([SINGLE_OPEN, part, SINGLE_CLOSE])) };
    this.done.set(tag, doc);
    this.bytes += sizeOf(doc);
    for (const [old, kept] of this.done) {
      if (this.bytes <= this.budget) break;
      this.done.delete(old);
      this.bytes -= sizeOf(kept);
    }
  }
}

function sizeOf(doc: DeflatedDoc): number {
  return doc.part.data.length + doc.single.length;
}

import { type DeflatedPart, deflatePart } from '../../lib/gzip-parts.ts';

/** Compressed bytes kept (~190 KB toplists deflate to ~20 KB: ~3 000 of them). */
export const DEFLATED_BUDGET_BYTES = 64 * 1024 * 1024;
/** Deflates run at once in the thread pool, which the database's flushes share. */
const CONCURRENT = 2;
/** Documents waiting for a deflate; past this a request for one more is served plain. */
const MAX_QUEUED = 1000;

/**
 * Toplist documents deflated for gzip answers, by ETag (a tag names one document's bytes). A
 * document is deflated in the thread pool on the first request that accepts gzip, which is
 * answered plain meanwhile; the deflated bytes outlive reloads of the site's set (a publish
 * reloads every toplist of the site), and the oldest are dropped past the byte budget.
 */
export class DeflatedDocs {
  private readonly done = new Map<string, DeflatedPart>();
  /** Documents not yet started, in arrival order. */
  private readonly waiting = new Map<string, Buffer>();
  private readonly running = new Set<string>();
  private bytes = 0;

  constructor(
    private readonly onError: (err: unknown) => void,
    private readonly budget = DEFLATED_BUDGET_BYTES,
  ) {}

  /** The deflated document when it is ready; else queues it (once) and answers undefined. */
  get(tag: string, raw: Buffer): DeflatedPart | undefined {
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
    this.done.set(tag, part);
    this.bytes += part.data.length;
    for (const [old, kept] of this.done) {
      if (this.bytes <= this.budget) break;
      this.done.delete(old);
      this.bytes -= kept.data.length;
    }
  }
}

export interface GroupCommitOptions<T> {
  /**
   * The longest a row waits for company before its batch is written. It waits only while callers
   * answered by the last batches have not come back with new rows (see `GroupCommit`).
   */
  maxWaitMs: number;
  /** A batch this large is written at once. */
  maxBatch: number;
  /**
   * Batches written concurrently; further rows queue up for the next batch. Each batch in flight
   * holds one lane, a number below this, that no other batch in flight holds.
   */
  maxInFlight: number;
  /** Rows queued or being written beyond which `add` rejects at once (memory stays bounded). */
  maxPending?: number;
  /** Told about every written batch: its rows, how long the write took and whether it committed. */
  onBatch?: (rows: readonly T[], seconds: number, ok: boolean) => void;
}

/** `add` refused because the buffer is at its bound. */
export class BufferFullError extends Error {
  constructor(bound: number) {
    super(`group-commit buffer full (${bound} rows pending)`);
    this.name = 'BufferFullError';
  }
}

/** Commits a batch; returns what it wrote for each row, in the rows' order (nothing when `R` is void). */
// biome-ignore lint/suspicious/noConfusingVoidType: R defaults to void for writes that return nothing per row.
type BatchWrite<T, R> = [R] extends [void]
  ? (rows: T[], lane: number) => Promise<void>
  : (rows: T[], lane: number) => Promise<R[]>;

interface Pending<T, R> {
  row: T;
  resolve: (result: R) => void;
  reject: (err: unknown) => void;
}

/**
 * Group commit: `add` resolves only once its row is in a committed multi-row write, so a
 * caller acknowledges nothing that isn't durable, while one INSERT serves many requests.
 * A failed write rejects every caller of that batch (none of them was acknowledged).
 *
 * When to write: a batch's callers, once answered, tend to come back with their next row (a
 * visitor's next click, a load generator's next request). Rows wait while such answered callers
 * are still owed — at most `maxWaitMs` — and go at the end of the event-loop turn once none is:
 * a lone click is written at once instead of after a fixed wait, and under load a batch leaves
 * the moment its predecessor's callers are all back instead of idling out a timer (on PGlite,
 * where the write runs on this thread, that idle time was a fifth of a core).
 */
export class GroupCommit<T, R = void> {
  private queue: Pending<T, R>[] = [];
  private timer: NodeJS.Timeout | undefined;
  private turnEnd: NodeJS.Immediate | undefined;
  /** Rows answered by finished batches whose callers have not come back with a row yet. */
  private owed = 0;
  private inFlight = 0;
  private inFlightRows = 0;
  private readonly freeLanes: number[];
  private draining = false;
  private idle: (() => void)[] = [];

  /** Each caller of `add` gets what `write` returned for its own row. */
  constructor(
    private readonly write: BatchWrite<T, R>,
    private readonly opts: GroupCommitOptions<T>,
  ) {
    this.freeLanes = Array.from({ length: opts.maxInFlight }, (_, i) => opts.maxInFlight - 1 - i);
  }

  /** Queues a row; resolves to what was written for it once committed, rejects when its batch failed. */
  add(row: T): Promise<R> {
    const bound = this.opts.maxPending;
    if (bound !== undefined && this.pending >= bound) return Promise.reject(new BufferFullError(bound));
    return new Promise((resolve, reject) => {
      this.queue.push({ row, resolve, reject });
      if (this.owed > 0) this.owed -= 1;
      if (this.queue.length >= this.opts.maxBatch) this.kick();
      else this.schedule();
    });
  }

  /**
   * Writes the queue at once while draining, at the end of this turn when no answered caller is
   * owed, else within `maxWaitMs`.
   */
  private schedule(): void {
    if (this.draining) {
      this.kick();
      return;
    }
    if (this.owed === 0) {
      this.turnEnd ??= setImmediate(() => {
        this.turnEnd = undefined;
        this.kick();
      });
      return;
    }
    this.timer ??= setTimeout(() => {
      this.timer = undefined;
      // Callers that did not come back within the wait are not waited for again.
      this.owed = 0;
      this.kick();
    }, this.opts.maxWaitMs);
  }

  /** Rows queued or being written. */
  get pending(): number {
    return this.queue.length + this.inFlightRows;
  }

  /** Writes everything queued without waiting and resolves when nothing is pending. */
  async drain(): Promise<void> {
    this.draining = true;
    this.kick();
    if (this.queue.length === 0 && this.inFlight === 0) return;
    await new Promise<void>((resolve) => this.idle.push(resolve));
  }

  private kick(): void {
    if (this.timer) {
      clearTimeout(this.timer);
      this.timer = undefined;
    }
    if (this.turnEnd) {
      clearImmediate(this.turnEnd);
      this.turnEnd = undefined;
    }
    while (this.queue.length && this.inFlight < this.opts.maxInFlight) {
      const batch = this.queue.splice(0, this.opts.maxBatch);
      this.inFlight += 1;
      this.inFlightRows += batch.length;
      void this.flush(batch, this.freeLanes.pop()!);
    }
  }

  private async flush(batch: Pending<T, R>[], lane: number): Promise<void> {
    const rows = batch.map((p) => p.row);
    const started = performance.now();
    try {
      const results = (await this.write(rows, lane)) as R[] | undefined;
      this.opts.onBatch?.(rows, (performance.now() - started) / 1000, true);
      for (const [i, p] of batch.entries()) p.resolve(results?.[i] as R);
    } catch (err) {
      this.opts.onBatch?.(rows, (performance.now() - started) / 1000, false);
      for (const p of batch) p.reject(err);
    } finally {
      this.freeLanes.push(lane);
      this.inFlight -= 1;
      this.inFlightRows -= batch.length;
      this.owed = Math.min(this.owed + batch.length, this.opts.maxBatch);
      if (this.queue.length) this.schedule();
      else if (this.inFlight === 0) for (const done of this.idle.splice(0)) done();
    }
  }
}

export interface GroupCommitOptions {
  /** How long the first row of a batch waits for company before the batch is written. */
  maxWaitMs: number;
  /** A batch this large is written at once. */
  maxBatch: number;
  /** Batches written concurrently; further rows queue up for the next batch. */
  maxInFlight: number;
}

interface Pending<T> {
  row: T;
  resolve: () => void;
  reject: (err: unknown) => void;
}

/**
 * Group commit: `add` resolves only once its row is in a committed multi-row write, so a
 * caller acknowledges nothing that isn't durable, while one INSERT serves many requests.
 * A failed write rejects every caller of that batch (none of them was acknowledged).
 */
export class GroupCommit<T> {
  private queue: Pending<T>[] = [];
  private timer: NodeJS.Timeout | undefined;
  private inFlight = 0;
  private inFlightRows = 0;
  private draining = false;
  private idle: (() => void)[] = [];

  constructor(
    private readonly write: (rows: T[]) => Promise<void>,
    private readonly opts: GroupCommitOptions,
  ) {}

  /** Queues a row; resolves when it is committed, rejects when its batch failed. */
  add(row: T): Promise<void> {
    return new Promise((resolve, reject) => {
      this.queue.push({ row, resolve, reject });
      if (this.draining || this.queue.length >= this.opts.maxBatch) this.kick();
      else this.timer ??= setTimeout(() => this.kick(), this.opts.maxWaitMs);
    });
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
    while (this.queue.length && this.inFlight < this.opts.maxInFlight) {
      const batch = this.queue.splice(0, this.opts.maxBatch);
      this.inFlight += 1;
      this.inFlightRows += batch.length;
      void this.flush(batch);
    }
  }

  private async flush(batch: Pending<T>[]): Promise<void> {
    try {
      await this.write(batch.map((p) => p.row));
      for (const p of batch) p.resolve();
    } catch (err) {
      for (const p of batch) p.reject(err);
    } finally {
      this.inFlight -= 1;
      this.inFlightRows -= batch.length;
      // Rows that queued up while every slot was busy go out now rather than after another wait.
      if (this.queue.length) this.kick();
      else if (this.inFlight === 0) for (const done of this.idle.splice(0)) done();
    }
  }
}

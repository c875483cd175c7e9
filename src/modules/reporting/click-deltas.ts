import type { ClickDeltaRepository } from './click-delta-repository.ts';

export interface ClickDeltaMoverOptions {
  /** The longest deltas wait for a move after a batch appended them. */
  everyMs: number;
  /** Deltas appended since the last move beyond which the next move starts at once. */
  maxDeltas: number;
}

/**
 * Keeps the click rollup deltas few (migration 0085): reports read them beside the rollup rows, so
 * they are moved at once past `maxDeltas`, and within `everyMs` of a batch appending any (a move of a
 * few thousand holds PGlite's serving thread for milliseconds). One move at a time; a move
 * that fails is reported and its deltas wait for the next one (they count in reports meanwhile).
 */
export class ClickDeltaMover {
  private added = 0;
  private timer: NodeJS.Timeout | undefined;
  private moving: Promise<void> | undefined;
  private stopped = false;

  constructor(
    private readonly repo: ClickDeltaRepository,
    private readonly opts: ClickDeltaMoverOptions,
    private readonly onError: (err: unknown) => void,
  ) {}

  /** Told after each committed batch how many deltas it appended. */
  appended(n: number): void {
    if (this.stopped || n <= 0) return;
    this.added += n;
    this.schedule();
  }

  /**
   * Stops moving (before the database closes): waits for the move under way, then moves what the
   * batches appended since, so a restart starts with none left (a failure is reported as ever).
   */
  async stop(): Promise<void> {
    if (this.stopped) return;
    // No timer and no move starts from here on but the last one below.
    this.stopped = true;
    clearTimeout(this.timer);
    this.timer = undefined;
    await this.moving;
    if (this.added > 0) {
      this.added = 0;
      await this.repo.move().catch(this.onError);
    }
  }

  private schedule(): void {
    if (this.moving || this.stopped || this.added === 0) return;
    if (this.added >= this.opts.maxDeltas) this.move();
    // Unref'd: a process that wrote clicks and ends without draining is not held up a minute.
    else this.timer ??= setTimeout(() => this.move(), this.opts.everyMs).unref();
  }

  /** Moves every delta now, whoever appended it (a bulk history write), after a move under way. */
  async moveNow(): Promise<void> {
    while (this.moving) await this.moving;
    if (!this.stopped) await this.move();
  }

  private move(): Promise<void> | undefined {
    clearTimeout(this.timer);
    this.timer = undefined;
    if (this.moving || this.stopped) return this.moving;
    this.added = 0;
    this.moving = this.repo
      .move()
      .then(
        () => {},
        (err) => this.onError(err),
      )
      .finally(() => {
        this.moving = undefined;
        this.schedule();
      });
    return this.moving;
  }
}

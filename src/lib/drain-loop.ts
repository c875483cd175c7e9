/**
 * Runs `pass` (work until nothing is left) one run at a time: a `kick` while a run is going asks
 * for one more pass after it instead of starting a second run, and resolves with that run. Stops
 * passing once `signal` is aborted; a failed pass is reported to `onError`, never thrown.
 */
export class DrainLoop {
  private running: Promise<void> | undefined;
  private again = false;

  constructor(
    private readonly pass: () => Promise<void>,
    private readonly signal: AbortSignal,
    private readonly onError: (err: unknown) => void,
  ) {}

  /** Starts a run, or asks the current one for another pass; resolves when that run ends. */
  kick(): Promise<void> {
    if (this.signal.aborted) return Promise.resolve();
    if (this.running) {
      this.again = true;
      return this.running;
    }
    this.running = (async () => {
      try {
        do {
          this.again = false;
          await this.pass();
        } while (this.again && !this.signal.aborted);
      } catch (err) {
        this.onError(err);
      } finally {
        this.running = undefined;
      }
    })();
    return this.running;
  }

  /** Resolves when the run in progress (if any) has ended. */
  async idle(): Promise<void> {
    await this.running;
  }
}

import type { Db } from './index.ts';

/** What changed; subscribers drop whatever they cached about it. */
export type Change =
  | { kind: 'site'; siteId: number }
  | { kind: 'tokens' }
  /** A compliance rule changed (what `/go` checks a visitor's country against). */
  | { kind: 'compliance' }
  | { kind: 'all' };

const CHANNEL = 'podium_changes';

/**
 * Change notifications across processes. `publish` tells this process's subscribers at once
 * (synchronously, so a revoked token is refused by the very next request) and every other
 * process through PostgreSQL NOTIFY.
 */
export class ChangeBus {
  private readonly subscribers = new Set<(c: Change) => void>();
  private unlisten: (() => Promise<void>) | undefined;

  constructor(private readonly db: Db) {}

  /** Starts listening for other processes' changes. */
  async start(): Promise<void> {
    this.unlisten = await this.db.listen(CHANNEL, (payload) => {
      let change: Change;
      try {
        change = JSON.parse(payload) as Change;
      } catch {
        change = { kind: 'all' };
      }
      this.dispatch(change);
    });
  }

  subscribe(fn: (c: Change) => void): void {
    this.subscribers.add(fn);
  }

  /** Call after the transaction that made the change has committed. */
  async publish(change: Change): Promise<void> {
    this.dispatch(change);
    await this.db.query('SELECT pg_notify($1, $2)', [CHANNEL, JSON.stringify(change)]);
  }

  private dispatch(change: Change): void {
    for (const fn of this.subscribers) fn(change);
  }

  async stop(): Promise<void> {
    await this.unlisten?.();
  }
}

import { DrainLoop } from '../../lib/drain-loop.ts';
import type { OutboundClient } from '../../lib/outbound.ts';
import type { Sealer } from '../../lib/seal.ts';
import type { ClaimedDelivery, WebhookRepository } from './repository.ts';
import { nextAttemptAt } from './schedule.ts';
import { type SendResult, sendDelivery } from './sender.ts';

/** Deliveries claimed per round; also the number sent at once by one process. */
const BATCH = 10;
/** Rounds per drain before yielding to the next poll (bounds one drain's work). */
const MAX_ROUNDS = 50;
/** Longest wait between polls: an idle process backs off to this, so it does next to no work. */
export const MAX_IDLE_POLL_MS = 15_000;

export interface WorkerOptions {
  /** How often every process looks for due deliveries (other processes' events, retries) while
   * there is work; each poll that finds nothing doubles the wait, up to MAX_IDLE_POLL_MS. */
  pollMs: number;
  /** Outbound total timeout: a claim's lease outlives the longest possible send. */
  sendTimeoutMs: number;
  log: (msg: string, err?: unknown) => void;
}

/**
 * Sends due deliveries. Every process polls; a claim (SKIP LOCKED + lease) gives each delivery
 * to one process, so an event reaches an endpoint once however many processes run. The process
 * that recorded an event is kicked right after its commit and sends it without waiting for a poll.
 */
export class DeliveryWorker {
  private timer: NodeJS.Timeout | undefined;
  private readonly abort = new AbortController();
  private readonly loop = new DrainLoop(
    () => this.drain(),
    this.abort.signal,
    (err) => this.options.log('webhook deliveries: drain failed', err),
  );
  /** Deliveries claimed since the last poll, by polls or kicks. */
  private claimed = 0;
  private wait: number | undefined;

  constructor(
    private readonly repo: WebhookRepository,
    private readonly sealer: Sealer,
    private readonly http: OutboundClient,
    private readonly now: () => Date,
    private readonly options: WorkerOptions,
  ) {}

  /** Starts polling: every `pollMs` while there is work, backing off to MAX_IDLE_POLL_MS when idle. */
  start(): void {
    if (this.timer || this.abort.signal.aborted) return;
    const wait = this.wait ?? this.options.pollMs;
    this.timer = setTimeout(async () => {
      await this.kick();
      this.timer = undefined;
      // Anything claimed since the last poll (an event kicked in this process counts) means work.
      this.wait = this.claimed > 0 ? this.options.pollMs : Math.min(wait * 2, MAX_IDLE_POLL_MS);
      this.claimed = 0;
      this.start();
    }, wait);
    this.timer.unref();
  }

  /** Sends whatever is due now; resolves when this drain (and any kick during it) is done. */
  kick(): Promise<void> {
    return this.loop.kick();
  }

  /** Claims and sends one delivery now (the admin's test), whatever its due time. */
  async sendNow(deliveryId: string): Promise<void> {
    const [claimed] = await this.repo.claim(this.now(), this.leaseUntil(), 1, deliveryId);
    if (claimed) await this.attempt(claimed);
  }

  private leaseUntil(): Date {
    return new Date(this.now().getTime() + this.options.sendTimeoutMs + 30_000);
  }

  private async drain(): Promise<void> {
    for (let round = 0; round < MAX_ROUNDS && !this.abort.signal.aborted; round++) {
      const claimed = await this.repo.claim(this.now(), this.leaseUntil(), BATCH);
      this.claimed += claimed.length;
      if (!claimed.length) return;
      await Promise.all(claimed.map((d) => this.attempt(d)));
      if (claimed.length < BATCH) return;
    }
  }

  private async attempt(d: ClaimedDelivery): Promise<void> {
    const startedAt = this.now();
    let result: SendResult;
    try {
      result = await sendDelivery(this.http, this.sealer, d, startedAt, this.abort.signal);
    } catch (err) {
      // A secret that does not open (key ring changed) is this endpoint's failure, logged like any other.
      result = { succeeded: false, httpStatus: null, latencyMs: 0, error: (err as Error).message };
    }
    if (this.abort.signal.aborted && !result.succeeded) return; // shutting down: the lease lets another process retry
    const doneAt = this.now();
    const next = result.succeeded ? null : nextAttemptAt(d.attempt, doneAt, d.maxAttempts);
    await this.repo.recordAttempt(
      { deliveryId: d.id, attempt: d.attempt, startedAt, ...result, nextAttemptAt: next },
      doneAt,
    );
    if (!result.succeeded && next === null && d.maxAttempts > 1) await this.giveUp(d, doneAt);
  }

  /** A delivery used up its retries: an endpoint that has not succeeded once since is disabled. */
  private async giveUp(d: ClaimedDelivery, at: Date): Promise<void> {
    const since = (await this.repo.firstAttemptAt(d.id)) ?? at;
    if (await this.repo.succeededSince(d.endpoint.id, since)) return;
    await this.repo.disableEndpoint(
      d.endpoint.id,
      `every try failed since ${since.toISOString()} (delivery ${d.id} gave up after ${d.attempt} tries)`,
      at,
    );
    this.options.log(`webhook endpoint ${d.endpoint.id} disabled after repeated failure`);
  }

  /** Stops polling and waits for the sends in flight. */
  async stop(): Promise<void> {
    if (this.timer) clearTimeout(this.timer);
    this.abort.abort();
    await this.loop.idle();
  }
}

import { hostname } from 'node:os';
import { DrainLoop } from '../../lib/drain-loop.ts';
import { conflict } from '../../lib/errors.ts';
import type { Scheduler } from '../../lib/jobs.ts';
import { scrub } from '../../lib/scrub.ts';
import { addDays, daysBetween } from '../../lib/time.ts';
import type { OperatorAggregates } from './aggregates.ts';
import { MAX_BACKFILL_DAYS } from './aggregates.ts';
import type { Backfill, BackfillRepository } from './backfill-repository.ts';

export const BACKFILL_JOB = 'aggregate-backfills';
/** How often every process looks for queued backfills (requests another process took, crashed leases). */
const BACKFILL_POLL_MS = 60_000;
/** A claim's lease, renewed after every day: a process gone this long leaves its backfill to another. */
const LEASE_MS = 10 * 60_000;
/** Queued or running backfills one programme may have at once. */
const MAX_OPEN = 3;
const MAX_LISTED = 100;

/**
 * Backfills requested over the admin API: stored as a queue, run by the server's own job runner
 * (the process that took the request starts at once; every process's scheduler looks for queued
 * ones too), one pull per day with progress, so no second process ever opens the database.
 */
export class AggregateBackfills {
  private readonly abort = new AbortController();
  private readonly loop = new DrainLoop(
    async () => {
      while (!this.abort.signal.aborted && (await this.runOne()));
    },
    this.abort.signal,
    (err) => this.log('aggregate backfills: run failed', err),
  );
  readonly owner = `${hostname()}:${process.pid}:backfills:${Math.random().toString(36).slice(2, 8)}`;

  constructor(
    private readonly repo: BackfillRepository,
    private readonly aggregates: OperatorAggregates,
    private readonly now: () => Date,
    private readonly log: (msg: string, err?: unknown) => void,
  ) {}

  /** Queues a backfill of [from, to] (422 for a bad range, 409 without a report endpoint or with too many open). */
  async request(programId: number, from: string, to: string): Promise<Backfill> {
    this.aggregates.checkRange(from, to, MAX_BACKFILL_DAYS);
    const report = await this.aggregates.report(programId);
    if (report.url === null)
      throw conflict('The programme has no report endpoint: set one with PUT …/report first');
    if ((await this.repo.openCount(programId)) >= MAX_OPEN)
      throw conflict(
        `The programme already has ${MAX_OPEN} backfills queued or running; wait for one to end`,
      );
    const backfill = await this.repo.insert(programId, from, to, daysBetween(from, to) + 1);
    void this.kick();
    return backfill;
  }

  /** A programme's backfill requests, newest first. */
  async list(programId: number): Promise<Backfill[]> {
    await this.aggregates.report(programId);
    return this.repo.list(programId, MAX_LISTED);
  }

  /** Runs queued backfills until none is left; resolves when this run (and any kick during it) ends. */
  kick(): Promise<void> {
    return this.loop.kick();
  }

  private leaseUntil(): Date {
    return new Date(this.now().getTime() + LEASE_MS);
  }

  /** Claims one backfill and pulls its remaining days; false when there was none. */
  private async runOne(): Promise<boolean> {
    const b = await this.repo.claim(this.owner, this.now(), this.leaseUntil());
    if (!b) return false;
    const signal = this.abort.signal;
    let { daysDone, daysFailed, error } = b;
    try {
      while (daysDone < b.daysTotal) {
        const result = await this.aggregates.pullDay(
          b.programId,
          addDays(b.from, daysDone),
          'backfill',
          signal,
        );
        // A day cut short by shutdown is pulled again by whoever resumes the backfill.
        if (signal.aborted) break;
        daysDone++;
        if (result.status === 'failed') {
          daysFailed++;
          error = `${result.day}: ${result.reason}`;
        }
        if (!(await this.repo.progress(b.id, this.owner, { daysDone, daysFailed, error }, this.leaseUntil())))
          return true;
      }
    } catch (err) {
      const reason = scrub((err as Error).message ?? String(err)).slice(0, 1000);
      await this.repo.finish(b.id, this.owner, 'failed', reason, this.now());
      return true;
    }
    if (daysDone < b.daysTotal) {
      await this.repo.release(b.id, this.owner);
      return false;
    }
    const summary = daysFailed ? `${daysFailed} of ${b.daysTotal} days failed; last ${error}` : null;
    await this.repo.finish(b.id, this.owner, daysFailed ? 'failed' : 'done', summary, this.now());
    return true;
  }

  /** Stops taking backfills; the one running gives its remaining days back to the queue. */
  async stop(): Promise<void> {
    this.abort.abort();
    await this.loop.idle();
  }
}

/** Registers the look for queued backfills with the scheduler (once per period across the fleet). */
export function registerBackfillJob(scheduler: Scheduler, backfills: AggregateBackfills): void {
  scheduler.register({ name: BACKFILL_JOB, everyMs: BACKFILL_POLL_MS, run: () => backfills.kick() });
}

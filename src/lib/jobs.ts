import { hostname } from 'node:os';
import type { Db } from '../db/index.ts';
import { JobRunRepository, type JobRunStatus } from './job-repository.ts';
import { scrub } from './scrub.ts';

export interface JobDefinition {
  /** Stable name; also the key runs are deduplicated on. */
  name: string;
  /** Period in milliseconds; slot N covers [N × every, (N+1) × every). */
  everyMs: number;
  run(signal: AbortSignal): Promise<void>;
}

const DAY_MS = 86_400_000;
/**
 * The longest period a job may have (`PODIUM_AGGREGATE_PULL_MINUTES` allows exactly that). Runs are
 * kept at least a day longer, so no process's current slot loses its row, whatever period it sets.
 */
const MAX_PERIOD_MS = 7 * DAY_MS;

/** How `pruneRuns` bounds its work. */
export interface RunRetention {
  /** Runs started longer ago than this go (never less than the longest period and a day). */
  keepMs: number;
  /** Rows deleted per statement. */
  batch: number;
  /** Statements per call at most: a backlog (a database that never pruned) goes over several calls. */
  maxBatches: number;
}

export const DEFAULT_RUN_RETENTION: RunRetention = {
  keepMs: MAX_PERIOD_MS + DAY_MS,
  batch: 5_000,
  maxBatches: 100,
};

export interface JobStats {
  runs: number;
  failures: number;
  /** Milliseconds between the start of the last slot and the moment its run began. */
  lastLagMs: number;
}

/**
 * Runs scheduled jobs once per slot across every process sharing the database: a run first
 * claims its (job, slot) row, and only the process whose INSERT wins runs it. An interrupted
 * run (shutdown mid-way) gives its slot back so another process can take it.
 */
export class Scheduler {
  private readonly jobs = new Map<string, JobDefinition>();
  private readonly stats = new Map<string, JobStats>();
  private readonly running = new Set<Promise<void>>();
  /** Per job, the last slot known to be settled (run to the end here or elsewhere): not asked about again. */
  private readonly settled = new Map<string, number>();
  private readonly abort = new AbortController();
  private timer: NodeJS.Timeout | undefined;
  readonly owner = `${hostname()}:${process.pid}:${Math.random().toString(36).slice(2, 8)}`;

  private readonly repo: JobRunRepository;

  constructor(
    db: Db,
    private readonly now: () => Date = () => new Date(),
    private readonly log: (msg: string, err?: unknown) => void = () => {},
  ) {
    this.repo = new JobRunRepository(db);
  }

  register(job: JobDefinition): void {
    if (job.everyMs < 1000) throw new Error(`job ${job.name}: period under one second`);
    if (job.everyMs > MAX_PERIOD_MS) throw new Error(`job ${job.name}: period over seven days`);
    this.jobs.set(job.name, job);
    this.stats.set(job.name, { runs: 0, failures: 0, lastLagMs: 0 });
  }

  /** Per-job counters (for metrics). */
  jobStats(): Record<string, JobStats> {
    return Object.fromEntries([...this.stats].map(([k, v]) => [k, { ...v }]));
  }

  /**
   * Starts ticking (every `tickMs`); each tick runs every job whose current slot is unclaimed. A
   * tick whose slots are all settled touches no database, so an idle server does no work.
   */
  start(tickMs = 1000): void {
    this.timer ??= setInterval(() => void this.tick(), tickMs);
    this.timer.unref();
  }

  /** Claims and runs the current slot of each job; resolves when this tick's runs are done. */
  async tick(): Promise<void> {
    if (this.abort.signal.aborted) return;
    await Promise.all([...this.jobs.values()].map((job) => this.runSlot(job)));
  }

  private async runSlot(job: JobDefinition): Promise<void> {
    const nowMs = this.now().getTime();
    const slot = Math.floor(nowMs / job.everyMs);
    if (this.settled.get(job.name) === slot) return;
    const id = await this.repo.claim(job.name, slot, this.owner).catch((err) => {
      this.log(`job ${job.name}: could not claim slot`, err);
      return undefined;
    });
    if (id === undefined) {
      // Someone else holds the slot: settled once it finished; while it runs, it may still be
      // interrupted and given back, so keep asking.
      const status = await this.repo.statusOf(job.name, slot).catch(() => undefined);
      if (status === 'succeeded' || status === 'failed') this.settled.set(job.name, slot);
      return;
    }
    // Ours now: later ticks of this slot need not ask (an interrupted run means we are stopping).
    this.settled.set(job.name, slot);
    const stats = this.stats.get(job.name)!;
    stats.runs++;
    stats.lastLagMs = nowMs - slot * job.everyMs;
    const run = (async () => {
      let status: JobRunStatus = 'succeeded';
      let error: string | null = null;
      try {
        await job.run(this.abort.signal);
      } catch (err) {
        status = this.abort.signal.aborted ? 'interrupted' : 'failed';
        error = scrub((err as Error).message ?? String(err)).slice(0, 2000);
        if (status === 'failed') stats.failures++;
        this.log(`job ${job.name}: ${status}`, err);
      }
      await this.repo
        .finish(id, status, error)
        .catch((err) => this.log(`job ${job.name}: could not record the run`, err));
    })();
    this.running.add(run);
    await run;
    this.running.delete(run);
  }

  /**
   * Deletes old runs, so the table keeps about `keepMs` of history instead of growing by a row per
   * job and slot for ever (~7 000 a day with the per-minute jobs). A claim needs only its current
   * slot's row, claimed (or taken over) within the last period, so runs started longer ago than the
   * longest period go. By start time, not slot: slots depend on a period that processes may set
   * differently (`PODIUM_ADSERVER_REPORT_MINUTES`), and a job no process registers any more goes
   * too. Age by the database's clock, which wrote `started_at` (not this scheduler's, which tests
   * set to another day). Returns how many rows went.
   */
  async pruneRuns(signal: AbortSignal, retention: RunRetention = DEFAULT_RUN_RETENTION): Promise<number> {
    const olderThanMs = Math.max(retention.keepMs, MAX_PERIOD_MS + DAY_MS);
    let deleted = 0;
    for (let i = 0; i < retention.maxBatches && !signal.aborted; i++) {
      const n = await this.repo.prune(olderThanMs, retention.batch);
      deleted += n;
      if (n < retention.batch) break;
    }
    return deleted;
  }

  /** Stops ticking, asks running jobs to stop, and waits for them (they record their outcome). */
  async stop(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.abort.abort();
    await Promise.all(this.running);
  }
}

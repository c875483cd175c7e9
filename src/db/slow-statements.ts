/** A statement that took longer than the threshold, as an operator's log line names it. */
export interface SlowStatement {
  /** The prepared statement's name, or the opening of its SQL (never a bound value). */
  statement: string;
  /** The slowest of the `times` calls, from call to answer: queueing for the database included. */
  ms: number;
  /** Calls over the threshold since this statement was last reported (one line a minute at most). */
  times: number;
}

const REPORT_EVERY_MS = 60_000;
const SQL_SHOWN = 120;
/** Statements remembered between reports: past this the oldest is reported and forgotten. */
const KEPT_MAX = 500;

interface Pending {
  reportedAt: number;
  times: number;
  ms: number;
}

/** How a statement is named in a report: its prepared name, or its SQL on one line, cut short. */
export function statementLabel(sql: string, name?: string): string {
  if (name) return name;
  const line = sql.replace(/\s+/g, ' ').trim();
  return line.length > SQL_SHOWN ? `${line.slice(0, SQL_SHOWN)}…` : line;
}

/**
 * Times database calls and reports those over a threshold: at once the first time a statement is
 * slow, then at most once a minute per statement with how many times it was slow meanwhile (held
 * counts go out when the minute is over, slow again or not), so a saturated database yields a few
 * lines a minute, not one per request. On the embedded database a slow statement holds every
 * request of the process (one thread), so these lines name what to prepare, index or batch.
 */
export class SlowStatements {
  private thresholdMs = 0;
  private report: (s: SlowStatement) => void = () => {};
  private readonly pending = new Map<string, Pending>();
  private timer: NodeJS.Timeout | undefined;

  constructor(private readonly clock: () => number = () => performance.now()) {}

  /** Reports calls of `thresholdMs` or more to `report`; 0 turns reporting off. */
  watch(thresholdMs: number, report: (s: SlowStatement) => void): void {
    this.stop();
    this.thresholdMs = thresholdMs;
    this.report = report;
    if (thresholdMs > 0) this.timer = setInterval(() => this.flush(), REPORT_EVERY_MS).unref();
  }

  /** Reports the counts held for a minute or more, and forgets statements quiet that long. */
  flush(): void {
    const now = this.clock();
    for (const [statement, held] of this.pending) {
      if (now - held.reportedAt < REPORT_EVERY_MS) continue;
      if (held.times > 0) this.emit(statement, held.times, held.ms);
      this.pending.delete(statement);
    }
  }

  /** Reports every held count now and stops (the database is closing). */
  stop(): void {
    clearInterval(this.timer);
    this.timer = undefined;
    for (const [statement, held] of this.pending)
      if (held.times > 0) this.emit(statement, held.times, held.ms);
    this.pending.clear();
  }

  /** Runs one database call and notes it when it was slow. */
  async time<T>(sql: string, name: string | undefined, run: () => Promise<T>): Promise<T> {
    if (this.thresholdMs <= 0) return run();
    const started = this.clock();
    try {
      return await run();
    } finally {
      const ms = this.clock() - started;
      if (ms >= this.thresholdMs) this.note(statementLabel(sql, name), ms);
    }
  }

  private note(statement: string, ms: number): void {
    const now = this.clock();
    const seen = this.pending.get(statement);
    if (seen && now - seen.reportedAt < REPORT_EVERY_MS) {
      seen.times++;
      seen.ms = Math.max(seen.ms, ms);
      return;
    }
    if (seen) {
      this.emit(statement, seen.times + 1, Math.max(seen.ms, ms));
      this.pending.delete(statement);
    } else this.emit(statement, 1, ms);
    if (this.pending.size >= KEPT_MAX) {
      const [oldest, held] = this.pending.entries().next().value as [string, Pending];
      if (held.times > 0) this.emit(oldest, held.times, held.ms);
      this.pending.delete(oldest);
    }
    this.pending.set(statement, { reportedAt: now, times: 0, ms: 0 });
  }

  private emit(statement: string, times: number, ms: number): void {
    // A failing reporter must not turn the statement's own answer into an error.
    try {
      this.report({ statement, ms: Math.round(ms), times });
    } catch {}
  }
}

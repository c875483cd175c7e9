import { todayIn } from '../../../packages/adserver-kit/src/reference/dates.ts';
import type { Outcome } from '../../lib/outbound.ts';
import { withRetries } from '../../lib/retry.ts';
import type { Connections } from './connections.ts';
import type { DeliveryRow, PullRecord, PushedLine, ReportRepository } from './report-repository.ts';
import type { AdserverRepository } from './repository.ts';
import type { StoredConnection } from './types.ts';

/** Most line ids per `POST /reports` call and rows per page (the contract's maximum). */
const BATCH = 200;
/** Most pages one batch follows before the pull stops (a cursor that never ends). */
const PAGE_CAP = 1000;
/**
 * Pulls failing in a row (each already retried with backoff) before the connection shows the
 * failure in its status: the contract's "persistent failure shows as unreachable".
 */
export const FAILING_PULLS = 3;

export interface ReportOptions {
  /** Days before today (account zone) pulled again on every run: ad servers revise recent figures. */
  trailingDays: number;
}

/** What every call of one batch shares. */
interface BatchContext {
  conn: StoredConnection;
  from: string;
  to: string;
  known: ReadonlySet<string>;
  record: PullRecord;
  deadline: number;
  signal?: AbortSignal | undefined;
}

type PullState = 'ok' | 'unreachable' | 'auth_error' | 'forbidden' | 'invalid_response';

/** Shifts a `YYYY-MM-DD` date by whole days. */
export function addDays(date: string, days: number): string {
  return new Date(Date.parse(`${date}T00:00:00Z`) + days * 86_400_000).toISOString().slice(0, 10);
}

/** The days of a line to pull now: its whole flight up to today the first time, then only the trailing window. */
export function pullWindow(
  line: PushedLine,
  today: string,
  trailingDays: number,
): { from: string; to: string } | null {
  const to = line.end_date < today ? line.end_date : today;
  const trailing = addDays(today, -trailingDays);
  const from = line.pulled && trailing > line.start_date ? trailing : line.start_date;
  return from <= to ? { from, to } : null;
}

/** Checks one report row; returns it normalised, or undefined when it breaks the contract. */
function readRow(raw: unknown): DeliveryRow | undefined {
  const r = raw as Record<string, unknown> | null;
  const count = (v: unknown) => Number.isSafeInteger(v) && (v as number) >= 0;
  if (
    !r ||
    typeof r.line_item_id !== 'string' ||
    typeof r.date !== 'string' ||
    !/^\d{4}-\d{2}-\d{2}$/.test(r.date)
  )
    return undefined;
  if (!count(r.impressions) || !count(r.clicks)) return undefined;
  return {
    line_item_id: r.line_item_id,
    date: r.date,
    impressions: r.impressions as number,
    clicks: r.clicks as number,
  };
}

/**
 * Delivery pulls: `POST /reports`, daily, over each pushed line's flight (trailing days again on
 * every run), by cursor, rows matched to bookings by `line_item_id` only and unknown ids kept
 * aside. 429 waits per `Retry-After` and 5xx backs off, never past the run's deadline.
 */
export class Reports {
  constructor(
    private readonly repo: ReportRepository,
    private readonly connectionRepo: AdserverRepository,
    private readonly connections: Connections,
    private readonly now: () => Date,
    private readonly options: ReportOptions,
  ) {}

  /** The scheduled job: pulls every connection with pushed lines, within `budgetMs`. */
  async pullAll(signal: AbortSignal, budgetMs: number): Promise<PullRecord[]> {
    const deadline = Date.now() + budgetMs;
    const out: PullRecord[] = [];
    for (const id of await this.repo.connectionsWithPushedLines()) {
      if (signal.aborted || Date.now() >= deadline) break;
      const conn = await this.connections.get(id);
      if (conn.status !== 'connected') continue;
      out.push(await this.pull(conn, deadline, signal));
    }
    return out;
  }

  /** One connection's pull, recorded in the pull history. */
  async pull(conn: StoredConnection, deadline: number, signal?: AbortSignal): Promise<PullRecord> {
    const started = this.now();
    const record: PullRecord = {
      connection_id: conn.id,
      started_at: started,
      state: 'ok',
      date_from: null,
      date_to: null,
      calls: 0,
      matched: 0,
      unmatched: 0,
      error: null,
    };
    const lines = await this.repo.pushedLines(conn.id);
    const known = new Set(lines.map((l) => l.line_item_id));
    const today = todayIn(conn.timezone ?? 'UTC', this.now());
    const due = lines
      .map((l) => ({ id: l.line_item_id, window: pullWindow(l, today, this.options.trailingDays) }))
      .filter((l): l is { id: string; window: { from: string; to: string } } => l.window !== null);
    for (let i = 0; i < due.length && record.state === 'ok'; i += BATCH) {
      const batch = due.slice(i, i + BATCH);
      // ISO dates sort as text: the batch asks for the union of its lines' windows.
      const from = batch.map((l) => l.window.from).sort()[0]!;
      const to = batch
        .map((l) => l.window.to)
        .sort()
        .at(-1)!;
      record.date_from = [record.date_from ?? from, from].sort()[0]!;
      record.date_to = [record.date_to ?? to, to].sort().at(-1)!;
      const ctx = { conn, from, to, known, record, deadline, signal };
      await this.pullBatch(
        ctx,
        batch.map((l) => l.id),
      );
    }
    await this.repo.recordPull(record);
    await this.flagPersistentFailure(record);
    return record;
  }

  private async pullBatch(ctx: BatchContext, ids: string[]): Promise<void> {
    const { conn, from, to, known, record, deadline, signal } = ctx;
    const cursors = new Set<string>();
    let cursor: string | undefined;
    for (let page = 0; page < PAGE_CAP; page++) {
      const body = JSON.stringify({
        line_item_ids: ids,
        date_range: { start_date: from, end_date: to },
        granularity: 'daily',
        limit: BATCH,
        ...(cursor ? { cursor } : {}),
      });
      const { outcome, calls } = await withRetries(
        () => this.connections.call(conn, { method: 'POST', path: '/reports', body, signal }),
        { attempts: 5, budgetMs: Math.max(0, deadline - Date.now()), baseMs: 1000, capMs: 30_000, signal },
      );
      record.calls += calls;
      if (outcome.kind !== 'ok') return this.failed(ctx, ids, outcome);
      const json = outcome.json as { rows?: unknown; next_cursor?: unknown };
      const rows = Array.isArray(json?.rows) ? json.rows.map(readRow) : undefined;
      if (!rows || rows.some((r) => r === undefined))
        return this.stop(
          record,
          'invalid_response',
          'POST /reports: rows missing or a row breaks the contract',
        );
      await this.connectionRepo.confirmCapability(conn.id, 'reporting');
      const valid = rows as DeliveryRow[];
      const matched = valid.filter((r) => known.has(r.line_item_id));
      const unmatched = valid.filter((r) => !known.has(r.line_item_id));
      await this.repo.upsertDelivery('matched', conn.id, matched, this.now());
      await this.repo.upsertDelivery('unmatched', conn.id, unmatched, this.now());
      record.matched += matched.length;
      record.unmatched += unmatched.length;
      const next = json.next_cursor;
      if (next === undefined || next === null) return;
      if (typeof next !== 'string' || cursors.has(next))
        return this.stop(record, 'invalid_response', 'POST /reports: next_cursor repeats or is not a string');
      cursors.add(next);
      cursor = next;
    }
    this.stop(record, 'invalid_response', `POST /reports: stopped after ${PAGE_CAP} pages`);
  }

  /** A failed call: a 404 on several lines is retried line by line (unknown lines are skipped and reported). */
  private async failed(
    ctx: BatchContext,
    ids: string[],
    outcome: Exclude<Outcome, { kind: 'ok' }>,
  ): Promise<void> {
    const { record } = ctx;
    if (outcome.kind === 'http_status' && outcome.status === 404) {
      if (ids.length === 1) {
        record.error =
          `${record.error ? `${record.error}; ` : ''}line_item_id ${ids[0]} unknown to the ad server`.slice(
            0,
            2000,
          );
        return;
      }
      for (const id of ids) await this.pullBatch(ctx, [id]);
      return;
    }
    const state: PullState =
      outcome.kind === 'http_status' && outcome.status === 401
        ? 'auth_error'
        : outcome.kind === 'http_status' && outcome.status === 403
          ? 'forbidden'
          : outcome.kind === 'invalid_json'
            ? 'invalid_response'
            : 'unreachable';
    this.stop(record, state, outcome.message);
  }

  /**
   * A connection whose pulls keep failing goes to `error` with the pull's state (`unreachable`,
   * or `invalid_response` for answers that break the contract); 401/403 already did on the call.
   * Like any error it stays until the operator re-verifies; pulls skip it meanwhile.
   */
  private async flagPersistentFailure(record: PullRecord): Promise<void> {
    if (record.state !== 'unreachable' && record.state !== 'invalid_response') return;
    const streak = await this.repo.failedPullStreak(record.connection_id, FAILING_PULLS);
    if (streak < FAILING_PULLS) return;
    await this.connectionRepo.markError(
      record.connection_id,
      record.state,
      `report pulls failed ${streak} times in a row: ${record.error ?? record.state}`.slice(0, 2000),
    );
  }

  private stop(record: PullRecord, state: PullState, message: string): void {
    record.state = state;
    record.error = message;
  }
}

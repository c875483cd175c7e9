import { firstValue } from '../../db/first-value.ts';
import type { Db, Queryable } from '../../db/index.ts';
import type { StoredSecret } from '../../lib/seal.ts';
import { isoOrNull as iso } from '../../lib/time.ts';
import type { OperatorRow, ReportMapping } from './report-mapping.ts';
import {
  readRollups,
  zoneReady as ready,
  unfoldedClicks,
  unfoldedClicksFrom,
} from './rollup-zone-repository.ts';
import { COMMISSION_EVENTS } from './stats-repository.ts';

/** A programme's report endpoint as stored (the key still sealed). */
export interface StoredReport {
  programId: number;
  slug: string;
  timezone: string;
  url: string | null;
  keySealed: string | null;
  mapping: ReportMapping;
}

/** One pull attempt as recorded. */
export interface PullRecord {
  id: number;
  programId: number;
  day: string;
  trigger: 'schedule' | 'backfill';
  status: 'ok' | 'failed';
  reason: string | null;
  httpStatus: number | null;
  calls: number;
  pages: number;
  rows: number;
  startedAt: string;
  finishedAt: string;
}

export type NewPull = Omit<PullRecord, 'id' | 'finishedAt' | 'rows'> & {
  finishedAt: Date;
  startedAt: string;
};

/** An operator row as stored, with its day and currency. */
export interface StoredAggregate extends OperatorRow {
  day: string;
  currency: string | null;
  pullId: number;
}

/** Our figures and the operator's for one programme day. */
export interface ReconcileDbRow {
  day: string;
  ourClicks: number;
  ourRegistrations: number;
  ourFtds: number;
  /** Null when no pull of this day succeeded. */
  opClicks: number | null;
  opRegistrations: number | null;
  opFtds: number | null;
  /** The operator's report currency that day, else the programme's. */
  currency: string;
  /** Our commission-event amounts in `currency`, and the operator's commission (null unpulled). */
  ourCommission: string;
  opCommission: string | null;
  /** Ours minus the operator's, and that as a percentage of theirs (null when undefined). */
  commissionDifference: string | null;
  commissionDifferencePercent: string | null;
  lastStatus: 'ok' | 'failed' | null;
  lastReason: string | null;
  pulledAt: string | null;
}

/** SQL of operator aggregates, pulls and reconciliation. */
export class AggregateRepository {
  constructor(
    private readonly db: Db,
    /** Reconciliation reads here: the read replica when there is one. */
    private readonly reads: Queryable = db,
  ) {}

  async report(programId: number): Promise<StoredReport | undefined> {
    const [r] = await this.db.query<StoredReport>(
      `SELECT id AS "programId", slug, timezone, report_url AS url, report_key_sealed AS "keySealed",
              report_mapping AS mapping
       FROM affiliate_programs WHERE id = $1`,
      [programId],
    );
    return r;
  }

  async programBySlug(slug: string): Promise<number | undefined> {
    return firstValue<number>(this.db, 'SELECT id FROM affiliate_programs WHERE slug = $1', [slug]);
  }

  /** Sets the endpoint and mapping; `keySealed` undefined keeps the stored key, null removes it. */
  async setReport(
    programId: number,
    url: string | null,
    keySealed: string | null | undefined,
    mapping: ReportMapping,
  ): Promise<void> {
    await this.db.query(
      `UPDATE affiliate_programs SET report_url = $2, report_mapping = $3,
              report_key_sealed = CASE WHEN $5 THEN report_key_sealed ELSE $4 END, updated_at = now()
       WHERE id = $1`,
      [programId, url, JSON.stringify(mapping), keySealed ?? null, keySealed === undefined],
    );
  }

  /** Every programme's sealed report key (the programme id is its associated data). */
  async sealedReportKeys(): Promise<StoredSecret[]> {
    return this.db.query<StoredSecret>(
      `SELECT 'program ' || id AS record, id::text AS aad, report_key_sealed AS sealed
       FROM affiliate_programs WHERE report_key_sealed IS NOT NULL ORDER BY id`,
    );
  }

  /** Replaces a sealed report key only if it is still `old`; false when it changed meanwhile. */
  async replaceSealedReportKey(programId: number, old: string, sealed: string): Promise<boolean> {
    const rows = await this.db.query(
      'UPDATE affiliate_programs SET report_key_sealed = $3 WHERE id = $1 AND report_key_sealed = $2 RETURNING id',
      [programId, old, sealed],
    );
    return rows.length === 1;
  }

  /** Ids of the programmes that have a report endpoint. */
  async programsWithReports(): Promise<number[]> {
    const rows = await this.db.query<{ id: number }>(
      'SELECT id FROM affiliate_programs WHERE report_url IS NOT NULL ORDER BY id',
    );
    return rows.map((r) => r.id);
  }

  /**
   * Records a pull; an ok one replaces the day's stored rows in the same transaction (rows with
   * the same tracker and campaign, e.g. split by country, are summed), so a day always holds
   * exactly the figures of its latest successful pull.
   */
  async recordPull(p: NewPull, rows: OperatorRow[] | undefined, currency: string | null): Promise<number> {
    return this.db.tx(async (q: Queryable) => {
      const [r] = await q.query<{ id: number }>(
        `INSERT INTO aggregate_pulls (program_id, day, trigger, status, reason, http_status, calls, pages, rows,
                                      started_at, finished_at)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11) RETURNING id`,
        [
          p.programId,
          p.day,
          p.trigger,
          p.status,
          p.reason,
          p.httpStatus,
          p.calls,
          p.pages,
          rows?.length ?? 0,
          p.startedAt,
          p.finishedAt.toISOString(),
        ],
      );
      const id = Number((r as { id: number }).id);
      if (rows) {
        await q.query('DELETE FROM operator_aggregates WHERE program_id = $1 AND day = $2', [
          p.programId,
          p.day,
        ]);
        const col = <K extends keyof OperatorRow>(k: K) => rows.map((row) => row[k]);
        await q.query(
          `INSERT INTO operator_aggregates (program_id, day, tracker, campaign, clicks, registrations, ftds, deposits,
                                            commission, currency, pull_id)
           SELECT $1, $2, tracker, campaign, sum(clicks), sum(registrations), sum(ftds), sum(deposits),
                  sum(commission), $10, $11
           FROM unnest($3::text[], $4::text[], $5::int[], $6::int[], $7::int[], $8::numeric[], $9::numeric[])
                AS r(tracker, campaign, clicks, registrations, ftds, deposits, commission)
           GROUP BY tracker, campaign`,
          [
            p.programId,
            p.day,
            col('tracker'),
            col('campaign'),
            col('clicks'),
            col('registrations'),
            col('ftds'),
            col('deposits'),
            col('commission'),
            currency,
            id,
          ],
        );
      }
      return id;
    });
  }

  async pulls(programId: number, from: string, to: string, limit: number): Promise<PullRecord[]> {
    const rows = await this.db.query<PullRecord>(
      `SELECT id::int AS id, program_id AS "programId", to_char(day, 'YYYY-MM-DD') AS day, trigger, status, reason,
              http_status AS "httpStatus", calls, pages, rows, started_at AS "startedAt", finished_at AS "finishedAt"
       FROM aggregate_pulls WHERE program_id = $1 AND day BETWEEN $2::date AND $3::date
       ORDER BY id DESC LIMIT $4`,
      [programId, from, to, limit],
    );
    return rows.map((r) => ({ ...r, startedAt: iso(r.startedAt)!, finishedAt: iso(r.finishedAt)! }));
  }

  async aggregates(programId: number, from: string, to: string): Promise<StoredAggregate[]> {
    return this.db.query<StoredAggregate>(
      `SELECT to_char(day, 'YYYY-MM-DD') AS day, tracker, campaign, clicks, registrations, ftds,
              deposits::text AS deposits, commission::text AS commission, currency, pull_id::int AS "pullId"
       FROM operator_aggregates WHERE program_id = $1 AND day BETWEEN $2::date AND $3::date
       ORDER BY day, tracker, campaign`,
      [programId, from, to],
    );
  }

  /**
   * Per day of [from, to]: our counted clicks, postback registrations/FTDs and commission of the programme
   * (days cut in `tz`: the daily rollups and the clicks not folded into them yet when `tz` is a
   * ready zone, else the 15-minute ones), the
   * operator's totals from the latest ok pull, and the last pull's outcome.
   */
  async reconcile(programId: number, from: string, to: string, tz: string): Promise<ReconcileDbRow[]> {
    const since = await unfoldedClicksFrom(this.reads);
    return readRollups(
      async () => {
        const [r] = await this.reads.query<{ ready: boolean }>(`SELECT ${ready('$1::text')} AS ready`, [tz]);
        return r?.ready !== true;
      },
      (withQuarters) => this.reconcileRead(programId, from, to, tz, withQuarters, since),
    );
  }

  private async reconcileRead(
    programId: number,
    from: string,
    to: string,
    tz: string,
    withQuarters: boolean,
    since: string,
  ): Promise<ReconcileDbRow[]> {
    // The zone is either ready (daily rows) or not (15-minute rows): the ready checks pick one branch.
    const quarters = (sql: string) => (withQuarters ? `UNION ALL ${sql}` : '');
    const rows = await this.reads.query<ReconcileDbRow>(
      `WITH days AS (
         SELECT d::date AS day FROM generate_series($2::date, $3::date, interval '1 day') d
       ), bounds AS (
         SELECT ($2::date)::timestamp AT TIME ZONE $4 AS lo, ($3::date + 1)::timestamp AT TIME ZONE $4 AS hi
       ), clk AS (
         SELECT day, n FROM click_daily_rollups
         WHERE zone = $4 AND ${ready('$4')} AND program_id = $1 AND kind = 'click' AND day BETWEEN $2::date AND $3::date
         UNION ALL
         SELECT (c.bucket AT TIME ZONE $4)::date, c.n
         FROM click_rollups c, bounds b
         WHERE ${unfoldedClicks('c.bucket', '$4', '$6')} AND c.program_id = $1
           AND c.kind = 'click' AND c.bucket >= b.lo AND c.bucket < b.hi
         ${quarters(`SELECT (c.bucket AT TIME ZONE $4)::date, c.n
           FROM click_rollups c, bounds b
           WHERE NOT ${ready('$4')} AND c.program_id = $1 AND c.kind = 'click' AND c.bucket >= b.lo AND c.bucket < b.hi`)}
       ), conv AS (
         SELECT day, event, currency::text AS currency, n, amount FROM conversion_daily_rollups
         WHERE zone = $4 AND ${ready('$4')} AND program_id = $1 AND day BETWEEN $2::date AND $3::date
         ${quarters(`SELECT (v.bucket AT TIME ZONE $4)::date, v.event, v.currency::text, v.n, v.amount
           FROM conversion_rollups v, bounds b
           WHERE NOT ${ready('$4')} AND v.program_id = $1 AND v.bucket >= b.lo AND v.bucket < b.hi`)}
       ), our_clicks AS (
         SELECT day, sum(n)::int AS n FROM clk GROUP BY 1
       ), our_conv AS (
         SELECT day, coalesce(sum(n) FILTER (WHERE event = 'registration'), 0)::int AS registrations,
                coalesce(sum(n) FILTER (WHERE event = 'ftd'), 0)::int AS ftds
         FROM conv GROUP BY 1
       ), our_money AS (
         SELECT day, currency, sum(amount) AS amount
         FROM conv WHERE event = ANY($5::text[]) AND currency IS NOT NULL
         GROUP BY 1, 2
       ), theirs AS (
         SELECT day, sum(clicks)::int AS clicks, sum(registrations)::int AS registrations, sum(ftds)::int AS ftds,
                sum(commission) AS commission, max(currency)::text AS currency
         FROM operator_aggregates WHERE program_id = $1 AND day BETWEEN $2::date AND $3::date
         GROUP BY day
       ), last_pull AS (
         SELECT DISTINCT ON (day) day, status, reason
         FROM aggregate_pulls WHERE program_id = $1 AND day BETWEEN $2::date AND $3::date
         ORDER BY day, id DESC
       ), last_ok AS (
         SELECT DISTINCT ON (day) day, finished_at
         FROM aggregate_pulls WHERE program_id = $1 AND status = 'ok' AND day BETWEEN $2::date AND $3::date
         ORDER BY day, id DESC
       ), money AS (
         SELECT d.day, c.currency, round(coalesce(om.amount, 0), 4) AS ours,
                CASE WHEN lo.day IS NULL THEN NULL ELSE round(coalesce(t.commission, 0), 4) END AS theirs
         FROM days d
         LEFT JOIN theirs t ON t.day = d.day
         LEFT JOIN last_ok lo ON lo.day = d.day
         CROSS JOIN LATERAL (SELECT coalesce(t.currency, (SELECT currency FROM affiliate_programs WHERE id = $1))
                               AS currency) c
         LEFT JOIN our_money om ON om.day = d.day AND om.currency = c.currency
       )
       SELECT to_char(d.day, 'YYYY-MM-DD') AS day,
              coalesce(oc.n, 0) AS "ourClicks", coalesce(ov.registrations, 0) AS "ourRegistrations",
              coalesce(ov.ftds, 0) AS "ourFtds",
              CASE WHEN lo.day IS NULL THEN NULL ELSE coalesce(t.clicks, 0) END AS "opClicks",
              CASE WHEN lo.day IS NULL THEN NULL ELSE coalesce(t.registrations, 0) END AS "opRegistrations",
              CASE WHEN lo.day IS NULL THEN NULL ELSE coalesce(t.ftds, 0) END AS "opFtds",
              m.currency, m.ours::text AS "ourCommission", m.theirs::text AS "opCommission",
              (m.ours - m.theirs)::text AS "commissionDifference",
              CASE WHEN m.theirs = 0 AND m.ours = 0 THEN '0.00' WHEN m.theirs <> 0
                   THEN round((m.ours - m.theirs) * 100 / m.theirs, 2)::text END AS "commissionDifferencePercent",
              lp.status AS "lastStatus", lp.reason AS "lastReason", lo.finished_at AS "pulledAt"
       FROM days d
       LEFT JOIN our_clicks oc ON oc.day = d.day
       LEFT JOIN our_conv ov ON ov.day = d.day
       LEFT JOIN theirs t ON t.day = d.day
       LEFT JOIN last_pull lp ON lp.day = d.day
       LEFT JOIN last_ok lo ON lo.day = d.day
       JOIN money m ON m.day = d.day
       ORDER BY d.day`,
      [programId, from, to, tz, COMMISSION_EVENTS, since],
    );
    return rows.map((r) => ({ ...r, pulledAt: iso(r.pulledAt) }));
  }
}

import { sql } from 'kysely';
import type { Queryable } from '../../db/index.ts';
import { kysely } from '../../db/kysely.ts';
import type { ConversionRecord } from '../reporting/records-repository.ts';

/** A conversion of the player as stored, for an export: the admin API's row with its keyed hash. */
export type PlayerConversion = Omit<ConversionRecord, 'subId'> & { playerRef: string };

/** What the log scan reads of a row to decide whether it carries the player. */
export interface LogCandidate {
  id: string;
  contentType: string | null;
  query: Record<string, unknown>;
  body: string | null;
}

/** One outcome of a logged postback, as exported. */
export interface PlayerOutcome {
  status: number;
  code: string;
  conversionId: string | null;
  duplicate: boolean;
  replay: boolean;
  decidedAt: string;
}

/** A raw postback log row of the player as stored (secrets already removed when it was logged). */
export interface PlayerPostback {
  id: string;
  receivedAt: string;
  program: string;
  method: string;
  contentType: string | null;
  query: Record<string, unknown>;
  body: string | null;
  outcomes: PlayerOutcome[];
}

/** What an erasure deleted. */
export interface ErasedCounts {
  conversions: number;
  postbacks: number;
  outcomes: number;
}

/** The text an id takes inside a JSON string (quotes and backslashes escaped), as jsonb prints it. */
export const insideJson = (v: string) => JSON.stringify(v).slice(1, -1);

const iso = (d: Date | string) => new Date(d).toISOString();

/**
 * SQL of player data requests over tracking's tables: the player's conversions (by the keyed
 * hash), the raw postback log rows that may carry the player, and the erasure of both. Neither
 * table is indexed by player: a request scans them, which an occasional admin request can afford
 * and the postback write path (no extra index to maintain) is spared.
 */
export class PlayerDataRepository {
  constructor(private readonly db: Queryable) {}

  /** The parameter names a player id may arrive under: `player_id` and every programme's own name for it. */
  async playerKeys(q: Queryable): Promise<string[]> {
    const rows = await kysely(q)
      .selectFrom('affiliate_programs')
      .select(sql<string>`param_map->>'player_id'`.as('name'))
      .where(sql<boolean>`param_map ? 'player_id'`)
      .execute();
    return ['player_id', ...rows.map((r) => r.name)];
  }

  /** One page of the player's conversions, oldest first, with how many there are. */
  async conversions(
    ref: string,
    programId: number | undefined,
    limit: number,
    offset: number,
  ): Promise<{ rows: PlayerConversion[]; total: number }> {
    const rows = await kysely(this.db)
      .selectFrom('conversions as v')
      .select([
        'v.id',
        'v.program_id as programId',
        'v.transaction_id as transactionId',
        'v.event',
        sql<string | null>`v.amount::text`.as('amount'),
        'v.currency',
        'v.player_ref as playerRef',
        'v.click_id as clickId',
        'v.attributed',
        'v.site_id as siteId',
        'v.toplist_id as toplistId',
        'v.position',
        'v.brand_id as brandId',
        'v.offer_id as offerId',
        'v.tracker_id as trackerId',
        sql<string>`v.log_id::text`.as('logId'),
        'v.received_at as receivedAt',
        sql<number>`count(*) OVER ()::int`.as('total'),
      ])
      .where('v.player_ref', '=', ref)
      .$if(programId !== undefined, (qb) => qb.where('v.program_id', '=', programId as number))
      .orderBy('v.received_at')
      .orderBy('v.id')
      .limit(limit)
      .offset(offset)
      .execute();
    return {
      rows: rows.map(({ total: _, ...r }) => ({
        ...r,
        playerRef: r.playerRef as string,
        receivedAt: iso(r.receivedAt),
      })),
      total: rows[0]?.total ?? (offset > 0 ? await this.countConversions(ref, programId) : 0),
    };
  }

  private async countConversions(ref: string, programId: number | undefined): Promise<number> {
    const [row] = await kysely(this.db)
      .selectFrom('conversions')
      .select(sql<number>`count(*)::int`.as('n'))
      .where('player_ref', '=', ref)
      .$if(programId !== undefined, (qb) => qb.where('program_id', '=', programId as number))
      .execute();
    return row?.n ?? 0;
  }

  /**
   * Up to `limit` log rows after id `afterId` (in id order) whose query or body text holds the
   * player id or its keyed hash anywhere: a superset of the rows carrying the player, which the
   * caller narrows by reading each row's parameters. `program` limits it to one programme's slug.
   */
  async logCandidates(
    q: Queryable,
    match: { playerId: string; ref: string },
    program: string | undefined,
    afterId: string,
    limit: number,
  ): Promise<LogCandidate[]> {
    const inside = insideJson(match.playerId);
    const rows = await kysely(q)
      .selectFrom('postback_log as l')
      .select([sql<string>`l.id::text`.as('id'), 'l.content_type as contentType', 'l.query', 'l.body'])
      .where(sql<boolean>`l.id > ${afterId}::bigint`)
      .where((eb) =>
        eb.or([
          sql<boolean>`strpos(l.query::text, ${inside}) > 0`,
          sql<boolean>`strpos(l.query::text, ${match.ref}) > 0`,
          sql<boolean>`strpos(l.body, ${match.playerId}) > 0`,
          sql<boolean>`strpos(l.body, ${inside}) > 0`,
          sql<boolean>`strpos(l.body, ${match.ref}) > 0`,
        ]),
      )
      .$if(program !== undefined, (qb) => qb.where('l.program', '=', program as string))
      .orderBy('l.id')
      .limit(limit)
      .execute();
    return rows.map((r) => ({ ...r, query: r.query as Record<string, unknown> }));
  }

  /** The log rows of these ids with their outcomes, oldest first. */
  async postbacks(ids: readonly string[]): Promise<PlayerPostback[]> {
    if (ids.length === 0) return [];
    const rows = await this.db.query<Omit<PlayerPostback, 'id'> & { id: string | number }>(
      `SELECT l.id::text AS id, l.received_at AS "receivedAt", l.program, l.method, l.content_type AS "contentType",
              l.query, l.body,
              coalesce((SELECT jsonb_agg(jsonb_build_object('status', o.status, 'code', o.code,
                          'conversionId', o.conversion_id, 'duplicate', o.duplicate, 'replay', o.replay,
                          'decidedAt', o.decided_at) ORDER BY o.decided_at)
                        FROM postback_outcomes o WHERE o.log_id = l.id), '[]'::jsonb) AS outcomes
       FROM postback_log l WHERE l.id = ANY($1::bigint[])
       ORDER BY l.received_at, l.id`,
      [ids],
    );
    return rows.map((r) => ({
      ...r,
      id: String(r.id),
      receivedAt: iso(r.receivedAt),
      outcomes: r.outcomes.map((o) => ({ ...o, decidedAt: iso(o.decidedAt) })),
    }));
  }

  /**
   * Deletes the player's conversions (by keyed hash, in the programme when given), the log rows
   * `logIds` and the rows those conversions were logged from, and every outcome of the deleted
   * log rows, in one statement. `q` must be a transaction: the append-only trigger's exception is
   * set for the transaction (migration 0089). The dedupe keys (programme and transaction id) and
   * every rollup stay.
   */
  async erase(
    q: Queryable,
    ref: string,
    programId: number | undefined,
    logIds: readonly string[],
  ): Promise<ErasedCounts> {
    // The log's append-only trigger lets these deletions through, in this transaction only (0089).
    await q.query(`SELECT set_config('podium.player_erasure', 'on', true)`);
    const [row] = await q.query<ErasedCounts>(
      `WITH gone_conversions AS (
         DELETE FROM conversions WHERE player_ref = $1 AND ($2::int IS NULL OR program_id = $2)
         RETURNING log_id
       ), logs AS (
         SELECT unnest($3::bigint[]) AS id UNION SELECT log_id FROM gone_conversions
       ), gone_outcomes AS (
         DELETE FROM postback_outcomes WHERE log_id IN (SELECT id FROM logs) RETURNING 1
       ), gone_logs AS (
         DELETE FROM postback_log WHERE id IN (SELECT id FROM logs) RETURNING 1
       )
       SELECT (SELECT count(*) FROM gone_conversions)::int AS conversions,
              (SELECT count(*) FROM gone_logs)::int AS postbacks,
              (SELECT count(*) FROM gone_outcomes)::int AS outcomes`,
      [ref, programId ?? null, logIds],
    );
    return row ?? { conversions: 0, postbacks: 0, outcomes: 0 };
  }
}

import type { Db, Queryable } from '../../db/index.ts';
import { invalidField } from '../../lib/errors.ts';
import { isPlayerId, MAX_PLAYER_ID } from '../../lib/text.ts';
import {
  type ErasedCounts,
  insideJson,
  type LogCandidate,
  type PlayerConversion,
  PlayerDataRepository,
  type PlayerPostback,
} from './repository.ts';

export const PLAYER_DATA_DEFAULT_PER_PAGE = 500;
export const PLAYER_DATA_MAX_PER_PAGE = 1000;
/** Log rows read per step of the scan for the player's rows. */
const SCAN_BATCH = 1000;
/**
 * The most log rows one request collects for a player. Far above what one player's postbacks
 * come to; beyond it the request is refused rather than holding an unbounded id list.
 */
export const PLAYER_DATA_MAX_LOG_ROWS = 100_000;

/** Whom a request is about: the clear player id as the operator knows it, and optionally one programme. */
export interface PlayerRequest {
  playerId: string;
  programId?: number | undefined;
}

/** One page of everything stored about a player. */
export interface PlayerExport {
  data: { conversions: PlayerConversion[]; postbacks: PlayerPostback[] };
  meta: {
    page: number;
    per_page: number;
    conversions_total: number;
    postbacks_total: number;
    last_page: number;
  };
}

/** What the service needs from tracking: the keyed hash of a player id and a programme's slug (404 if none). */
export interface PlayerDataDeps {
  playerRef(playerId: string): Promise<string>;
  programSlug(programId: number): Promise<string | undefined>;
}

/**
 * The body's parameters when the log wrote them as a JSON object (a JSON or form body that
 * parsed), or undefined for a body kept as the text that arrived.
 */
function bodyFields(row: LogCandidate): Record<string, unknown> | undefined {
  const { body } = row;
  if (body === null) return {};
  const type = (row.contentType ?? '').split(';')[0]?.trim().toLowerCase();
  if (type !== 'application/json' && type !== 'application/x-www-form-urlencoded' && body !== '{}')
    return undefined;
  try {
    const parsed: unknown = JSON.parse(body);
    return parsed && typeof parsed === 'object' && !Array.isArray(parsed)
      ? (parsed as Record<string, unknown>)
      : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Whether a log row carries the player: its keyed hash in any value, the clear id as the value
 * of a player id parameter (a postback refused before its programme was known keeps the id as
 * sent), or the clear id anywhere in a body the log kept as text because it could not be read.
 */
export function carriesPlayer(
  row: LogCandidate,
  match: { playerId: string; ref: string; keys: ReadonlySet<string> },
): boolean {
  const body = bodyFields(row);
  if (body === undefined && row.body !== null) {
    if ([match.playerId, insideJson(match.playerId), match.ref].some((v) => row.body?.includes(v)))
      return true;
  }
  for (const fields of [row.query, body ?? {}])
    for (const [key, value] of Object.entries(fields))
      for (const v of Array.isArray(value) ? value : [value]) {
        if (typeof v !== 'string') continue;
        if (v.includes(match.ref)) return true;
        if (match.keys.has(key) && v.trim() === match.playerId) return true;
      }
  return false;
}

/**
 * Data-protection requests about one player: export everything stored under the player's id
 * (conversions, raw postback log rows and their outcomes) and erase it. Postbacks store the id
 * as a keyed hash with one key for every programme, so a request covers every programme unless
 * it names one. Erasure leaves the rollups (and so every aggregate report) as they were.
 */
export class PlayerData {
  private readonly repo: PlayerDataRepository;

  constructor(
    private readonly db: Db,
    private readonly deps: PlayerDataDeps,
  ) {
    this.repo = new PlayerDataRepository(db);
  }

  /** The trimmed id (as postbacks read it), its keyed hash and the programme's slug; 422 naming the field. */
  private async resolve(r: PlayerRequest) {
    const playerId = r.playerId.trim();
    if (!isPlayerId(playerId))
      throw invalidField('player_id', `must be 1 to ${MAX_PLAYER_ID} printable characters`);
    let program: string | undefined;
    if (r.programId !== undefined) {
      program = await this.deps.programSlug(r.programId);
      if (program === undefined) throw invalidField('program_id', 'no programme has this id');
    }
    return { playerId, ref: await this.deps.playerRef(playerId), program };
  }

  /** The ids of the log rows carrying the player, in id order; 422 beyond PLAYER_DATA_MAX_LOG_ROWS. */
  private async logIds(
    q: Queryable,
    m: { playerId: string; ref: string; program: string | undefined },
  ): Promise<string[]> {
    const keys = new Set(await this.repo.playerKeys(q));
    const out: string[] = [];
    let after = '0';
    for (;;) {
      const batch = await this.repo.logCandidates(q, m, m.program, after, SCAN_BATCH);
      for (const row of batch) if (carriesPlayer(row, { ...m, keys })) out.push(row.id);
      if (out.length > PLAYER_DATA_MAX_LOG_ROWS)
        throw invalidField(
          'player_id',
          `more than ${PLAYER_DATA_MAX_LOG_ROWS} postback log rows hold this id: name a program_id`,
        );
      const last = batch.at(-1);
      if (!last || batch.length < SCAN_BATCH) return out;
      after = last.id;
    }
  }

  /** One page of the player's conversions and postback log rows (each list paged alike, oldest first). */
  async export(r: PlayerRequest, page = 1, perPage = PLAYER_DATA_DEFAULT_PER_PAGE): Promise<PlayerExport> {
    if (!Number.isInteger(page) || page < 1 || page > 1_000_000)
      throw invalidField('page', 'must be a whole number from 1 to 1000000');
    if (!Number.isInteger(perPage) || perPage < 1 || perPage > PLAYER_DATA_MAX_PER_PAGE)
      throw invalidField('per_page', `must be a whole number from 1 to ${PLAYER_DATA_MAX_PER_PAGE}`);
    const m = await this.resolve(r);
    const offset = (page - 1) * perPage;
    const conversions = await this.repo.conversions(m.ref, r.programId, perPage, offset);
    const ids = await this.logIds(this.db, m);
    const postbacks = await this.repo.postbacks(ids.slice(offset, offset + perPage));
    const most = Math.max(conversions.total, ids.length);
    return {
      data: { conversions: conversions.rows, postbacks },
      meta: {
        page,
        per_page: perPage,
        conversions_total: conversions.total,
        postbacks_total: ids.length,
        last_page: Math.max(1, Math.ceil(most / perPage)),
      },
    };
  }

  /**
   * Deletes every row carrying the player in one transaction: conversions, raw log rows and their
   * outcomes. A player with nothing stored gets zero counts (the answer cannot tell "never seen"
   * from "already erased", and need not).
   */
  async erase(r: PlayerRequest): Promise<ErasedCounts> {
    const m = await this.resolve(r);
    return this.db.tx(async (q) => this.repo.erase(q, m.ref, r.programId, await this.logIds(q, m)));
  }
}

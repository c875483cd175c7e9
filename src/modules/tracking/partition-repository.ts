import type { Queryable } from '../../db/index.ts';

/** The time-partitioned tracking tables, with the column each is partitioned on. */
export const PARTITIONED = {
  clicks: 'at',
  conversions: 'received_at',
  postback_log: 'received_at',
  postback_outcomes: 'decided_at',
} as const;

export type PartitionedTable = keyof typeof PARTITIONED;

/** One monthly partition: its name and the UTC range it holds, [from, to). */
export interface Partition {
  table: PartitionedTable;
  name: string;
  from: Date;
  to: Date;
}

const NAME = /^(clicks|conversions|postback_log|postback_outcomes)_p(\d{4})(\d{2})$/;

/** Reads a partition name as `tracking_ensure_partitions` writes it (`clicks_p202611`). */
export function parsePartition(name: string): Partition | undefined {
  const m = NAME.exec(name);
  if (!m) return undefined;
  const year = Number(m[2]);
  const month = Number(m[3]) - 1;
  return {
    table: m[1] as PartitionedTable,
    name,
    from: new Date(Date.UTC(year, month, 1)),
    to: new Date(Date.UTC(year, month + 1, 1)),
  };
}

/** SQLSTATE 23514 "no partition of relation … found for row": a row whose month has no partition yet. */
export function isMissingPartition(err: unknown): boolean {
  const e = err as { code?: string; message?: string };
  return e?.code === '23514' && /no partition of relation/.test(e.message ?? '');
}

/** SQL of partition upkeep: creating months ahead, listing, exporting and dropping old ones. */
export class PartitionRepository {
  constructor(private readonly db: Queryable) {}

  /** Creates the missing monthly partitions of `table` covering [from, to); returns how many. */
  async ensure(table: PartitionedTable, from: Date, to: Date): Promise<number> {
    const [r] = await this.db.query<{ made: number }>(
      'SELECT tracking_ensure_partitions($1, $2, $3) AS made',
      [table, from.toISOString(), to.toISOString()],
    );
    return r?.made ?? 0;
  }

  /** Every partition of the tracking tables in the current schema, oldest first. */
  async list(): Promise<Partition[]> {
    const rows = await this.db.query<{ name: string }>(
      `SELECT c.relname AS name
       FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid JOIN pg_class p ON p.oid = i.inhparent
       WHERE p.relname = ANY($1::text[]) AND p.relnamespace = current_schema()::regnamespace
       ORDER BY c.relname`,
      [Object.keys(PARTITIONED)],
    );
    return rows
      .flatMap((r) => parsePartition(r.name) ?? [])
      .sort((a, b) => a.from.getTime() - b.from.getTime() || a.name.localeCompare(b.name));
  }

  /**
   * Summarises the page ranges of every BRIN index on a tracking partition that no summary covers
   * yet, the newest (still filling) included (migration 0086): what VACUUM does on PostgreSQL for
   * the full ones, and the embedded database runs none. Cheap when nothing is new; returns the
   * ranges summarised.
   */
  async summarizeBrin(): Promise<number> {
    const [r] = await this.db.query<{ ranges: number }>(
      `SELECT coalesce(sum(brin_summarize_new_values(x.indexrelid)), 0)::int AS ranges
       FROM pg_inherits i JOIN pg_class p ON p.oid = i.inhparent
       JOIN pg_index x ON x.indrelid = i.inhrelid
       JOIN pg_class ix ON ix.oid = x.indexrelid JOIN pg_am a ON a.oid = ix.relam
       WHERE p.relname = ANY($1::text[]) AND p.relnamespace = current_schema()::regnamespace AND a.amname = 'brin'`,
      [Object.keys(PARTITIONED)],
    );
    return r?.ranges ?? 0;
  }

  /** The columns of a table in order (the export's header). */
  async columns(table: PartitionedTable): Promise<string[]> {
    const rows = await this.db.query<{ name: string }>(
      `SELECT attname AS name FROM pg_attribute
       WHERE attrelid = $1::regclass AND attnum > 0 AND NOT attisdropped ORDER BY attnum`,
      [table],
    );
    return rows.map((r) => r.name);
  }

  /**
   * One page of a partition's rows as text, in primary-key order after `after` (the last row's
   * key of the previous page; undefined for the first page). Every value is the column's text form.
   */
  async page(
    p: Partition,
    after: [string, string] | undefined,
    limit: number,
  ): Promise<Record<string, string | null>[]> {
    const [k1, k2] = keyOf(p.table);
    const cols = await this.columns(p.table);
    const list = cols.map((c) => `${quote(c)}::text AS ${quote(c)}`).join(', ');
    const where = after
      ? `WHERE (${quote(k1)}, ${quote(k2)}) > ($2::${keyType(p.table)}, $3::timestamptz)`
      : '';
    return this.db.query(
      `SELECT ${list} FROM ${quote(p.name)} ${where}
       ORDER BY ${quote(k1)}, ${quote(k2)} LIMIT $1`,
      after ? [limit, after[0], after[1]] : [limit],
    );
  }

  async count(p: Partition): Promise<number> {
    const [r] = await this.db.query<{ n: number }>(`SELECT count(*)::bigint AS n FROM ${quote(p.name)}`);
    return Number(r?.n ?? 0);
  }

  /** Detaches the partition from its table, then drops it. */
  async detachAndDrop(p: Partition): Promise<void> {
    await this.db.exec(`ALTER TABLE ${quote(p.table)} DETACH PARTITION ${quote(p.name)}`);
    await this.db.exec(`DROP TABLE ${quote(p.name)}`);
  }
}

const KEYS: Record<PartitionedTable, [string, string, string]> = {
  clicks: ['id', 'at', 'text'],
  conversions: ['id', 'received_at', 'text'],
  postback_log: ['id', 'received_at', 'bigint'],
  postback_outcomes: ['log_id', 'decided_at', 'bigint'],
};
/** The primary key of a partitioned table: its own id column, then the partition column. */
export const keyOf = (t: PartitionedTable): [string, string] => [KEYS[t][0], KEYS[t][1]];
const keyType = (t: PartitionedTable) => KEYS[t][2];

function quote(name: string): string {
  if (!/^[a-z_][a-z0-9_]{0,62}$/.test(name)) throw new Error(`invalid identifier ${name}`);
  return `"${name}"`;
}

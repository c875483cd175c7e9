import type { Queryable } from '../../db/index.ts';
import { wireTimestamp } from '../../lib/time.ts';
import { SIGN_IN_TARGET_TYPE, type TargetKind } from './phrases.ts';

export interface AuditEntry {
  adminTokenId: number | null;
  /** The person who acted (password session or personal token); null for a service token or the CLI. */
  userId?: number | null;
  /** Client address and user agent of the request. */
  address?: string | null;
  userAgent?: string | null;
  actor: string;
  action: string;
  targetType: string;
  targetId: string | null;
  status: number;
  requestId: string | null;
  fields: string[];
  before: unknown;
  after: unknown;
}

export interface AuditRow extends AuditEntry {
  id: number;
  at: string;
  userId: number | null;
  address: string | null;
  userAgent: string | null;
}

export interface AuditFilter {
  targetType?: string | undefined;
  targetId?: string | undefined;
  adminTokenId?: number | undefined;
  userId?: number | undefined;
  action?: string | undefined;
  /** Rows at or after this instant. */
  from?: Date | undefined;
  /** Rows before this instant. */
  to?: Date | undefined;
  /** Writes only (no console sign-ins or sign-outs), or those only; both when absent. */
  kind?: 'writes' | 'sign-ins' | undefined;
  /** Rows with an id below this (keyset paging, newest first). */
  beforeId?: number | undefined;
  limit: number;
}

/**
 * How to name each kind of record: its table (aliased `x`), the SQL of its name, and whether its
 * id is an integer (looked up as one, so the primary key's index serves it).
 */
const NAMED: Record<TargetKind, { from: string; name: string; integer: boolean } | null> = {
  site: { from: 'sites x', name: 'x.name', integer: true },
  brand: { from: 'brands x', name: 'x.name', integer: true },
  offer: {
    from: 'offers x JOIN brands b ON b.id = x.brand_id',
    name: "b.name || ': ' || left(x.offer_text, 60)",
    integer: true,
  },
  toplist: { from: 'toplists x', name: 'x.name', integer: true },
  template: { from: 'list_templates x', name: 'x.name', integer: true },
  owner: { from: 'owners x', name: 'x.name', integer: true },
  'product-type': { from: 'product_types x', name: 'x.name', integer: true },
  'offer-type': { from: 'offer_types x', name: 'x.name', integer: true },
  'classification-type': { from: 'classification_types x', name: 'x.name', integer: true },
  user: { from: 'users x', name: "coalesce(nullif(x.display_name, ''), x.email)", integer: true },
  role: { from: 'roles x', name: 'x.name', integer: true },
  'admin-token': { from: 'admin_tokens x', name: 'x.name', integer: true },
  program: { from: 'affiliate_programs x', name: 'x.name', integer: true },
  rule: { from: 'licence_rules x', name: 'x.code', integer: true },
  placement: { from: 'adserver_placements x', name: 'x.name', integer: true },
  connection: {
    from: 'adserver_connections x',
    name: "x.publisher || coalesce(' · ' || x.account_name, '')",
    integer: false,
  },
  booking: { from: 'adserver_bookings x', name: 'x.campaign_name', integer: false },
  advertiser: { from: 'market_advertisers x', name: 'x.name', integer: false },
  product: { from: 'market_products x', name: 'x.name', integer: false },
  reservation: { from: 'market_reservations x', name: 'x.campaign_name', integer: false },
  statement: { from: 'market_statements x', name: 'x.month', integer: false },
  creative: { from: 'creatives x', name: 'x.name', integer: false },
  webhook: {
    from: 'webhook_endpoints x',
    name: "coalesce(nullif(x.description, ''), x.url)",
    integer: false,
  },
  // A postback has no name: its id is what the log shows.
  postback: null,
};

/** Records to name, by kind. */
export type NameRefs = Partial<Record<TargetKind, Set<string>>>;
/** Names found, keyed `kind:id`. */
export type Names = Map<string, string>;

const INT_ID = /^[1-9][0-9]{0,9}$/;
const INT4_MAX = 2147483647;

const row = (r: Record<string, unknown>): AuditRow => ({
  id: r.id as number,
  at: wireTimestamp(r.at as Date),
  adminTokenId: r.admin_token_id as number | null,
  userId: (r.user_id as number | null) ?? null,
  address: (r.address as string | null) ?? null,
  userAgent: (r.user_agent as string | null) ?? null,
  actor: r.actor as string,
  action: r.action as string,
  targetType: r.target_type as string,
  targetId: r.target_id as string | null,
  status: r.status as number,
  requestId: r.request_id as string | null,
  fields: r.fields as string[],
  before: r.before ?? null,
  after: r.after ?? null,
});

/** The audit_log table: insert and newest-first reads, nothing else. */
export class AuditRepository {
  constructor(private readonly db: Queryable) {}

  async insert(e: AuditEntry): Promise<void> {
    await this.db.query(
      `INSERT INTO audit_log (admin_token_id, actor, action, target_type, target_id, status, request_id, fields, before, after, user_id, address, user_agent)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13)`,
      [
        e.adminTokenId,
        e.actor,
        e.action,
        e.targetType,
        e.targetId,
        e.status,
        e.requestId,
        e.fields,
        e.before === undefined || e.before === null ? null : JSON.stringify(e.before),
        e.after === undefined || e.after === null ? null : JSON.stringify(e.after),
        e.userId ?? null,
        e.address ?? null,
        e.userAgent ?? null,
      ],
    );
  }

  async list(f: AuditFilter): Promise<AuditRow[]> {
    const where: string[] = [];
    const params: unknown[] = [];
    const add = (sql: string, v: unknown) => {
      params.push(v);
      where.push(sql.replace('?', `$${params.length}`));
    };
    if (f.targetType !== undefined) add('target_type = ?', f.targetType);
    if (f.targetId !== undefined) add('target_id = ?', f.targetId);
    if (f.adminTokenId !== undefined) add('admin_token_id = ?', f.adminTokenId);
    if (f.userId !== undefined) add('user_id = ?', f.userId);
    if (f.action !== undefined) add('action = ?', f.action);
    if (f.from !== undefined) add('at >= ?', f.from);
    if (f.to !== undefined) add('at < ?', f.to);
    if (f.kind === 'writes') add('target_type <> ?', SIGN_IN_TARGET_TYPE);
    if (f.kind === 'sign-ins') add('target_type = ?', SIGN_IN_TARGET_TYPE);
    if (f.beforeId !== undefined) add('id < ?', f.beforeId);
    params.push(f.limit);
    const rows = await this.db.query(
      `SELECT * FROM audit_log ${where.length ? `WHERE ${where.join(' AND ')}` : ''} ORDER BY id DESC LIMIT $${params.length}`,
      params,
    );
    return rows.map(row);
  }

  /** The names of `refs`, in one query for every kind; records since deleted are left out. */
  async names(refs: NameRefs): Promise<Names> {
    const parts: string[] = [];
    const params: unknown[] = [];
    for (const [kind, ids] of Object.entries(refs) as [TargetKind, Set<string>][]) {
      const named = NAMED[kind];
      if (!named) continue;
      // An id that cannot be one of the table's (not an int4) names nothing.
      const wanted = named.integer
        ? [...ids].filter((id) => INT_ID.test(id) && Number(id) <= INT4_MAX)
        : [...ids];
      if (wanted.length === 0) continue;
      params.push(named.integer ? wanted.map(Number) : wanted);
      parts.push(
        `SELECT '${kind}' AS kind, x.id::text AS id, ${named.name} AS name FROM ${named.from} WHERE x.id = ANY($${params.length}::${named.integer ? 'int' : 'text'}[])`,
      );
    }
    if (parts.length === 0) return new Map();
    const rows = await this.db.query<{ kind: string; id: string; name: string }>(
      parts.join(' UNION ALL '),
      params,
    );
    return new Map(rows.map((r) => [`${r.kind}:${r.id}`, r.name]));
  }
}

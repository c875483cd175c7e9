import type { Queryable } from '../../db/index.ts';
import { wireTimestamp } from '../../lib/time.ts';

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
}

export interface AuditFilter {
  targetType?: string | undefined;
  targetId?: string | undefined;
  adminTokenId?: number | undefined;
  userId?: number | undefined;
  /** Rows with an id below this (keyset paging, newest first). */
  beforeId?: number | undefined;
  limit: number;
}

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
    if (f.beforeId !== undefined) add('id < ?', f.beforeId);
    params.push(f.limit);
    const rows = await this.db.query(
      `SELECT * FROM audit_log ${where.length ? `WHERE ${where.join(' AND ')}` : ''} ORDER BY id DESC LIMIT $${params.length}`,
      params,
    );
    return rows.map(row);
  }
}

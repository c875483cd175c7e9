import type { Queryable } from '../../db/index.ts';
import type { AdminToken, SiteToken } from './types.ts';

/** A live session row joined to its (live) admin token. */
export interface SessionRow {
  id: number;
  sessionHash: Uint8Array;
  csrfHash: Uint8Array;
  adminTokenId: number;
  scopes: string[];
  expiresAt: Date;
}

/** A live token found by its hash, with what it grants. */
export interface LiveToken {
  kind: 'site' | 'admin';
  id: number;
  tokenHash: Uint8Array;
  siteId?: number;
  scopes?: string[];
}

const iso = (d: Date | null): string | null => (d ? d.toISOString() : null);

type Row = Record<string, unknown>;

const siteToken = (r: Row): SiteToken => ({
  id: r.id as number,
  siteId: r.site_id as number,
  name: r.name as string,
  hint: r.hint as string,
  createdAt: iso(r.created_at as Date)!,
  revokedAt: iso(r.revoked_at as Date | null),
});

const adminToken = (r: Row): AdminToken => ({
  id: r.id as number,
  name: r.name as string,
  scopes: r.scopes as string[],
  hint: r.hint as string,
  createdBy: r.created_by as number | null,
  createdAt: iso(r.created_at as Date)!,
  revokedAt: iso(r.revoked_at as Date | null),
});

/** SQL for site tokens, admin tokens and console sessions (tables site_tokens, admin_tokens, admin_sessions). */
export class AccessRepository {
  constructor(private readonly db: Queryable) {}

  /* Site tokens */

  async insertSiteToken(v: { siteId: number; name: string; hash: Buffer; hint: string }): Promise<SiteToken> {
    const [r] = await this.db.query(
      'INSERT INTO site_tokens (site_id, name, token_hash, hint) VALUES ($1, $2, $3, $4) RETURNING *',
      [v.siteId, v.name, v.hash, v.hint],
    );
    return siteToken(r!);
  }

  async listSiteTokens(siteId: number): Promise<SiteToken[]> {
    const rows = await this.db.query('SELECT * FROM site_tokens WHERE site_id = $1 ORDER BY id', [siteId]);
    return rows.map(siteToken);
  }

  /** Marks a token revoked; returns it (also when it was revoked before) or undefined. */
  async revokeSiteToken(siteId: number, tokenId: number): Promise<SiteToken | undefined> {
    const [r] = await this.db.query(
      'UPDATE site_tokens SET revoked_at = COALESCE(revoked_at, now()) WHERE id = $1 AND site_id = $2 RETURNING *',
      [tokenId, siteId],
    );
    return r && siteToken(r);
  }

  /* Admin tokens */

  async insertAdminToken(v: {
    name: string;
    scopes: string[];
    hash: Buffer;
    hint: string;
    createdBy: number | null;
  }): Promise<AdminToken> {
    const [r] = await this.db.query(
      'INSERT INTO admin_tokens (name, scopes, token_hash, hint, created_by) VALUES ($1, $2, $3, $4, $5) RETURNING *',
      [v.name, v.scopes, v.hash, v.hint, v.createdBy],
    );
    return adminToken(r!);
  }

  async listAdminTokens(): Promise<AdminToken[]> {
    const rows = await this.db.query('SELECT * FROM admin_tokens ORDER BY id');
    return rows.map(adminToken);
  }

  async revokeAdminToken(id: number): Promise<AdminToken | undefined> {
    const [r] = await this.db.query(
      'UPDATE admin_tokens SET revoked_at = COALESCE(revoked_at, now()) WHERE id = $1 RETURNING *',
      [id],
    );
    return r && adminToken(r);
  }

  /** The live (unrevoked) token with this hash, site or admin, with what it grants. */
  async findLiveTokenByHash(hash: Buffer): Promise<LiveToken | undefined> {
    const [s] = await this.db.query<{ id: number; token_hash: Uint8Array; site_id: number }>(
      'SELECT id, token_hash, site_id FROM site_tokens WHERE token_hash = $1 AND revoked_at IS NULL',
      [hash],
    );
    if (s) return { kind: 'site', id: s.id, tokenHash: s.token_hash, siteId: s.site_id };
    const [a] = await this.db.query<{ id: number; token_hash: Uint8Array; scopes: string[] }>(
      'SELECT id, token_hash, scopes FROM admin_tokens WHERE token_hash = $1 AND revoked_at IS NULL',
      [hash],
    );
    if (a) return { kind: 'admin', id: a.id, tokenHash: a.token_hash, scopes: a.scopes };
    return undefined;
  }

  /* Console sessions */

  async insertSession(
    sessionHash: Buffer,
    csrfHash: Buffer,
    adminTokenId: number,
    expiresAt: Date,
  ): Promise<void> {
    await this.db.query(
      'INSERT INTO admin_sessions (session_hash, csrf_hash, admin_token_id, expires_at) VALUES ($1, $2, $3, $4)',
      [sessionHash, csrfHash, adminTokenId, expiresAt],
    );
  }

  /** The session with this hash if neither it nor its admin token is revoked and it has not expired at `now`. */
  async findLiveSession(sessionHash: Buffer, now: Date): Promise<SessionRow | undefined> {
    const [r] = await this.db.query<{
      id: string | number;
      session_hash: Uint8Array;
      csrf_hash: Uint8Array;
      admin_token_id: number;
      scopes: string[];
      expires_at: Date;
    }>(
      `SELECT s.id, s.session_hash, s.csrf_hash, s.admin_token_id, t.scopes, s.expires_at
         FROM admin_sessions s JOIN admin_tokens t ON t.id = s.admin_token_id
        WHERE s.session_hash = $1 AND s.revoked_at IS NULL AND t.revoked_at IS NULL AND s.expires_at > $2`,
      [sessionHash, now],
    );
    if (!r) return undefined;
    return {
      id: Number(r.id),
      sessionHash: r.session_hash,
      csrfHash: r.csrf_hash,
      adminTokenId: r.admin_token_id,
      scopes: r.scopes,
      expiresAt: new Date(r.expires_at),
    };
  }

  async revokeSession(id: number, now: Date): Promise<void> {
    await this.db.query('UPDATE admin_sessions SET revoked_at = $2 WHERE id = $1 AND revoked_at IS NULL', [
      id,
      now,
    ]);
  }

  /** Drops sessions that expired before `cutoff`, so the table does not grow without bound. */
  async purgeExpiredSessions(cutoff: Date): Promise<void> {
    await this.db.query('DELETE FROM admin_sessions WHERE expires_at < $1', [cutoff]);
  }
}

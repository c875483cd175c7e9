import type { Queryable } from '../../db/index.ts';
import { withinRole } from './scopes.ts';
import type { AdminToken, SiteToken } from './types.ts';

/** A live session row with the scopes of what it acts for: its (live) admin token or its (active) user's role. */
export interface SessionRow {
  id: number;
  sessionHash: Uint8Array;
  csrfHash: Uint8Array;
  adminTokenId: number | null;
  userId: number | null;
  scopes: string[];
  /** The sites its user is limited to; null: every site. */
  siteIds: number[] | null;
  expiresAt: Date;
}

/** A user's session as listed to them: never its secret. */
export interface SessionListing {
  id: number;
  createdAt: string;
  expiresAt: string;
  address: string | null;
  userAgent: string | null;
}

/** A live token found by its hash, with what it grants. */
export interface LiveToken {
  kind: 'site' | 'admin';
  id: number;
  tokenHash: Uint8Array;
  siteId?: number;
  scopes?: string[];
  /** The owner of a personal admin token; null for a service token. */
  userId?: number | null;
  /** The owner's role scopes now, which bound what a personal token may do. */
  roleScopes?: string[] | null;
  /** The sites the owner is limited to now; null: every site (and every service token). */
  siteIds?: number[] | null;
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
  userId: (r.user_id as number | null) ?? null,
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
    userId?: number | null;
  }): Promise<AdminToken> {
    const [r] = await this.db.query(
      'INSERT INTO admin_tokens (name, scopes, token_hash, hint, created_by, user_id) VALUES ($1, $2, $3, $4, $5, $6) RETURNING *',
      [v.name, v.scopes, v.hash, v.hint, v.createdBy, v.userId ?? null],
    );
    return adminToken(r!);
  }

  /** Every admin token, or only one user's personal tokens. */
  async listAdminTokens(userId?: number): Promise<AdminToken[]> {
    const rows =
      userId === undefined
        ? await this.db.query('SELECT * FROM admin_tokens ORDER BY id')
        : await this.db.query('SELECT * FROM admin_tokens WHERE user_id = $1 ORDER BY id', [userId]);
    return rows.map(adminToken);
  }

  /** Revokes a token (any, or only one of `userId`'s own); returns it or undefined. */
  async revokeAdminToken(id: number, userId?: number): Promise<AdminToken | undefined> {
    const [r] =
      userId === undefined
        ? await this.db.query(
            'UPDATE admin_tokens SET revoked_at = COALESCE(revoked_at, now()) WHERE id = $1 RETURNING *',
            [id],
          )
        : await this.db.query(
            'UPDATE admin_tokens SET revoked_at = COALESCE(revoked_at, now()) WHERE id = $1 AND user_id = $2 RETURNING *',
            [id, userId],
          );
    return r && adminToken(r);
  }

  /** Revokes every live personal token of a user; returns how many. */
  async revokeUserTokens(userId: number, now: Date): Promise<number> {
    const rows = await this.db.query(
      'UPDATE admin_tokens SET revoked_at = $2 WHERE user_id = $1 AND revoked_at IS NULL RETURNING id',
      [userId, now],
    );
    return rows.length;
  }

  /** The live (unrevoked) token with this hash, site or admin, with what it grants. */
  async findLiveTokenByHash(hash: Buffer): Promise<LiveToken | undefined> {
    const [s] = await this.db.query<{ id: number; token_hash: Uint8Array; site_id: number }>(
      'SELECT id, token_hash, site_id FROM site_tokens WHERE token_hash = $1 AND revoked_at IS NULL',
      [hash],
    );
    if (s) return { kind: 'site', id: s.id, tokenHash: s.token_hash, siteId: s.site_id };
    // A personal token works only while its owner is active, within the owner's role as it is now.
    const [a] = await this.db.query<{
      id: number;
      token_hash: Uint8Array;
      scopes: string[];
      user_id: number | null;
      role_scopes: string[] | null;
      site_ids: number[] | null;
    }>(
      `SELECT t.id, t.token_hash, t.scopes, t.user_id, r.scopes AS role_scopes, u.site_ids
         FROM admin_tokens t
         LEFT JOIN users u ON u.id = t.user_id
         LEFT JOIN roles r ON r.id = u.role_id
        WHERE t.token_hash = $1 AND t.revoked_at IS NULL AND (t.user_id IS NULL OR u.status = 'active')`,
      [hash],
    );
    if (a)
      return {
        kind: 'admin',
        id: a.id,
        tokenHash: a.token_hash,
        scopes: a.scopes,
        userId: a.user_id,
        roleScopes: a.role_scopes,
        siteIds: a.site_ids,
      };
    return undefined;
  }

  /* Console sessions */

  async insertSession(v: {
    sessionHash: Buffer;
    csrfHash: Buffer;
    adminTokenId: number | null;
    userId: number | null;
    expiresAt: Date;
    address: string | null;
    userAgent: string | null;
  }): Promise<void> {
    await this.db.query(
      `INSERT INTO admin_sessions (session_hash, csrf_hash, admin_token_id, user_id, expires_at, address, user_agent)
       VALUES ($1, $2, $3, $4, $5, $6, $7)`,
      [v.sessionHash, v.csrfHash, v.adminTokenId, v.userId, v.expiresAt, v.address, v.userAgent],
    );
  }

  /**
   * The session with this hash if it is not revoked nor expired at `now` and what it acts for is
   * live: its admin token unrevoked, or its user active. The scopes are read here on every
   * request, so a role change or a suspension holds from the next request in every process.
   */
  async findLiveSession(sessionHash: Buffer, now: Date): Promise<SessionRow | undefined> {
    const [r] = await this.db.query<{
      id: string | number;
      session_hash: Uint8Array;
      csrf_hash: Uint8Array;
      admin_token_id: number | null;
      user_id: number | null;
      token_scopes: string[] | null;
      role_scopes: string[] | null;
      site_ids: number[] | null;
      expires_at: Date;
    }>(
      `SELECT s.id, s.session_hash, s.csrf_hash, s.admin_token_id, u.id AS user_id,
              t.scopes AS token_scopes, r.scopes AS role_scopes, u.site_ids, s.expires_at
         FROM admin_sessions s
         LEFT JOIN admin_tokens t ON t.id = s.admin_token_id
         LEFT JOIN users u ON u.id = COALESCE(s.user_id, t.user_id)
         LEFT JOIN roles r ON r.id = u.role_id
        WHERE s.session_hash = $1 AND s.revoked_at IS NULL AND s.expires_at > $2
          AND (t.id IS NULL OR t.revoked_at IS NULL)
          AND (u.id IS NULL OR u.status = 'active')
          AND (t.id IS NOT NULL OR u.id IS NOT NULL)`,
      [sessionHash, now],
    );
    if (!r) return undefined;
    return {
      id: Number(r.id),
      sessionHash: r.session_hash,
      csrfHash: r.csrf_hash,
      adminTokenId: r.admin_token_id,
      userId: r.user_id,
      scopes: r.token_scopes
        ? r.role_scopes
          ? withinRole(r.token_scopes, r.role_scopes)
          : r.token_scopes
        : (r.role_scopes ?? []),
      siteIds: r.site_ids,
      expiresAt: new Date(r.expires_at),
    };
  }

  /** A user's live sessions, newest first (at most `limit`). */
  async listUserSessions(userId: number, now: Date, limit: number): Promise<SessionListing[]> {
    const rows = await this.db.query<Row>(
      `SELECT id, created_at, expires_at, address, user_agent FROM admin_sessions
        WHERE user_id = $1 AND revoked_at IS NULL AND expires_at > $2 ORDER BY id DESC LIMIT $3`,
      [userId, now, limit],
    );
    return rows.map((r) => ({
      id: Number(r.id),
      createdAt: iso(r.created_at as Date)!,
      expiresAt: iso(r.expires_at as Date)!,
      address: (r.address as string | null) ?? null,
      userAgent: (r.user_agent as string | null) ?? null,
    }));
  }

  /** Ends every live session of a user but `keepId` (the one asking), if given. */
  async revokeUserSessionsExcept(userId: number, keepId: number | null, now: Date): Promise<void> {
    await this.db.query(
      'UPDATE admin_sessions SET revoked_at = $3 WHERE user_id = $1 AND revoked_at IS NULL AND id <> COALESCE($2, 0)',
      [userId, keepId, now],
    );
  }

  /** Ends every live session of a user; returns how many. */
  async revokeUserSessions(userId: number, now: Date): Promise<number> {
    const rows = await this.db.query(
      'UPDATE admin_sessions SET revoked_at = $2 WHERE user_id = $1 AND revoked_at IS NULL RETURNING id',
      [userId, now],
    );
    return rows.length;
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

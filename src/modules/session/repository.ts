import type { Db } from '../../db/index.ts';

/** A live session row joined to its (live) admin token. */
export interface SessionRow {
  id: number;
  sessionHash: Uint8Array;
  csrfHash: Uint8Array;
  adminTokenId: number;
  scopes: string[];
  expiresAt: Date;
}

/** SQL for console sessions (table admin_sessions). */
export class SessionRepository {
  constructor(private readonly db: Db) {}

  async insert(sessionHash: Buffer, csrfHash: Buffer, adminTokenId: number, expiresAt: Date): Promise<void> {
    await this.db.query(
      'INSERT INTO admin_sessions (session_hash, csrf_hash, admin_token_id, expires_at) VALUES ($1, $2, $3, $4)',
      [sessionHash, csrfHash, adminTokenId, expiresAt],
    );
  }

  /** The session with this hash if neither it nor its admin token is revoked and it has not expired at `now`. */
  async findLive(sessionHash: Buffer, now: Date): Promise<SessionRow | undefined> {
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

  async revoke(id: number, now: Date): Promise<void> {
    await this.db.query('UPDATE admin_sessions SET revoked_at = $2 WHERE id = $1 AND revoked_at IS NULL', [
      id,
      now,
    ]);
  }

  /** Drops sessions that expired before `cutoff`, so the table does not grow without bound. */
  async purgeExpired(cutoff: Date): Promise<void> {
    await this.db.query('DELETE FROM admin_sessions WHERE expires_at < $1', [cutoff]);
  }
}

import { randomBytes } from 'node:crypto';
import { hashToken, sameBytes } from '../../lib/tokens.ts';
import type { AdminPrincipal, SessionPrincipal } from '../../plugins/auth.ts';
import type { AccessRepository, SessionListing } from './repository.ts';
import type { TokenVerifier } from './token-verifier.ts';

/** How long a console session lasts from sign-in (absolute, not sliding). */
export const SESSION_TTL_MS = 8 * 60 * 60 * 1000;

/** A resolved session: the admin it acts for and a check of the CSRF token sent with a write. */
export interface ResolvedSession extends SessionPrincipal {
  id: number;
  expiresAt: Date;
}

/** A freshly created session: the two secrets go to the browser once and are stored only hashed. */
export interface NewSession {
  sessionToken: string;
  csrfToken: string;
  admin: AdminPrincipal;
  expiresAt: Date;
}

/** Where a sign-in came from, kept with the session so its owner can recognise it. */
export interface SessionClient {
  address?: string | undefined;
  userAgent?: string | undefined;
}

const NO_CLIENT: SessionClient = {};

/** Console sign-in: exchanges an admin token for a cookie session with a CSRF token. */
export class SessionService {
  constructor(
    private readonly repo: AccessRepository,
    private readonly tokens: TokenVerifier,
    private readonly now: () => Date,
  ) {}

  /** Creates a session for a live admin token; null when the token is not one. */
  async signIn(adminToken: string, client: SessionClient = NO_CLIENT): Promise<NewSession | null> {
    const admin = await this.tokens.verifyAdmin(adminToken);
    if (!admin) return null;
    return this.open(admin, client);
  }

  /** Opens a session for a user who proved who they are (password checked by the caller). */
  openForUser(
    user: { id: number; scopes: readonly string[]; siteIds: readonly number[] | null },
    client: SessionClient,
  ): Promise<NewSession> {
    const { id: userId, scopes, siteIds } = user;
    return this.open({ kind: 'admin', tokenId: null, userId, scopes, siteIds }, client);
  }

  // Every sign-in mints a new random id, so a session id planted before sign-in is never adopted.
  private async open(admin: AdminPrincipal, client: SessionClient): Promise<NewSession> {
    const now = this.now();
    await this.repo.purgeExpiredSessions(now);
    const sessionToken = randomBytes(32).toString('base64url');
    const csrfToken = randomBytes(32).toString('base64url');
    const expiresAt = new Date(now.getTime() + SESSION_TTL_MS);
    await this.repo.insertSession({
      sessionHash: hashToken(sessionToken),
      csrfHash: hashToken(csrfToken),
      adminTokenId: admin.tokenId,
      userId: admin.tokenId === null ? admin.userId : null,
      expiresAt,
      address: client.address?.slice(0, 100) ?? null,
      userAgent: client.userAgent?.slice(0, 300) ?? null,
    });
    return { sessionToken, csrfToken, admin, expiresAt };
  }

  /** The live session a cookie value names, or null (unknown, expired, signed out, token revoked). */
  async resolve(sessionToken: string): Promise<ResolvedSession | null> {
    if (sessionToken.length > 100) return null;
    const hash = hashToken(sessionToken);
    const row = await this.repo.findLiveSession(hash, this.now());
    if (!row || !sameBytes(row.sessionHash, hash)) return null;
    return {
      id: row.id,
      admin: {
        kind: 'admin',
        tokenId: row.adminTokenId,
        userId: row.userId,
        scopes: row.scopes,
        siteIds: row.siteIds,
      },
      expiresAt: row.expiresAt,
      csrfMatches: (header) =>
        typeof header === 'string' && header.length <= 100 && sameBytes(hashToken(header), row.csrfHash),
    };
  }

  async signOut(id: number): Promise<void> {
    await this.repo.revokeSession(id, this.now());
  }

  /** A user's live password sessions, newest first. */
  listForUser(userId: number): Promise<SessionListing[]> {
    return this.repo.listUserSessions(userId, this.now(), 100);
  }

  /** Ends every password session of a user (sign out everywhere, suspension); returns how many. */
  endAllForUser(userId: number): Promise<number> {
    return this.repo.revokeUserSessions(userId, this.now());
  }
}

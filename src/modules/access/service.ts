import type { ChangeBus } from '../../db/changes.ts';
import type { Db } from '../../db/index.ts';
import type { AuthThrottle } from '../../lib/auth-throttle.ts';
import { notFound } from '../../lib/errors.ts';
import { newToken } from '../../lib/tokens.ts';
import type { AdminPrincipal, Authenticator, SitePrincipal } from '../../plugins/auth.ts';
import { AccessRepository } from './repository.ts';
import { hasScope, type Scope } from './scopes.ts';
import { type ResolvedSession, SessionService } from './sessions.ts';
import { SqlSiteResolver } from './site-policies.ts';
import { TokenVerifier } from './token-verifier.ts';
import type { AdminToken, SiteToken } from './types.ts';

/** What access needs from the catalog: whether a site exists (tokens belong to sites). */
export interface SiteLookup {
  siteExists(id: number): Promise<boolean>;
}

/**
 * Access control: site read tokens and scoped admin tokens (minted once, stored hashed,
 * revocable), their verification, and console sessions. The auth hooks of every module get
 * this service as their {@link Authenticator}.
 */
export class AccessService implements Authenticator<Scope> {
  readonly verifier: TokenVerifier;
  readonly sessions: SessionService;
  /** Finds the site of a toplist, webhook or placement, for site restrictions. */
  readonly siteResolver: SqlSiteResolver;
  private readonly repo: AccessRepository;

  constructor(
    db: Db,
    private readonly bus: ChangeBus,
    private readonly sites: SiteLookup,
    now: () => Date,
    readonly throttle: AuthThrottle,
  ) {
    this.repo = new AccessRepository(db);
    this.verifier = new TokenVerifier(this.repo, bus);
    this.sessions = new SessionService(this.repo, this.verifier, now);
    this.siteResolver = new SqlSiteResolver(db);
  }

  verifySite(token: string): Promise<SitePrincipal | null> {
    return this.verifier.verifySite(token);
  }

  verifyAdmin(token: string): Promise<AdminPrincipal | null> {
    return this.verifier.verifyAdmin(token);
  }

  resolveSession(sessionToken: string): Promise<ResolvedSession | null> {
    return this.sessions.resolve(sessionToken);
  }

  permits(held: readonly string[], needed: Scope): boolean {
    return hasScope(held, needed);
  }

  /* Site tokens */

  /** Mints a site read token. The plaintext is returned once and stored only as a hash. */
  async createSiteToken(siteId: number, name = ''): Promise<SiteToken & { token: string }> {
    if (!(await this.sites.siteExists(siteId))) throw notFound('Site');
    const { token, hash, hint } = newToken('site');
    const row = await this.repo.insertSiteToken({ siteId, name, hash, hint });
    await this.bus.publish({ kind: 'tokens' });
    return { ...row, token };
  }

  async listSiteTokens(siteId: number): Promise<SiteToken[]> {
    if (!(await this.sites.siteExists(siteId))) throw notFound('Site');
    return this.repo.listSiteTokens(siteId);
  }

  /** Revokes a site token; every process refuses it from the next request on. */
  async revokeSiteToken(siteId: number, tokenId: number): Promise<SiteToken> {
    const row = await this.repo.revokeSiteToken(siteId, tokenId);
    if (!row) throw notFound('Site token');
    await this.bus.publish({ kind: 'tokens' });
    return row;
  }

  /* Admin tokens */

  /** Mints an admin token with scopes; returned once, stored hashed. */
  async createAdminToken(
    name: string,
    scopes: Scope[],
    createdBy: number | null,
  ): Promise<AdminToken & { token: string }> {
    const { token, hash, hint } = newToken('admin');
    const row = await this.repo.insertAdminToken({ name, scopes, hash, hint, createdBy });
    await this.bus.publish({ kind: 'tokens' });
    return { ...row, token };
  }

  listAdminTokens(): Promise<AdminToken[]> {
    return this.repo.listAdminTokens();
  }

  async revokeAdminToken(id: number): Promise<AdminToken> {
    const row = await this.repo.revokeAdminToken(id);
    if (!row) throw notFound('Admin token');
    await this.bus.publish({ kind: 'tokens' });
    return row;
  }
}

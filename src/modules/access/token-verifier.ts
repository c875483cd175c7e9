import type { Change, ChangeBus } from '../../db/changes.ts';
import { sameBytes, TOKEN_PREFIX, tokenKey } from '../../lib/tokens.ts';
import type { AdminPrincipal, SitePrincipal } from '../../plugins/auth.ts';
import type { AccessRepository } from './repository.ts';
import { withinRole } from './scopes.ts';

type Entry = { principal: SitePrincipal | AdminPrincipal | null };

// Bounded so a flood of random tokens cannot grow memory without limit.
const MAX_ENTRIES = 50_000;

/**
 * Resolves bearer tokens to principals. Results (also misses) are cached in memory and the
 * whole cache is dropped on any token change, here at once and in other processes via NOTIFY,
 * so a revoked token is refused by the next request. A role change or a suspension publishes
 * the same change, so a personal token follows its owner's role from the next request on.
 */
export class TokenVerifier {
  private cache = new Map<string, Entry>();
  private generation = 0;

  constructor(
    private readonly repo: AccessRepository,
    bus: ChangeBus,
  ) {
    bus.subscribe((c: Change) => {
      if (c.kind === 'tokens' || c.kind === 'all') this.clear();
    });
  }

  clear(): void {
    this.generation++;
    this.cache = new Map();
  }

  async verifySite(token: string): Promise<SitePrincipal | null> {
    if (!token.startsWith(TOKEN_PREFIX.site)) return null;
    const p = await this.resolve(token);
    return p?.kind === 'site' ? p : null;
  }

  async verifyAdmin(token: string): Promise<AdminPrincipal | null> {
    if (!token.startsWith(TOKEN_PREFIX.admin)) return null;
    const p = await this.resolve(token);
    return p?.kind === 'admin' ? p : null;
  }

  private async resolve(token: string): Promise<SitePrincipal | AdminPrincipal | null> {
    // Keyed by the token's full SHA-256, so a hit is an exact match (no plaintext token is kept).
    const key = tokenKey(token);
    const hit = this.cache.get(key);
    if (hit) return hit.principal;
    const hash = Buffer.from(key, 'base64');
    const generation = this.generation;
    const found = await this.repo.findLiveTokenByHash(hash);
    let principal: SitePrincipal | AdminPrincipal | null = null;
    if (found && sameBytes(found.tokenHash, hash)) {
      principal =
        found.kind === 'site'
          ? { kind: 'site', tokenId: found.id, siteId: found.siteId! }
          : {
              kind: 'admin',
              tokenId: found.id,
              userId: found.userId ?? null,
              scopes: found.roleScopes ? withinRole(found.scopes!, found.roleScopes) : found.scopes!,
              siteIds: found.siteIds ?? null,
            };
    }
    // A change that raced this lookup must not be overwritten by a stale answer.
    if (generation === this.generation) {
      if (this.cache.size >= MAX_ENTRIES) this.cache = new Map();
      this.cache.set(key, { principal });
    }
    return principal;
  }
}

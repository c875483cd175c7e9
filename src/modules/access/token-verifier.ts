import type { Change, ChangeBus } from '../../db/changes.ts';
import { parseBearer, sameBytes, sameChars, TOKEN_PREFIX, tokenKey } from '../../lib/tokens.ts';
import type { AdminPrincipal, SitePrincipal } from '../../plugins/auth.ts';
import type { AccessRepository } from './repository.ts';

type Entry = { principal: SitePrincipal | AdminPrincipal | null };

/** The live site token a connection last sent: its whole Authorization header. */
interface ConnectionMemo {
  header: string;
  /** The cache's generation when the token was found live: any token change since voids it. */
  generation: number;
  site: SitePrincipal;
}

// Bounded so a flood of random tokens cannot grow memory without limit.
const MAX_ENTRIES = 50_000;

/**
 * Resolves bearer tokens to principals. Results (also misses) are cached in memory and the
 * whole cache is dropped on any token change, here at once and in other processes via NOTIFY,
 * so a revoked token is refused by the next request.
 */
export class TokenVerifier {
  private cache = new Map<string, Entry>();
  private generation = 0;
  /** Keyed by the socket: an entry goes when its connection does. */
  private readonly byConnection = new WeakMap<object, ConnectionMemo>();

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

  /**
   * The site a token names when the answer is already in memory (null: known not to be a live
   * site token), undefined when only a lookup can tell: lets the toplist fast path answer a
   * request without a single promise.
   */
  knownSite(token: string): SitePrincipal | null | undefined {
    if (!token.startsWith(TOKEN_PREFIX.site)) return null;
    const hit = this.cache.get(tokenKey(token));
    if (!hit) return undefined;
    return hit.principal?.kind === 'site' ? hit.principal : null;
  }

  /**
   * `knownSite` for the whole Authorization header of a request on `connection`. A publisher's
   * server sends the same header on every request of a keep-alive connection: when it equals the
   * one this connection last sent with a live site token (compared in constant time, as a proxy may
   * carry several clients' requests on one connection) and no token changed since, the site is
   * known without parsing the header or hashing the token again: by slug, 13–20 % less CPU a
   * response (bench/README.md, session 24). Undefined when only a lookup can tell, or the header
   * is no bearer token. The header is kept only while its connection lives.
   */
  knownSiteOn(connection: object, authorization: string): SitePrincipal | null | undefined {
    const memo = this.byConnection.get(connection);
    if (memo !== undefined && memo.generation === this.generation) {
      if (sameChars(authorization, memo.header)) return memo.site;
    }
    const token = parseBearer(authorization);
    if (token === undefined) return undefined;
    const site = this.knownSite(token);
    if (site)
      this.byConnection.set(connection, {
        header: authorization,
        generation: this.generation,
        site,
      });
    return site;
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
          : { kind: 'admin', tokenId: found.id, scopes: found.scopes! };
    }
    // A change that raced this lookup must not be overwritten by a stale answer.
    if (generation === this.generation) {
      if (this.cache.size >= MAX_ENTRIES) this.cache = new Map();
      this.cache.set(key, { principal });
    }
    return principal;
  }
}

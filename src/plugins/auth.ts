import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type {
  FastifyInstance,
  FastifyReply,
  FastifyRequest,
  onRequestAsyncHookHandler,
  RouteOptions,
} from 'fastify';
import type { AuthThrottle } from '../lib/auth-throttle.ts';
import { AppError } from '../lib/errors.ts';
import { parseBearer } from '../lib/tokens.ts';

/** A live site read token: the site it reads. */
export interface SitePrincipal {
  kind: 'site';
  tokenId: number;
  siteId: number;
}

/**
 * Who acts on the admin API with which scopes: a service token (`tokenId`, no user), a user's
 * personal token (both set) or a user's password session (`userId`, no token). A console session
 * opened with a token acts as that token.
 */
export interface AdminPrincipal {
  kind: 'admin';
  tokenId: number | null;
  userId: number | null;
  scopes: readonly string[];
  /** The sites a user (and their personal tokens) is limited to; null: every site (also every service token). */
  siteIds: readonly number[] | null;
}

/** A console session: the admin it acts for and a check of the CSRF token sent with a write. */
export interface SessionPrincipal {
  admin: AdminPrincipal;
  csrfMatches(header: string | undefined): boolean;
}

/**
 * What the auth hooks need to know about tokens and sessions. The access module implements it
 * and the app hands it to each module's routes, so this plugin imports no module.
 */
export interface Authenticator<S extends string = string> {
  verifySite(token: string): Promise<SitePrincipal | null>;
  verifyAdmin(token: string): Promise<AdminPrincipal | null>;
  /** The live console session a cookie value names, or null. */
  resolveSession(sessionToken: string): Promise<SessionPrincipal | null>;
  /** Whether an admin holding `held` may act with `needed`. */
  permits(held: readonly string[], needed: S): boolean;
  /** Counts wrong credentials per client address and turns a 401 into a 429 once over budget. */
  readonly throttle: AuthThrottle;
}

/** An advertiser acting on its own campaigns through the portal API: the advertiser token's owner. */
export interface AdvertiserPrincipal {
  kind: 'advertiser';
  advertiserId: string;
  tokenId: number;
}

declare module 'fastify' {
  interface FastifyRequest {
    site?: SitePrincipal;
    admin?: AdminPrincipal;
    advertiser?: AdvertiserPrincipal;
  }
}

/** What a route's onRequest hook demands: a site read token, or an admin token with a scope. */
export type AuthRequirement =
  | { kind: 'site' }
  | { kind: 'admin'; scope: string }
  | { kind: 'user' }
  | { kind: 'advertiser' };

const AUTH = Symbol('podium.auth');
type Tagged = onRequestAsyncHookHandler & { [AUTH]?: AuthRequirement };

const tag = (hook: onRequestAsyncHookHandler, auth: AuthRequirement): onRequestAsyncHookHandler =>
  Object.assign(hook, { [AUTH]: auth });

/** The authentication a route runs in its own onRequest hooks (from requireSite/requireAdmin), if any. */
export function authOf(route: Pick<RouteOptions, 'onRequest'>): AuthRequirement | undefined {
  const hooks = [route.onRequest ?? []].flat() as Tagged[];
  return hooks.find((h) => h[AUTH])?.[AUTH];
}

/**
 * How a route under an authenticated prefix may go without requireSite/requireAdmin:
 * `none` (public by design, such as the OpenAPI document) or `self` (it authenticates in its
 * handler and takes no input before that, such as the console sign-in).
 */
export type AuthException = 'none' | 'self';

declare module 'fastify' {
  interface FastifyContextConfig {
    auth?: AuthException;
  }
}

/**
 * Refuses to register a route of this scope that would validate input before authenticating:
 * Fastify validates before preHandler, so the token check must be an onRequest hook, or a
 * client without a token learns the schema from 422s. New routes cannot forget it.
 */
export function requireAuthFirst(scope: FastifyInstance): void {
  scope.addHook('onRoute', (route) => {
    if (authOf(route) || route.config?.auth) return;
    const methods = [route.method].flat().join(',');
    throw new Error(
      `${methods} ${route.url}: authenticate in onRequest (requireAdmin/requireSite) or declare config.auth`,
    );
  });
}

const unauthorized = (reply: FastifyReply, message: string): AppError => {
  reply.header('www-authenticate', 'Bearer realm="podium", error="invalid_token"');
  return new AppError('unauthorized', message);
};

function bearerOf(request: FastifyRequest, reply: FastifyReply): string {
  const token = parseBearer(request.headers.authorization);
  if (!token) {
    reply.header('www-authenticate', 'Bearer realm="podium"');
    throw new AppError('unauthorized', 'Missing bearer token: send Authorization: Bearer <token>');
  }
  return token;
}

/** onRequest hook (before body parsing and validation, so nobody unauthenticated learns the schema): requires a live site read token (`pds_…`) and sets `request.site`. */
export function requireSite(verifier: Authenticator): onRequestAsyncHookHandler {
  return tag(
    async (request, reply) => {
      const site = await verifier.verifySite(bearerOf(request, reply));
      if (!site)
        throw await verifier.throttle.refusal(
          'site_token',
          request.ip,
          unauthorized(reply, 'Invalid or revoked site token'),
        );
      request.site = site;
    },
    { kind: 'site' },
  );
}

/**
 * What an admin area's routes start from: the scope with TypeBox types, and the `onRequest`
 * options of its read and write routes (each needing its scope).
 */
export function adminArea<S extends string>(
  scope: FastifyInstance,
  verifier: Authenticator<S>,
  scopes: { read: NoInfer<S>; write: NoInfer<S> },
) {
  return {
    app: scope.withTypeProvider<TypeBoxTypeProvider>(),
    read: { onRequest: requireAdmin(verifier, scopes.read) },
    write: { onRequest: requireAdmin(verifier, scopes.write) },
  };
}

/** Name of the console's HttpOnly session cookie. */
export const SESSION_COOKIE = 'podium_session';
/** Header a console write must carry with the session's CSRF token. */
export const CSRF_HEADER = 'x-csrf-token';
const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);

/** The admin behind a bearer token or, without one, behind a console session cookie (writes also need the CSRF header). */
async function adminOf(verifier: Authenticator, request: FastifyRequest, reply: FastifyReply) {
  const cookie = request.headers.authorization ? undefined : request.cookies?.[SESSION_COOKIE];
  if (cookie) {
    const session = await verifier.resolveSession(cookie);
    if (!session) throw new AppError('unauthorized', 'Session expired or signed out: sign in again');
    const csrf = request.headers[CSRF_HEADER];
    if (
      !SAFE_METHODS.has(request.method) &&
      !session.csrfMatches(typeof csrf === 'string' ? csrf : undefined)
    ) {
      throw new AppError('forbidden', `Missing or wrong ${CSRF_HEADER} header for this session`);
    }
    return session.admin;
  }
  const admin = await verifier.verifyAdmin(bearerOf(request, reply));
  if (!admin)
    throw await verifier.throttle.refusal(
      'admin_token',
      request.ip,
      unauthorized(reply, 'Invalid or revoked admin token'),
    );
  return admin;
}

/** onRequest hook (before body parsing and validation, so nobody unauthenticated learns the schema): requires a live admin token (`pda_…`) or console session holding `scope`; sets `request.admin`. */
export function requireAdmin<S extends string>(
  verifier: Authenticator<S>,
  scope: NoInfer<S>,
): onRequestAsyncHookHandler {
  return tag(
    async (request, reply) => {
      const admin = await adminOf(verifier, request, reply);
      if (!verifier.permits(admin.scopes, scope)) {
        throw new AppError('forbidden', `This token lacks the ${scope} scope`, { requiredScope: scope });
      }
      request.admin = admin;
    },
    { kind: 'admin', scope },
  );
}

/** onRequest hook of a person's own routes (profile, password, sessions, personal tokens): any live user session or personal token; a service token is refused 403. */
export function requireUser(verifier: Authenticator): onRequestAsyncHookHandler {
  return tag(
    async (request, reply) => {
      const admin = await adminOf(verifier, request, reply);
      if (admin.userId === null)
        throw new AppError(
          'forbidden',
          'This is for people: sign in with your email, or use a personal token',
        );
      request.admin = admin;
    },
    { kind: 'user' },
  );
}

/**
 * onRequest hook of the advertiser portal API: a live advertiser token (`pdb_…`), verified by
 * `verify` (the sales-agent module owns those tokens); sets `request.advertiser`.
 */
export function requireAdvertiser(
  verify: (token: string) => Promise<{ advertiserId: string; tokenId: number } | undefined>,
  throttle: AuthThrottle,
): onRequestAsyncHookHandler {
  return tag(
    async (request, reply) => {
      const found = await verify(bearerOf(request, reply));
      if (!found)
        throw await throttle.refusal(
          'advertiser_token',
          request.ip,
          unauthorized(reply, 'Invalid or revoked advertiser token'),
        );
      request.advertiser = { kind: 'advertiser', ...found };
    },
    { kind: 'advertiser' },
  );
}

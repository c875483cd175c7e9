import type { CookieSerializeOptions } from '@fastify/cookie';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { Type as T } from '@sinclair/typebox';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { AuthThrottle } from '../../lib/auth-throttle.ts';
import { AppError } from '../../lib/errors.ts';
import { CSRF_HEADER, SESSION_COOKIE } from '../../plugins/auth.ts';
import { createdWithSecret } from '../../plugins/replies.ts';
import type { SessionService } from './sessions.ts';

/** Readable (not HttpOnly) cookie holding the CSRF token the console echoes in a header. */
export const CSRF_COOKIE = 'podium_csrf';

const SignIn = T.Object(
  { token: T.String({ minLength: 1, maxLength: 600 }) },
  { additionalProperties: false },
);

/**
 * Secure whenever the public URL is https (a TLS proxy in front, trusted or not) or the request
 * came over https, so the cookie never leaves over plain http from a deployment meant for https.
 */
function cookieOptions(
  request: FastifyRequest,
  path: string,
  httpOnly: boolean,
  httpsPublic: boolean,
): CookieSerializeOptions {
  return { path, httpOnly, sameSite: 'strict', secure: httpsPublic || request.protocol === 'https' };
}

/**
 * Console sign-in under the admin prefix: `POST /session` exchanges an admin token for an
 * HttpOnly SameSite=Strict session cookie plus a CSRF token, `GET /session` tells who is signed
 * in, `DELETE /session` signs out.
 */
export async function registerSessionRoutes(
  scope: FastifyInstance,
  sessions: SessionService,
  prefix: string,
  publicUrl: string,
  throttle: AuthThrottle,
): Promise<void> {
  const app = scope.withTypeProvider<TypeBoxTypeProvider>();
  const httpsPublic = publicUrl.startsWith('https://');
  const current = async (request: FastifyRequest) => {
    const cookie = request.cookies[SESSION_COOKIE];
    const session = cookie ? await sessions.resolve(cookie) : null;
    if (!session) throw new AppError('unauthorized', 'Not signed in, or the session expired');
    return session;
  };
  const view = (s: { admin: { tokenId: number; scopes: readonly string[] }; expiresAt: Date }) => ({
    adminTokenId: s.admin.tokenId,
    scopes: s.admin.scopes,
    expiresAt: s.expiresAt.toISOString(),
  });

  app.post(
    '/session',
    {
      config: { auth: 'self' },
      schema: {
        summary: 'Sign in to the console with an admin token (sets the session cookie)',
        body: SignIn,
      },
    },
    async (req, reply) => {
      const created = await sessions.signIn(req.body.token);
      if (!created)
        throw await throttle.refusal(
          'console_sign_in',
          req.ip,
          new AppError('unauthorized', 'Invalid or revoked admin token'),
        );
      req.admin = created.admin;
      reply.setCookie(SESSION_COOKIE, created.sessionToken, {
        ...cookieOptions(req, prefix, true, httpsPublic),
        expires: created.expiresAt,
      });
      reply.setCookie(CSRF_COOKIE, created.csrfToken, {
        ...cookieOptions(req, '/', false, httpsPublic),
        expires: created.expiresAt,
      });
      return createdWithSecret(reply, { data: { ...view(created), csrfToken: created.csrfToken } });
    },
  );

  app.get(
    '/session',
    { config: { auth: 'self' }, schema: { summary: 'Who is signed in' } },
    async (req, reply) => {
      reply.header('cache-control', 'no-store');
      return { data: view(await current(req)) };
    },
  );

  app.delete(
    '/session',
    { config: { auth: 'self' }, schema: { summary: 'Sign out' } },
    async (req, reply) => {
      const session = await current(req);
      const csrf = req.headers[CSRF_HEADER];
      if (!session.csrfMatches(typeof csrf === 'string' ? csrf : undefined)) {
        throw new AppError('forbidden', `Missing or wrong ${CSRF_HEADER} header for this session`);
      }
      req.admin = session.admin;
      await sessions.signOut(session.id);
      reply.clearCookie(SESSION_COOKIE, cookieOptions(req, prefix, true, httpsPublic));
      reply.clearCookie(CSRF_COOKIE, cookieOptions(req, '/', false, httpsPublic));
      return reply.status(204).send();
    },
  );
}

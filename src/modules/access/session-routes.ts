import type { CookieSerializeOptions } from '@fastify/cookie';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { Type as T } from '@sinclair/typebox';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { AuthThrottle } from '../../lib/auth-throttle.ts';
import { AppError, invalidField } from '../../lib/errors.ts';
import { CSRF_HEADER, SESSION_COOKIE } from '../../plugins/auth.ts';
import { createdWithSecret } from '../../plugins/replies.ts';
import type { User } from '../people/repository.ts';
import type { PeopleService } from '../people/service.ts';
import { type SingleSignOn, SSO_FLOW_TTL_MS, ssoRefused } from '../people/sso.ts';
import { type SsoRefusal, ssoRefusalOf } from '../people/sso-refusals.ts';
import type { NewSession, SessionService } from './sessions.ts';

/** Readable (not HttpOnly) cookie holding the CSRF token the console echoes in a header. */
export const CSRF_COOKIE = 'podium_csrf';
/** HttpOnly cookie holding the sealed state of a single sign-on between its start and its callback. */
export const SSO_COOKIE = 'podium_sso';

const SsoStartQuery = T.Object(
  {
    return: T.Optional(
      T.String({
        maxLength: 500,
        description: 'Console path to land on once signed in, e.g. /console/#/toplists (default /console/)',
      }),
    ),
  },
  { additionalProperties: false },
);
const SsoCallbackQuery = T.Object(
  {
    code: T.Optional(T.String({ maxLength: 2000 })),
    state: T.Optional(T.String({ maxLength: 500 })),
    iss: T.Optional(T.String({ maxLength: 500 })),
    error: T.Optional(T.String({ maxLength: 200 })),
    error_description: T.Optional(T.String({ maxLength: 1000 })),
  },
  { description: 'What the provider appends to the redirect URL' },
);

/**
 * Whether the client is a browser navigating (its `Accept` names HTML before JSON), which gets a
 * page to read rather than the JSON of an error.
 */
export function wantsPage(accept: string | undefined): boolean {
  if (!accept) return false;
  const html = accept.indexOf('text/html');
  const json = accept.indexOf('application/json');
  return html >= 0 && (json < 0 || html < json);
}

/** The fixed code a refusal shows as: its own, else one by its kind (no free text reaches the URL). */
function refusalReason(err: unknown): SsoRefusal {
  if (!(err instanceof AppError)) return 'unavailable';
  const own = ssoRefusalOf(typeof err.details?.reason === 'string' ? err.details.reason : undefined);
  if (own) return own;
  if (err.code === 'rate_limited') return 'rate_limited';
  return err.status >= 500 ? 'unavailable' : 'refused';
}

/**
 * Where a sign-in may send the browser back to: a relative path of the console only (its hash
 * route included), so the parameter can never make Podium an open redirect.
 */
export function consoleReturnPath(raw: string | undefined): string {
  if (raw === undefined || raw === '') return '/console/';
  const [path = ''] = raw.split('#', 1);
  if (
    !/^\/console(\/[A-Za-z0-9_.~%/-]*)?(#\/[A-Za-z0-9_.~%/?=&-]*)?$/.test(raw) ||
    path.includes('//') ||
    raw.includes('..')
  )
    throw invalidField('return', 'must be a path of the console, such as /console/#/toplists');
  return raw;
}

// Either an admin token, or an email with a password.
const SignIn = T.Object(
  {
    token: T.Optional(T.String({ minLength: 1, maxLength: 600 })),
    email: T.Optional(T.String({ minLength: 3, maxLength: 320 })),
    password: T.Optional(T.String({ minLength: 1, maxLength: 1000 })),
  },
  { additionalProperties: false },
);
const PendingToken = T.String({ minLength: 1, maxLength: 100 });
const SecondStep = T.Object(
  {
    pendingToken: PendingToken,
    code: T.String({
      minLength: 6,
      maxLength: 40,
      description: 'The 6-digit code of the authenticator app, or a recovery code',
    }),
  },
  { additionalProperties: false },
);
const EnrolStep = T.Object({ pendingToken: PendingToken }, { additionalProperties: false });

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
 * Console sign-in under the admin prefix: `POST /session` exchanges an email and password (or an
 * admin token) for an HttpOnly SameSite=Strict session cookie plus a CSRF token, `GET /session`
 * tells who is signed in, `DELETE /session` signs out.
 */
export async function registerSessionRoutes(
  scope: FastifyInstance,
  sessions: SessionService,
  people: PeopleService,
  prefix: string,
  publicUrl: string,
  throttle: AuthThrottle,
  sso?: SingleSignOn,
): Promise<void> {
  const app = scope.withTypeProvider<TypeBoxTypeProvider>();
  const httpsPublic = publicUrl.startsWith('https://');
  const current = async (request: FastifyRequest) => {
    const cookie = request.cookies[SESSION_COOKIE];
    const session = cookie ? await sessions.resolve(cookie) : null;
    if (!session) throw new AppError('unauthorized', 'Not signed in, or the session expired');
    return session;
  };
  const view = (
    s: {
      admin: { tokenId: number | null; userId: number | null; scopes: readonly string[] };
      expiresAt: Date;
    },
    user: User | undefined,
  ) => ({
    adminTokenId: s.admin.tokenId,
    userId: s.admin.userId,
    user: user
      ? { id: user.id, email: user.email, displayName: user.displayName, role: user.role.name }
      : null,
    scopes: s.admin.scopes,
    expiresAt: s.expiresAt.toISOString(),
  });
  const userOf = (id: number | null) => (id === null ? undefined : people.whoAmI(id));
  /** Sets the session and CSRF cookies of a completed sign-in. */
  const setSessionCookies = (req: FastifyRequest, reply: FastifyReply, created: NewSession) => {
    req.admin = created.admin;
    reply.setCookie(SESSION_COOKIE, created.sessionToken, {
      ...cookieOptions(req, prefix, true, httpsPublic),
      expires: created.expiresAt,
    });
    reply.setCookie(CSRF_COOKIE, created.csrfToken, {
      ...cookieOptions(req, '/', false, httpsPublic),
      expires: created.expiresAt,
    });
  };
  /** Sets the cookies of a completed sign-in and answers with the session. */
  const opened = (
    req: FastifyRequest,
    reply: FastifyReply,
    created: NewSession,
    user: User | undefined,
    extra: object = {},
  ) => {
    setSessionCookies(req, reply, created);
    return createdWithSecret(reply, {
      data: { ...view(created, user), csrfToken: created.csrfToken, ...extra },
    });
  };

  app.post(
    '/session',
    {
      config: { auth: 'self' },
      schema: {
        summary:
          'Sign in to the console with email and password, or an admin token (sets the session cookie)',
        body: SignIn,
      },
    },
    async (req, reply) => {
      const { token, email, password } = req.body;
      const client = { address: req.ip, userAgent: req.headers['user-agent'] };
      if (token !== undefined) {
        if (email !== undefined || password !== undefined)
          throw invalidField('token', 'send either token, or email and password, not both');
        const created = await sessions.signIn(token, client);
        if (!created)
          throw await throttle.refusal(
            'console_sign_in',
            req.ip,
            new AppError('unauthorized', 'Invalid or revoked admin token'),
          );
        return opened(req, reply, created, undefined);
      }
      if (email === undefined) throw invalidField('email', 'is required (or send token)');
      if (password === undefined) throw invalidField('password', 'is required');
      const result = await people.signIn(email, password, client);
      // Two-factor: the password was right, the session waits for the second step.
      if ('pending' in result)
        return reply.status(202).header('cache-control', 'no-store').send({ data: result.pending });
      return opened(req, reply, result.session, result.user);
    },
  );

  app.post(
    '/session/two-factor',
    {
      config: { auth: 'self' },
      schema: {
        summary:
          'Second step of a password sign-in: a TOTP or recovery code (or the first code of a required enrolment)',
        body: SecondStep,
      },
    },
    async (req, reply) => {
      const client = { address: req.ip, userAgent: req.headers['user-agent'] };
      const done = await people.completeSignIn(req.body.pendingToken, req.body.code, client);
      // The audit log keeps enrolments and recovery-code sign-ins (never the codes).
      if (done.recoveryCodes) req.audit = { before: null, after: { twoFactor: 'enrolled at sign-in' } };
      else if (done.usedRecoveryCode)
        req.audit = { before: null, after: { twoFactor: 'recovery code used' } };
      else req.audit = { before: null, after: { twoFactor: 'code' } };
      return opened(
        req,
        reply,
        done.session,
        done.user,
        done.recoveryCodes ? { recoveryCodes: done.recoveryCodes } : {},
      );
    },
  );

  app.post(
    '/session/two-factor/enrol',
    {
      config: { auth: 'self' },
      schema: {
        summary:
          'When two-factor is required and not set up: a new TOTP secret to scan before the first code',
        body: EnrolStep,
      },
    },
    async (req, reply) =>
      createdWithSecret(reply, { data: await people.startSignInEnrolment(req.body.pendingToken) }),
  );

  app.get(
    '/session/methods',
    {
      config: { auth: 'self' },
      schema: {
        summary: 'How one may sign in here: whether single sign-on is configured (for the sign-in page)',
      },
    },
    async () => ({
      data: { password: true, sso: sso ? { url: `${prefix}/session/sso` } : null },
    }),
  );

  const ssoOff = () => new AppError('not_found', 'Single sign-on is not configured (PODIUM_SSO_ISSUER)');
  // Lax, not Strict: the provider's redirect back is a cross-site navigation, which a Strict
  // cookie would not ride. It holds no session, only the sealed state of this one sign-in.
  const ssoCookie = (req: FastifyRequest): CookieSerializeOptions => ({
    ...cookieOptions(req, `${prefix}/session/sso`, true, httpsPublic),
    sameSite: 'lax',
  });

  /**
   * A refused single sign-on: a browser goes back to the sign-in page with the reason's fixed
   * code (logged with the message); any other client gets the error itself.
   */
  const backToSignIn = (req: FastifyRequest, reply: FastifyReply, refusal: unknown) => {
    if (!wantsPage(req.headers.accept)) throw refusal;
    const reason = refusalReason(refusal);
    if (refusal instanceof AppError && refusal.status < 500)
      req.log.info(`single sign-on refused (${reason}): ${refusal.message}`);
    else req.log.error({ err: refusal }, `single sign-on refused (${reason})`);
    return reply.redirect(`/console/#/sign-in?sso_error=${reason}`, 302);
  };

  app.get(
    '/session/sso',
    {
      config: { auth: 'self' },
      schema: {
        summary: 'Start single sign-on: redirects (302) to the OpenID Connect provider',
        description:
          'When the provider cannot be reached, a browser is redirected (302) to ' +
          '`/console/#/sign-in?sso_error=provider_failed`; any other client gets the `502`.',
        querystring: SsoStartQuery,
      },
    },
    async (req, reply) => {
      if (!sso) throw ssoOff();
      const returnTo = consoleReturnPath(req.query.return);
      reply.header('cache-control', 'no-store');
      try {
        const started = await sso.start(returnTo);
        reply.setCookie(SSO_COOKIE, started.cookie, { ...ssoCookie(req), maxAge: SSO_FLOW_TTL_MS / 1000 });
        return reply.redirect(started.url, 302);
      } catch (err) {
        return backToSignIn(req, reply, err);
      }
    },
  );

  app.get(
    '/session/sso/callback',
    {
      config: { auth: 'self' },
      // A malformed return from the provider is one more refusal: a browser sees it on the sign-in page.
      attachValidation: true,
      schema: {
        summary:
          "Single sign-on's return from the provider: signs in (session cookie) and redirects (302) to the console",
        description:
          'A refusal redirects (302) a browser (`Accept` naming `text/html` before `application/json`) to ' +
          '`/console/#/sign-in?sso_error=<reason>`, one of a fixed list of reasons; any other client gets ' +
          'the error as JSON, its reason in `details.reason`.',
        querystring: SsoCallbackQuery,
      },
    },
    async (req, reply) => {
      if (!sso) throw ssoOff();
      // The state cookie serves once, whatever the outcome.
      reply.clearCookie(SSO_COOKIE, ssoCookie(req));
      reply.header('cache-control', 'no-store');
      const query = req.url.slice(req.url.indexOf('?') + 1 || req.url.length);
      if (req.validationError) {
        // An API client gets the usual 422 naming the parameter.
        if (!wantsPage(req.headers.accept)) throw req.validationError;
        const malformed = "The provider's redirect carries malformed parameters";
        return backToSignIn(req, reply, ssoRefused('bad_request', 'refused', malformed));
      }
      try {
        const { identity, returnTo } = await sso.finish(query, req.cookies[SSO_COOKIE]);
        const client = { address: req.ip, userAgent: req.headers['user-agent'] };
        const done = await people.signInWithSso(identity, sso.settings.allowedDomains, client);
        setSessionCookies(req, reply, done.session);
        return reply.redirect(returnTo, 302);
      } catch (err) {
        const refusal =
          err instanceof AppError && err.status < 500
            ? await throttle.refusal('console_sign_in', req.ip, err)
            : err;
        return backToSignIn(req, reply, refusal);
      }
    },
  );

  app.get(
    '/session',
    { config: { auth: 'self' }, schema: { summary: 'Who is signed in' } },
    async (req, reply) => {
      reply.header('cache-control', 'no-store');
      const session = await current(req);
      return { data: view(session, await userOf(session.admin.userId)) };
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

import { existsSync } from 'node:fs';
import { join } from 'node:path';
import fastifyHelmet from '@fastify/helmet';
import fastifyStatic from '@fastify/static';
import type { FastifyInstance } from 'fastify';
import { AppError } from '../../lib/errors.ts';
import { PACKAGE_ROOT } from '../../lib/package-root.ts';

/** Where `vite build console` writes the operator console (part of the build output, `dist/`). */
export const CONSOLE_DIST = join(PACKAGE_ROOT, 'dist', 'console');

/**
 * The console's Content-Security-Policy: scripts, styles and data only from Podium itself (the
 * build has no inline script; `test/security-headers.e2e.test.ts` checks that it runs under this
 * policy), no plugin, no `<base>`, and no page of another origin may frame it.
 */
export const CONSOLE_CSP = {
  'default-src': ["'self'"],
  'script-src': ["'self'"],
  'style-src': ["'self'"],
  'img-src': ["'self'", 'data:'],
  'connect-src': ["'self'"],
  'font-src': ["'self'"],
  'object-src': ["'none'"],
  'base-uri': ["'none'"],
  'form-action': ["'self'"],
  'frame-ancestors': ["'none'"],
};

/** One year, the usual HSTS lifetime; without includeSubDomains, which is the domain owner's call. */
const HSTS = 'max-age=31536000';

/**
 * Serves the built operator console at /console/ with security headers on every answer (page,
 * assets, its 404s): the CSP above, X-Frame-Options DENY, nosniff, Referrer-Policy no-referrer,
 * and Strict-Transport-Security when the console is reached over https (an https public URL, or
 * a request that came over https, as a trusted proxy reports it). Without a build, /console
 * answers 503 saying how to build it. The server's root `/` leads to the console: someone who
 * opens the bare address gets a screen, not a JSON 404.
 */
export async function registerConsole(
  app: FastifyInstance,
  options: { dir?: string | undefined; publicUrl: string },
): Promise<void> {
  const dir = options.dir ?? CONSOLE_DIST;
  const httpsPublic = options.publicUrl.startsWith('https://');
  await app.register(async (scope) => {
    await scope.register(fastifyHelmet, {
      contentSecurityPolicy: { useDefaults: false, directives: CONSOLE_CSP },
      frameguard: { action: 'deny' },
      referrerPolicy: { policy: 'no-referrer' },
      strictTransportSecurity: false,
    });
    scope.addHook('onRequest', async (request, reply) => {
      if (httpsPublic || request.protocol === 'https') reply.header('strict-transport-security', HSTS);
    });
    scope.get('/', async (_req, reply) => reply.redirect('/console/'));
    scope.get('/console', async (_req, reply) => reply.redirect('/console/'));
    if (!existsSync(`${dir}/index.html`)) {
      scope.get('/console/*', async () => {
        throw new AppError('service_unavailable', 'The console is not built: run `npm run build`');
      });
      return;
    }
    await scope.register(fastifyStatic, { root: dir, prefix: '/console/', index: 'index.html', maxAge: 0 });
  });
}

import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import fastifyStatic from '@fastify/static';
import type { FastifyInstance } from 'fastify';
import { AppError } from '../../lib/errors.ts';

/** Where `vite build console` writes the operator console. */
export const CONSOLE_DIST = fileURLToPath(new URL('../../../console/dist/', import.meta.url));

/** Serves the built operator console at /console/; without a build, /console answers 503 saying how to build it. */
export async function registerConsole(app: FastifyInstance, dir = CONSOLE_DIST): Promise<void> {
  app.get('/console', async (_req, reply) => reply.redirect('/console/'));
  if (!existsSync(`${dir}/index.html`)) {
    app.get('/console/*', async () => {
      throw new AppError('service_unavailable', 'The console is not built: run `npm run build:console`');
    });
    return;
  }
  await app.register(fastifyStatic, { root: dir, prefix: '/console/', index: 'index.html', maxAge: 0 });
}

import type { FastifyInstance } from 'fastify';
import { invalidField } from '../lib/errors.ts';

const DIGITS = /^-?[0-9]+$/;

interface QuerySchema {
  properties?: Record<string, { type?: string }>;
}

/**
 * AJV's type coercion reads `1e2`, ` 7` or `0x10` as integers; a query parameter declared
 * `integer` must be written as plain digits, so anything else is a 422 naming the field.
 */
export function registerStrictQuery(app: FastifyInstance): void {
  // Callback style: most routes have no query schema, and they pay no promise for this hook.
  app.addHook('preValidation', (request, _reply, done) => {
    const props = (request.routeOptions.schema?.querystring as QuerySchema | undefined)?.properties;
    if (!props) return done();
    const query = request.query as Record<string, unknown>;
    for (const [name, prop] of Object.entries(props)) {
      if (prop.type !== 'integer') continue;
      const raw = query[name];
      if (raw === undefined) continue;
      if (typeof raw !== 'string') return done(invalidField(name, 'must be given once'));
      if (!DIGITS.test(raw)) return done(invalidField(name, 'must be a whole number written in digits'));
    }
    done();
  });
}

import type { FastifyInstance, preValidationHookHandler } from 'fastify';
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
  // Added to each route with an integer query parameter when it is registered: the other routes
  // run nothing for it.
  app.addHook('onRoute', (route) => {
    const props = (route.schema?.querystring as QuerySchema | undefined)?.properties ?? {};
    const integers = Object.keys(props).filter((name) => props[name]!.type === 'integer');
    if (integers.length === 0) return;
    const check: preValidationHookHandler = (request, _reply, done) => {
      const query = request.query as Record<string, unknown>;
      for (const name of integers) {
        const raw = query[name];
        if (raw === undefined) continue;
        if (typeof raw !== 'string') return done(invalidField(name, 'must be given once'));
        if (!DIGITS.test(raw)) return done(invalidField(name, 'must be a whole number written in digits'));
      }
      done();
    };
    route.preValidation = [check, ...[route.preValidation ?? []].flat()];
  });
}

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
  app.addHook('preValidation', async (request) => {
    const props = (request.routeOptions.schema?.querystring as QuerySchema | undefined)?.properties;
    if (!props) return;
    const query = request.query as Record<string, unknown>;
    for (const [name, prop] of Object.entries(props)) {
      if (prop.type !== 'integer') continue;
      const raw = query[name];
      if (raw === undefined) continue;
      if (typeof raw !== 'string') throw invalidField(name, 'must be given once');
      if (!DIGITS.test(raw)) throw invalidField(name, 'must be a whole number written in digits');
    }
  });
}

import Ajv from 'ajv';
import addFormats from 'ajv-formats';
import type { FastifyInstance } from 'fastify';

const common = { useDefaults: true, removeAdditional: false, allErrors: false, strict: false } as const;

/**
 * Two validators: query strings, params and headers arrive as text and are coerced to the
 * declared types; JSON bodies are not, so `"maxBonusAmount": 200.5` is a 422 rather than
 * silently becoming the string "200.5" (decimals are strings on purpose).
 */
export function registerValidation(app: FastifyInstance): void {
  const coercing = addFormats(new Ajv({ ...common, coerceTypes: 'array' }));
  const exact = addFormats(new Ajv({ ...common, coerceTypes: false }));
  app.setValidatorCompiler(({ schema, httpPart }) =>
    (httpPart === 'body' ? exact : coercing).compile(schema as object),
  );
}

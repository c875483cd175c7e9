import Ajv, { type ErrorObject, type ValidateFunction } from 'ajv';
import addFormats from 'ajv-formats';
import type { FastifyInstance } from 'fastify';
import { findUnstorable } from '../lib/text.ts';
import { isDay, isInstant } from '../lib/time.ts';

const common = { useDefaults: true, removeAdditional: false, allErrors: false, strict: false } as const;

/** AJV with the formats PostgreSQL agrees with: `date` and `date-time` only in years 0001–9999. */
function ajv(coerceTypes: false | 'array'): Ajv {
  const out = addFormats(new Ajv({ ...common, coerceTypes }));
  out.addFormat('date', isDay);
  out.addFormat('date-time', isInstant);
  return out;
}

/** The schema check, then text PostgreSQL cannot store, reported like any other field error. */
function withStorableText(validate: ValidateFunction): ValidateFunction {
  const wrapped = ((data: unknown) => {
    if (!validate(data)) {
      wrapped.errors = validate.errors;
      return false;
    }
    const found = findUnstorable(data);
    if (!found) {
      wrapped.errors = null;
      return true;
    }
    const issue: ErrorObject = {
      instancePath: found.path.map((p) => `/${p}`).join(''),
      schemaPath: '#',
      keyword: 'storable',
      params: {},
      message: found.problem,
    };
    wrapped.errors = [issue];
    return false;
  }) as ValidateFunction;
  return wrapped;
}

/**
 * Two validators: query strings, params and headers arrive as text and are coerced to the
 * declared types; JSON bodies are not, so `"maxBonusAmount": 200.5` is a 422 rather than
 * silently becoming the string "200.5" (decimals are strings on purpose). Both refuse text
 * PostgreSQL cannot store (NUL, unpaired surrogates), naming the field.
 */
export function registerValidation(app: FastifyInstance): void {
  const coercing = ajv('array');
  const exact = ajv(false);
  app.setValidatorCompiler(({ schema, httpPart }) =>
    withStorableText((httpPart === 'body' ? exact : coercing).compile(schema as object)),
  );
}

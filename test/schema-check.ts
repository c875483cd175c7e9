import type { TSchema } from '@sinclair/typebox';
import Ajv2020 from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';
import { expect } from 'vitest';

const ajv = new Ajv2020({ allErrors: true, strict: false });
addFormats(ajv);

/** Asserts that a parsed body matches a route's TypeBox schema, printing every violation. */
export function expectSchema(schema: TSchema, body: unknown): void {
  const validate = ajv.compile(schema);
  const ok = validate(body);
  expect(ok ? [] : validate.errors?.map((e) => `${e.instancePath} ${e.message}`)).toEqual([]);
}

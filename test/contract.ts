import Ajv2020 from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';
import { expect } from 'vitest';
import {
  BrandListSchema,
  ErrorSchema,
  ToplistListSchema,
  ToplistSingleSchema,
} from '../src/modules/delivery/schemas.ts';

// Strict validation of real responses against the schemas written from the spec's tables.
const ajv = new Ajv2020({ allErrors: true, strict: false });
addFormats(ajv);

const validators = {
  list: ajv.compile(ToplistListSchema),
  single: ajv.compile(ToplistSingleSchema),
  error: ajv.compile(ErrorSchema),
  brands: ajv.compile(BrandListSchema),
};

/** Asserts that a parsed body matches one of the contract schemas, printing every violation. */
export function expectContract(kind: keyof typeof validators, body: unknown): void {
  const validate = validators[kind];
  const ok = validate(body);
  expect(ok ? [] : validate.errors?.map((e) => `${e.instancePath} ${e.message}`)).toEqual([]);
}

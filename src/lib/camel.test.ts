import { describe, expect, it } from 'vitest';
import { camelKeys, fieldsOf, snakeCase } from './camel.ts';

describe('camelKeys', () => {
  it('renames snake_case keys, keeps values and leaves absent keys absent', () => {
    const q: { program_id?: number; per_page: number; from: string; sub_id?: string } = {
      program_id: 3,
      per_page: 15,
      from: '2026-10-01',
    };
    const c = camelKeys(q);
    expect(c).toEqual({ programId: 3, perPage: 15, from: '2026-10-01' });
    expect('subId' in c).toBe(false);
  });
});

describe('fieldsOf', () => {
  it('reads the mapped columns under their field names, in the map order', () => {
    const row = { id: 1, affiliate_id: 'aff', param_map: { a: 'b' }, other: true };
    const f = fieldsOf(row, { paramMap: 'param_map', affiliateId: 'affiliate_id' } as const);
    expect(f).toEqual({ paramMap: { a: 'b' }, affiliateId: 'aff' });
    expect(Object.keys(f)).toEqual(['paramMap', 'affiliateId']);
  });
});

describe('snakeCase', () => {
  it('puts an underscore before each capital and lowers it', () => {
    expect(snakeCase('id')).toBe('id');
    expect(snakeCase('programId')).toBe('program_id');
    expect(snakeCase('classificationTypeId')).toBe('classification_type_id');
  });
});

import { describe, expect, it } from 'vitest';
import { camelKeys } from './camel.ts';

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

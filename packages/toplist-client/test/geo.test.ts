import { describe, expect, it } from 'vitest';
import { expectContract } from '../../../test/contract.ts';
import { normalizeCountry, pickForVisitor } from '../src/index.ts';
import { country, global, market, toplist } from './fixtures.ts';

const se = toplist(1, country('SE'));
const de = toplist(2, country('DE'));
const nordics = toplist(3, market('NORDICS', ['SE', 'NO', 'DK', 'FI', 'IS']));
const dach = toplist(4, market('DACH', ['DE', 'AT', 'CH', 'LI']));
const scandi = toplist(5, market('SCANDI', ['SE', 'NO', 'DK']));
const row = toplist(6, global);
const family = [se, de, nordics, dach, row];

describe('pickForVisitor: the geo cascade', () => {
  it('uses schema-valid fixtures', () => {
    for (const t of [...family, scandi]) expectContract('single', { data: t });
  });

  it('prefers the exact country row over a market covering it', () => {
    expect(pickForVisitor(family, 'SE')).toEqual({ match: 'country', toplist: se });
    expect(pickForVisitor([nordics, scandi, se, row], 'SE')).toEqual({ match: 'country', toplist: se });
  });

  it('falls back to the one market covering the country', () => {
    expect(pickForVisitor(family, 'NO')).toEqual({ match: 'market', toplist: nordics });
    expect(pickForVisitor(family, 'AT')).toEqual({ match: 'market', toplist: dach });
  });

  it('picks nothing when two markets cover the country, and reports both (no fall-through to global)', () => {
    const pick = pickForVisitor([nordics, scandi, row], 'NO');
    expect(pick).toEqual({
      match: 'none',
      toplist: null,
      reason: 'ambiguous',
      candidates: [nordics, scandi],
    });
    // A country covered by only one of the two markets is not ambiguous.
    expect(pickForVisitor([nordics, scandi, row], 'FI')).toEqual({ match: 'market', toplist: nordics });
  });

  it('falls back to the global row for a known country with no country or market row', () => {
    expect(pickForVisitor(family, 'BR')).toEqual({ match: 'global', toplist: row });
  });

  it('picks nothing for a known country when the family has no global row', () => {
    expect(pickForVisitor([se, nordics], 'BR')).toEqual({
      match: 'none',
      toplist: null,
      reason: 'no_variant',
      candidates: [],
    });
    expect(pickForVisitor([], 'SE')).toMatchObject({ match: 'none', reason: 'no_variant' });
  });

  it.each([
    ['missing', undefined],
    ['null', null],
    ['empty', ''],
    ['unassigned', 'XX'],
    ['Cloudflare Tor', 'T1'],
    ['not a country', 'EU'],
    ['reserved UK', 'UK'],
    ['alpha-3', 'SWE'],
    ['injection', "SE' OR 1=1"],
    ['unicode look-alike', 'ЅЕ'],
  ])('an unknown country (%s) matches only the global row', (_label, code) => {
    expect(pickForVisitor(family, code)).toEqual({
      match: 'global',
      toplist: row,
      reason: 'unknown_country',
    });
    expect(pickForVisitor([se, nordics, toplist(9, country('XK'))], code)).toEqual({
      match: 'none',
      toplist: null,
      reason: 'unknown_country',
      candidates: [],
    });
  });

  it('accepts lowercase and padded codes, and Kosovo (XK), as the server does', () => {
    expect(pickForVisitor(family, ' se ')).toEqual({ match: 'country', toplist: se });
    expect(normalizeCountry('xk')).toBe('XK');
    expect(normalizeCountry('gb')).toBe('GB');
  });

  it('reports duplicate rows of one geo as ambiguous instead of choosing by order', () => {
    const se2 = toplist(11, country('SE'));
    expect(pickForVisitor([se, se2, row], 'SE')).toMatchObject({
      match: 'none',
      reason: 'ambiguous',
      candidates: [se, se2],
    });
    const row2 = toplist(12, global);
    expect(pickForVisitor([row, row2], 'BR')).toMatchObject({ match: 'none', reason: 'ambiguous' });
  });

  it('refuses rows from more than one template', () => {
    expect(() => pickForVisitor([se, toplist(20, global, 8)], 'SE')).toThrow(TypeError);
  });

  it('matches codes exactly: no lowercase covered codes, no market or global codes as a country', () => {
    const lower = toplist(30, market('NORDICS', ['se']));
    expect(pickForVisitor([lower], 'SE')).toMatchObject({ match: 'none', reason: 'no_variant' });
    expect(pickForVisitor([lower], 'NORDICS')).toMatchObject({ match: 'none', reason: 'unknown_country' });
    expect(pickForVisitor([toplist(31, country('DE'))], 'ROW')).toMatchObject({ match: 'none' });
  });
});

import { describe, expect, it } from 'vitest';
import { countries, countryName, GLOBAL_CODE, isCountryCode, MARKET_CODE } from './geo.ts';

describe('geo codes', () => {
  it('knows ISO 3166-1 alpha-2 countries with English names, and nothing else', () => {
    expect(isCountryCode('SE')).toBe(true);
    expect(countryName('DE')).toBe('Germany');
    expect(isCountryCode('se')).toBe(false);
    expect(isCountryCode('ZZ')).toBe(false);
    expect(isCountryCode('EU')).toBe(false);
    expect(isCountryCode(GLOBAL_CODE)).toBe(false);
    expect(countries().size).toBeGreaterThan(240);
  });

  it('market codes are 2-32 uppercase letters, digits or _ starting with a letter', () => {
    expect(MARKET_CODE.test('NORDICS')).toBe(true);
    expect(MARKET_CODE.test('LATAM_2')).toBe(true);
    expect(MARKET_CODE.test('N')).toBe(false);
    expect(MARKET_CODE.test('nordics')).toBe(false);
    expect(MARKET_CODE.test(`A${'B'.repeat(32)}`)).toBe(false);
  });
});

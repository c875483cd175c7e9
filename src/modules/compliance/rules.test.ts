import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  type BrandRules,
  type CheckedItem,
  checkBrand,
  type Geos,
  type LicenceRule,
  type RuleSet,
  violations,
} from './rules.ts';

const COUNTRIES = ['SE', 'NO', 'DK', 'FI', 'DE', 'AT', 'GB', 'NL'] as const;
const MARKETS: RuleSet['markets'] = new Map([
  ['NORDICS', new Set(['SE', 'NO', 'DK', 'FI'])],
  ['DACH', new Set(['DE', 'AT'])],
]);
const AUTHORITIES = ['Spelinspektionen', 'MGA', 'UKGC'] as const;
const NOW = 1_800_000_000_000;

const country = fc.constantFrom(...COUNTRIES);
const countrySet = fc.uniqueArray(country, { maxLength: 4 });
const bound = fc.option(fc.integer({ min: NOW - 10_000, max: NOW + 10_000 }), { nil: null });
const licence = fc.record({
  id: fc.nat(),
  authority: fc.constantFrom(...AUTHORITIES),
  countries: countrySet,
  validFrom: bound,
  validUntil: bound,
});
const brand = (id: number) =>
  fc.record({
    id: fc.constant(id),
    name: fc.constant(`Brand ${id}`),
    restrictedCountries: countrySet,
    licences: fc.array(licence, { maxLength: 3 }),
  });
const rule = fc.record({
  id: fc.nat(),
  code: fc.string({ minLength: 2, maxLength: 5 }),
  countries: fc.uniqueArray(country, { minLength: 1, maxLength: 3 }),
  authority: fc.option(fc.constantFrom(...AUTHORITIES), { nil: null }),
});
const geos: fc.Arbitrary<Geos> = fc.record({
  countries: countrySet,
  markets: fc.uniqueArray(fc.constantFrom('NORDICS', 'DACH', 'UNKNOWN'), { maxLength: 2 }),
});

/** The same rules written out the other way round: what must hold for a brand to be shown. */
function oracle(b: BrandRules, c: string, rules: LicenceRule[], item: { offer?: Geos; trackers?: Geos[] }) {
  const holds = (g: Geos) =>
    (g.countries.length === 0 && g.markets.length === 0) ||
    g.countries.includes(c) ||
    g.markets.some((m) => MARKETS.get(m)?.has(c));
  const licensedFor = (r: LicenceRule) =>
    b.licences.some(
      (l) =>
        l.countries.includes(c) &&
        !(l.validFrom !== null && l.validFrom > NOW) &&
        !(l.validUntil !== null && l.validUntil <= NOW) &&
        (r.authority === null || r.authority.toLowerCase() === l.authority.toLowerCase()),
    );
  return (
    !b.restrictedCountries.includes(c) &&
    rules.filter((r) => r.countries.includes(c)).every(licensedFor) &&
    (!item.offer || holds(item.offer)) &&
    (!item.trackers?.length || item.trackers.some(holds))
  );
}

describe('compliance rules', () => {
  it('allow a brand in a country exactly when no restriction, licence rule or geo forbids it', () => {
    fc.assert(
      fc.property(
        brand(1),
        country,
        fc.array(rule, { maxLength: 4 }),
        fc.option(geos, { nil: undefined }),
        fc.array(geos, { maxLength: 3 }),
        (b, c, rules, offer, trackers) => {
          const v = checkBrand(b, c, { rules, markets: MARKETS }, NOW, { offer, trackers });
          expect(v.allowed).toBe(oracle(b, c, rules, { offer, trackers }));
          if (!v.allowed) expect(v.reason).toContain(c);
        },
      ),
      { numRuns: 2000 },
    );
  });

  it('name every (item, country) pair refused, and only those; a licence added never adds one', () => {
    const family = fc.tuple(fc.array(brand(1), { maxLength: 1 }), brand(2), brand(3));
    fc.assert(
      fc.property(
        family,
        fc.array(rule, { maxLength: 4 }),
        countrySet,
        licence,
        ([[b1], b2, b3], rules, covered, extra) => {
          const brands = new Map([b1, b2, b3].filter((b) => b !== undefined).map((b) => [b.id, b]));
          const items: CheckedItem[] = [...brands.keys()].map((id, i) => ({
            id: 100 + id,
            position: i + 1,
            brandId: id,
          }));
          const set = { rules, markets: MARKETS };
          const found = violations(items, covered, brands, set, NOW);
          const expected = items.flatMap((it) =>
            covered.filter((c) => !oracle(brands.get(it.brandId)!, c, rules, {})).map((c) => `${it.id}:${c}`),
          );
          expect(found.map((v) => `${v.itemId}:${v.country}`)).toEqual(expected);
          // Holding one more licence can only lift refusals.
          const licensed = new Map(
            [...brands].map(([id, b]) => [id, { ...b, licences: [...b.licences, extra] }]),
          );
          const after = new Set(
            violations(items, covered, licensed, set, NOW).map((v) => `${v.itemId}:${v.country}`),
          );
          for (const key of after) expect(expected).toContain(key);
        },
      ),
      { numRuns: 1000 },
    );
  });

  it('treat a licence as in force from valid-from up to, not including, valid-until', () => {
    const b: BrandRules = {
      id: 1,
      name: 'Nordic Spins',
      restrictedCountries: [],
      licences: [
        { id: 1, authority: 'Spelinspektionen', countries: ['SE'], validFrom: 1000, validUntil: 2000 },
      ],
    };
    const set = {
      rules: [{ id: 7, code: 'SE', countries: ['SE'], authority: 'spelinspektionen' }],
      markets: MARKETS,
    };
    expect(checkBrand(b, 'SE', set, 999).allowed).toBe(false);
    expect(checkBrand(b, 'SE', set, 1000).allowed).toBe(true);
    expect(checkBrand(b, 'SE', set, 1999).allowed).toBe(true);
    expect(checkBrand(b, 'SE', set, 2000)).toMatchObject({
      allowed: false,
      rule: 'licence_required',
      ruleId: 7,
    });
  });
});

/*
 * The compliance meaning of a toplist's geo (DESIGN, "Compliance"), as pure functions: a brand may
 * be advertised in a country unless it is restricted there, a licence rule covers the country and
 * the brand holds no licence in force for it, or the item's offer or all of its trackers are for
 * other countries. Nothing here reads a clock or a database: callers pass the instant and the rules.
 */

/** A licence a brand holds; `validFrom`/`validUntil` in epoch ms, null for an open end. */
export interface Licence {
  id: number;
  authority: string;
  countries: readonly string[];
  validFrom: number | null;
  validUntil: number | null;
}

/** What decides where a brand may be advertised. Countries are ISO 3166-1 alpha-2 codes. */
export interface BrandRules {
  id: number;
  name: string;
  restrictedCountries: readonly string[];
  licences: readonly Licence[];
}

/** "Advertising in these countries needs a licence in force covering the country (from `authority` when set)." */
export interface LicenceRule {
  id: number;
  /** The rule's country code or market code. */
  code: string;
  countries: readonly string[];
  authority: string | null;
}

/** The countries and markets an offer or tracker is for; both empty means everywhere. */
export interface Geos {
  countries: readonly string[];
  markets: readonly string[];
}

/** The parts of a toplist item beyond its brand that narrow where it may be shown. */
export interface ItemGeos {
  offer?: Geos | undefined;
  /** Every tracker of the offer: the item needs at least one whose geos hold the country. */
  trackers?: readonly Geos[] | undefined;
}

/** The rules in force and what a market code of an offer's or tracker's geos covers. */
export interface RuleSet {
  rules: readonly LicenceRule[];
  /** Market code → the countries it covers (from the market toplists); an unknown code covers nothing. */
  markets: ReadonlyMap<string, ReadonlySet<string>>;
}

export const RULE_KINDS = ['restricted_country', 'licence_required', 'offer_geo', 'tracker_geo'] as const;
export type RuleKind = (typeof RULE_KINDS)[number];

/** Why a brand may not be shown in a country: the kind of rule, its id (licence rules) and a sentence. */
export interface Refusal {
  allowed: false;
  rule: RuleKind;
  ruleId: number | null;
  reason: string;
}

export type Verdict = { allowed: true } | Refusal;

const ALLOWED: Verdict = { allowed: true };

/** Whether a licence is in force at `atMs` (its window is [validFrom, validUntil)). */
export function inForce(l: Licence, atMs: number): boolean {
  return (l.validFrom === null || l.validFrom <= atMs) && (l.validUntil === null || atMs < l.validUntil);
}

/** Whether geos hold the country (directly or through a market code); empty geos hold every country. */
export function geosHold(g: Geos, country: string, markets: RuleSet['markets']): boolean {
  if (!g.countries.length && !g.markets.length) return true;
  return g.countries.includes(country) || g.markets.some((m) => markets.get(m)?.has(country) === true);
}

const sameAuthority = (a: string, b: string) => a.trim().toLowerCase() === b.trim().toLowerCase();

/** Whether `brand` (with the item's offer and trackers) may be advertised in `country` at `atMs`. */
export function checkBrand(
  brand: BrandRules,
  country: string,
  set: RuleSet,
  atMs: number,
  item: ItemGeos = {},
): Verdict {
  if (brand.restrictedCountries.includes(country))
    return {
      allowed: false,
      rule: 'restricted_country',
      ruleId: null,
      reason: `${brand.name} is restricted in ${country}`,
    };
  for (const rule of set.rules) {
    if (!rule.countries.includes(country)) continue;
    const licensed = brand.licences.some(
      (l) =>
        l.countries.includes(country) &&
        inForce(l, atMs) &&
        (rule.authority === null || sameAuthority(l.authority, rule.authority)),
    );
    if (!licensed)
      return {
        allowed: false,
        rule: 'licence_required',
        ruleId: rule.id,
        reason: `${country} requires a licence in force${rule.authority ? ` from ${rule.authority}` : ''} (rule ${rule.code}); ${brand.name} holds none`,
      };
  }
  if (item.offer && !geosHold(item.offer, country, set.markets))
    return {
      allowed: false,
      rule: 'offer_geo',
      ruleId: null,
      reason: `the offer of ${brand.name} is not for ${country}`,
    };
  if (item.trackers?.length && !item.trackers.some((t) => geosHold(t, country, set.markets)))
    return {
      allowed: false,
      rule: 'tracker_geo',
      ruleId: null,
      reason: `no tracker of ${brand.name}'s offer is for ${country}`,
    };
  return ALLOWED;
}

/** One item of a toplist as the checks see it. */
export interface CheckedItem extends ItemGeos {
  id: number;
  position: number;
  brandId: number;
}

/** An item that may not be shown in one of the countries its list covers. */
export interface Violation {
  itemId: number;
  position: number;
  brandId: number;
  brandName: string;
  country: string;
  rule: RuleKind;
  ruleId: number | null;
  reason: string;
}

/**
 * Every (item, country) of `countries` where the item's brand may not be advertised, in item then
 * country order. Every item's brand must be in `brands`.
 */
export function violations(
  items: readonly CheckedItem[],
  countries: readonly string[],
  brands: ReadonlyMap<number, BrandRules>,
  set: RuleSet,
  atMs: number,
): Violation[] {
  const out: Violation[] = [];
  for (const it of items) {
    const brand = brands.get(it.brandId);
    if (!brand) throw new Error(`item ${it.id} references brand ${it.brandId}, which the rules do not hold`);
    for (const country of countries) {
      const v = checkBrand(brand, country, set, atMs, it);
      if (!v.allowed)
        out.push({
          itemId: it.id,
          position: it.position,
          brandId: it.brandId,
          brandName: brand.name,
          country,
          rule: v.rule,
          ruleId: v.ruleId,
          reason: v.reason,
        });
    }
  }
  return out;
}

/** The countries a toplist's geo covers for the publish guard: its country, its market's, none for global. */
export function coveredBy(geo: { type: string; code: string; coveredCountries: readonly string[] | null }) {
  if (geo.type === 'country') return [geo.code];
  if (geo.type === 'market') return [...(geo.coveredCountries ?? [])];
  return [];
}

import { AppError, invalidField } from '../../lib/errors.ts';
import { countryCodeOf, countryName, GLOBAL_CODE, isCountryCode, MARKET_CODE } from '../../lib/geo.ts';
import { storedUrl, storedUrlTemplate } from '../../lib/stored-url.ts';
import type { ColumnValues } from './rows.ts';
import type { BrandInputT, GeoInputT, OfferInputT, TrackerInputT } from './schemas.ts';

/* Input → column mapping and validation that JSON schema cannot express. */

/** The two columns of a geo scope (offers and trackers). */
const geoColumns = (g: OfferInputT['geos']) => ({ geoCountries: g?.countries, geoMarkets: g?.markets });

const stored = (field: string, raw: string | undefined) => (raw ? storedUrl(field, raw) : raw);

// Input fields are named as their columns' API fields; only the nested objects are flattened.
// URLs are stored as the URL parser writes them; `prefix` names the row in a 422 (`trackers.1.`).
export function brandColumns(b: Partial<BrandInputT>, prefix = ''): ColumnValues<'brands'> {
  const { logo, languages, restrictedCountries, ...same } = b;
  return {
    ...same,
    restrictedCountries:
      restrictedCountries && countryCodes(`${prefix}restrictedCountries`, restrictedCountries),
    logoRectangular: stored(`${prefix}logo.rectangular`, logo?.rectangular),
    logoSquare: stored(`${prefix}logo.square`, logo?.square),
    logoBackgroundColor: logo?.backgroundColor,
    languagesWebsite: languages?.website,
    languagesSupport: languages?.support,
    languagesLivechat: languages?.livechat,
  };
}

/**
 * Country names (or codes) as the API takes them → the sorted, distinct codes stored; a name that
 * is no country is refused with the name and its index.
 */
export function countryCodes(field: string, names: readonly string[]): string[] {
  const codes = names.map((name, i) => {
    const code = countryCodeOf(name);
    if (!code) throw invalidField(`${field}.${i}`, `${JSON.stringify(name)} is not a known country name`);
    return code;
  });
  return [...new Set(codes)].sort();
}

export function offerColumns(o: Partial<OfferInputT>): ColumnValues<'offers'> {
  const { geos, trackers: _trackers, ...same } = o;
  return { ...same, ...geoColumns(geos) };
}

export function trackerColumns(t: Partial<TrackerInputT>, prefix = ''): ColumnValues<'trackers'> {
  const { geos, landingUrl, tcLink, ...same } = t;
  return {
    ...same,
    landingUrl: landingUrl === undefined ? undefined : storedUrlTemplate(`${prefix}landingUrl`, landingUrl),
    tcLink: stored(`${prefix}tcLink`, tcLink),
    ...geoColumns(geos),
  };
}

/** JSON Schema's multipleOf fails on binary fractions (8.35 % 0.01 ≠ 0), so the two-decimal rule lives here. */
export function checkRating(b: Partial<BrandInputT>, prefix = ''): void {
  if (b.rating !== undefined && Number(b.rating.toFixed(2)) !== b.rating) {
    throw invalidField(`${prefix}rating`, 'must have at most two decimals');
  }
}

/** A percentage cannot exceed 100; the schema already limits digits and decimals of every decimal. */
export function checkDecimals(o: Partial<OfferInputT>, prefix = ''): void {
  const v = o.rakebackPercentage;
  if (typeof v === 'string' && Number(v) > 100)
    throw invalidField(`${prefix}rakebackPercentage`, 'must be at most 100');
}

/** A publish window must end after it starts. */
export function checkWindow(from: string | null | undefined, until: string | null | undefined): void {
  if (from && until && Date.parse(until) <= Date.parse(from)) {
    throw invalidField('liveUntil', 'must be later than liveFrom');
  }
}

/** Applies the geo rules of the design: country / market / global. */
export function normaliseGeo(g: GeoInputT): {
  type: GeoInputT['type'];
  code: string;
  name: string;
  coveredCountries: string[] | null;
} {
  switch (g.type) {
    case 'country': {
      if (!isCountryCode(g.code))
        throw invalidField('geo.code', `${JSON.stringify(g.code)} is not an ISO 3166-1 alpha-2 country code`);
      if (g.coveredCountries?.length)
        throw invalidField('geo.coveredCountries', 'must be null for a country toplist');
      return { type: 'country', code: g.code, name: g.name ?? countryName(g.code)!, coveredCountries: null };
    }
    case 'market': {
      if (!MARKET_CODE.test(g.code))
        throw invalidField('geo.code', 'a market code is 2-32 uppercase letters, digits or _ (e.g. NORDICS)');
      if (!g.coveredCountries?.length)
        throw invalidField('geo.coveredCountries', 'a market must list the countries it covers');
      for (const [i, c] of g.coveredCountries.entries()) {
        if (!isCountryCode(c))
          throw invalidField(
            `geo.coveredCountries.${i}`,
            `${JSON.stringify(c)} is not an ISO 3166-1 alpha-2 country code`,
          );
      }
      return {
        type: 'market',
        code: g.code,
        name: g.name ?? g.code,
        coveredCountries: [...g.coveredCountries],
      };
    }
    case 'global': {
      if (g.code !== GLOBAL_CODE)
        throw invalidField('geo.code', `a global toplist has the code ${GLOBAL_CODE}`);
      if (g.coveredCountries?.length)
        throw invalidField('geo.coveredCountries', 'must be null for a global toplist');
      return { type: 'global', code: GLOBAL_CODE, name: g.name ?? 'Rest of World', coveredCountries: null };
    }
    default:
      throw new AppError('validation_failed', 'geo.type must be country, market or global', {
        field: 'geo.type',
      });
  }
}

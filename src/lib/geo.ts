/**
 * Country and market codes. Country codes are ISO 3166-1 alpha-2, validated against the ICU
 * region data that ships with Node (no hand-kept list); names come from the same data.
 */
const regionNames = new Intl.DisplayNames(['en'], { type: 'region', fallback: 'none' });

// ICU knows some alpha-2 region codes that are not countries (EU, UN, pseudo-regions).
const NOT_COUNTRIES = new Set([
  'EU',
  'EZ',
  'UN',
  'QO',
  'XA',
  'XB',
  'ZZ',
  'AN',
  'BU',
  'CS',
  'DD',
  'FX',
  'NT',
  'SU',
  'TP',
  'YD',
  'YU',
  'ZR',
  'AC',
  'CP',
  'CQ',
  'DG',
  'EA',
  'IC',
  'TA',
  'DY',
  'HV',
  'NH',
  'RH',
  'UK',
  'VD',
]);

let cache: Map<string, string> | undefined;

/** Every ISO 3166-1 alpha-2 code known to ICU, with its English name. */
export function countries(): ReadonlyMap<string, string> {
  if (cache) return cache;
  const out = new Map<string, string>();
  for (let a = 65; a <= 90; a++) {
    for (let b = 65; b <= 90; b++) {
      const code = String.fromCharCode(a, b);
      if (NOT_COUNTRIES.has(code)) continue;
      const name = regionNames.of(code);
      if (name && name !== code) out.set(code, name);
    }
  }
  cache = out;
  return out;
}

export function isCountryCode(code: string): boolean {
  return countries().has(code);
}

export function countryName(code: string): string | undefined {
  return countries().get(code);
}

let byName: Map<string, string> | undefined;

/**
 * The alpha-2 code of a country given by its English name (as `countryName` writes it, any case)
 * or by its code; undefined when it names no country.
 */
export function countryCodeOf(nameOrCode: string): string | undefined {
  const key = nameOrCode.trim();
  if (isCountryCode(key.toUpperCase())) return key.toUpperCase();
  byName ??= new Map([...countries()].map(([code, name]) => [name.toLowerCase(), code]));
  return byName.get(key.toLowerCase());
}

/** How a stored country code is shown on the wire: its name; a value that is no code, as stored. */
export function countryLabel(code: string): string {
  return countryName(code) ?? code;
}

export const GEO_TYPES = ['country', 'market', 'global'] as const;
export type GeoType = (typeof GEO_TYPES)[number];

/** The one code a global (rest-of-world) toplist carries. */
export const GLOBAL_CODE = 'ROW';
export const MARKET_CODE = /^[A-Z][A-Z0-9_]{1,31}$/;

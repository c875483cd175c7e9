/**
 * Picking the variant of a geo family for a visitor. Compliance-relevant, so the rules are fixed
 * (not configurable) and fail closed:
 *
 *  1. exact country: the `country` row whose code is the visitor's country;
 *  2. else covering market: exactly one `market` row whose `coveredCountries` holds it; two or more
 *     is ambiguous and picks nothing (reported, never an arbitrary pick, no fall-through to global);
 *  3. else the `global` row;
 *  4. else nothing.
 *
 * An unknown visitor country (missing, malformed, or not an assigned ISO 3166-1 alpha-2 code, such as
 * `XX`, `T1` or `EU`) never matches a country or market row: it can only get the global row.
 */
import type { Toplist } from './types.ts';

// ISO 3166-1 alpha-2 plus XK (Kosovo): the codes the server accepts for country variants. Embedded
// rather than read from Intl so the result never depends on the runtime's ICU data; a test keeps it
// equal to the server's list.
const CODES =
  'AD AE AF AG AI AL AM AO AQ AR AS AT AU AW AX AZ BA BB BD BE BF BG BH BI BJ BL BM BN BO BQ BR BS BT BV ' +
  'BW BY BZ CA CC CD CF CG CH CI CK CL CM CN CO CR CU CV CW CX CY CZ DE DJ DK DM DO DZ EC EE EG EH ER ES ' +
  'ET FI FJ FK FM FO FR GA GB GD GE GF GG GH GI GL GM GN GP GQ GR GS GT GU GW GY HK HM HN HR HT HU ID IE ' +
  'IL IM IN IO IQ IR IS IT JE JM JO JP KE KG KH KI KM KN KP KR KW KY KZ LA LB LC LI LK LR LS LT LU LV LY ' +
  'MA MC MD ME MF MG MH MK ML MM MN MO MP MQ MR MS MT MU MV MW MX MY MZ NA NC NE NF NG NI NL NO NP NR NU ' +
  'NZ OM PA PE PF PG PH PK PL PM PN PR PS PT PW PY QA RE RO RS RU RW SA SB SC SD SE SG SH SI SJ SK SL SM ' +
  'SN SO SR SS ST SV SX SY SZ TC TD TF TG TH TJ TK TL TM TN TO TR TT TV TW TZ UA UG UM US UY UZ VA VC VE ' +
  'VG VI VN VU WF WS XK YE YT ZA ZM ZW';

/** The country codes a visitor may carry to match a country or market row. */
export const COUNTRY_CODES: ReadonlySet<string> = new Set(CODES.split(' '));

/** The visitor's code in canonical form (`' se '` → `SE`), or undefined when it names no known country. */
export function normalizeCountry(code: string | null | undefined): string | undefined {
  if (typeof code !== 'string') return undefined;
  const upper = code.trim().toUpperCase();
  return COUNTRY_CODES.has(upper) ? upper : undefined;
}

export type VisitorPick =
  | { match: 'country' | 'market' | 'global'; toplist: Toplist; reason?: 'unknown_country' }
  | {
      match: 'none';
      toplist: null;
      /**
       * `ambiguous`: several rows fit at one step (see `candidates`); `unknown_country`: the code names no
       * country and the family has no global row; `no_variant`: nothing fits a known country.
       */
      reason: 'ambiguous' | 'unknown_country' | 'no_variant';
      candidates: Toplist[];
    };

const none = (reason: 'ambiguous' | 'unknown_country' | 'no_variant', candidates: Toplist[] = []) =>
  ({ match: 'none', toplist: null, reason, candidates }) as const;

/**
 * The variant of one geo family to show a visitor from `countryCode` (e.g. a `CF-IPCountry` header).
 * Pass the whole family (`client.family(templateId)`); rows of several templates are refused.
 */
export function pickForVisitor(
  family: readonly Toplist[],
  countryCode: string | null | undefined,
): VisitorPick {
  const templates = new Set(family.map((t) => t.template.id));
  if (templates.size > 1) {
    throw new TypeError(`pickForVisitor takes one geo family; got templates ${[...templates].join(', ')}`);
  }
  const country = normalizeCountry(countryCode);
  // The server keeps one row per (template, geo); duplicates here mean the input was assembled wrongly,
  // so they are reported rather than resolved by order.
  const one = (rows: Toplist[]) => (rows.length === 1 ? rows[0]! : rows.length > 1 ? rows : undefined);

  if (country !== undefined) {
    const exact = one(family.filter((t) => t.geo.geo_type === 'country' && t.geo.code === country));
    if (Array.isArray(exact)) return none('ambiguous', exact);
    if (exact) return { match: 'country', toplist: exact };
    const markets = one(
      family.filter((t) => t.geo.geo_type === 'market' && t.geo.coveredCountries.includes(country)),
    );
    if (Array.isArray(markets)) return none('ambiguous', markets);
    if (markets) return { match: 'market', toplist: markets };
  }
  const global = one(family.filter((t) => t.geo.geo_type === 'global'));
  if (Array.isArray(global)) return none('ambiguous', global);
  if (global)
    return country === undefined
      ? { match: 'global', toplist: global, reason: 'unknown_country' }
      : { match: 'global', toplist: global };
  return none(country === undefined ? 'unknown_country' : 'no_variant');
}

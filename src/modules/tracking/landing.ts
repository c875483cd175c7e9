/** The macros a landing URL or a programme's parameter template may hold. */
export const MACROS = ['click_id', 'affiliate_id', 'site_id', 'toplist_id', 'position', 'sub_id'] as const;
export type MacroValues = Record<(typeof MACROS)[number], string>;

const MACRO = /\{([a-z_]+)\}/g;
/** A URL's scheme and authority (user, host, port). */
const ORIGIN = /^[^:/?#]*:\/\/[^/?#]*/;

/** The unknown `{macro}` names in a template (empty when every one is known). */
export function unknownMacros(template: string): string[] {
  return [...template.matchAll(MACRO)]
    .map((m) => m[1] as string)
    .filter((name) => !(MACROS as readonly string[]).includes(name));
}

function fill(template: string, values: MacroValues, encode: (v: string) => string): string {
  return template.replace(MACRO, (whole, name: string) =>
    name in values ? encode(values[name as keyof MacroValues]) : whole,
  );
}

/**
 * The URL a click is redirected to: the tracker's landing URL with its macros filled
 * (URL-encoded), plus the programme's query template, whose parameters replace same-named ones
 * of the landing URL (an operator reading a repeated parameter may take either). Only the stored
 * landing URL decides scheme and host, so no request parameter can steer the redirect. Undefined
 * when the result is not an absolute http(s) URL or a macro sits in the scheme, host or port.
 */
export function landingUrl(base: string, params: string, values: MacroValues): string | undefined {
  return landingWith(baseOrigins(base), base, params, values);
}

/**
 * What `landingUrl` decides from the landing URL alone: false when a macro sits in its scheme or
 * authority, true when it holds no macro, else the origins two different probe values give it.
 */
type BaseOrigins = boolean | readonly [string | undefined, string | undefined];

function baseOrigins(base: string): BaseOrigins {
  // A macro in the scheme or authority would let a value (a sub_id may hold dots) choose the host.
  if (ORIGIN.exec(base)?.[0].includes('{')) return false;
  if (!base.includes('{')) return true;
  const probe = (v: string) => URL.parse(base.replace(MACRO, v))?.origin;
  return [probe('a'), probe('b')];
}

function landingWith(
  origins: BaseOrigins,
  base: string,
  params: string,
  values: MacroValues,
): string | undefined {
  if (origins === false) return undefined;
  const url = build(base, params, values);
  // Special schemes take a host without `//` (`http:{sub_id}/x`): one the regex above cannot see,
  // so the origin must be the one both probes gave (no macro in it).
  if (url && origins !== true && (origins[0] !== url.origin || origins[1] !== url.origin)) return undefined;
  return url?.toString();
}

function build(base: string, params: string, values: MacroValues): URL | undefined {
  let url: URL;
  try {
    url = new URL(fill(base, values, encodeURIComponent));
  } catch {
    return undefined;
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return undefined;
  if (params) {
    const template = [...new URLSearchParams(params)];
    for (const [k] of template) url.searchParams.delete(k);
    for (const [k, v] of template) url.searchParams.append(k, fill(v, values, String));
  }
  return url;
}

/**
 * Values that every step of `landingUrl` leaves as they are (URL-encoding, the URL parser in a
 * path, query or fragment, form-encoding of the programme's parameters) and that cannot form a
 * `.` or `..` path segment: click ids (ULIDs) and most sub ids.
 */
const PLAIN = /^(?=.*[A-Za-z0-9])[A-Za-z0-9._-]+$/;

const LONE_PERCENT = /%(?![0-9A-Fa-f]{2})/;

/** A compiled URL: literal pieces, with 0 where the click id goes and 1 where the sub id goes. */
type Pieces = readonly (string | 0 | 1)[];

/** Two sentinels per compile, in `PLAIN`, unlikely in any template (checked anyway). */
function sentinels(): [string, string] {
  const r = () => Math.random().toString(36).slice(2, 12).padEnd(10, '0');
  return [`Zq${r()}Zc`, `Zq${r()}Zs`];
}

/**
 * The pieces of a template's URL, found by building it twice with different sentinels for the
 * click and sub id: null unless both builds give a URL and one turns into the other by swapping
 * the sentinels (a value lowercased in a host, or not in the URL the way it went in, fails that).
 * The programme's parameters need no such care: `URLSearchParams.append` encodes a value whole.
 */
export function compileLanding(
  base: string,
  params: string,
  fixed: FixedValues,
  withSubId: boolean,
): Pieces | null {
  // A `%` that is not an escape yet could become one with the value after it (`/%{sub_id}`, "2e").
  if (LONE_PERCENT.test(base)) return null;
  const [a, b] = [sentinels(), sentinels()];
  const at = (s: [string, string]) =>
    landingUrl(base, params, { ...fixed, click_id: s[0], sub_id: withSubId ? s[1] : '' });
  const [ua, ub] = [at(a), at(b)];
  if (ua === undefined || ub === undefined) return null;
  const pieces: (string | 0 | 1)[] = [];
  for (const [i, chunk] of ua.split(a[0]).entries()) {
    if (i) pieces.push(0);
    for (const [j, text] of chunk.split(a[1]).entries()) {
      if (j) pieces.push(1);
      if (text) pieces.push(text);
    }
  }
  return join(pieces, b[0], b[1]) === ub ? pieces : null;
}

function join(pieces: Pieces, clickId: string, subId: string): string {
  let out = '';
  for (const p of pieces) out += p === 0 ? clickId : p === 1 ? subId : p;
  return out;
}

/** The macro values a link fixes for all its clicks. */
export type FixedValues = Omit<MacroValues, 'click_id' | 'sub_id'>;

/**
 * `landingUrl` for one link, prepared once: a click with a plain click id and sub id gets its URL
 * by joining precomputed pieces (a URL parsed and serialised per click is a large share of a
 * redirect's work); any other value goes through `landingUrl` itself, so the result is the same.
 */
export class LandingTemplate {
  private readonly compiled: [Pieces | null | undefined, Pieces | null | undefined] = [undefined, undefined];
  /** `landingUrl`'s checks of the landing URL alone, made once for the clicks that take the long way. */
  private origins: BaseOrigins | undefined;

  constructor(
    private readonly base: string,
    private readonly params: string,
    private readonly fixed: FixedValues,
  ) {}

  /** The landing URL of one click, or undefined (see `landingUrl`). */
  url(clickId: string, subId: string): string | undefined {
    if (PLAIN.test(clickId) && (subId === '' || PLAIN.test(subId))) {
      const k = subId === '' ? 0 : 1;
      let pieces = this.compiled[k];
      if (pieces === undefined)
        pieces = this.compiled[k] = compileLanding(this.base, this.params, this.fixed, k === 1);
      if (pieces) return join(pieces, clickId, subId);
    }
    this.origins ??= baseOrigins(this.base);
    return landingWith(this.origins, this.base, this.params, {
      ...this.fixed,
      click_id: clickId,
      sub_id: subId,
    });
  }
}

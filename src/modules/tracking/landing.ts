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
 * of the landing URL (an operator reading a repeated parameter may take either). Only the stored landing URL decides
 * scheme and host, so no request parameter can steer the redirect. Undefined when the
 * result is not an absolute http(s) URL or the template has a macro before its path.
 */
export function landingUrl(base: string, params: string, values: MacroValues): string | undefined {
  // A macro in the scheme or host would let a value (a sub_id may hold dots) choose the host.
  if (ORIGIN.exec(base)?.[0].includes('{')) return undefined;
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
  return url.toString();
}

import { invalidField } from './errors.ts';

/**
 * URLs Podium stores and later serves (logos, landing pages, terms links) are kept as the WHATWG
 * URL parser writes them (`href`): what publishers' templates put into `src` and `href`
 * attributes then holds no raw `"`, `<`, `>` or space, and what does not parse is refused.
 */

/** A `{macro}` of a landing URL template (see tracking's landing.ts). */
const MACRO = /\{[a-z_]+\}/g;
/** A URL's scheme and authority (user, host, port). */
const ORIGIN = /^[^:/?#]*:\/\/[^/?#]*/;

function parsedHttp(field: string, raw: string): URL {
  const url = URL.parse(raw);
  if (!url) throw invalidField(field, 'is not a URL the WHATWG URL parser accepts');
  if (url.protocol !== 'http:' && url.protocol !== 'https:')
    throw invalidField(field, 'must start with http:// or https://');
  if (url.username || url.password)
    throw invalidField(
      field,
      'must not carry a user name or password (the browser would go to the host after the @)',
    );
  return url;
}

/** The stored form of an http(s) URL (its `href`), or a 422 naming `field`. */
export function storedUrl(field: string, raw: string): string {
  return parsedHttp(field, raw).href;
}

/**
 * The stored form of a landing URL template: macros stay as written (the parser would encode
 * their braces in a path), the rest as the parser writes it. A macro in the scheme, host or port
 * is refused, as is userinfo: the click would go nowhere, or somewhere else than it reads.
 */
export function storedUrlTemplate(field: string, raw: string): string {
  const noMacroThere = () =>
    invalidField(
      field,
      'must not hold a macro in its scheme, host or port (only in the path, query or fragment)',
    );
  if (ORIGIN.exec(raw)?.[0].includes('{')) throw noMacroThere();
  const macros: string[] = [];
  const stamp = `podiummacro${raw.length}x`;
  if (raw.toLowerCase().includes(stamp))
    throw invalidField(field, 'is not a URL the WHATWG URL parser accepts');
  const probe = raw.replace(MACRO, (m) => `${stamp}${macros.push(m) - 1}y`);
  const url = parsedHttp(field, probe);
  // Special schemes take a host without `//` (`http:{sub_id}/x`), which ORIGIN does not see.
  if (`${url.protocol}//${url.host}`.includes(stamp)) throw noMacroThere();
  return url.href.replace(new RegExp(`${stamp}(\\d+)y`, 'g'), (_m, i: string) => macros[Number(i)]!);
}

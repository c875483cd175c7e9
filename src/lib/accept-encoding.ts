/**
 * Whether an `Accept-Encoding` header accepts gzip (RFC 9110 §12.5.3): `gzip` or `x-gzip` with a
 * q-value above 0, else `*` above 0. Clients send the same header on every request, so the last
 * answer is kept and a repeat costs one string comparison.
 */
export function acceptsGzip(header: string | undefined): boolean {
  if (!header) return false;
  if (header === last.header) return last.gzip;
  const gzip = parse(header);
  last = { header, gzip };
  return gzip;
}

let last = { header: '', gzip: false };

/** The longest header looked at: a longer one is refused whole (no client sends one). */
const MAX_HEADER = 1024;

function parse(header: string): boolean {
  if (header.length > MAX_HEADER) return false;
  let star: number | undefined;
  for (const item of header.split(',')) {
    const [coding = '', ...params] = item.split(';');
    const name = coding.trim().toLowerCase();
    let q = 1;
    for (const param of params) {
      const m = /^\s*q\s*=\s*([01](?:\.\d{0,3})?)\s*$/i.exec(param);
      if (m) q = Number(m[1]);
    }
    if (name === 'gzip' || name === 'x-gzip') return q > 0;
    if (name === '*') star = q;
  }
  return star !== undefined && star > 0;
}

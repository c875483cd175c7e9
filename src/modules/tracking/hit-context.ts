import type { IncomingHttpHeaders } from 'node:http';
import type { HitContext } from './service.ts';

const header = (headers: IncomingHttpHeaders, name: string): string | undefined => {
  const v = headers[name];
  return typeof v === 'string' ? v : undefined;
};

/**
 * What a /go or /imp request tells about its visitor: user agent, referrer, the country from the
 * trusted edge header (`countryHeader`), and whether the browser only prefetches.
 */
export function hitContext(
  req: { method?: string | undefined; headers: IncomingHttpHeaders },
  countryHeader: string,
  subId?: string,
): HitContext {
  const { headers } = req;
  const country = header(headers, countryHeader)?.trim().toUpperCase();
  const purpose = `${header(headers, 'sec-purpose') ?? ''} ${header(headers, 'purpose') ?? ''} ${header(headers, 'x-moz') ?? ''}`;
  return {
    method: req.method ?? 'GET',
    userAgent: header(headers, 'user-agent'),
    referrer: header(headers, 'referer'),
    // Only a well-formed code from the trusted edge header; XX means "unknown" to Cloudflare.
    country: country && /^[A-Z]{2}$/.test(country) && country !== 'XX' ? country : undefined,
    prefetch: /prefetch|prerender/i.test(purpose),
    subId,
  };
}

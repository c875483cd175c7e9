/**
 * The toplist API client: single toplists, pages, and whole geo families walked page by page with a
 * consistency check. Runs on the global `fetch` (Node 20+, browsers, edge runtimes).
 */
import { memoryCache, type ResponseCache } from './cache.ts';
import { PodiumTransportError, PodiumWalkError } from './errors.ts';
import { type RetryInfo, Transport } from './transport.ts';
import type { GeoType, Toplist, ToplistPage } from './types.ts';

export interface ClientOptions {
  /**
   * The service root, e.g. `https://podium.example` (a path prefix is kept). A base that already ends
   * in `/api/v1` is accepted too. Plain `http:` is refused except to loopback, so the token never
   * crosses a network in clear text (`allowInsecureHttp` overrides this for private networks).
   */
  baseUrl: string;
  /** The site's read token (`pds_…`). Sent only in the `Authorization` header, never in a URL or an error. */
  token: string;
  /** A `fetch` implementation; defaults to the global one. */
  fetch?: (input: string, init: RequestInit) => Promise<Response>;
  /** Per attempt, covering the response body too. Default 10 000. */
  timeoutMs?: number;
  /** Retries after the first attempt for 5xx, 429, timeouts and network errors. Default 2, at most 10. */
  retries?: number;
  /** Backoff base when the server gives no `Retry-After`: attempt n waits about base × 2ⁿ. Default 500. */
  retryBaseMs?: number;
  /** A `Retry-After` longer than this is not waited out: the error is thrown at once. Default 30 000. */
  maxRetryAfterMs?: number;
  /** Bodies larger than this fail with `response_too_large`. Default 32 MiB. */
  maxResponseBytes?: number;
  /** Where bodies are kept for `If-None-Match` revalidation. Default: `memoryCache()`; `false` disables. */
  cache?: ResponseCache | false;
  /** Called before each retry (for logging or metrics). */
  onRetry?: (info: RetryInfo) => void;
  /** Allow `http:` to a non-loopback host. */
  allowInsecureHttp?: boolean;
}

export interface ListParams {
  /** The whole geo family of one template. */
  template_id?: number;
  /** With `geo_code`: one country, market or global variant. */
  geo_type?: GeoType;
  geo_code?: string;
  page?: number;
  /** 1 to 100; the server's default is 15. */
  per_page?: number;
}

export interface CallOptions {
  signal?: AbortSignal;
}

export interface WalkOptions extends CallOptions {
  /** Page size used for the walk, 1 to 100. Default 100. */
  perPage?: number;
  /** The walk refuses sets needing more pages than this. Default 50 (5 000 toplists at 100 a page). */
  maxPages?: number;
}

export interface ToplistClient {
  /** One page of `GET /api/v1/toplists`. */
  list(params?: ListParams, options?: CallOptions): Promise<ToplistPage>;
  /** `GET /api/v1/toplists/by-slug/{slug}`; a missing toplist throws `PodiumApiError` with code `not_found`. */
  bySlug(slug: string, options?: CallOptions): Promise<Toplist>;
  /** `GET /api/v1/toplists/{id}`; a missing toplist throws `PodiumApiError` with code `not_found`. */
  byId(id: number, options?: CallOptions): Promise<Toplist>;
  /** Every toplist matching `params`, walking all pages; throws `PodiumWalkError` if the set changes meanwhile. */
  fetchAll(params?: Omit<ListParams, 'page' | 'per_page'>, options?: WalkOptions): Promise<Toplist[]>;
  /** The whole geo family of a template (every country, market and global variant). */
  family(templateId: number, options?: WalkOptions): Promise<Toplist[]>;
  /**
   * `GET /api/v1/toplists/resolve`: the one variant of a template's family a visitor from `country`
   * gets, picked by the server with the same cascade as `pickForVisitor` (one request per page view).
   * A missing or malformed code is sent as `XX` (unknown: only the global variant). No variant throws
   * `PodiumApiError` `not_found` with `details.reason` `ambiguous`, `no_variant` or `unknown_country`.
   */
  resolve(templateId: number, country: string | null | undefined, options?: CallOptions): Promise<Toplist>;
}

const LOOPBACK = /^(localhost|127(\.[0-9]{1,3}){3}|\[::1\])$/i;

function positiveInt(name: string, value: unknown, max = Number.MAX_SAFE_INTEGER): number {
  if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < 1 || value > max) {
    throw new RangeError(`${name} must be an integer from 1 to ${max}`);
  }
  return value;
}

function apiRoot(baseUrl: string, allowInsecureHttp: boolean): string {
  let url: URL;
  try {
    url = new URL(baseUrl);
  } catch {
    throw new TypeError('baseUrl must be an absolute http(s) URL');
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') throw new TypeError('baseUrl must be http(s)');
  if (url.protocol === 'http:' && !allowInsecureHttp && !LOOPBACK.test(url.hostname)) {
    throw new TypeError('baseUrl must be https (plain http would expose the token); see allowInsecureHttp');
  }
  if (url.username || url.password || url.search || url.hash) {
    throw new TypeError('baseUrl must not carry credentials, a query or a fragment');
  }
  const path = url.pathname.replace(/\/+$/, '').replace(/\/api\/v1$/, '');
  return `${url.origin}${path}/api/v1`;
}

const isObject = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v);

const invalid = (what: string) => new PodiumTransportError('invalid_response', `malformed response: ${what}`);

// Structural checks of what the client itself relies on (full validation is the server's contract test).
function checkToplist(t: unknown): Toplist {
  if (
    !isObject(t) ||
    !Number.isSafeInteger(t.id) ||
    !isObject(t.geo) ||
    typeof t.geo.geo_type !== 'string' ||
    typeof t.geo.code !== 'string' ||
    (t.geo.geo_type === 'market' && !Array.isArray(t.geo.coveredCountries)) ||
    !isObject(t.template) ||
    !Number.isSafeInteger(t.template.id) ||
    !Array.isArray(t.items)
  ) {
    throw invalid('toplist lacks id, geo, template or items');
  }
  return t as unknown as Toplist;
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    throw invalid('body is not JSON');
  }
}

function parseSingle(text: string): Toplist {
  const body = parseJson(text);
  if (!isObject(body)) throw invalid('expected {data}');
  return checkToplist(body.data);
}

function parsePage(text: string): ToplistPage {
  const body = parseJson(text);
  if (!isObject(body) || !Array.isArray(body.data) || !isObject(body.meta) || !isObject(body.links)) {
    throw invalid('expected {data, links, meta}');
  }
  const { meta, links } = body;
  for (const k of ['current_page', 'per_page', 'total', 'last_page'] as const) {
    if (!Number.isSafeInteger(meta[k]) || (meta[k] as number) < 0) throw invalid(`meta.${k}`);
  }
  if (links.next !== null && typeof links.next !== 'string') throw invalid('links.next');
  if (body.data.length > (meta.per_page as number)) throw invalid('more rows than per_page');
  body.data.forEach(checkToplist);
  return body as unknown as ToplistPage;
}

function query(params: ListParams): string {
  const q = new URLSearchParams();
  if (params.template_id !== undefined)
    q.set('template_id', String(positiveInt('template_id', params.template_id)));
  if ((params.geo_type === undefined) !== (params.geo_code === undefined)) {
    throw new TypeError('geo_type and geo_code must be given together');
  }
  if (params.geo_type !== undefined) {
    q.set('geo_type', params.geo_type);
    q.set('geo_code', String(params.geo_code));
  }
  if (params.page !== undefined) q.set('page', String(positiveInt('page', params.page, 1_000_000)));
  if (params.per_page !== undefined) q.set('per_page', String(positiveInt('per_page', params.per_page, 100)));
  const s = q.toString();
  return s ? `?${s}` : '';
}

/** A client for one site's token. */
export function createClient(options: ClientOptions): ToplistClient {
  const { token } = options;
  // Printable ASCII only: a token with CR/LF or spaces would corrupt the header, and fetch's own error
  // for it could echo the value.
  if (typeof token !== 'string' || !/^[\x21-\x7e]{1,512}$/.test(token)) {
    throw new TypeError('token must be a non-empty string of printable ASCII without spaces');
  }
  const cache = options.cache === false ? undefined : (options.cache ?? memoryCache());
  const transport = new Transport({
    root: apiRoot(options.baseUrl, options.allowInsecureHttp === true),
    token,
    fetch: options.fetch ?? ((input, init) => globalThis.fetch(input, init)),
    timeoutMs: positiveInt('timeoutMs', options.timeoutMs ?? 10_000, 600_000),
    retries: options.retries === 0 ? 0 : positiveInt('retries', options.retries ?? 2, 10),
    retryBaseMs: positiveInt('retryBaseMs', options.retryBaseMs ?? 500, 60_000),
    maxRetryAfterMs:
      options.maxRetryAfterMs === 0 ? 0 : positiveInt('maxRetryAfterMs', options.maxRetryAfterMs ?? 30_000),
    maxResponseBytes: positiveInt('maxResponseBytes', options.maxResponseBytes ?? 32 * 1024 * 1024),
    cache,
    onRetry: options.onRetry,
  });

  // Async throughout, so a bad argument rejects like any other failure instead of throwing synchronously.
  const list = async (params: ListParams = {}, o: CallOptions = {}) =>
    transport.get(`/toplists${query(params)}`, parsePage, o.signal);

  const fetchAll = async (params: Omit<ListParams, 'page' | 'per_page'> = {}, o: WalkOptions = {}) => {
    const perPage = positiveInt('perPage', o.perPage ?? 100, 100);
    const maxPages = positiveInt('maxPages', o.maxPages ?? 50, 10_000);
    const seen = new Map<number, Toplist>();
    let first: ToplistPage['meta'] | undefined;
    for (let page = 1; ; page++) {
      const p = await list({ ...params, page, per_page: perPage }, o);
      const m = p.meta;
      if (m.current_page !== page) throw invalid(`asked for page ${page}, got ${m.current_page}`);
      if (!first) {
        first = m;
        // Refuse up front rather than return a family with members silently missing.
        if (m.last_page > maxPages) {
          throw new PodiumWalkError(
            'page_cap_exceeded',
            `${m.total} toplists need ${m.last_page} pages of ${perPage}; the cap is ${maxPages}`,
          );
        }
      } else if (m.total !== first.total || m.last_page !== first.last_page) {
        throw new PodiumWalkError(
          'family_changed',
          `the set changed during the walk (total ${first.total} → ${m.total})`,
        );
      }
      for (const t of p.data) {
        // A row seen twice means a publish reordered the set between pages: another one was skipped.
        if (seen.has(t.id))
          throw new PodiumWalkError('family_changed', `toplist ${t.id} moved during the walk`);
        seen.set(t.id, t);
      }
      if (p.links.next === null || m.current_page >= m.last_page) break;
      if (page >= maxPages) throw new PodiumWalkError('page_cap_exceeded', `more than ${maxPages} pages`);
    }
    if (seen.size !== first.total) {
      throw new PodiumWalkError(
        'family_changed',
        `walk collected ${seen.size} toplists, the server counts ${first.total}`,
      );
    }
    return [...seen.values()];
  };

  return {
    list,
    async bySlug(slug, o = {}) {
      if (typeof slug !== 'string' || slug.length === 0 || slug.length > 1000) {
        throw new TypeError('slug must be a non-empty string');
      }
      return transport.get(`/toplists/by-slug/${encodeURIComponent(slug)}`, parseSingle, o.signal);
    },
    async byId(id, o = {}) {
      return transport.get(`/toplists/${positiveInt('id', id, 2_147_483_647)}`, parseSingle, o.signal);
    },
    fetchAll,
    async family(templateId, o = {}) {
      return fetchAll({ template_id: positiveInt('templateId', templateId) }, o);
    },
    async resolve(templateId, country, o = {}) {
      const code =
        typeof country === 'string' && /^[A-Za-z0-9]{2}$/.test(country.trim()) ? country.trim() : 'XX';
      const q = new URLSearchParams({
        template_id: String(positiveInt('templateId', templateId, 2_147_483_647)),
        country: code.toUpperCase(),
      });
      return transport.get(`/toplists/resolve?${q}`, parseSingle, o.signal);
    },
  };
}

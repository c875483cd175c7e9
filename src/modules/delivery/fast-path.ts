import type { IncomingMessage, ServerResponse } from 'node:http';
// Node's global `performance` is a getter: optimised code calls it through an inline-cache stub on
// every read (~1 % of a by-slug response's CPU in a perf profile); the import is a plain binding.
import { performance } from 'node:perf_hooks';
import type { FastifyBaseLogger } from 'fastify';
import { endWithParts, lengthOf } from '../../lib/buffer-parts.ts';
import { DEFAULT_PER_PAGE } from '../../lib/paging.ts';
import { parseBearer } from '../../lib/tokens.ts';
import type { SitePrincipal } from '../../plugins/auth.ts';
import { logRequest, requestId } from '../../plugins/request-log.ts';
import type { Metrics } from '../ops/metrics.ts';
import { CACHE_HEADERS, etagMatches, gzipBody, JSON_TYPE, TOPLIST_ID } from './routes.ts';
import { ListQuerySchema, ResolveQuerySchema } from './schemas.ts';
import type { DeliveryService, NoVariant, Rendered } from './service.ts';

/** The route patterns the fast path answers, as the Fastify routes name them in logs and metrics. */
export const BY_SLUG_ROUTE = '/api/v1/toplists/by-slug/:slug';
export const BY_ID_ROUTE = '/api/v1/toplists/:id';
export const RESOLVE_ROUTE = '/api/v1/toplists/resolve';
export const LIST_ROUTE = '/api/v1/toplists';
export const BRANDS_ROUTE = '/api/v1/brands';
const PREFIX = '/api/v1/';
const TOPLISTS = 'toplists';
const BRANDS = 'brands';
const SLUG_PREFIX = 'by-slug/';
const RESOLVE_PREFIX = 'resolve?';
/** Slugs that need no percent-decoding and fit Fastify's `maxParamLength` (200). */
const PLAIN_SLUG = /^[A-Za-z0-9][A-Za-z0-9._-]{0,199}$/;
/** The resolve query in its two plain spellings (the route's schema, no other parameter, no encoding). */
const RESOLVE_QUERY = /^template_id=([1-9][0-9]{0,9})&country=([A-Za-z0-9]{2})$/;
const RESOLVE_QUERY_COUNTRY_FIRST = /^country=([A-Za-z0-9]{2})&template_id=([1-9][0-9]{0,9})$/;
/** The route's largest template id (a database integer), as its query schema says. */
const MAX_TEMPLATE_ID = ResolveQuerySchema.properties.template_id.maximum!;
/** A list query of `page` and `per_page` alone, each at most once, in plain digits (either order). */
const LIST_QUERY = /^(?:(page|per_page)=([1-9][0-9]{0,6})(?:&(page|per_page)=([1-9][0-9]{0,6}))?)?$/;
/** The list route's largest page and page size, as its query schema says. */
const MAX_PAGE = ListQuerySchema.properties.page.maximum!;
const MAX_PER_PAGE = ListQuerySchema.properties.per_page.maximum!;
/** The route's cache headers as writeHead's flat name/value list. */
const CACHE_HEADER_LIST = Object.entries(CACHE_HEADERS).flat();

/** What every fast path needs besides its own service. */
export interface FastPathBase {
  metrics: Metrics;
  counts: FastPathCounts;
  log: FastifyBaseLogger;
  /** True once the app is closing: Fastify then answers 503 itself. */
  closing: () => boolean;
}

/** Site tokens as the fast path checks them: from memory when it can, else by a lookup. */
export interface SiteTokens {
  verifySite(token: string): Promise<SitePrincipal | null>;
  /**
   * The site of a request's Authorization header on a connection when it is in memory, undefined
   * when only `verifySite` can tell.
   */
  knownSiteOn(connection: object, authorization: string): SitePrincipal | null | undefined;
}

/** A geo family and a visitor's country, as `GET /toplists/resolve` names a toplist. */
interface ResolveKey {
  templateId: number;
  country: string;
}

/**
 * A page of the site's toplists or of their brands, as `GET /toplists?page=…&per_page=…` and
 * `GET /brands?page=…&per_page=…` name it.
 */
interface ListKey {
  of: typeof TOPLISTS | typeof BRANDS;
  page: number;
  perPage: number;
}

/**
 * What a request names: a toplist by slug (a string) or id (a number), a family's variant, or a
 * page of the list or of the brands.
 */
type Key = string | number | ResolveKey | ListKey;

/** What the rest of a path after PREFIX names in a form the fast path takes, else undefined. */
function keyOf(afterPrefix: string): Key | undefined {
  if (afterPrefix.startsWith(BRANDS)) return pageKeyOf(BRANDS, afterPrefix.slice(BRANDS.length));
  if (!afterPrefix.startsWith(TOPLISTS)) return undefined;
  return toplistKeyOf(afterPrefix.slice(TOPLISTS.length));
}

/** The page a listing's path names after its own name (nothing, or `?` and its query), else undefined. */
function pageKeyOf(of: ListKey['of'], rest: string): ListKey | undefined {
  return rest === '' || rest.startsWith('?') ? listKeyOf(of, rest.slice(1)) : undefined;
}

/** What the rest of a path after `/api/v1/toplists` names, else undefined. */
function toplistKeyOf(afterPrefix: string): Key | undefined {
  if (afterPrefix === '' || afterPrefix.startsWith('?')) return pageKeyOf(TOPLISTS, afterPrefix);
  if (!afterPrefix.startsWith('/')) return undefined;
  const rest = afterPrefix.slice(1);
  if (rest.startsWith(SLUG_PREFIX)) {
    const slug = rest.slice(SLUG_PREFIX.length);
    return PLAIN_SLUG.test(slug) ? slug : undefined;
  }
  if (TOPLIST_ID.test(rest)) return Number(rest);
  if (!rest.startsWith(RESOLVE_PREFIX)) return undefined;
  const query = rest.slice(RESOLVE_PREFIX.length);
  const m = RESOLVE_QUERY.exec(query);
  const swapped = m ? null : RESOLVE_QUERY_COUNTRY_FIRST.exec(query);
  if (!m && !swapped) return undefined;
  const templateId = Number(m ? m[1] : swapped![2]);
  return templateId <= MAX_TEMPLATE_ID ? { templateId, country: m ? m[2]! : swapped![1]! } : undefined;
}

/** The list page a query names (no other parameter, none twice, within the schema's bounds). */
function listKeyOf(of: ListKey['of'], query: string): ListKey | undefined {
  const m = LIST_QUERY.exec(query);
  if (!m || (m[3] !== undefined && m[3] === m[1])) return undefined;
  const key = { of, page: 1, perPage: DEFAULT_PER_PAGE };
  for (const [name, value] of [
    [m[1], m[2]],
    [m[3], m[4]],
  ]) {
    if (name === 'page') key.page = Number(value);
    else if (name === 'per_page') key.perPage = Number(value);
  }
  return key.page <= MAX_PAGE && key.perPage <= MAX_PER_PAGE ? key : undefined;
}

/**
 * How the fast path answers one kind of key: from memory when the site's set is loaded (`known`),
 * else after loading it (`load`), and the Fastify route's pattern its logs and metrics carry.
 */
interface Kind<K extends Key> {
  route: string;
  known(delivery: DeliveryService, siteId: number, key: K): Rendered | undefined;
  load(delivery: DeliveryService, siteId: number, key: K): Promise<Rendered | NoVariant | undefined>;
}

const BY_SLUG: Kind<string> = {
  route: BY_SLUG_ROUTE,
  known: (delivery, siteId, slug) => delivery.known(siteId, slug),
  load: (delivery, siteId, slug) => delivery.bySlug(siteId, slug),
};
const BY_ID: Kind<number> = {
  route: BY_ID_ROUTE,
  known: (delivery, siteId, id) => delivery.known(siteId, id),
  load: (delivery, siteId, id) => delivery.byId(siteId, id),
};
const RESOLVE: Kind<ResolveKey> = {
  route: RESOLVE_ROUTE,
  known: (delivery, siteId, k) => delivery.knownResolve(siteId, k.templateId, k.country),
  load: (delivery, siteId, k) => delivery.resolve(siteId, k.templateId, k.country),
};
const LIST_PAGE: Kind<ListKey> = {
  route: LIST_ROUTE,
  known: (delivery, siteId, page) => delivery.knownList(siteId, page),
  load: (delivery, siteId, page) => delivery.list(siteId, page),
};
const BRAND_PAGE: Kind<ListKey> = {
  route: BRANDS_ROUTE,
  known: (delivery, siteId, page) => delivery.knownBrands(siteId, page),
  load: (delivery, siteId, page) => delivery.brands(siteId, page),
};

/**
 * The kind of a key, the one place the fast path tells them apart (the key itself stays a plain
 * string or number for the commonest requests: nothing allocated per request).
 */
const kindOf = (key: Key): Kind<Key> =>
  (typeof key === 'string'
    ? BY_SLUG
    : typeof key === 'number'
      ? BY_ID
      : 'perPage' in key
        ? key.of === BRANDS
          ? BRAND_PAGE
          : LIST_PAGE
        : RESOLVE) as Kind<Key>;

export interface FastPathDeps extends FastPathBase {
  tokens: SiteTokens;
  delivery: DeliveryService;
}

/** True when a fast path may look at the request: a GET under `prefix` while the app is open. */
export function mayAnswer(
  req: IncomingMessage,
  prefix: string,
  deps: FastPathBase,
): req is IncomingMessage & { url: string } {
  return req.method === 'GET' && req.url !== undefined && req.url.startsWith(prefix) && !deps.closing();
}

/** Answers the request, or calls `fallback` (Fastify's handler) to do it. */
export type FastPath = (req: IncomingMessage, res: ServerResponse, fallback: () => void) => void;

/** Requests a fast path answered, and those it handed to Fastify after a look-up. */
export interface FastPathCounts {
  served: number;
  handedOver: number;
}

/** The counters every fast path (toplists by slug, id, resolve or list page, brand pages, /go and /imp) adds to, exported as metrics. */
export function fastPathCounts(metrics: Metrics): FastPathCounts {
  const counts: FastPathCounts = { served: 0, handedOver: 0 };
  metrics.counterFrom(
    'podium_http_fast_path_served_total',
    'Toplist requests (by slug, id, resolve, a list page or a brand page), /go clicks and /imp impressions answered by their fast path (the rest by the Fastify route)',
    () => counts.served,
  );
  metrics.counterFrom(
    'podium_http_fast_path_handed_over_total',
    'Requests a fast path looked up and then left to the Fastify route (unknown token, slug or link, errors)',
    () => counts.handedOver,
  );
  return counts;
}

/**
 * `GET /api/v1/toplists/by-slug/{slug}`, `/api/v1/toplists/{id}`,
 * `/api/v1/toplists/resolve?template_id=…&country=…`, `/api/v1/toplists?page=…&per_page=…` and
 * `/api/v1/brands?page=…&per_page=…`, the API's hottest requests (every page view of a
 * publisher's site, resolve for sites that pick a geo family's variant per visitor, the list and
 * brand pages a sync client walks), answered without Fastify's routing, hook chain and reply
 * machinery in their plain case: no query string (resolve: its two parameters alone, unencoded;
 * the list and the brands: `page` and `per_page` alone, in plain digits), a live site token, a
 * live toplist (resolve: a variant picked). Everything else — another query string, HEAD, a
 * missing or unknown token, an unknown slug, a family with no variant for the visitor, a closing
 * server, an error — goes to Fastify untouched, so every error and edge case has one
 * implementation. The answer keeps what
 * the route does: the same bytes and headers (ETag, 304 on If-None-Match, cache headers), the
 * request id, the per-request log line and the metrics (test/fast-path.test.ts compares both
 * paths). Fastify's share was ~30 % of this request's CPU.
 */
export function toplistFastPath(deps: FastPathDeps): FastPath {
  const { tokens, delivery, metrics, log, counts } = deps;
  return (req, res, fallback) => {
    if (!mayAnswer(req, PREFIX, deps)) return fallback();
    const key = keyOf(req.url.slice(PREFIX.length));
    if (key === undefined) return fallback();
    const authorization = req.headers.authorization;
    if (authorization === undefined) return fallback();
    const kind = kindOf(key);
    const started = performance.now();
    // Fastify takes over whatever this did not answer (nothing has been written then).
    const handOver = () => {
      if (res.headersSent) return;
      counts.handedOver++;
      fallback();
    };
    // The common case, a known token and a loaded site, is answered here and now: no promise,
    // no microtask.
    // A throw here would leave the server's request listener (and end the process): building a
    // page (the first brand page of a window parses every toplist) is inside the try too.
    try {
      const known = tokens.knownSiteOn(req.socket, authorization);
      const found = known ? kind.known(delivery, known.siteId, key) : undefined;
      if (known && found) {
        respond(req, res, known, kind.route, found, started);
        return;
      }
    } catch (err) {
      log.error({ err }, 'toplist fast path: answering failed');
      handOver();
      return;
    }
    const token = parseBearer(authorization);
    if (!token) return fallback();
    lookUp(req, res, token, kind, key, started).then((done) => done || handOver(), handOver);
  };

  async function lookUp(
    req: IncomingMessage,
    res: ServerResponse,
    token: string,
    kind: Kind<Key>,
    key: Key,
    started: number,
  ): Promise<boolean> {
    const site = await tokens.verifySite(token);
    if (!site) return false;
    const found = await kind.load(delivery, site.siteId, key);
    // No variant for the visitor: the route's 404 says why.
    if (!found || 'reason' in found) return false;
    respond(req, res, site, kind.route, found, started);
    return true;
  }

  function respond(
    req: IncomingMessage,
    res: ServerResponse,
    site: SitePrincipal,
    route: string,
    found: Rendered,
    started: number,
  ): void {
    const gzip = gzipBody(found, req.headers['accept-encoding']);
    // A single toplist is one buffer; a page of the list its toplists' buffers, written as they are.
    const body = gzip ?? found.body;
    const id = requestId(req);
    // One list to writeHead: setHeader per header stored and checked each twice over.
    const head = ['x-request-id', id, 'etag', gzip ? `W/${found.etag}` : found.etag, ...CACHE_HEADER_LIST];
    let status = 200;
    if (etagMatches(req.headers['if-none-match'] as string | undefined, found.etag)) {
      status = 304;
      res.writeHead(304, head);
      res.end();
    } else {
      head.push('content-type', JSON_TYPE);
      if (gzip) head.push('content-encoding', 'gzip');
      if (Buffer.isBuffer(body)) {
        head.push('content-length', String(body.length));
        res.writeHead(200, head);
        res.end(body);
      } else {
        head.push('content-length', String(lengthOf(body)));
        res.writeHead(200, head);
        endWithParts(res, body);
      }
    }
    counts.served++;
    const ms = performance.now() - started;
    metrics.observeHttp('GET', route, status, ms / 1000);
    logRequest(log, { reqId: id, method: 'GET', route, status, ms, siteId: site.siteId });
  }
}

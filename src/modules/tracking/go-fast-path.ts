import type { IncomingMessage, ServerResponse } from 'node:http';
// Node's global `performance` is a getter: optimised code calls it through an inline-cache stub on
// every read (~1 % of a by-slug response's CPU in a perf profile); the import is a plain binding.
import { performance } from 'node:perf_hooks';
import { logRequest, requestId } from '../../plugins/request-log.ts';
import { type FastPath, type FastPathBase, mayAnswer } from '../delivery/fast-path.ts';
import { hitContext } from './hit-context.ts';
import { PIXEL, PIXEL_HEADERS, REDIRECT_HEADERS } from './routes.ts';
import type { TrackingService } from './service.ts';

/** The route patterns the fast paths answer, as the Fastify routes name them in logs and metrics. */
export const GO_ROUTE = '/go/:slug';
export const IMP_ROUTE = '/imp/:slug';
const PREFIX = '/go/';
const IMP_PREFIX = '/imp/';
/** Slugs that need no percent-decoding and fit the route's schema (link slugs are base64url). */
const PLAIN_SLUG = /^[A-Za-z0-9_-][A-Za-z0-9._-]{0,119}$/;
/** The one query string the fast path takes: a `sub_id` the route's schema accepts. */
const SUB_ID_QUERY = /^sub_id=([A-Za-z0-9._~-]{0,100})$/;
/** The route's redirect headers and an empty body, as writeHead's flat name/value list. */
const HEADERS_AFTER_LOCATION = [...Object.entries(REDIRECT_HEADERS).flat(), 'content-length', '0'];
/** The pixel route's headers, as writeHead's flat name/value list. */
const PIXEL_HEADER_LIST = [...Object.entries(PIXEL_HEADERS).flat(), 'content-length', String(PIXEL.length)];

export interface GoFastPathDeps extends FastPathBase {
  tracking: TrackingService;
  countryHeader: string;
}

/**
 * `GET /go/{slug}`, every outbound click of a publisher's site, answered without Fastify's
 * routing, hook chain and reply machinery in its plain case: a plain slug, no query string or
 * only `sub_id`, a known link. The click is recorded exactly as the route records it (durable
 * before the 302) and the answer carries the route's headers, request id, log line and metrics.
 * Everything else — HEAD, another query, an unknown link (the route's 404 page or body), a full
 * click buffer, a closing server — goes to Fastify untouched: a click that was not recorded has
 * no row, so the route recording it again counts it once (test/fast-path.test.ts compares both).
 */
export function goFastPath(deps: GoFastPathDeps): FastPath {
  const { tracking, countryHeader } = deps;
  return (req, res, fallback) => {
    if (!mayAnswer(req, PREFIX, deps)) return fallback();
    const url = req.url;
    const q = url.indexOf('?');
    const slug = url.slice(PREFIX.length, q < 0 ? undefined : q);
    let subId: string | undefined;
    if (q >= 0) {
      const m = SUB_ID_QUERY.exec(url.slice(q + 1));
      if (!m) return fallback();
      subId = m[1] || undefined;
    }
    if (!PLAIN_SLUG.test(slug)) return fallback();
    const started = performance.now();
    answerOnceRecorded(
      deps,
      req,
      res,
      fallback,
      started,
      tracking.click(slug, hitContext(req, countryHeader, subId)),
      GO_ANSWER,
    );
  };
}

/**
 * `GET /imp/{code}`, the impression pixel of every banner view, answered like `/go` without
 * Fastify in its plain case: a plain code and no query string (the route takes none). The
 * impression is durable before the pixel is sent; an unknown code, a full buffer or a closing
 * server goes to the route untouched (an impression not recorded has no row, so the route
 * records it once).
 */
export function impFastPath(deps: GoFastPathDeps): FastPath {
  const { tracking, countryHeader } = deps;
  return (req, res, fallback) => {
    if (!mayAnswer(req, IMP_PREFIX, deps)) return fallback();
    const code = req.url.slice(IMP_PREFIX.length);
    if (!PLAIN_SLUG.test(code)) return fallback();
    const started = performance.now();
    answerOnceRecorded(
      deps,
      req,
      res,
      fallback,
      started,
      tracking.impression(code, hitContext(req, countryHeader)),
      IMP_ANSWER,
    );
  };
}

/** What a fast path answers once its hit is recorded: the headers after the request id follow the record. */
interface HitAnswer<T> {
  route: string;
  status: number;
  headers: (recorded: T) => string[];
  body?: Buffer;
}

// One list to writeHead: setHeader per header stored and checked each twice over.
const GO_ANSWER: HitAnswer<string> = {
  route: GO_ROUTE,
  status: 302,
  headers: (location) => ['location', location, ...HEADERS_AFTER_LOCATION],
};
const IMP_ANSWER: HitAnswer<void> = {
  route: IMP_ROUTE,
  status: 200,
  headers: () => PIXEL_HEADER_LIST,
  body: PIXEL,
};

/**
 * Answers once `recorded` settles: with the route's answer, its log line and metrics when the hit
 * is recorded; by handing the request to the route when it is not (no row, so the route records
 * it once). If answering a recorded hit throws, the route must not take over (it would record the
 * hit a second time): the error is logged and the connection closed.
 */
function answerOnceRecorded<T>(
  deps: GoFastPathDeps,
  req: IncomingMessage,
  res: ServerResponse,
  fallback: () => void,
  started: number,
  recorded: Promise<T>,
  answer: HitAnswer<T>,
): void {
  const { metrics, counts, log } = deps;
  recorded.then(
    (value) => {
      try {
        const id = requestId(req);
        res.writeHead(answer.status, ['x-request-id', id, ...answer.headers(value)]);
        res.end(answer.body);
        counts.served++;
        const ms = performance.now() - started;
        metrics.observeHttp('GET', answer.route, answer.status, ms / 1000);
        logRequest(log, { reqId: id, method: 'GET', route: answer.route, status: answer.status, ms });
      } catch (err) {
        log.error({ err }, 'fast path: answering a recorded hit failed');
        res.destroy();
      }
    },
    () => {
      counts.handedOver++;
      fallback();
    },
  );
}

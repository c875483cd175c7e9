import rateLimit from '@fastify/rate-limit';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { acceptsGzip } from '../../lib/accept-encoding.ts';
import { BlockingStore, RedisBlockingStore } from '../../lib/blocking-store.ts';
import { AppError, notFound } from '../../lib/errors.ts';
import { type GzipOf, gzipOnce } from '../../lib/gzip-once.ts';
import { PACKAGE_VERSION as VERSION } from '../../lib/package-root.ts';
import type { Redis } from '../../lib/redis.ts';
import { registerDocsCors } from './cors.ts';
import { serverCard } from './discovery.ts';
import type { DocsService } from './service.ts';

/** Largest accepted body on the docs server (spec: 8 KB). */
export const DOCS_BODY_LIMIT = 8 * 1024;
/** Request budget per IP and window, and how long an address is blocked after going over (spec). */
export const DOCS_RATE_WINDOW_MS = 10_000;
export const DOCS_BLOCK_MS = 10_000;

export interface DocsRouteOptions {
  docs: DocsService;
  /** Requests per IP per 10 s; 0 turns the limit off (benchmarks only). */
  rateMax: number;
  /** Clock of the in-process rate limiter, in ms. */
  nowMs: () => number;
  /** Shared counters for a fleet of processes; without it each process counts on its own. */
  redis?: { client: Redis; prefix: string };
}

/**
 * The MCP SDK and its dependencies add ~25 MB of RSS to a process: loaded on the first MCP
 * request, not by every server.
 */
let mcp: Promise<typeof import('./mcp.ts')> | undefined;
const loadMcp = () => {
  mcp ??= import('./mcp.ts');
  return mcp;
};

const HTML_HEADERS = {
  'content-type': 'text/html; charset=utf-8',
  'content-security-policy':
    "default-src 'none'; style-src 'unsafe-inline'; form-action 'self'; base-uri 'none'; frame-ancestors 'none'",
  'x-frame-options': 'DENY',
  'x-content-type-options': 'nosniff',
  'cache-control': 'public, max-age=300',
};

/**
 * Sends a body that is the same on every request (a page, llms.txt), named by `key` (not by the
 * URL, which may spell one page many ways), gzipped when the client accepts gzip: compressed once
 * per key, on the first such request, and kept (the docs are fixed for the life of the process and
 * all of them, HTML and Markdown, take 0.23 MB gzipped).
 */
type SendStatic = (
  req: FastifyRequest,
  reply: FastifyReply,
  key: string,
  body: string,
) => FastifyReply | Promise<FastifyReply>;

function staticSender(onError: (err: unknown) => void): SendStatic {
  const gzips = new Map<string, GzipOf>();
  return async (req, reply, key, body) => {
    reply.header('vary', 'Accept-Encoding');
    if (!acceptsGzip(req.headers['accept-encoding'])) return reply.send(body);
    let gzipOf = gzips.get(key);
    if (!gzipOf) {
      gzipOf = gzipOnce(Buffer.from(body), onError);
      gzips.set(key, gzipOf);
    }
    const gz = await gzipOf();
    return gz ? reply.header('content-encoding', 'gzip').send(gz) : reply.send(body);
  };
}

const text = (
  req: FastifyRequest,
  reply: FastifyReply,
  send: SendStatic,
  key: string,
  type: string,
  body: string,
) =>
  send(
    req,
    reply
      .header('content-type', `${type}; charset=utf-8`)
      .header('x-content-type-options', 'nosniff')
      .header('cache-control', 'public, max-age=300'),
    key,
    body,
  );

/** The rate-limit store class (the plugin instantiates it once; routes share it through child()). */
function rateStore(opts: DocsRouteOptions) {
  const { nowMs, rateMax, redis } = opts;
  if (redis) {
    const { client, prefix } = redis;
    return class extends RedisBlockingStore {
      constructor() {
        super(client, `${prefix}docs-rate:`, rateMax, DOCS_RATE_WINDOW_MS, DOCS_BLOCK_MS);
      }
    };
  }
  return class extends BlockingStore {
    constructor() {
      super(nowMs, rateMax, DOCS_RATE_WINDOW_MS, DOCS_BLOCK_MS);
    }
  };
}

/**
 * The documentation server: HTML pages, `.md` sources, llms.txt, llms-full.txt, the search box
 * and the stateless MCP endpoint, all under `docs.base`. Read-only; no account data is reachable.
 */
export async function registerDocs(app: FastifyInstance, opts: DocsRouteOptions): Promise<void> {
  const { docs } = opts;
  const base = docs.base;

  registerDocsCors(app, base);
  if (opts.rateMax > 0) {
    await app.register(rateLimit, {
      max: opts.rateMax,
      timeWindow: DOCS_RATE_WINDOW_MS,
      hook: 'onRequest',
      store: rateStore(opts),
      // Redis down: serve the docs unthrottled rather than refuse everyone (the outage is logged).
      skipOnError: true,
      keyGenerator: (req) => req.ip,
      errorResponseBuilder: (_req, ctx) =>
        new AppError(
          'rate_limited',
          `Too many requests to the documentation server; retry in ${Math.ceil(ctx.ttl / 1000)} s`,
        ),
    });
  }

  // MCP bodies are read as text so a malformed one gets a JSON-RPC parse error, not a generic 400.
  app.removeContentTypeParser('application/json');
  app.addContentTypeParser(
    'application/json',
    { parseAs: 'string', bodyLimit: DOCS_BODY_LIMIT },
    (_req, body, done) => done(null, body),
  );

  const send = staticSender((err) => app.log.error({ err }, 'docs: compressing a page for gzip failed'));
  if (base) app.get(base, (_req, reply) => reply.redirect(`${base}/`, 301));
  app.get(`${base}/`, (req, reply) =>
    send(
      req,
      reply.headers(HTML_HEADERS),
      'index.html',
      docs.pageHtml(docs.pages.find((p) => p.slug === 'index')!),
    ),
  );
  app.get(base ? `${base}.md` : '/index.md', (req, reply) =>
    text(req, reply, send, 'index.md', 'text/markdown', docs.pages.find((p) => p.slug === 'index')!.source),
  );
  app.get(`${base}/llms.txt`, (req, reply) =>
    text(req, reply, send, 'llms.txt', 'text/plain', docs.llmsTxt()),
  );
  app.get(`${base}/llms-full.txt`, (req, reply) =>
    text(req, reply, send, 'llms-full.txt', 'text/plain', docs.llmsFullTxt()),
  );
  app.get<{ Querystring: { q?: string | string[] } }>(`${base}/search`, (req, reply) => {
    const q = req.query.q;
    return reply.headers(HTML_HEADERS).send(docs.searchHtml(typeof q === 'string' ? q : ''));
  });
  app.get<{ Params: { file: string } }>(`${base}/:file`, (req, reply) => {
    const path = `${base}/${req.params.file}`;
    if (path.endsWith('.md')) {
      const page = docs.byMarkdownPath(path);
      if (!page) throw notFound('Page');
      return text(req, reply, send, `${page.slug}.md`, 'text/markdown', page.source);
    }
    const page = docs.byAddress(path);
    if (!page) throw notFound('Page');
    return send(req, reply.headers(HTML_HEADERS), `${page.slug}.html`, docs.pageHtml(page));
  });

  // MCP discovery lives at the host root whatever the docs base, as `.well-known` addresses must.
  const card = JSON.stringify(serverCard(docs, VERSION));
  for (const path of ['/.well-known/mcp', '/.well-known/mcp.json'])
    app.get(path, (_req, reply) =>
      reply
        .header('content-type', 'application/json; charset=utf-8')
        .header('access-control-allow-origin', '*')
        .header('cache-control', 'public, max-age=300')
        .send(card),
    );

  const notAllowed = async (_req: unknown, reply: FastifyReply) => {
    reply.header('allow', 'POST');
    throw new AppError('method_not_allowed', 'The MCP endpoint takes one JSON-RPC message per POST');
  };
  app.route({ method: ['GET', 'DELETE', 'PUT', 'PATCH'], url: `${base}/mcp`, handler: notAllowed });

  app.post(`${base}/mcp`, { bodyLimit: DOCS_BODY_LIMIT }, async (req, reply) => {
    const { serveMcp } = await loadMcp();
    return serveMcp(docs, VERSION, req, reply);
  });
}

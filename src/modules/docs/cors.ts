import type { FastifyInstance } from 'fastify';

/**
 * The documentation is public content, so browsers on any origin may read it: pages, `.md`,
 * `llms*.txt`, the search page and the MCP endpoint (a browser-based agent POSTs JSON, which
 * needs a preflight). No credentials are involved, so `*` is safe. The toplist API, whose site
 * tokens are secrets, is registered elsewhere and sends no CORS headers at all.
 */
export const DOCS_CORS_HEADERS = {
  'access-control-allow-origin': '*',
  // A 429 tells the caller when to come back; scripts can only read that header if exposed.
  'access-control-expose-headers': 'retry-after, mcp-protocol-version',
} as const;

const PREFLIGHT_HEADERS = {
  ...DOCS_CORS_HEADERS,
  'access-control-allow-methods': 'GET, HEAD, POST, OPTIONS',
  'access-control-allow-headers': 'content-type, accept, mcp-protocol-version, mcp-session-id, last-event-id',
  'access-control-max-age': '86400',
} as const;

/** Adds the CORS headers to every docs answer (errors and 429s included) and answers preflights. */
export function registerDocsCors(app: FastifyInstance, base: string): void {
  // onRequest runs before the rate limit's route-level hook, so a refused request carries them too;
  // the MCP route copies reply headers onto the raw response it hands to the SDK.
  app.addHook('onRequest', async (_req, reply) => {
    reply.headers(DOCS_CORS_HEADERS);
  });
  app.options(`${base}/*`, (_req, reply) => reply.status(204).headers(PREFLIGHT_HEADERS).send());
}

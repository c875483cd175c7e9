import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import {
  CallToolRequestSchema,
  InitializeRequestSchema,
  ListResourcesRequestSchema,
  ListToolsRequestSchema,
  PingRequestSchema,
  ReadResourceRequestSchema,
  SUPPORTED_PROTOCOL_VERSIONS,
} from '@modelcontextprotocol/sdk/types.js';
import { AjvJsonSchemaValidator } from '@modelcontextprotocol/sdk/validation/ajv';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { z } from 'zod';
import { answerStateless, rawReply } from '../../lib/mcp-http.ts';
import { charLength, MAX_QUERY_LENGTH } from './search.ts';
import type { DocsService } from './service.ts';

const json = (value: unknown) => ({
  content: [{ type: 'text' as const, text: JSON.stringify(value, null, 2) }],
});

/** The search query: 1 to 200 characters, counted as code points (zod's `max` counts UTF-16 units). */
const QUERY = z
  .string()
  .min(1)
  .refine((q) => charLength(q) <= MAX_QUERY_LENGTH, {
    message: `query must be at most ${MAX_QUERY_LENGTH} characters long`,
  });

/**
 * Built once: an MCP server built per request would otherwise build its JSON Schema validator
 * again (a new Ajv instance with its vocabularies, a fifth of a call's CPU). The
 * server validates no schema of its own (it asks clients nothing): sharing it shares no state.
 */
const VALIDATOR = new AjvJsonSchemaValidator();

type ToolResult = { content: { type: 'text'; text: string }[]; isError?: true };

/** One documentation tool: how the SDK lists it, and what it answers for checked arguments. */
interface DocsTool<A> {
  title: string;
  description: string;
  /** The SDK's schema of `arguments`; the direct path takes exactly its keys, passing it. */
  check: z.ZodObject<z.ZodRawShape, 'strip', z.ZodTypeAny, A>;
  run(docs: DocsService, args: A): ToolResult;
}

const SEARCH_INPUT = z.object({ query: QUERY.describe('Keywords or a question') });
const PAGE_INPUT = z.object({
  path: z
    .string()
    .max(1000)
    .describe('Page or section path, for example /docs/toplist-api or /docs/toplist-api#errors'),
});

const FETCH_INPUT = z.object({
  id: z
    .string()
    .max(1000)
    .describe('A result id from search: /docs/toplist-api#errors (a section) or /docs/toplist-api (a page)'),
});

/** A tool's error result; keys in the order the SDK writes one (its schema's), as the direct path must. */
const toolError = (text: string): ToolResult => ({
  content: [{ type: 'text' as const, text }],
  isError: true,
});

/**
 * The read-only tools, for the SDK's server and the direct path alike: the seed's three, and
 * `search` / `fetch` in the shape ChatGPT connectors and deep research call.
 */
const TOOLS = {
  list_pages: {
    title: 'List documentation pages',
    description:
      'Every documentation page with its product, title, path and direction (you-call-us, we-call-you or empty).',
    check: z.object({}),
    run: (docs) => json({ pages: docs.list() }),
  } satisfies DocsTool<Record<string, never>>,
  search_docs: {
    title: 'Search the documentation',
    description: `Keyword search over every section (h2/h3, and each page's introduction) of every page; words match by their stem, identifiers such as forecast_unsupported, pds_ or Idempotency-Key match whole and in parts, common words and the product name are ignored, longer words also by prefix and with small typos. Returns at most 10 sections, best first, fewer when the rest score below a fifth of the best: each with path (page#anchor, for get_page), title (page › heading), url (absolute), score, length (characters get_page returns for the path), page and a snippet holding the matched words. Query at most ${MAX_QUERY_LENGTH} characters.`,
    check: SEARCH_INPUT,
    run: (docs, { query }) => json({ results: docs.find(query) }),
  } satisfies DocsTool<z.infer<typeof SEARCH_INPUT>>,
  get_page: {
    title: 'Read one documentation page',
    description:
      'One page as markdown, or one section of it with a path#anchor. The path must be one returned by list_pages or search_docs.',
    check: PAGE_INPUT,
    run: (docs, { path }) => {
      const text = docs.read(path);
      if (text === undefined)
        return toolError(
          `No page at path ${JSON.stringify(path.slice(0, 200))}: use a path returned by list_pages or search_docs.`,
        );
      return { content: [{ type: 'text' as const, text }] };
    },
  } satisfies DocsTool<z.infer<typeof PAGE_INPUT>>,
  search: {
    title: 'Search (connector)',
    description: `The search of ChatGPT connectors: the same ranking as search_docs, answered as {"results": [{id, title, url}]}; pass an id to fetch. Query at most ${MAX_QUERY_LENGTH} characters.`,
    check: SEARCH_INPUT,
    run: (docs, { query }) =>
      json({ results: docs.find(query).map((h) => ({ id: h.path, title: h.title, url: h.url })) }),
  } satisfies DocsTool<z.infer<typeof SEARCH_INPUT>>,
  fetch: {
    title: 'Fetch (connector)',
    description:
      'The fetch of ChatGPT connectors: one section or page by the id search returned, as {id, title, text (markdown), url, metadata: {product, direction, page, length}}.',
    check: FETCH_INPUT,
    run: (docs, { id }) => {
      const doc = docs.document(id);
      if (!doc)
        return toolError(
          `No document with id ${JSON.stringify(id.slice(0, 200))}: use an id returned by search.`,
        );
      return json(doc);
    },
  } satisfies DocsTool<z.infer<typeof FETCH_INPUT>>,
};

const ANNOTATIONS = { readOnlyHint: true, openWorldHint: false };

/**
 * A fresh MCP server with the read-only documentation tools and one resource per page. Stateless mode needs one per
 * request (the SDK's transport refuses reuse); what does not change between requests is shared.
 */
export function createDocsMcpServer(docs: DocsService, version: string): McpServer {
  const server = new McpServer(
    { name: 'podium-docs', title: 'Podium documentation', version },
    {
      instructions:
        'Podium API documentation. Use search_docs to find the sections that answer a question, get_page to read one (a path#anchor from search_docs returns that section, a page path from list_pages the whole page). search and fetch are the same in the shape ChatGPT connectors call; every page is also a resource (its markdown).',
      jsonSchemaValidator: VALIDATOR,
    },
  );
  const { list_pages, search_docs, get_page, search, fetch } = TOOLS;
  const config = (t: { title: string; description: string }) => ({
    title: t.title,
    description: t.description,
    annotations: ANNOTATIONS,
  });
  // A raw empty shape, not z.object({}): the SDK lists it as the schema clients have always seen.
  server.registerTool('list_pages', { ...config(list_pages), inputSchema: {} }, () => list_pages.run(docs));
  server.registerTool('search_docs', { ...config(search_docs), inputSchema: SEARCH_INPUT }, (args) =>
    search_docs.run(docs, args),
  );
  server.registerTool('get_page', { ...config(get_page), inputSchema: PAGE_INPUT }, (args) =>
    get_page.run(docs, args),
  );
  server.registerTool('search', { ...config(search), inputSchema: SEARCH_INPUT }, (args) =>
    search.run(docs, args),
  );
  server.registerTool('fetch', { ...config(fetch), inputSchema: FETCH_INPUT }, (args) =>
    fetch.run(docs, args),
  );
  for (const r of docs.resources()) {
    server.registerResource(
      r.name,
      r.uri,
      { title: r.title, description: r.description, mimeType: r.mimeType },
      (uri) => ({
        contents: [{ uri: uri.href, mimeType: r.mimeType, text: docs.resourceText(uri.href) ?? '' }],
      }),
    );
  }
  return server;
}

/** The two spellings of a JSON body the direct path takes; any other goes to the SDK's own media-type check. */
const PLAIN_JSON = /^application\/json(?:; ?charset=utf-8)?$/i;

/**
 * Requests the SDK's transport would surely take: it answers 406, 415 or 400 otherwise. One
 * `Content-Type` only: the SDK reads repeated headers joined (Node keeps the first), and refuses
 * `application/json, text/plain`.
 */
function sdkWouldTake(req: FastifyRequest): boolean {
  const { accept, 'content-type': type, 'mcp-protocol-version': version } = req.headers;
  let types = 0;
  const raw = req.raw.rawHeaders;
  for (let i = 0; i < raw.length; i += 2) if (raw[i]!.toLowerCase() === 'content-type') types++;
  return (
    typeof accept === 'string' &&
    accept.includes('application/json') &&
    accept.includes('text/event-stream') &&
    types === 1 &&
    PLAIN_JSON.test(type ?? '') &&
    (version === undefined || (typeof version === 'string' && SUPPORTED_PROTOCOL_VERSIONS.includes(version)))
  );
}

const ENVELOPE_KEYS = new Set(['jsonrpc', 'id', 'method', 'params']);
const PARAMS_KEYS = new Set(['name', 'arguments']);
const onlyKeys = (o: object, keys: Set<string>) => Object.keys(o).every((k) => keys.has(k));

/**
 * The JSON-RPC response to a plain tool call — a known tool, arguments of exactly its keys that
 * pass its schema, nothing else in the message (no `_meta`, no task) — as the SDK would write
 * it, without building a server, a transport and a Web request for it (the SDK's way costs a
 * call about a millisecond and a half of CPU). Undefined for anything else, which the SDK
 * answers (test/docs-mcp-direct.test.ts compares both on every kind of call).
 */
export function directToolCall(docs: DocsService, message: unknown): object | undefined {
  const m = message as { id?: unknown; method?: unknown; params?: { name?: unknown; arguments?: unknown } };
  // The SDK's id schema takes safe integers only (it refuses 2^53 + 1 or 1e21 as a parse error).
  if (m.method !== 'tools/call' || !(typeof m.id === 'string' || Number.isSafeInteger(m.id)))
    return undefined;
  const params = m.params;
  if (!onlyKeys(m, ENVELOPE_KEYS) || typeof params !== 'object' || params === null) return undefined;
  if (!onlyKeys(params, PARAMS_KEYS) || typeof params.name !== 'string' || !Object.hasOwn(TOOLS, params.name))
    return undefined;
  const tool = TOOLS[params.name as keyof typeof TOOLS] as DocsTool<unknown>;
  const args = params.arguments === undefined ? {} : params.arguments;
  if (typeof args !== 'object' || args === null || Array.isArray(args)) return undefined;
  const want = Object.keys(tool.check.shape);
  if (Object.keys(args).length !== want.length || !want.every((k) => Object.hasOwn(args, k)))
    return undefined;
  const parsed = tool.check.safeParse(args);
  if (!parsed.success) return undefined;
  try {
    return { result: tool.run(docs, parsed.data), jsonrpc: '2.0', id: m.id };
  } catch {
    return undefined;
  }
}

/** JSON-RPC 2.0 error codes used before a message reaches the SDK. */
export const RPC = { parseError: -32700, invalidRequest: -32600, invalidParams: -32602 } as const;

// The SDK's own request schemas: a malformed `params` is -32602 here rather than the SDK's -32603.
const PARAMS: Record<string, { safeParse(v: unknown): { success: boolean } }> = {
  initialize: InitializeRequestSchema,
  ping: PingRequestSchema,
  'tools/list': ListToolsRequestSchema,
  'tools/call': CallToolRequestSchema,
  'resources/list': ListResourcesRequestSchema,
  'resources/read': ReadResourceRequestSchema,
};

export interface RpcError {
  jsonrpc: '2.0';
  id: string | number | null;
  error: { code: number; message: string };
}

const rpcError = (code: number, message: string, id: string | number | null = null): RpcError => ({
  jsonrpc: '2.0',
  id,
  error: { code, message },
});

/**
 * Checks the envelope of one JSON-RPC message: exactly one object per POST (a batch array is
 * refused), `jsonrpc: "2.0"`, a string `method` or a response shape, a valid `id` type, and the
 * params of the supported requests.
 * The SDK reports some of these as parse errors; JSON-RPC calls them invalid requests.
 */
export function checkEnvelope(text: string): { message: unknown } | { error: RpcError } {
  let message: unknown;
  try {
    message = JSON.parse(text);
  } catch {
    return { error: rpcError(RPC.parseError, 'Parse error: the body is not valid JSON') };
  }
  if (Array.isArray(message)) {
    return {
      error: rpcError(
        RPC.invalidRequest,
        'Invalid Request: send one JSON-RPC message per POST; batches are not supported',
      ),
    };
  }
  if (message === null || typeof message !== 'object') {
    return { error: rpcError(RPC.invalidRequest, 'Invalid Request: the body must be a JSON-RPC object') };
  }
  const m = message as Record<string, unknown>;
  const idOk = m.id === undefined || m.id === null || typeof m.id === 'string' || Number.isInteger(m.id);
  const id = idOk && (typeof m.id === 'string' || typeof m.id === 'number') ? m.id : null;
  if (m.jsonrpc !== '2.0')
    return { error: rpcError(RPC.invalidRequest, 'Invalid Request: jsonrpc must be "2.0"', id) };
  if (!idOk)
    return { error: rpcError(RPC.invalidRequest, 'Invalid Request: id must be a string or an integer') };
  const isResponse = m.method === undefined && ('result' in m || 'error' in m);
  if (!isResponse && typeof m.method !== 'string') {
    return { error: rpcError(RPC.invalidRequest, 'Invalid Request: method must be a string', id) };
  }
  if (
    m.params !== undefined &&
    (m.params === null || typeof m.params !== 'object' || Array.isArray(m.params))
  ) {
    return { error: rpcError(RPC.invalidRequest, 'Invalid Request: params must be an object', id) };
  }
  // Own keys only: `__proto__`, `constructor` or `toString` name no supported request.
  const schema =
    typeof m.method === 'string' && m.id !== undefined && Object.hasOwn(PARAMS, m.method)
      ? PARAMS[m.method]
      : undefined;
  if (schema && !schema.safeParse(message).success) {
    return { error: rpcError(RPC.invalidParams, `Invalid params for ${m.method}`, id) };
  }
  return { message };
}

/**
 * Answers one MCP POST: the envelope checked here (a 400 with a JSON-RPC error), a plain tool
 * call directly (`directToolCall`), anything else by a fresh server and stateless transport,
 * which write the raw response themselves.
 */
export async function serveMcp(docs: DocsService, version: string, req: FastifyRequest, reply: FastifyReply) {
  const checked = checkEnvelope(typeof req.body === 'string' ? req.body : '');
  if ('error' in checked)
    return reply.status(400).type('application/json; charset=utf-8').send(checked.error);
  const direct = sdkWouldTake(req) ? directToolCall(docs, checked.message) : undefined;
  // Both answers are written raw, as the SDK writes them.
  const res = rawReply(reply);
  if (direct) {
    const body = JSON.stringify(direct);
    res.writeHead(200, {
      'content-type': 'application/json',
      'content-length': Buffer.byteLength(body),
    });
    res.end(body);
    return;
  }
  await answerStateless(createDocsMcpServer(docs, version), req, res, checked.message);
}

import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import {
  CallToolRequestSchema,
  InitializeRequestSchema,
  ListToolsRequestSchema,
  PingRequestSchema,
} from '@modelcontextprotocol/sdk/types.js';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { z } from 'zod';
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
 * A fresh MCP server with the three read-only documentation tools. Stateless mode needs one per
 * request (the SDK's transport refuses reuse), and building one costs microseconds.
 */
export function createDocsMcpServer(docs: DocsService, version: string): McpServer {
  const server = new McpServer(
    { name: 'podium-docs', title: 'Podium documentation', version },
    {
      instructions:
        'Podium API documentation. Use search_docs to find the sections that answer a question, get_page to read one (a path#anchor from search_docs returns that section, a page path from list_pages the whole page).',
    },
  );
  server.registerTool(
    'list_pages',
    {
      title: 'List documentation pages',
      description:
        'Every documentation page with its product, title, path and direction (you-call-us, we-call-you or empty).',
      inputSchema: {},
      annotations: { readOnlyHint: true, openWorldHint: false },
    },
    () => json({ pages: docs.list() }),
  );
  server.registerTool(
    'search_docs',
    {
      title: 'Search the documentation',
      description: `Keyword search over every section (h2/h3) of every page; identifiers such as forecast_unsupported or Idempotency-Key match whole and in parts, common words are ignored, prefixes and small typos tolerated. Returns at most 10 sections, best first, each with path (page#anchor, for get_page), title (page › heading), page and a snippet holding the matched words. Query at most ${MAX_QUERY_LENGTH} characters.`,
      inputSchema: { query: QUERY.describe('Keywords or a question') },
      annotations: { readOnlyHint: true, openWorldHint: false },
    },
    ({ query }) => json({ results: docs.find(query) }),
  );
  server.registerTool(
    'get_page',
    {
      title: 'Read one documentation page',
      description:
        'One page as markdown, or one section of it with a path#anchor. The path must be one returned by list_pages or search_docs.',
      inputSchema: {
        path: z
          .string()
          .max(1000)
          .describe('Page or section path, for example /docs/toplist-api or /docs/toplist-api#errors'),
      },
      annotations: { readOnlyHint: true, openWorldHint: false },
    },
    ({ path }) => {
      const text = docs.read(path);
      if (text === undefined) {
        return {
          isError: true,
          content: [
            {
              type: 'text' as const,
              text: `No page at path ${JSON.stringify(path.slice(0, 200))}: use a path returned by list_pages or search_docs.`,
            },
          ],
        };
      }
      return { content: [{ type: 'text' as const, text }] };
    },
  );
  return server;
}

/** JSON-RPC 2.0 error codes used before a message reaches the SDK. */
export const RPC = { parseError: -32700, invalidRequest: -32600, invalidParams: -32602 } as const;

// The SDK's own request schemas: a malformed `params` is -32602 here rather than the SDK's -32603.
const PARAMS: Record<string, { safeParse(v: unknown): { success: boolean } }> = {
  initialize: InitializeRequestSchema,
  ping: PingRequestSchema,
  'tools/list': ListToolsRequestSchema,
  'tools/call': CallToolRequestSchema,
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
 * Answers one MCP POST: the envelope checked here (a 400 with a JSON-RPC error), then a fresh
 * server and stateless transport, which write the raw response themselves.
 */
export async function serveMcp(docs: DocsService, version: string, req: FastifyRequest, reply: FastifyReply) {
  const checked = checkEnvelope(typeof req.body === 'string' ? req.body : '');
  if ('error' in checked)
    return reply.status(400).type('application/json; charset=utf-8').send(checked.error);
  const server = createDocsMcpServer(docs, version);
  const transport = new StreamableHTTPServerTransport({
    sessionIdGenerator: undefined,
    enableJsonResponse: true,
  });
  // The SDK writes the raw response; keep the headers Fastify hooks (rate limit) already set.
  reply.hijack();
  for (const [name, value] of Object.entries(reply.getHeaders())) {
    if (value !== undefined) reply.raw.setHeader(name, value as string | number | string[]);
  }
  reply.raw.on('close', () => {
    void transport.close();
    void server.close();
  });
  await server.connect(transport);
  await transport.handleRequest(req.raw, reply.raw, checked.message);
}

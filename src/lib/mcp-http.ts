import type { ServerResponse } from 'node:http';
import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import type { FastifyReply, FastifyRequest } from 'fastify';

// Serving MCP over Fastify in stateless mode. Imported only by the lazily loaded MCP modules
// (docs, sales agent), so the SDK stays out of servers that never answer MCP.

/**
 * Takes the raw response from Fastify for the SDK to write, keeping the headers Fastify hooks
 * (rate limit, CORS) already set.
 */
export function rawReply(reply: FastifyReply): ServerResponse {
  reply.hijack();
  for (const [name, value] of Object.entries(reply.getHeaders()))
    if (value !== undefined) reply.raw.setHeader(name, value as string | number | string[]);
  return reply.raw;
}

/** Answers one JSON-RPC message with `server` behind a fresh stateless transport (JSON answers), both closed with the response. */
export async function answerStateless(
  server: McpServer,
  req: FastifyRequest,
  res: ServerResponse,
  message: unknown,
): Promise<void> {
  const transport = new StreamableHTTPServerTransport({
    sessionIdGenerator: undefined,
    enableJsonResponse: true,
  });
  res.on('close', () => {
    void transport.close();
    void server.close();
  });
  await server.connect(transport);
  await transport.handleRequest(req.raw, res, message);
}

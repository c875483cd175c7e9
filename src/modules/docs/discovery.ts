import type { DocsService } from './service.ts';

/** The tools the MCP endpoint lists (test/docs-server.test.ts checks it against the server's own list). */
export const MCP_TOOLS = ['list_pages', 'search_docs', 'get_page', 'search', 'fetch'] as const;

/**
 * The MCP server card served at `/.well-known/mcp` (and `/.well-known/mcp.json`): what a client or
 * a registry needs to connect without a handshake first. Follows the server-card draft (SEP-1649):
 * name and version, the Streamable HTTP endpoint, capabilities, no authentication.
 */
export function serverCard(docs: DocsService, version: string) {
  const endpoint = docs.mcpUrl();
  return {
    name: 'podium-docs',
    title: 'Podium documentation',
    version,
    description:
      'Read-only documentation of the Podium APIs: search sections, read a section or a page, every page as a markdown resource.',
    serverInfo: { name: 'podium-docs', title: 'Podium documentation', version },
    transport: { type: 'streamable-http', endpoint },
    transports: [{ type: 'streamable-http', url: endpoint }],
    capabilities: { tools: {}, resources: {} },
    authentication: { required: false },
    tools: [...MCP_TOOLS],
    resources: docs.resources().map((r) => ({ uri: r.uri, name: r.name, mimeType: r.mimeType })),
  };
}

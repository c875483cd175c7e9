import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { answerStateless, rawReply } from '../../lib/mcp-http.ts';
import {
  DeliveryInput,
  ListCreativesInput,
  MediaBuyInput,
  ProductsInput,
  SyncCreativesInput,
  UpdateMediaBuyInput,
} from './schemas.ts';
import { AdcpRefusal, type Buyer, type SalesAgentService } from './service.ts';

// The sales agent's MCP server, loaded only when an advertiser's agent first calls (routes.ts).

/** The answer of one tool: AdCP's body as structured content, and as text for clients that read only text. */
function answer(body: Record<string, unknown>) {
  return { content: [{ type: 'text' as const, text: JSON.stringify(body) }], structuredContent: body };
}

/** Runs a task; a business refusal becomes AdCP's `{ errors: [...] }` answer, not a protocol error. */
async function task(run: () => Promise<Record<string, unknown>> | Record<string, unknown>) {
  try {
    return answer(await run());
  } catch (err) {
    if (err instanceof AdcpRefusal)
      return {
        ...answer({
          errors: [
            {
              code: err.code,
              message: err.message,
              ...(err.field ? { field: err.field } : {}),
              ...(err.details ? { details: err.details } : {}),
            },
          ],
        }),
        isError: true,
      };
    throw err;
  }
}

/** A fresh MCP server for one request of one advertiser (stateless mode needs one per request). */
function salesAgentServer(agent: SalesAgentService, buyer: Buyer, version: string): McpServer {
  const server = new McpServer(
    { name: 'podium-sales-agent', title: 'Podium marketplace sales agent (AdCP media buy)', version },
    {
      instructions:
        'AdCP media-buy tasks on the Podium marketplace: get_adcp_capabilities, get_products, list_creative_formats, list_authorized_properties, create_media_buy (a reservation held for the publisher to approve: status submitted), update_media_buy (before approval), sync_creatives (fetched from their asset URLs, moderated by the publisher), list_creatives, get_media_buy_delivery.',
    },
  );
  const ro = { readOnlyHint: true, openWorldHint: false };
  server.registerTool(
    'get_adcp_capabilities',
    {
      description: 'What this agent sells: AdCP version, protocols, pricing models, reporting',
      inputSchema: {},
      annotations: ro,
    },
    () => task(() => agent.capabilities()),
  );
  server.registerTool(
    'get_products',
    {
      description: "The publisher's products this advertiser can buy, with prices; a brief narrows them",
      inputSchema: ProductsInput,
      annotations: ro,
    },
    (args) => task(() => agent.products(buyer, args.brief)),
  );
  server.registerTool(
    'list_creative_formats',
    { description: 'The display formats (sizes) the products take', inputSchema: {}, annotations: ro },
    () => task(() => agent.formats(buyer)),
  );
  server.registerTool(
    'create_media_buy',
    {
      description:
        'Books whole calendar months of products: held for the publisher, answered "submitted" until approved. The same buyer_ref again answers the same buy.',
      inputSchema: MediaBuyInput,
      annotations: { readOnlyHint: false, idempotentHint: true, openWorldHint: false },
    },
    (args) => task(() => agent.createMediaBuy(buyer, args)),
  );
  server.registerTool(
    'list_authorized_properties',
    {
      description: "The publisher domains (sites) this agent sells: AdCP 2's task, kept for older buyers",
      inputSchema: {},
      annotations: ro,
    },
    () => task(() => agent.authorizedProperties(buyer)),
  );
  server.registerTool(
    'update_media_buy',
    {
      description:
        'Before approval: paused=true withdraws the buy (its impressions are freed); a package budget or impressions change resizes its hold. After approval: refused.',
      inputSchema: UpdateMediaBuyInput,
      annotations: { readOnlyHint: false, openWorldHint: false },
    },
    (args) => task(() => agent.updateMediaBuy(buyer, args)),
  );
  server.registerTool(
    'sync_creatives',
    {
      description:
        'Creatives for packages of your media buys: each image is fetched from its asset URL, checked (type, weight, size) and awaits the publisher’s moderation',
      inputSchema: SyncCreativesInput,
      annotations: { readOnlyHint: false, idempotentHint: true, openWorldHint: true },
    },
    (args) => task(() => agent.syncCreatives(buyer, args)),
  );
  server.registerTool(
    'list_creatives',
    {
      description: 'The creatives of your media buys with their moderation status and assignments',
      inputSchema: ListCreativesInput,
      annotations: ro,
    },
    (args) => task(() => agent.listCreatives(buyer, args)),
  );
  server.registerTool(
    'get_media_buy_delivery',
    {
      description:
        "Impressions, clicks and spend per media buy and package, from the publisher's ad server reports",
      inputSchema: DeliveryInput,
      annotations: ro,
    },
    (args) => task(() => agent.delivery(buyer, args)),
  );
  return server;
}

/** Answers one authenticated MCP POST with a fresh server and stateless transport (they write the raw response). */
export async function serveSalesAgent(
  agent: SalesAgentService,
  buyer: Buyer,
  version: string,
  req: FastifyRequest,
  reply: FastifyReply,
): Promise<void> {
  await answerStateless(salesAgentServer(agent, buyer, version), req, rawReply(reply), req.body);
}

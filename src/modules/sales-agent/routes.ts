import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { AuthThrottle } from '../../lib/auth-throttle.ts';
import { AppError } from '../../lib/errors.ts';
import { parseBearer } from '../../lib/tokens.ts';
import { type Authenticator, adminArea } from '../../plugins/auth.ts';
import type { Scope } from '../access/scopes.ts';
import { AdvertiserIdParams, TokenInput, TokenParams } from './schemas.ts';
import type { SalesAgentService } from './service.ts';

/** Where the sales agent answers (MCP, Streamable HTTP, one JSON-RPC message per POST). */
export const SALES_AGENT_PATH = '/adcp/mcp';
const BODY_LIMIT = 256 * 1024;

// The MCP SDK (~25 MB) loads with the first authenticated request, as the docs' MCP does.
let mcp: Promise<typeof import('./mcp.ts')> | undefined;
const loadMcp = () => {
  mcp ??= import('./mcp.ts');
  return mcp;
};

/** Advertiser tokens in the admin API: minted by the publisher's side for an advertiser's agent. */
export async function registerSalesAgentAdmin(
  scope: FastifyInstance,
  { agent, tokens }: { agent: SalesAgentService; tokens: Authenticator<Scope> },
): Promise<void> {
  const { app, read, write } = adminArea(scope, tokens, { read: 'market:read', write: 'market:write' });
  app.get(
    '/market/advertisers/:id/tokens',
    { ...read, schema: { summary: "An advertiser's tokens (never the secret)", params: AdvertiserIdParams } },
    async (req) => ({ data: await agent.listTokens(req.params.id) }),
  );
  app.post(
    '/market/advertisers/:id/tokens',
    {
      ...write,
      schema: {
        summary: 'A token for an advertiser’s buying agent, shown once',
        params: AdvertiserIdParams,
        body: TokenInput,
      },
    },
    async (req, reply) => {
      const data = await agent.createToken(req.params.id, req.body.name);
      const { token: _secret, ...kept } = data;
      req.audit = { before: null, after: kept };
      return reply.status(201).header('cache-control', 'no-store').send({ data });
    },
  );
  app.delete(
    '/market/advertisers/:id/tokens/:tokenId',
    { ...write, schema: { summary: 'Revoke an advertiser token', params: TokenParams } },
    async (req) => {
      const data = await agent.revokeToken(req.params.id, req.params.tokenId);
      req.audit = { before: null, after: data };
      return { data };
    },
  );
}

/** The sales agent's MCP endpoint: an advertiser token in `Authorization: Bearer`. */
export async function registerSalesAgent(
  app: FastifyInstance,
  { agent, throttle, version }: { agent: SalesAgentService; throttle: AuthThrottle; version: string },
): Promise<void> {
  const notAllowed = async (_req: unknown, reply: FastifyReply) => {
    reply.header('allow', 'POST');
    throw new AppError('method_not_allowed', 'The sales agent takes one JSON-RPC message per POST');
  };
  app.route({ method: ['GET', 'DELETE', 'PUT', 'PATCH'], url: SALES_AGENT_PATH, handler: notAllowed });
  app.post(SALES_AGENT_PATH, { bodyLimit: BODY_LIMIT }, async (req: FastifyRequest, reply: FastifyReply) => {
    const token = parseBearer(req.headers.authorization);
    const buyer = token ? await agent.authenticate(token) : undefined;
    if (!buyer) {
      reply.header('www-authenticate', 'Bearer realm="podium-sales-agent"');
      throw await throttle.refusal(
        'advertiser_token',
        req.ip,
        new AppError('unauthorized', 'An advertiser token is needed: Authorization: Bearer pdb_…'),
      );
    }
    if (req.body === undefined || typeof req.body !== 'object')
      throw new AppError('bad_request', 'The body is one JSON-RPC message (application/json)');
    const { serveSalesAgent } = await loadMcp();
    await serveSalesAgent(agent, buyer, version, req, reply);
  });
}

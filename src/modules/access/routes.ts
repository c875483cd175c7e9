import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance } from 'fastify';
import { IdParams, SubIdParams } from '../../lib/schema-parts.ts';
import { requireAdmin } from '../../plugins/auth.ts';
import { createdWithSecret } from '../../plugins/replies.ts';
import { AdminTokenInput, TokenInput } from './schemas.ts';
import type { AccessService } from './service.ts';

/** Site read tokens and admin tokens in the admin API, mounted under /api/admin/v1. */
export async function registerAccess(scope: FastifyInstance, access: AccessService): Promise<void> {
  const app = scope.withTypeProvider<TypeBoxTypeProvider>();
  const tokens = { onRequest: requireAdmin(access, 'tokens:write') };

  /* Sites' read tokens */
  app.get('/sites/:id/tokens', { ...tokens, schema: { params: IdParams } }, async (req) => ({
    data: await access.listSiteTokens(req.params.id),
  }));
  app.post(
    '/sites/:id/tokens',
    { ...tokens, schema: { params: IdParams, body: TokenInput } },
    async (req, reply) => {
      const created = await access.createSiteToken(req.params.id, req.body?.name ?? '');
      req.audit = { before: null, after: { tokenId: created.id, name: created.name, hint: created.hint } };
      return createdWithSecret(reply, { data: created });
    },
  );
  app.delete('/sites/:id/tokens/:subId', { ...tokens, schema: { params: SubIdParams } }, async (req) => {
    const data = await access.revokeSiteToken(req.params.id, req.params.subId);
    req.audit = {
      before: { tokenId: data.id, revokedAt: null },
      after: { tokenId: data.id, revokedAt: data.revokedAt },
    };
    return { data };
  });

  /* Admin tokens */
  const adminOnly = { onRequest: requireAdmin(access, 'admin') };
  app.get('/admin-tokens', adminOnly, async () => ({ data: await access.listAdminTokens() }));
  app.post('/admin-tokens', { ...adminOnly, schema: { body: AdminTokenInput } }, async (req, reply) => {
    const created = await access.createAdminToken(req.body.name, req.body.scopes, req.admin!.tokenId);
    req.audit = {
      before: null,
      after: { tokenId: created.id, name: created.name, scopes: created.scopes, hint: created.hint },
    };
    return createdWithSecret(reply, { data: created });
  });
  app.delete('/admin-tokens/:id', { ...adminOnly, schema: { params: IdParams } }, async (req) => {
    const data = await access.revokeAdminToken(req.params.id);
    req.audit = {
      before: { tokenId: data.id, revokedAt: null },
      after: { tokenId: data.id, revokedAt: data.revokedAt },
    };
    return { data };
  });
}

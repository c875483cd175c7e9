import type { FastifyInstance } from 'fastify';
import { type Authenticator, adminArea } from '../../plugins/auth.ts';
import type { Scope } from '../access/scopes.ts';
import { EraseAnswer, EraseInput, ExportAnswer, ExportInput } from './schemas.ts';
import type { PlayerData } from './service.ts';

/**
 * Player data requests under /api/admin/v1, scope `player-data`. Both are POSTs with the clear
 * player id in the body (never in a URL, so no access log or proxy keeps it), and both are audited
 * like every admin write: the audit row names the body's fields and the counts, never the id.
 */
export async function registerPlayerData(
  scope: FastifyInstance,
  { playerData, tokens }: { playerData: PlayerData; tokens: Authenticator<Scope> },
): Promise<void> {
  const { app, write } = adminArea(scope, tokens, { read: 'player-data', write: 'player-data' });

  app.post(
    '/player-data/export',
    {
      ...write,
      schema: {
        summary: 'Everything stored under one player id: conversions and raw postback log rows (paged)',
        body: ExportInput,
        response: { 200: ExportAnswer },
      },
    },
    async (req, reply) => {
      const b = req.body;
      const out = await playerData.export(
        { playerId: b.player_id, programId: b.program_id },
        b.page,
        b.per_page,
      );
      req.audit = {
        targetId: b.program_id ?? 'all',
        after: {
          page: out.meta.page,
          conversions: out.data.conversions.length,
          postbacks: out.data.postbacks.length,
          conversionsTotal: out.meta.conversions_total,
          postbacksTotal: out.meta.postbacks_total,
        },
      };
      return reply.header('cache-control', 'no-store').send(out);
    },
  );

  app.post(
    '/player-data/erase',
    {
      ...write,
      schema: {
        summary: 'Delete every conversion and raw postback log row of one player id; rollups stay',
        body: EraseInput,
        response: { 200: EraseAnswer },
      },
    },
    async (req) => {
      const b = req.body;
      const counts = await playerData.erase({ playerId: b.player_id, programId: b.program_id });
      req.audit = { targetId: b.program_id ?? 'all', before: null, after: counts };
      return { data: counts };
    },
  );
}

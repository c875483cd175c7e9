import type { FastifyInstance } from 'fastify';
import { wantsCsv } from '../../lib/accept.ts';
import { camelKeys } from '../../lib/camel.ts';
import { IdParams } from '../../lib/schema-parts.ts';
import { type Authenticator, adminArea } from '../../plugins/auth.ts';
import { siteScopeOf } from '../../plugins/site-scope.ts';
import type { Scope } from '../access/scopes.ts';
import { SiteTimezoneInput, StatsQuery, SuggestedOrderQuery } from './schemas.ts';
import type { ReportingService } from './service.ts';

/** Stats, suggested orders and sites' reporting zones, mounted under /api/admin/v1. */
export async function registerReportingAdmin(
  scope: FastifyInstance,
  { reporting, tokens }: { reporting: ReportingService; tokens: Authenticator<Scope> },
): Promise<void> {
  const { app, read, write } = adminArea(scope, tokens, { read: 'tracking:read', write: 'tracking:write' });

  app.get('/tracking/stats', { ...read, schema: { querystring: StatsQuery } }, async (req, reply) => {
    const q = req.query;
    const query = { ...camelKeys(q), siteIds: siteScopeOf(req) };
    if (q.format === 'json' || (q.format !== 'csv' && !wantsCsv(req))) return reporting.stats.page(query);
    const csv = await reporting.stats.csv(query);
    return reply
      .header('content-type', 'text/csv; charset=utf-8')
      .header('content-disposition', `attachment; filename="podium-stats-${q.from}-${q.to}.csv"`)
      .send(csv);
  });

  const suggested = {
    summary: "The toplist's brands ranked by EPC shrunk toward the geo family's (never published)",
    params: IdParams,
    querystring: SuggestedOrderQuery,
  };
  app.get('/toplists/:id/suggested-order', { ...read, schema: suggested }, async (req) => ({
    data: await reporting.suggestedOrders.suggest(req.params.id, req.query.days, req.query.currency),
  }));

  app.get('/tracking/sites/:id', { ...read, schema: { params: IdParams } }, async (req) => ({
    data: await reporting.stats.siteTimezone(req.params.id),
  }));
  app.put(
    '/tracking/sites/:id',
    { ...write, schema: { params: IdParams, body: SiteTimezoneInput } },
    async (req) => ({ data: await reporting.stats.setSiteTimezone(req.params.id, req.body.timezone) }),
  );
}

import type { FastifyInstance } from 'fastify';
import { IdParams } from '../../lib/schema-parts.ts';
import { type Authenticator, adminArea } from '../../plugins/auth.ts';
import type { Scope } from '../access/scopes.ts';
import type { OperatorAggregates } from './aggregates.ts';
import { DayRangeQuery, ReconcileQuery, ReportInput } from './schemas.ts';

/** Report endpoints, pulls, stored operator rows and reconciliation, under /api/admin/v1. */
export async function registerAggregateAdmin(
  scope: FastifyInstance,
  { aggregates, tokens }: { aggregates: OperatorAggregates; tokens: Authenticator<Scope> },
): Promise<void> {
  const { app, read, write } = adminArea(scope, tokens, { read: 'tracking:read', write: 'tracking:write' });
  const base = '/tracking/programs/:id';

  app.get(`${base}/report`, { ...read, schema: { params: IdParams } }, async (req) => ({
    data: await aggregates.report(req.params.id),
  }));
  app.put(`${base}/report`, { ...write, schema: { params: IdParams, body: ReportInput } }, async (req) => ({
    data: await aggregates.setReport(req.params.id, req.body),
  }));
  app.delete(`${base}/report`, { ...write, schema: { params: IdParams } }, async (req) => ({
    data: await aggregates.clearReport(req.params.id),
  }));
  app.get(
    `${base}/pulls`,
    { ...read, schema: { params: IdParams, querystring: DayRangeQuery } },
    async (req) => ({
      data: await aggregates.pulls(req.params.id, req.query.from, req.query.to),
    }),
  );
  app.get(
    `${base}/aggregates`,
    { ...read, schema: { params: IdParams, querystring: DayRangeQuery } },
    async (req) => ({ data: await aggregates.aggregates(req.params.id, req.query.from, req.query.to) }),
  );
  app.get(
    `${base}/reconciliation`,
    { ...read, schema: { params: IdParams, querystring: ReconcileQuery } },
    async (req) => ({
      data: await aggregates.reconcile(req.params.id, req.query.from, req.query.to, req.query.threshold),
    }),
  );
}

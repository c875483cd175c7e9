import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance } from 'fastify';
import { wantsCsv } from '../../lib/accept.ts';
import { IdParams, SubIdParams } from '../../lib/schema-parts.ts';
import { type Authenticator, requireAdmin } from '../../plugins/auth.ts';
import { siteScopeOf } from '../../plugins/site-scope.ts';
import type { Scope } from '../access/scopes.ts';
import { ItemsInput } from '../catalog/schemas.ts';
import type { CatalogService } from '../catalog/service.ts';
import { LicenceInput, LicencePatch, ReportList, ReportQuery, RuleInput, RulePatch } from './schemas.ts';
import type { ComplianceService } from './service.ts';

/**
 * The compliance admin API (under /api/admin/v1): brands' licences, the licence rules, and a
 * draft's violations. Writes need `compliance:write` and are audited with before/after.
 */
export async function registerComplianceAdmin(
  scope: FastifyInstance,
  deps: { compliance: ComplianceService; catalog: CatalogService; tokens: Authenticator<Scope> },
): Promise<void> {
  const app = scope.withTypeProvider<TypeBoxTypeProvider>();
  const { compliance, catalog, tokens } = deps;
  const read = { onRequest: requireAdmin(tokens, 'catalog:read') };
  const write = { onRequest: requireAdmin(tokens, 'compliance:write') };

  /* Licences of a brand (the audit row's target is the brand) */
  app.get('/brands/:id/licences', { ...read, schema: { params: IdParams } }, async (req) => ({
    data: await compliance.listLicences(req.params.id),
  }));
  app.post(
    '/brands/:id/licences',
    { ...write, schema: { params: IdParams, body: LicenceInput } },
    async (req, reply) => {
      const data = await compliance.createLicence(req.params.id, req.body);
      req.audit = { after: data };
      return reply.status(201).send({ data });
    },
  );
  app.get('/brands/:id/licences/:subId', { ...read, schema: { params: SubIdParams } }, async (req) => ({
    data: await compliance.getLicence(req.params.id, req.params.subId),
  }));
  app.patch(
    '/brands/:id/licences/:subId',
    { ...write, schema: { params: SubIdParams, body: LicencePatch } },
    async (req) => {
      const before = await compliance.getLicence(req.params.id, req.params.subId);
      const data = await compliance.updateLicence(req.params.id, req.params.subId, req.body);
      req.audit = { before, after: data };
      return { data };
    },
  );
  app.delete('/brands/:id/licences/:subId', { ...write, schema: { params: SubIdParams } }, async (req) => {
    const data = await compliance.deleteLicence(req.params.id, req.params.subId);
    req.audit = { before: data, after: null };
    return { data };
  });

  /* Licence rules of countries and markets */
  app.get('/compliance/rules', read, async () => ({ data: await compliance.listRules() }));
  app.post('/compliance/rules', { ...write, schema: { body: RuleInput } }, async (req, reply) => {
    const data = await compliance.createRule(req.body);
    req.audit = { targetId: data.id, after: data };
    return reply.status(201).send({ data });
  });
  app.get('/compliance/rules/:id', { ...read, schema: { params: IdParams } }, async (req) => ({
    data: await compliance.getRule(req.params.id),
  }));
  app.patch(
    '/compliance/rules/:id',
    { ...write, schema: { params: IdParams, body: RulePatch } },
    async (req) => {
      const before = await compliance.getRule(req.params.id);
      const data = await compliance.updateRule(req.params.id, req.body);
      req.audit = { before, after: data };
      return { data };
    },
  );
  app.delete('/compliance/rules/:id', { ...write, schema: { params: IdParams } }, async (req) => {
    const data = await compliance.deleteRule(req.params.id);
    req.audit = { before: data, after: null };
    return { data };
  });

  /* A draft's violations, as publishing it now would meet them */
  app.get('/toplists/:id/compliance', { ...read, schema: { params: IdParams } }, async (req) => {
    const violations = await catalog.publishing.draftViolations(req.params.id);
    return { data: { toplistId: req.params.id, publishable: violations.length === 0, violations } };
  });

  /* An unsaved draft's violations (the editor's items as they stand), judged like a publish, nothing written */
  app.post(
    '/toplists/:id/compliance',
    { ...read, schema: { params: IdParams, body: ItemsInput } },
    async (req) => {
      const violations = await catalog.publishing.proposedViolations(req.params.id, req.body.items);
      return { data: { toplistId: req.params.id, publishable: violations.length === 0, violations } };
    },
  );

  /* What live lists withhold now, where, why and since when */
  app.get(
    '/compliance/report',
    {
      ...read,
      schema: {
        summary:
          'Entries withheld now from live lists (and shown by override), newest first (JSON, or CSV with format=csv or Accept: text/csv)',
        querystring: ReportQuery,
        response: { 200: ReportList },
      },
    },
    async (req, reply) => {
      const q = req.query;
      const filter = {
        siteId: q.site_id,
        siteIds: siteScopeOf(req),
        brandId: q.brand_id,
        country: q.country,
        status: q.status,
      };
      if (q.format === 'json' || (q.format !== 'csv' && !wantsCsv(req)))
        return compliance.report(filter, q.page, q.per_page);
      const csv = await compliance.reportCsv(filter);
      return (
        reply
          .header('content-type', 'text/csv; charset=utf-8')
          .header('content-disposition', 'attachment; filename="podium-compliance-report.csv"')
          // A CSV document, sent as it is (the response schema describes the JSON answer).
          .send(csv as never)
      );
    },
  );
}

import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance } from 'fastify';
import { AppError } from '../../lib/errors.ts';
import { IdParams, SubIdParams } from '../../lib/schema-parts.ts';
import { type Authenticator, requireAdmin } from '../../plugins/auth.ts';
import type { Scope } from '../access/scopes.ts';
import { registerCrud } from './crud-routes.ts';
import {
  BrandInput,
  BrandPatch,
  ItemsInput,
  NamedTypeInput,
  OfferInput,
  OfferPatch,
  OfferQuery,
  OwnerInput,
  OwnerPatch,
  PageQuery,
  PublishInput,
  SiteInput,
  SitePatch,
  TemplateInput,
  TemplatePatch,
  ToplistInput,
  ToplistPatch,
  ToplistQuery,
  TrackerInput,
  TrackerPatch,
} from './schemas.ts';
import type { CatalogService } from './service.ts';

/** The editorial admin API, mounted under /api/admin/v1. */
export async function registerCatalog(
  scope: FastifyInstance,
  catalog: CatalogService,
  auth: Authenticator<Scope>,
): Promise<void> {
  const app = scope.withTypeProvider<TypeBoxTypeProvider>();
  const read = { onRequest: requireAdmin(auth, 'catalog:read') };
  const write = { onRequest: requireAdmin(auth, 'catalog:write') };
  const publish = { onRequest: requireAdmin(auth, 'publish') };

  const editorial = { read: read.onRequest, write: write.onRequest, query: PageQuery };
  registerCrud(app, '/owners', catalog.owners, { ...editorial, input: OwnerInput, patch: OwnerPatch });
  // A site's read tokens are in the access module.
  registerCrud(app, '/sites', catalog.sites, {
    ...editorial,
    input: SiteInput,
    patch: SitePatch,
    filter: (_q, siteIds) => ({ siteIds }),
  });
  registerCrud(app, '/templates', catalog.templates, {
    ...editorial,
    input: TemplateInput,
    patch: TemplatePatch,
  });
  registerCrud(app, '/brands', catalog.brands, { ...editorial, input: BrandInput, patch: BrandPatch });
  registerCrud(app, '/offers', catalog.offers, {
    ...editorial,
    input: OfferInput,
    patch: OfferPatch,
    query: OfferQuery,
    filter: (q) => ({ brandId: q.brand_id }),
  });
  registerCrud(app, '/toplists', catalog.toplists, {
    ...editorial,
    input: ToplistInput,
    patch: ToplistPatch,
    query: ToplistQuery,
    filter: (q, siteIds) => ({
      siteId: q.site_id,
      siteIds,
      templateId: q.template_id,
      geoType: q.geo_type,
      geoCode: q.geo_code,
    }),
  });

  /* Product, classification and offer types */
  for (const [path, table] of [
    ['/product-types', 'product_types'],
    ['/classification-types', 'classification_types'],
    ['/offer-types', 'offer_types'],
  ] as const) {
    app.get(path, read, async () => ({ data: await catalog.listNamedTypes(table) }));
    app.post(path, { ...write, schema: { body: NamedTypeInput } }, async (req, reply) =>
      reply.status(201).send({ data: await catalog.createNamedType(table, req.body.name) }),
    );
  }

  /* Trackers of an offer */
  app.post(
    '/offers/:id/trackers',
    { ...write, schema: { params: IdParams, body: TrackerInput } },
    async (req, reply) => reply.status(201).send({ data: await catalog.addTracker(req.params.id, req.body) }),
  );
  app.patch(
    '/offers/:id/trackers/:subId',
    { ...write, schema: { params: SubIdParams, body: TrackerPatch } },
    async (req) => ({
      data: await catalog.updateTracker(req.params.id, req.params.subId, req.body),
    }),
  );
  app.delete('/offers/:id/trackers/:subId', { ...write, schema: { params: SubIdParams } }, async (req) => ({
    data: await catalog.deleteTracker(req.params.id, req.params.subId),
  }));

  /* Drafts and editions */
  app.put(
    '/toplists/:id/items',
    { ...write, schema: { params: IdParams, body: ItemsInput } },
    async (req) => ({
      data: await catalog.publishing.replaceItems(req.params.id, req.body.items),
    }),
  );
  app.post(
    '/toplists/:id/publish',
    { ...publish, schema: { params: IdParams, body: PublishInput } },
    async (req) => {
      const { complianceOverride, ...window } = req.body ?? {};
      // The override is a power of its own: publishing alone never lets a violation through.
      if (complianceOverride && !auth.permits(req.admin!.scopes, 'compliance:override'))
        throw new AppError('forbidden', 'This token lacks the compliance:override scope', {
          requiredScope: 'compliance:override',
        });
      const before = await catalog.toplists.get(req.params.id);
      const out = await catalog.publishing.publish(req.params.id, {
        by: req.admin!.tokenId,
        ...window,
        override: complianceOverride,
      });
      req.audit = {
        before: { liveVersion: before.liveVersion, liveFrom: before.liveFrom, liveUntil: before.liveUntil },
        after: {
          liveVersion: out.version,
          liveFrom: out.toplist.liveFrom,
          liveUntil: out.toplist.liveUntil,
          ...(out.overridden.length
            ? {
                complianceOverride: {
                  reason: complianceOverride!.reason,
                  violations: out.overridden.slice(0, 50),
                },
              }
            : {}),
        },
      };
      return { data: { version: out.version, publishedAt: out.publishedAt, toplist: out.toplist } };
    },
  );
  app.post('/toplists/:id/unpublish', { ...publish, schema: { params: IdParams } }, async (req) => {
    const before = await catalog.toplists.get(req.params.id);
    const data = await catalog.publishing.unpublish(req.params.id);
    req.audit = { before: { liveVersion: before.liveVersion }, after: { liveVersion: data.liveVersion } };
    return { data };
  });
  app.get(
    '/toplists/:id/editions',
    { ...read, schema: { params: IdParams, querystring: PageQuery } },
    (req) => catalog.publishing.listEditions(req.params.id, req.query.page, req.query.per_page),
  );
  app.get('/toplists/:id/editions/:subId', { ...read, schema: { params: SubIdParams } }, async (req) => ({
    data: await catalog.publishing.getEdition(req.params.id, req.params.subId),
  }));
}

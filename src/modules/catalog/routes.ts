import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance } from 'fastify';
import { type Authenticator, requireAdmin } from '../../plugins/auth.ts';
import type { Scope } from '../access/scopes.ts';
import {
  BrandInput,
  BrandPatch,
  IdParams,
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
  SubIdParams,
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

  /* Owners */
  app.get('/owners', { ...read, schema: { querystring: PageQuery } }, (req) =>
    catalog.listOwners(req.query.page, req.query.per_page),
  );
  app.post('/owners', { ...write, schema: { body: OwnerInput } }, async (req, reply) =>
    reply.status(201).send({ data: await catalog.createOwner(req.body) }),
  );
  app.get('/owners/:id', { ...read, schema: { params: IdParams } }, async (req) => ({
    data: await catalog.getOwner(req.params.id),
  }));
  app.patch('/owners/:id', { ...write, schema: { params: IdParams, body: OwnerPatch } }, async (req) => ({
    data: await catalog.updateOwner(req.params.id, req.body),
  }));

  /* Sites (their read tokens are in the access module) */
  app.get('/sites', { ...read, schema: { querystring: PageQuery } }, (req) =>
    catalog.listSites(req.query.page, req.query.per_page),
  );
  app.post('/sites', { ...write, schema: { body: SiteInput } }, async (req, reply) =>
    reply.status(201).send({ data: await catalog.createSite(req.body) }),
  );
  app.get('/sites/:id', { ...read, schema: { params: IdParams } }, async (req) => ({
    data: await catalog.getSite(req.params.id),
  }));
  app.patch('/sites/:id', { ...write, schema: { params: IdParams, body: SitePatch } }, async (req) => ({
    data: await catalog.updateSite(req.params.id, req.body),
  }));

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

  /* List templates */
  app.get('/templates', { ...read, schema: { querystring: PageQuery } }, (req) =>
    catalog.listTemplates(req.query.page, req.query.per_page),
  );
  app.post('/templates', { ...write, schema: { body: TemplateInput } }, async (req, reply) =>
    reply.status(201).send({ data: await catalog.createTemplate(req.body) }),
  );
  app.get('/templates/:id', { ...read, schema: { params: IdParams } }, async (req) => ({
    data: await catalog.getTemplate(req.params.id),
  }));
  app.patch(
    '/templates/:id',
    { ...write, schema: { params: IdParams, body: TemplatePatch } },
    async (req) => ({
      data: await catalog.updateTemplate(req.params.id, req.body),
    }),
  );

  /* Brands */
  app.get('/brands', { ...read, schema: { querystring: PageQuery } }, (req) =>
    catalog.listBrands(req.query.page, req.query.per_page),
  );
  app.post('/brands', { ...write, schema: { body: BrandInput } }, async (req, reply) =>
    reply.status(201).send({ data: await catalog.createBrand(req.body) }),
  );
  app.get('/brands/:id', { ...read, schema: { params: IdParams } }, async (req) => ({
    data: await catalog.getBrand(req.params.id),
  }));
  app.patch('/brands/:id', { ...write, schema: { params: IdParams, body: BrandPatch } }, async (req) => ({
    data: await catalog.updateBrand(req.params.id, req.body),
  }));

  /* Offers and their trackers */
  app.get('/offers', { ...read, schema: { querystring: OfferQuery } }, (req) =>
    catalog.listOffers(req.query.page, req.query.per_page, req.query.brand_id),
  );
  app.post('/offers', { ...write, schema: { body: OfferInput } }, async (req, reply) =>
    reply.status(201).send({ data: await catalog.createOffer(req.body) }),
  );
  app.get('/offers/:id', { ...read, schema: { params: IdParams } }, async (req) => ({
    data: await catalog.getOffer(req.params.id),
  }));
  app.patch('/offers/:id', { ...write, schema: { params: IdParams, body: OfferPatch } }, async (req) => ({
    data: await catalog.updateOffer(req.params.id, req.body),
  }));
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

  /* Toplists, drafts, editions */
  app.get('/toplists', { ...read, schema: { querystring: ToplistQuery } }, (req) => {
    const q = req.query;
    return catalog.listToplists(
      { siteId: q.site_id, templateId: q.template_id, geoType: q.geo_type, geoCode: q.geo_code },
      q.page,
      q.per_page,
    );
  });
  app.post('/toplists', { ...write, schema: { body: ToplistInput } }, async (req, reply) =>
    reply.status(201).send({ data: await catalog.createToplist(req.body) }),
  );
  app.get('/toplists/:id', { ...read, schema: { params: IdParams } }, async (req) => ({
    data: await catalog.getToplist(req.params.id),
  }));
  app.patch('/toplists/:id', { ...write, schema: { params: IdParams, body: ToplistPatch } }, async (req) => ({
    data: await catalog.updateToplist(req.params.id, req.body),
  }));
  app.put(
    '/toplists/:id/items',
    { ...write, schema: { params: IdParams, body: ItemsInput } },
    async (req) => ({
      data: await catalog.replaceItems(req.params.id, req.body.items),
    }),
  );
  app.post(
    '/toplists/:id/publish',
    { ...publish, schema: { params: IdParams, body: PublishInput } },
    async (req) => {
      const before = await catalog.getToplist(req.params.id);
      const out = await catalog.publish(req.params.id, { by: req.admin!.tokenId, ...(req.body ?? {}) });
      req.audit = {
        before: { liveVersion: before.liveVersion, liveFrom: before.liveFrom, liveUntil: before.liveUntil },
        after: { liveVersion: out.version, liveFrom: out.toplist.liveFrom, liveUntil: out.toplist.liveUntil },
      };
      return { data: { version: out.version, publishedAt: out.publishedAt, toplist: out.toplist } };
    },
  );
  app.post('/toplists/:id/unpublish', { ...publish, schema: { params: IdParams } }, async (req) => {
    const before = await catalog.getToplist(req.params.id);
    const data = await catalog.unpublish(req.params.id);
    req.audit = { before: { liveVersion: before.liveVersion }, after: { liveVersion: data.liveVersion } };
    return { data };
  });
  app.get('/toplists/:id/editions', { ...read, schema: { params: IdParams } }, async (req) => ({
    data: await catalog.listEditions(req.params.id),
  }));
  app.get('/toplists/:id/editions/:subId', { ...read, schema: { params: SubIdParams } }, async (req) => ({
    data: await catalog.getEdition(req.params.id, req.params.subId),
  }));
}

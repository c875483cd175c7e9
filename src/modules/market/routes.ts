import type { FastifyInstance, FastifyRequest } from 'fastify';
import { type Authenticator, adminArea } from '../../plugins/auth.ts';
import type { Scope } from '../access/scopes.ts';
import {
  AdvertiserInput,
  AdvertiserParams,
  AdvertiserPatch,
  AvailabilityQuery,
  ListedInput,
  ProductInput,
  ProductParams,
  ProductPatch,
  ProductQuery,
  PublisherQuery,
  RefreshInput,
  RejectInput,
  ReservationInput,
  ReservationParams,
  ReservationQuery,
  StatementInput,
  StatementParams,
  StatementQuery,
} from './schemas.ts';
import type { MarketService } from './service.ts';

/** Who a timeline event names: the admin token behind the request. */
const actorOf = (req: FastifyRequest) => `admin-token:${req.admin?.tokenId ?? 'unknown'}`;

/** The marketplace admin API under /api/admin/v1/market; every write is audited (before/after on state changes). */
export async function registerMarketAdmin(
  scope: FastifyInstance,
  { market, tokens }: { market: MarketService; tokens: Authenticator<Scope> },
): Promise<void> {
  const { app, read, write } = adminArea(scope, tokens, { read: 'market:read', write: 'market:write' });

  app.get('/market/advertisers', { ...read, schema: { querystring: PublisherQuery } }, async (req) => ({
    data: await market.listAdvertisers(req.query.publisher),
  }));
  app.post('/market/advertisers', { ...write, schema: { body: AdvertiserInput } }, async (req, reply) => {
    const data = await market.createAdvertiser(req.body);
    req.audit = { after: data };
    return reply.status(201).send({ data });
  });
  app.get('/market/advertisers/:id', { ...read, schema: { params: AdvertiserParams } }, async (req) => ({
    data: await market.getAdvertiser(req.params.id),
  }));
  app.patch(
    '/market/advertisers/:id',
    { ...write, schema: { params: AdvertiserParams, body: AdvertiserPatch } },
    async (req) => {
      const before = await market.getAdvertiser(req.params.id);
      const data = await market.updateAdvertiser(req.params.id, req.body);
      req.audit = { before, after: data };
      return { data };
    },
  );

  app.get('/market/products', { ...read, schema: { querystring: ProductQuery } }, async (req) => ({
    data: await market.listProducts(req.query.connection_id),
  }));
  app.post('/market/products', { ...write, schema: { body: ProductInput } }, async (req, reply) => {
    const data = await market.createProduct(req.body);
    req.audit = { after: data };
    return reply.status(201).send({ data });
  });
  app.get('/market/products/:id', { ...read, schema: { params: ProductParams } }, async (req) => ({
    data: await market.getProduct(req.params.id),
  }));
  app.patch(
    '/market/products/:id',
    { ...write, schema: { params: ProductParams, body: ProductPatch } },
    async (req) => {
      const before = await market.getProduct(req.params.id);
      const data = await market.updateProduct(req.params.id, req.body);
      req.audit = { before, after: data };
      return { data };
    },
  );
  app.get(
    '/market/products/:id/availability',
    { ...read, schema: { params: ProductParams, querystring: AvailabilityQuery } },
    async (req) => ({ data: await market.availability(req.params.id, req.query.month, req.query.geo) }),
  );
  app.put(
    '/market/products/:id/availability',
    { ...write, schema: { params: ProductParams, body: ListedInput } },
    async (req) => {
      const data = await market.setListed(req.params.id, req.body);
      req.audit = { after: data };
      return { data };
    },
  );
  app.post(
    '/market/products/:id/availability/refresh',
    { ...write, schema: { params: ProductParams, body: RefreshInput } },
    async (req) => ({ data: await market.refreshNow(req.params.id, req.body) }),
  );

  app.get('/market/reservations', { ...read, schema: { querystring: ReservationQuery } }, async (req) => ({
    data: await market.listReservations(req.query),
  }));
  app.post('/market/reservations', { ...write, schema: { body: ReservationInput } }, async (req, reply) => {
    const data = await market.reserve(req.body, actorOf(req));
    req.audit = { after: { status: data.status, expires_at: data.expires_at } };
    return reply.status(201).send({ data });
  });
  app.get('/market/reservations/:id', { ...read, schema: { params: ReservationParams } }, async (req) => ({
    data: await market.getReservation(req.params.id),
  }));
  app.post(
    '/market/reservations/:id/approve',
    { ...write, schema: { params: ReservationParams } },
    async (req) => {
      const before = await market.getReservation(req.params.id);
      const data = await market.approve(req.params.id, actorOf(req));
      req.audit = {
        before: { status: before.status },
        after: { status: data.status, booking_id: data.booking_id, order_id: data.order_id },
      };
      return { data };
    },
  );
  app.post(
    '/market/reservations/:id/reject',
    { ...write, schema: { params: ReservationParams, body: RejectInput } },
    async (req) => {
      const data = await market.reject(req.params.id, req.body.reason, actorOf(req));
      req.audit = { before: { status: 'held' }, after: { status: data.status, reason: data.reason } };
      return { data };
    },
  );

  app.post(
    '/market/reservations/:id/statements',
    { ...write, schema: { params: ReservationParams, body: StatementInput } },
    async (req, reply) => {
      const data = await market.statements.issue(req.params.id, req.body.month, actorOf(req));
      req.audit = { targetId: data.id, after: { month: data.month, total: data.total } };
      return reply.status(201).send({ data });
    },
  );
  app.get(
    '/market/reservations/:id/statements',
    { ...read, schema: { params: ReservationParams } },
    async (req) => ({ data: await market.statements.listOf(req.params.id) }),
  );
  app.get('/market/statements', { ...read, schema: { querystring: StatementQuery } }, async (req) => ({
    data: await market.statements.list(req.query),
  }));
  app.get('/market/statements/:id', { ...read, schema: { params: StatementParams } }, async (req) => ({
    data: await market.statements.get(req.params.id),
  }));
  app.get(
    '/market/statements/:id/csv',
    { ...read, schema: { params: StatementParams } },
    async (req, reply) => {
      const { filename, body } = await market.statements.csv(req.params.id);
      return reply
        .header('content-type', 'text/csv; charset=utf-8')
        .header('content-disposition', `attachment; filename="${filename}"`)
        .send(body);
    },
  );
  app.post(
    '/market/statements/:id/reconcile',
    { ...write, schema: { params: StatementParams } },
    async (req) => {
      const data = await market.statements.reconcile(req.params.id);
      req.audit = { after: { adjustments: data.adjustments.length, adjusted_total: data.adjusted_total } };
      return { data };
    },
  );
}

import type { FastifyInstance } from 'fastify';
import { type Authenticator, adminArea } from '../../plugins/auth.ts';
import { createdWithSecret } from '../../plugins/replies.ts';
import { siteScopeOf } from '../../plugins/site-scope.ts';
import type { Scope } from '../access/scopes.ts';
import { publicConnection } from './connections.ts';
import {
  BookingInput,
  BookingParams,
  BookingQuery,
  ConnectionInput,
  ConnectionParams,
  ConnectionPatch,
  ForecastInput,
  LineInput,
  LineParams,
  LinePatch,
  PlacementInput,
  PlacementMapping,
  PlacementParams,
  PlacementUnmapParams,
  PublisherQuery,
} from './schemas.ts';
import type { AdserverService } from './service.ts';

/** Connections, inventory and placements, mounted under /api/admin/v1/adserver. */
export async function registerAdserverAdmin(
  scope: FastifyInstance,
  { adserver, tokens }: { adserver: AdserverService; tokens: Authenticator<Scope> },
): Promise<void> {
  const { app, read, write } = adminArea(scope, tokens, { read: 'adserver:read', write: 'adserver:write' });
  const conns = adserver.connections;

  app.get('/adserver/connections', { ...read, schema: { querystring: PublisherQuery } }, async (req) => ({
    data: await conns.list(req.query.publisher),
  }));
  app.post('/adserver/connections', { ...write, schema: { body: ConnectionInput } }, async (req, reply) =>
    createdWithSecret(reply, { data: await conns.create(req.body) }),
  );
  app.get('/adserver/connections/:id', { ...read, schema: { params: ConnectionParams } }, async (req) => ({
    data: publicConnection(await conns.get(req.params.id)),
  }));
  app.patch(
    '/adserver/connections/:id',
    { ...write, schema: { params: ConnectionParams, body: ConnectionPatch } },
    async (req) => ({ data: await conns.update(req.params.id, req.body) }),
  );
  // The connection's actions and reads that take only its id and answer `{ data }`.
  const ofConnection = (method: 'GET' | 'POST', path: string, answer: (id: string) => Promise<unknown>) =>
    app.route({
      method,
      url: `/adserver/connections/:id${path}`,
      ...(method === 'GET' ? read : write),
      schema: { params: ConnectionParams },
      handler: async (req) => ({ data: await answer(req.params.id) }),
    });
  ofConnection('POST', '/verify', (id) => conns.verify(id));
  ofConnection('POST', '/inventory/sync', (id) => adserver.syncInventory(id));
  ofConnection('GET', '/inventory', (id) => adserver.listSlots(id));
  ofConnection('POST', '/reports/pull', (id) => adserver.pullReports(id));
  ofConnection('GET', '/reports/pulls', (id) => adserver.pullHistory(id));
  ofConnection('GET', '/unmatched-delivery', (id) => adserver.unmatchedDelivery(id));

  app.get('/adserver/placements', { ...read, schema: { querystring: PublisherQuery } }, async (req) => ({
    data: await adserver.listPlacements(req.query.publisher, siteScopeOf(req)),
  }));
  app.post('/adserver/placements', { ...write, schema: { body: PlacementInput } }, async (req, reply) =>
    reply.status(201).send({ data: await adserver.createPlacement(req.body) }),
  );
  app.get('/adserver/placements/:id', { ...read, schema: { params: PlacementParams } }, async (req) => ({
    data: await adserver.getPlacement(req.params.id),
  }));
  app.put(
    '/adserver/placements/:id/slots',
    { ...write, schema: { params: PlacementParams, body: PlacementMapping } },
    async (req) => ({
      data: await adserver.mapPlacement(req.params.id, req.body.connection_id, req.body.inventory_id),
    }),
  );
  app.delete(
    '/adserver/placements/:id/slots/:connectionId',
    { ...write, schema: { params: PlacementUnmapParams } },
    async (req, reply) => {
      await adserver.unmapPlacement(req.params.id, req.params.connectionId);
      return reply.status(204).send();
    },
  );

  app.post(
    '/adserver/connections/:id/forecast',
    { ...read, schema: { params: ConnectionParams, body: ForecastInput } },
    async (req) => ({ data: await adserver.forecast(req.params.id, req.body) }),
  );

  app.get('/adserver/bookings', { ...read, schema: { querystring: BookingQuery } }, async (req) => ({
    data: await adserver.bookings.list(req.query.connection_id, siteScopeOf(req)),
  }));
  app.post('/adserver/bookings', { ...write, schema: { body: BookingInput } }, async (req, reply) =>
    reply.status(201).send({ data: await adserver.bookings.create(req.body) }),
  );
  app.get('/adserver/bookings/:id', { ...read, schema: { params: BookingParams } }, async (req) => ({
    data: await adserver.bookings.get(req.params.id),
  }));
  app.post(
    '/adserver/bookings/:id/lines',
    { ...write, schema: { params: BookingParams, body: LineInput } },
    async (req, reply) =>
      reply.status(201).send({ data: await adserver.bookings.addLine(req.params.id, req.body) }),
  );
  app.patch(
    '/adserver/bookings/:id/lines/:lineNo',
    { ...write, schema: { params: LineParams, body: LinePatch } },
    async (req) => ({ data: await adserver.bookings.updateLine(req.params.id, req.params.lineNo, req.body) }),
  );
  app.post('/adserver/bookings/:id/push', { ...write, schema: { params: BookingParams } }, async (req) => ({
    data: await adserver.bookings.push(req.params.id),
  }));
  app.get('/adserver/bookings/:id/pushes', { ...read, schema: { params: BookingParams } }, async (req) => ({
    data: await adserver.bookings.pushes(req.params.id),
  }));

  app.get('/adserver/bookings/:id/delivery', { ...read, schema: { params: BookingParams } }, async (req) => ({
    data: await adserver.delivery(req.params.id),
  }));
}

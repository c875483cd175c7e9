import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance } from 'fastify';
import type { CreativeFormat } from '../../config.ts';
import type { AuthThrottle } from '../../lib/auth-throttle.ts';
import { type AdvertiserPrincipal, requireAdvertiser } from '../../plugins/auth.ts';
import { imageOf, imageUploads } from '../creatives/routes.ts';
import { IMAGE_BODY } from '../creatives/schemas.ts';
import { AvailabilityQuery, ProductParams, ReservationParams, StatementParams } from '../market/schemas.ts';
import {
  LineParams,
  PortalReservationInput,
  PortalReservationQuery,
  PortalStatementQuery,
  PortalUploadQuery,
} from './schemas.ts';
import type { PortalService } from './service.ts';

/** Where the advertiser portal's API answers. */
export const PORTAL_PREFIX = '/api/portal/v1';

/**
 * The advertiser portal API (`/api/portal/v1`): an advertiser's own products, availability,
 * reservations, delivery and statements, with an advertiser token (`Authorization: Bearer pdb_…`).
 * Its writes are on the reservation's timeline, naming the token.
 */
export async function registerPortal(
  scope: FastifyInstance,
  deps: {
    portal: PortalService;
    verify: (token: string) => Promise<{ advertiserId: string; tokenId: number } | undefined>;
    throttle: AuthThrottle;
    maxBytes: Readonly<Record<CreativeFormat, number>>;
  },
): Promise<void> {
  const { portal } = deps;
  const app = scope.withTypeProvider<TypeBoxTypeProvider>();
  const auth = { onRequest: requireAdvertiser(deps.verify, deps.throttle) };
  const who = (req: { advertiser?: AdvertiserPrincipal }) => req.advertiser!;

  app.get('/me', { ...auth, schema: { summary: 'The advertiser this token acts for' } }, async (req) => ({
    data: await portal.me(who(req)),
  }));
  app.get(
    '/products',
    { ...auth, schema: { summary: 'Products you can book, with their prices' } },
    async (req) => ({ data: await portal.products(who(req)) }),
  );
  app.get(
    '/products/:id/availability',
    {
      ...auth,
      schema: {
        summary: 'A product’s availability per geo and month',
        params: ProductParams,
        querystring: AvailabilityQuery,
      },
    },
    async (req) => ({
      data: await portal.availability(who(req), req.params.id, req.query.month, req.query.geo),
    }),
  );
  app.get(
    '/reservations',
    { ...auth, schema: { summary: 'Your reservations, newest first', querystring: PortalReservationQuery } },
    async (req) => ({ data: await portal.reservations(who(req), req.query) }),
  );
  app.post(
    '/reservations',
    {
      ...auth,
      schema: { summary: 'Reserve lines: held until the publisher approves', body: PortalReservationInput },
    },
    async (req, reply) => reply.status(201).send({ data: await portal.reserve(who(req), req.body) }),
  );
  app.get(
    '/reservations/:id',
    {
      ...auth,
      schema: { summary: 'One reservation with its lines and timeline', params: ReservationParams },
    },
    async (req) => ({ data: await portal.reservation(who(req), req.params.id) }),
  );
  app.post(
    '/reservations/:id/withdraw',
    {
      ...auth,
      schema: {
        summary: 'Withdraw a held reservation: its impressions are freed',
        params: ReservationParams,
      },
    },
    async (req) => ({ data: await portal.withdraw(who(req), req.params.id) }),
  );
  app.get(
    '/reservations/:id/delivery',
    {
      ...auth,
      schema: { summary: 'Delivery per line and day beside Podium’s own counts', params: ReservationParams },
    },
    async (req) => ({ data: await portal.delivery(who(req), req.params.id) }),
  );
  app.get(
    '/creatives',
    { ...auth, schema: { summary: 'Creatives of your reservations with their moderation state' } },
    async (req) => ({ data: await portal.creativesOf(who(req)) }),
  );
  await imageUploads(app, deps.maxBytes, (upload) => {
    upload.withTypeProvider<TypeBoxTypeProvider>().post(
      '/reservations/:id/lines/:line/creatives',
      {
        ...auth,
        schema: {
          summary: 'Upload a creative (the image bytes as the body) for a line of your reservation',
          params: LineParams,
          querystring: PortalUploadQuery,
          bodyContent: IMAGE_BODY,
        },
      },
      async (req, reply) => {
        const { creative, created } = await portal.upload(
          who(req),
          req.params.id,
          req.params.line,
          req.query,
          imageOf(req.body),
        );
        return reply.status(created ? 201 : 200).send({ data: creative });
      },
    );
  });
  app.get(
    '/statements',
    {
      ...auth,
      schema: { summary: 'Your issued statements, newest first', querystring: PortalStatementQuery },
    },
    async (req) => ({ data: await portal.statements(who(req), req.query) }),
  );
  app.get(
    '/statements/:id',
    { ...auth, schema: { summary: 'One statement with its lines and adjustments', params: StatementParams } },
    async (req) => ({ data: await portal.statement(who(req), req.params.id) }),
  );
  app.get(
    '/statements/:id/csv',
    { ...auth, schema: { summary: 'One statement as CSV', params: StatementParams } },
    async (req, reply) => {
      const { filename, body } = await portal.statementCsv(who(req), req.params.id);
      return reply
        .header('content-type', 'text/csv; charset=utf-8')
        .header('content-disposition', `attachment; filename="${filename}"`)
        .send(body);
    },
  );
}

import type { FastifyInstance } from 'fastify';
import { type Authenticator, adminArea } from '../../plugins/auth.ts';
import { createdWithSecret } from '../../plugins/replies.ts';
import { siteScopeOf } from '../../plugins/site-scope.ts';
import type { Scope } from '../access/scopes.ts';
import {
  DeliveryList,
  DeliveryOne,
  EndpointInput,
  EndpointList,
  EndpointOne,
  EndpointParams,
  EndpointPatch,
  EndpointQuery,
  EndpointWithSecret,
  PageQuery,
  RotateInput,
} from './schemas.ts';
import type { WebhookService } from './service.ts';

const tags = ['webhooks'];

/** The webhooks admin API, mounted under /api/admin/v1. */
export async function registerWebhookAdmin(
  scope: FastifyInstance,
  { webhooks, tokens }: { webhooks: WebhookService; tokens: Authenticator<Scope> },
): Promise<void> {
  const { app, read, write } = adminArea(scope, tokens, { read: 'webhooks:read', write: 'webhooks:write' });

  app.get(
    '/webhooks',
    {
      ...read,
      schema: {
        summary: 'List webhook endpoints (optionally those of one site), newest first',
        tags,
        querystring: EndpointQuery,
        response: { 200: EndpointList },
      },
    },
    (req) => webhooks.list(req.query.site_id, req.query.page, req.query.per_page, siteScopeOf(req)),
  );
  app.post(
    '/webhooks',
    {
      ...write,
      schema: {
        summary: 'Register an endpoint; the signing secret (whsec_…) is in this answer only',
        tags,
        body: EndpointInput,
        response: { 201: EndpointWithSecret },
      },
    },
    async (req, reply) => {
      const { endpoint, secret } = await webhooks.create(req.body);
      return createdWithSecret(reply, { data: endpoint, secret });
    },
  );
  app.get(
    '/webhooks/:id',
    {
      ...read,
      schema: { summary: 'One endpoint', tags, params: EndpointParams, response: { 200: EndpointOne } },
    },
    async (req) => ({ data: await webhooks.get(req.params.id) }),
  );
  app.patch(
    '/webhooks/:id',
    {
      ...write,
      schema: {
        summary: 'Change an endpoint (url, events, siteId, description); enabled=true re-enables it',
        tags,
        params: EndpointParams,
        body: EndpointPatch,
        response: { 200: EndpointOne },
      },
    },
    async (req) => ({ data: await webhooks.update(req.params.id, req.body) }),
  );
  app.delete(
    '/webhooks/:id',
    {
      ...write,
      schema: {
        summary: 'Delete an endpoint with its pending deliveries and log',
        tags,
        params: EndpointParams,
      },
    },
    async (req, reply) => {
      await webhooks.remove(req.params.id);
      return reply.status(204).send();
    },
  );
  app.post(
    '/webhooks/:id/rotate',
    {
      ...write,
      schema: {
        summary: 'New signing secret (in this answer only); the old one also signs for graceSeconds',
        tags,
        params: EndpointParams,
        body: RotateInput,
        response: { 200: EndpointWithSecret },
      },
    },
    async (req, reply) => {
      const { endpoint, secret } = await webhooks.rotate(req.params.id, req.body.graceSeconds);
      return reply.header('cache-control', 'no-store').send({ data: endpoint, secret });
    },
  );
  app.post(
    '/webhooks/:id/test',
    {
      ...write,
      schema: {
        summary: 'Send a webhook.test event now (one try, logged) and return the delivery',
        tags,
        params: EndpointParams,
        response: { 200: DeliveryOne },
      },
    },
    async (req) => ({ data: await webhooks.test(req.params.id) }),
  );
  app.get(
    '/webhooks/:id/deliveries',
    {
      ...read,
      schema: {
        summary:
          "The endpoint's deliveries, newest first, each with every attempt (status, latency, error, next try)",
        tags,
        params: EndpointParams,
        querystring: PageQuery,
        response: { 200: DeliveryList },
      },
    },
    async (req) => webhooks.deliveries(req.params.id, req.query.page, req.query.per_page),
  );
}

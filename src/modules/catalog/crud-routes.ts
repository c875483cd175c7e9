import type { Static, TObject, TSchema } from '@sinclair/typebox';
import type { FastifyInstance, onRequestAsyncHookHandler } from 'fastify';
import { IdParams } from '../../lib/schema-parts.ts';
import { siteScopeOf } from '../../plugins/site-scope.ts';
import type { Crud } from './crud.ts';

type PageQueryT = { page?: number; per_page?: number; q?: string };

/** Schemas and access rules of one editorial entity's four routes. */
export interface CrudRouteSpec<F, Q extends TObject> {
  input: TSchema;
  patch: TSchema;
  /** Page parameters (with the `q` search) plus the entity's list filters. */
  query: Q;
  /** The list filter from the query string and the sites the admin is limited to (undefined: every site). */
  filter?: (q: Static<Q>, sites: readonly number[] | undefined) => F;
  read: onRequestAsyncHookHandler;
  write: onRequestAsyncHookHandler;
}

/**
 * The four routes every editorial entity shares: `GET path` (a page, searchable with `q`), `POST path` (201),
 * `GET path/:id` and `PATCH path/:id`, each answering `{ data }`.
 */
export function registerCrud<T, I, P, F, Q extends TObject>(
  app: FastifyInstance,
  path: string,
  crud: Crud<T, I, P, F>,
  spec: CrudRouteSpec<F, Q>,
): void {
  const { read, write } = spec;
  app.get(path, { onRequest: read, schema: { querystring: spec.query } }, (req) => {
    const q = req.query as Static<Q> & PageQueryT;
    return crud.list(q.page, q.per_page, spec.filter?.(q, siteScopeOf(req)), q.q?.trim());
  });
  app.post(path, { onRequest: write, schema: { body: spec.input } }, async (req, reply) =>
    reply.status(201).send({ data: await crud.create(req.body as I) }),
  );
  app.get(`${path}/:id`, { onRequest: read, schema: { params: IdParams } }, async (req) => ({
    data: await crud.get((req.params as Static<typeof IdParams>).id),
  }));
  app.patch(
    `${path}/:id`,
    { onRequest: write, schema: { params: IdParams, body: spec.patch } },
    async (req) => ({
      data: await crud.update((req.params as Static<typeof IdParams>).id, req.body as P),
    }),
  );
}

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
 * `GET path/:id` and `PATCH path/:id`, each answering `{ data }`; a PATCH's audit row keeps the
 * fields it sent as they were before and after.
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
    async (req) => {
      const { id } = req.params as Static<typeof IdParams>;
      const keys = Object.keys(req.body as object);
      // Read just before the change, outside its statement: a write landing in between shows as
      // part of this one's before, which the audit row's request id still tells apart.
      const before = await crud.get(id);
      const data = await crud.update(id, req.body as P);
      req.audit = { before: fieldsOf(before, keys), after: fieldsOf(data, keys) };
      return { data };
    },
  );
}

/** The fields of a record a change sent, as the record holds them (for the audit row's before/after). */
function fieldsOf(record: unknown, keys: readonly string[]): Record<string, unknown> {
  const r = record as Record<string, unknown>;
  return Object.fromEntries(keys.filter((k) => k in r).map((k) => [k, r[k]]));
}

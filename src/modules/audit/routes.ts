import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { Type as T } from '@sinclair/typebox';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { invalidField } from '../../lib/errors.ts';
import { isDay, isInstant } from '../../lib/time.ts';
import { type Authenticator, requireAdmin } from '../../plugins/auth.ts';
import type { Scope } from '../access/scopes.ts';
import { AuditList } from './schemas.ts';
import type { AuditLog } from './service.ts';

/** What a handler adds to its audit row: the target when the URL does not name it, before/after. */
export interface AuditDetail {
  targetId?: string | number;
  before?: unknown;
  after?: unknown;
}

declare module 'fastify' {
  interface FastifyRequest {
    audit?: AuditDetail;
  }
}

const WRITES = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);
/**
 * POSTs that change nothing and call no one, left out of the log: the draft editor asks for its
 * compliance at every edit, and a row each time would bury the writes.
 */
const NOT_WRITES = new Set(['POST /toplists/:id/compliance']);

/** The id a create returned (`{data: {id}}`), read from the serialized payload. */
function createdId(payload: unknown): string | undefined {
  if (typeof payload !== 'string' || payload.length > 1_000_000) return undefined;
  try {
    const id = (JSON.parse(payload) as { data?: { id?: unknown } }).data?.id;
    return typeof id === 'number' || typeof id === 'string' ? String(id) : undefined;
  } catch {
    return undefined;
  }
}

/** Who wrote: the ids the audit row keeps and the actor it names. */
interface Writer {
  adminTokenId: number | null;
  userId: number | null;
  actor: string;
}

/**
 * An onSend hook recording each successful write of the scope whose writer `writerOf` names:
 * who (ids, client address and user agent), what (method and route pattern, target, names of
 * the fields sent — never their values), and before/after where the handler supplied them.
 * onSend, not onResponse: the row is written before the client hears back, so whoever reads the
 * log after a write finds it there.
 */
function auditWrites(
  scope: FastifyInstance,
  audit: AuditLog,
  prefix: string,
  writerOf: (request: FastifyRequest) => Writer | undefined,
  area?: string,
): void {
  scope.addHook('onSend', async (request, reply, payload) => {
    const writer = writerOf(request);
    if (!WRITES.has(request.method) || !writer || reply.statusCode >= 400) return payload;
    const route = request.routeOptions.url ?? '';
    if (NOT_WRITES.has(`${request.method} ${route.slice(prefix.length)}`)) return payload;
    const params = (request.params ?? {}) as Record<string, unknown>;
    const body = request.body;
    const detail = request.audit ?? {};
    const targetId =
      detail.targetId ?? params.id ?? (reply.statusCode === 201 ? createdId(payload) : undefined);
    const ua = request.headers['user-agent'];
    await audit.record({
      ...writer,
      address: request.ip,
      userAgent: typeof ua === 'string' ? ua.slice(0, 300) : null,
      action: `${request.method} ${route}`,
      targetType: area ?? route.slice(prefix.length).split('/')[1] ?? 'unknown',
      targetId: targetId === undefined ? null : String(targetId),
      status: reply.statusCode,
      requestId: request.id,
      // An upload's body is the image (a Buffer): it has no fields to name.
      fields:
        body && typeof body === 'object' && !Array.isArray(body) && !Buffer.isBuffer(body)
          ? Object.keys(body).slice(0, 100)
          : [],
      before: detail.before,
      after: detail.after,
    });
    return payload;
  });
}

/** Records every successful admin write of this scope: the user, the admin token or both. */
export function auditAdminWrites(scope: FastifyInstance, audit: AuditLog, prefix: string): void {
  auditWrites(scope, audit, prefix, (request) => {
    if (!request.admin) return undefined;
    const { tokenId, userId } = request.admin;
    return {
      adminTokenId: tokenId,
      userId,
      actor: userId !== null ? `user:${userId}` : `admin-token:${tokenId}`,
    };
  });
}

/**
 * Records every successful write of the advertiser portal, naming the advertiser token behind it,
 * in the marketplace's area of the log (beside the publisher's own reservation writes).
 */
export function auditAdvertiserWrites(scope: FastifyInstance, audit: AuditLog, prefix: string): void {
  auditWrites(
    scope,
    audit,
    prefix,
    (request) =>
      request.advertiser
        ? { adminTokenId: null, userId: null, actor: `advertiser-token:${request.advertiser.tokenId}` }
        : undefined,
    'market',
  );
}

const BOUND = 'an RFC 3339 timestamp with an offset (2026-12-04T09:00:00+01:00) or a UTC day (2026-12-04)';

/**
 * A bound of the date-range filter as an instant: a timestamp as written, a day at its UTC
 * midnight — the next day's for `to`, so a day given as `to` is included whole.
 */
function instantOf(field: 'from' | 'to', raw: string | undefined): Date | undefined {
  if (raw === undefined) return undefined;
  if (isDay(raw)) return new Date(Date.parse(`${raw}T00:00:00Z`) + (field === 'to' ? 86_400_000 : 0));
  if (isInstant(raw)) return new Date(raw.replace(' ', 'T'));
  throw invalidField(field, `must be ${BOUND}`);
}

/** `GET /audit`: newest first, keyset-paged with `before_id`, each row named and as a sentence. */
export async function registerAuditRoutes(
  scope: FastifyInstance,
  audit: AuditLog,
  tokens: Authenticator<Scope>,
) {
  const app = scope.withTypeProvider<TypeBoxTypeProvider>();
  app.get(
    '/audit',
    {
      onRequest: requireAdmin(tokens, 'admin'),
      schema: {
        summary: 'The audit log: newest first, each row named and as a sentence',
        response: { 200: AuditList },
        querystring: T.Object({
          target_type: T.Optional(T.String({ minLength: 1, maxLength: 50 })),
          target_id: T.Optional(T.String({ minLength: 1, maxLength: 100 })),
          admin_token_id: T.Optional(T.Integer({ minimum: 1, maximum: 2147483647 })),
          user_id: T.Optional(T.Integer({ minimum: 1, maximum: 2147483647 })),
          action: T.Optional(
            T.String({
              minLength: 1,
              maxLength: 200,
              description: 'An action as stored, e.g. `POST /api/admin/v1/toplists/:id/publish`',
            }),
          ),
          from: T.Optional(T.String({ minLength: 1, maxLength: 40, description: `First instant: ${BOUND}` })),
          to: T.Optional(
            T.String({
              minLength: 1,
              maxLength: 40,
              description: `End (exclusive for a timestamp, inclusive for a day): ${BOUND}`,
            }),
          ),
          kind: T.Optional(
            T.Union([T.Literal('writes'), T.Literal('sign-ins')], {
              description:
                '`writes`: everything but console sign-ins and sign-outs; `sign-ins`: those only (default both)',
            }),
          ),
          before_id: T.Optional(T.Integer({ minimum: 1, maximum: Number.MAX_SAFE_INTEGER })),
          limit: T.Optional(T.Integer({ minimum: 1, maximum: 200 })),
        }),
      },
    },
    async (req) => {
      const q = req.query;
      const limit = q.limit ?? 50;
      const from = instantOf('from', q.from);
      const to = instantOf('to', q.to);
      if (from && to && to <= from) throw invalidField('to', 'must be later than from');
      const data = await audit.list({
        targetType: q.target_type,
        targetId: q.target_id,
        adminTokenId: q.admin_token_id,
        userId: q.user_id,
        action: q.action,
        from,
        to,
        kind: q.kind,
        beforeId: q.before_id,
        limit,
      });
      const last = data.at(-1);
      return { data, meta: { limit, next_before_id: data.length === limit && last ? last.id : null } };
    },
  );
}

import { Type as T } from '@sinclair/typebox';
import { strict } from '../../lib/schema-parts.ts';

const NullableString = T.Union([T.String(), T.Null()]);
const NullableInt = T.Union([T.Integer(), T.Null()]);

/** One audit row as `GET /audit` answers it. */
const AuditRowView = T.Object(
  {
    id: T.Integer(),
    at: T.String({ format: 'date-time' }),
    adminTokenId: NullableInt,
    userId: NullableInt,
    address: NullableString,
    userAgent: NullableString,
    actor: T.String({
      description: '`user:{id}`, `admin-token:{id}`, `cli`, or a job (`job:…`, `system:…`)',
    }),
    actorName: T.Union([T.String(), T.Null()], {
      description: 'The person’s display name or the admin token’s name; null for the CLI and jobs',
    }),
    action: T.String({
      description: 'Method and route pattern (`POST /api/admin/v1/toplists/:id/publish`), or a job’s action',
    }),
    targetType: T.String({
      description: 'The area: the first segment of the route (`toplists`, `session`…)',
    }),
    targetId: NullableString,
    targetName: T.Union([T.String(), T.Null()], {
      description: 'The target’s name (toplist, brand, site, webhook…); null when it has none or is gone',
    }),
    summary: T.String({
      description: 'The row as a sentence: `Ana Novak published toplist “Best casinos SE”`',
    }),
    status: T.Integer(),
    requestId: NullableString,
    fields: T.Array(T.String(), { description: 'Names of the fields sent, never their values' }),
    before: T.Unknown({
      description:
        'The record before, where the route keeps it (catalogue changes: the fields sent; publishes, tokens, people)',
    }),
    after: T.Unknown({ description: 'The record after, likewise' }),
  },
  strict,
);

export const AuditList = T.Object(
  {
    data: T.Array(AuditRowView),
    meta: T.Object(
      {
        limit: T.Integer(),
        next_before_id: T.Union([T.Integer(), T.Null()], { description: 'The `before_id` of the next page' }),
      },
      strict,
    ),
  },
  strict,
);

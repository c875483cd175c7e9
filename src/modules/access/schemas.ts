import { Type as T } from '@sinclair/typebox';
import { strict } from '../../lib/schema-parts.ts';
import { SCOPES } from './scopes.ts';

/** Request schemas of the token admin API. Unknown fields are rejected, not ignored. */

export const TokenInput = T.Object({ name: T.Optional(T.String({ maxLength: 200 })) }, strict);

export const AdminTokenInput = T.Object(
  {
    name: T.String({ minLength: 1, maxLength: 200 }),
    scopes: T.Array(T.Union(SCOPES.map((s) => T.Literal(s))), {
      minItems: 1,
      maxItems: SCOPES.length,
      uniqueItems: true,
    }),
  },
  strict,
);

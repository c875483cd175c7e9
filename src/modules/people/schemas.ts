import { Type as T } from '@sinclair/typebox';
import { RowId, strict } from '../../lib/schema-parts.ts';
import { SCOPES } from '../access/scopes.ts';

/** Request schemas of users, roles, invitations and one's own profile. Unknown fields are rejected. */

const Scopes = T.Array(T.Union(SCOPES.map((s) => T.Literal(s))), {
  minItems: 1,
  maxItems: SCOPES.length,
  uniqueItems: true,
});
// Printable, no control characters: names appear in lists and the audit log.
const Name = (max: number) =>
  T.String({ minLength: 1, maxLength: max, pattern: '^[^\\u0000-\\u001f\\u007f]+$' });
const Email = T.String({
  minLength: 3,
  maxLength: 320,
  pattern: '^[^\\s@\\u0000-\\u001f]+@[^\\s@\\u0000-\\u001f]+\\.[^\\s@\\u0000-\\u001f]+$',
  description: 'An email address; unique regardless of case',
});
const Password = T.String({ minLength: 1, maxLength: 1000 });

export const RoleInput = T.Object(
  { name: Name(60), description: T.Optional(T.String({ maxLength: 500 })), scopes: Scopes },
  strict,
);
export const RolePatch = T.Object(
  {
    name: T.Optional(Name(60)),
    description: T.Optional(T.String({ maxLength: 500 })),
    scopes: T.Optional(Scopes),
  },
  strict,
);
export const InviteInput = T.Object(
  { email: Email, displayName: T.Optional(T.String({ maxLength: 200 })), roleId: RowId },
  strict,
);
export const UserPatch = T.Object(
  {
    displayName: T.Optional(T.String({ maxLength: 200 })),
    roleId: T.Optional(RowId),
    siteIds: T.Optional(
      T.Union([T.Array(RowId, { minItems: 1, maxItems: 500, uniqueItems: true }), T.Null()], {
        description: 'The sites the user is limited to; null: every site',
      }),
    ),
  },
  strict,
);
export const UserQuery = T.Object({
  status: T.Optional(T.Union([T.Literal('invited'), T.Literal('active'), T.Literal('suspended')])),
  after_id: T.Optional(T.Integer({ minimum: 0, maximum: 2147483647 })),
  limit: T.Optional(T.Integer({ minimum: 1, maximum: 200 })),
});
export const AcceptInput = T.Object(
  {
    secret: T.String({ minLength: 1, maxLength: 100 }),
    password: Password,
    displayName: T.Optional(T.String({ maxLength: 200 })),
  },
  strict,
);
export const ResetRequest = T.Object({ email: T.String({ minLength: 3, maxLength: 320 }) }, strict);
export const ResetAccept = T.Object(
  { secret: T.String({ minLength: 1, maxLength: 100 }), password: Password },
  strict,
);
const Code = T.String({
  minLength: 6,
  maxLength: 40,
  description: 'A 6-digit code of the authenticator app (or, where said, a recovery code)',
});
export const TwoFactorCode = T.Object({ code: Code }, strict);
export const TwoFactorOff = T.Object({ code: T.Optional(Code), password: T.Optional(Password) }, strict);
export const PeopleSettings = T.Object({ requireTwoFactor: T.Boolean() }, strict);
export const PasswordChange = T.Object({ currentPassword: Password, newPassword: Password }, strict);
export const ProfilePatch = T.Object({ displayName: T.String({ maxLength: 200 }) }, strict);
export const PersonalTokenInput = T.Object({ name: Name(200), scopes: Scopes }, strict);

import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance } from 'fastify';
import { AppError } from '../../lib/errors.ts';
import { IdParams } from '../../lib/schema-parts.ts';
import { requireAdmin, requireUser, SESSION_COOKIE } from '../../plugins/auth.ts';
import { createdWithSecret } from '../../plugins/replies.ts';
import type { AccessService } from '../access/service.ts';
import {
  AcceptInput,
  InviteInput,
  PasswordChange,
  PeopleSettings,
  PersonalTokenInput,
  ProfilePatch,
  ResetAccept,
  ResetRequest,
  RoleInput,
  RolePatch,
  TwoFactorCode,
  TwoFactorOff,
  UserPatch,
  UserQuery,
} from './schemas.ts';
import type { PeopleService } from './service.ts';

/**
 * People in the admin API: roles and users (`users:read` / `users:write`), accepting an
 * invitation (public: the link's secret is the credential), and a person's own profile,
 * password, sessions and personal tokens (`/me`, any signed-in person).
 */
export async function registerPeople(
  scope: FastifyInstance,
  deps: { people: PeopleService; access: AccessService },
): Promise<void> {
  const { people, access } = deps;
  const app = scope.withTypeProvider<TypeBoxTypeProvider>();
  const read = { onRequest: requireAdmin(access, 'users:read') };
  const write = { onRequest: requireAdmin(access, 'users:write') };
  const me = { onRequest: requireUser(access) };

  /* Roles */
  app.get(
    '/roles',
    { ...read, schema: { summary: 'Built-in and custom roles with their scopes' } },
    async () => ({
      data: await people.listRoles(),
    }),
  );
  app.post(
    '/roles',
    { ...write, schema: { summary: 'Create a custom role', body: RoleInput } },
    async (req, reply) => {
      const data = await people.createRole(req.body);
      req.audit = { before: null, after: data };
      return reply.status(201).send({ data });
    },
  );
  app.patch(
    '/roles/:id',
    { ...write, schema: { summary: 'Change a custom role', params: IdParams, body: RolePatch } },
    async (req) => {
      const { before, after } = await people.updateRole(req.params.id, req.body);
      req.audit = { before, after };
      return { data: after };
    },
  );
  app.delete(
    '/roles/:id',
    { ...write, schema: { summary: 'Delete a custom role no one holds', params: IdParams } },
    async (req, reply) => {
      req.audit = { before: await people.deleteRole(req.params.id), after: null };
      return reply.status(204).send();
    },
  );

  /* Users */
  app.get('/users', { ...read, schema: { summary: 'Users by id', querystring: UserQuery } }, async (req) => {
    const limit = req.query.limit ?? 50;
    const data = await people.listUsers({ status: req.query.status, afterId: req.query.after_id, limit });
    const last = data.at(-1);
    return { data, meta: { limit, next_after_id: data.length === limit && last ? last.id : null } };
  });
  app.get('/users/:id', { ...read, schema: { summary: 'One user', params: IdParams } }, async (req) => ({
    data: await people.getUser(req.params.id),
  }));
  app.post(
    '/users',
    {
      ...write,
      schema: {
        summary:
          'Invite a person by email with a role (mails the one-time link, or returns it when no mail is sent)',
        body: InviteInput,
      },
    },
    async (req, reply) => {
      const { user, invitation } = await people.invite(req.admin!, req.body);
      req.audit = { before: null, after: { email: user.email, roleId: user.role.id, status: user.status } };
      return createdWithSecret(reply, { data: user, invitation });
    },
  );
  app.patch(
    '/users/:id',
    {
      ...write,
      schema: { summary: "Change a user's display name, role or sites", params: IdParams, body: UserPatch },
    },
    async (req) => {
      const { before, after } = await people.updateUser(req.admin!, req.params.id, req.body);
      req.audit = { before: brief(before), after: brief(after) };
      return { data: after };
    },
  );
  app.post(
    '/users/:id/suspend',
    {
      ...write,
      schema: { summary: 'Suspend a user: their sessions and personal tokens end at once', params: IdParams },
    },
    async (req) => {
      const { before, after } = await people.suspend(req.admin!, req.params.id);
      req.audit = { before: brief(before), after: brief(after) };
      return { data: after };
    },
  );
  app.post(
    '/users/:id/reactivate',
    { ...write, schema: { summary: 'Lift a suspension', params: IdParams } },
    async (req) => {
      const { before, after } = await people.reactivate(req.admin!, req.params.id);
      req.audit = { before: brief(before), after: brief(after) };
      return { data: after };
    },
  );
  app.post(
    '/users/:id/invitation',
    {
      ...write,
      schema: { summary: 'A new invitation link (the earlier one stops working)', params: IdParams },
    },
    async (req, reply) => createdWithSecret(reply, { data: await people.reinvite(req.params.id) }),
  );
  app.post(
    '/users/:id/password-reset',
    {
      ...write,
      schema: {
        summary: 'Issue a one-time password-reset link for an active user (mailed, or returned to copy)',
        params: IdParams,
      },
    },
    async (req, reply) =>
      createdWithSecret(reply, { data: await people.issueReset(req.admin!, req.params.id) }),
  );

  /* Accepting a one-time link: the secret is the credential, wrong ones are throttled per address. */
  app.post(
    '/invitations/accept',
    {
      config: { auth: 'self' },
      schema: { summary: 'Accept an invitation or the first-run link: set the password', body: AcceptInput },
    },
    async (req) => {
      try {
        return { data: await people.acceptLink(req.body.secret, req.body.password, req.body.displayName) };
      } catch (err) {
        if (err instanceof AppError && err.code === 'not_found')
          throw await access.throttle.refusal('console_sign_in', req.ip, err);
        throw err;
      }
    },
  );

  app.delete(
    '/users/:id/two-factor',
    {
      ...write,
      schema: {
        summary: "Turn off a user's two-factor (lost phone and codes); an owner's takes an owner",
        params: IdParams,
      },
    },
    async (req) => {
      const after = await people.resetTwoFactor(req.admin!, req.params.id);
      req.audit = { before: { twoFactor: 'on' }, after: { twoFactor: 'off (by an admin)' } };
      return { data: after };
    },
  );

  /* Workspace settings of people: the owner's switch requiring two-factor for everyone. */
  app.get(
    '/settings/people',
    { ...read, schema: { summary: 'People settings (two-factor required?)' } },
    async () => ({
      data: await people.settings(),
    }),
  );
  app.put(
    '/settings/people',
    {
      ...write,
      schema: {
        summary: 'Require two-factor for everyone (owner only; sessions without two-factor end)',
        body: PeopleSettings,
      },
    },
    async (req) => {
      const { before, after, sessionsEnded } = await people.setRequireTwoFactor(
        req.admin!,
        req.body.requireTwoFactor,
      );
      req.audit = { before, after };
      return { data: { ...after, sessionsEnded } };
    },
  );

  /* Password reset: public; the same 202 whether or not the email has an account. */
  app.post(
    '/session/reset',
    {
      config: { auth: 'self' },
      schema: {
        summary: 'Ask for a password-reset link by mail (the same answer for every email)',
        body: ResetRequest,
      },
    },
    async (req, reply) => reply.status(202).send({ data: await people.requestReset(req.body.email, req.ip) }),
  );
  app.post(
    '/session/reset/accept',
    {
      config: { auth: 'self' },
      schema: {
        summary: 'Set a new password with a reset link (every session of the user ends)',
        body: ResetAccept,
      },
    },
    async (req) => {
      try {
        return { data: await people.acceptLink(req.body.secret, req.body.password, undefined, ['reset']) };
      } catch (err) {
        if (err instanceof AppError && err.code === 'not_found')
          throw await access.throttle.refusal('console_sign_in', req.ip, err);
        throw err;
      }
    },
  );

  /* One's own */
  app.get('/me', { ...me, schema: { summary: 'Your profile' } }, async (req) => ({
    data: await people.getUser(req.admin!.userId!),
  }));
  app.patch(
    '/me',
    { ...me, schema: { summary: 'Change your display name', body: ProfilePatch } },
    async (req) => {
      const { after } = await people.updateUser(req.admin!, req.admin!.userId!, req.body);
      return { data: after };
    },
  );
  app.post(
    '/me/password',
    { ...me, schema: { summary: 'Change your password (your other sessions end)', body: PasswordChange } },
    async (req, reply) => {
      const cookie = req.cookies[SESSION_COOKIE];
      const current = cookie && !req.headers.authorization ? await access.resolveSession(cookie) : null;
      await people.changePassword(
        req.admin!.userId!,
        current?.id ?? null,
        req.body.currentPassword,
        req.body.newPassword,
      );
      return reply.status(204).send();
    },
  );
  app.get('/me/sessions', { ...me, schema: { summary: 'Your live sessions' } }, async (req) => ({
    data: await access.sessions.listForUser(req.admin!.userId!),
  }));
  app.delete(
    '/me/sessions',
    { ...me, schema: { summary: 'Sign out everywhere (this session included)' } },
    async (req) => ({ data: { ended: await access.sessions.endAllForUser(req.admin!.userId!) } }),
  );
  /* One's own two-factor */
  app.get(
    '/me/two-factor',
    { ...me, schema: { summary: 'Your two-factor: on or off, recovery codes left' } },
    async (req) => ({
      data: await people.twoFactorState(req.admin!.userId!),
    }),
  );
  app.post(
    '/me/two-factor',
    {
      ...me,
      schema: {
        summary: 'Start two-factor enrolment: the secret as otpauth:// URI and QR code (shown once)',
      },
    },
    async (req, reply) => createdWithSecret(reply, { data: await people.startEnrolment(req.admin!.userId!) }),
  );
  app.post(
    '/me/two-factor/confirm',
    {
      ...me,
      schema: {
        summary: 'Confirm enrolment with a first code: two-factor is on, ten recovery codes (shown once)',
        body: TwoFactorCode,
      },
    },
    async (req, reply) => {
      const recoveryCodes = await people.confirmEnrolment(req.admin!.userId!, req.body.code, req.ip);
      req.audit = { before: { twoFactor: 'off' }, after: { twoFactor: 'on' } };
      return createdWithSecret(reply, { data: { recoveryCodes } });
    },
  );
  app.post(
    '/me/two-factor/disable',
    {
      ...me,
      schema: {
        summary: 'Turn two-factor off with a current code, a recovery code or your password',
        body: TwoFactorOff,
      },
    },
    async (req, reply) => {
      await people.disableTwoFactor(req.admin!.userId!, req.body, req.ip);
      req.audit = { before: { twoFactor: 'on' }, after: { twoFactor: 'off' } };
      return reply.status(204).send();
    },
  );
  app.post(
    '/me/two-factor/recovery-codes',
    {
      ...me,
      schema: {
        summary: 'New recovery codes with a current code (the old ones stop working)',
        body: TwoFactorCode,
      },
    },
    async (req, reply) => {
      const recoveryCodes = await people.renewRecoveryCodes(req.admin!.userId!, req.body.code, req.ip);
      req.audit = { before: null, after: { recoveryCodes: 'renewed' } };
      return createdWithSecret(reply, { data: { recoveryCodes } });
    },
  );
  app.get('/me/tokens', { ...me, schema: { summary: 'Your personal tokens' } }, async (req) => ({
    data: await people.listPersonalTokens(req.admin!.userId!),
  }));
  app.post(
    '/me/tokens',
    { ...me, schema: { summary: 'Mint a personal token within your role', body: PersonalTokenInput } },
    async (req, reply) => {
      const created = await people.createPersonalToken(req.admin!.userId!, req.body.name, req.body.scopes);
      req.audit = {
        before: null,
        after: { tokenId: created.id, name: created.name, scopes: created.scopes },
      };
      return createdWithSecret(reply, { data: created });
    },
  );
  app.delete(
    '/me/tokens/:id',
    { ...me, schema: { summary: 'Revoke one of your personal tokens', params: IdParams } },
    async (req) => ({ data: await people.revokePersonalToken(req.admin!.userId!, req.params.id) }),
  );
}

/** What an audit row keeps of a user: no email history beyond the id, role and status. */
const brief = (u: {
  id: number;
  displayName: string;
  role: { id: number };
  status: string;
  siteIds: number[] | null;
}) => ({
  id: u.id,
  displayName: u.displayName,
  roleId: u.role.id,
  status: u.status,
  siteIds: u.siteIds,
});

import { randomBytes } from 'node:crypto';
import type { ChangeBus } from '../../db/changes.ts';
import type { Db, Queryable } from '../../db/index.ts';
import { AppError, conflict, invalidField, notFound } from '../../lib/errors.ts';
import type { Mailer } from '../../lib/mailer.ts';
import type { ResealReport, Sealer } from '../../lib/seal.ts';
import { hashToken, newToken, sameBytes } from '../../lib/tokens.ts';
import type { AdminPrincipal } from '../../plugins/auth.ts';
import { AccessRepository } from '../access/repository.ts';
import { hasScope, type Scope } from '../access/scopes.ts';
import type { NewSession, SessionClient, SessionService } from '../access/sessions.ts';
import type { AdminToken } from '../access/types.ts';
import {
  checkPasswordStrength,
  hashPassword,
  PASSWORD_MAX,
  verifyDecoy,
  verifyPassword,
} from './passwords.ts';
import {
  type LinkPurpose,
  PeopleRepository,
  publicUser,
  type Role,
  type User,
  type UserCredentials,
  type UserStatus,
} from './repository.ts';
import type { ResetThrottle, SignInThrottle } from './sign-in-throttle.ts';
import { type SsoIdentity, ssoRefused } from './sso.ts';
import {
  CHALLENGE_ATTEMPTS,
  CHALLENGE_TTL_MS,
  type Enrolment,
  enrolmentOf,
  newRecoveryCodes,
  newTotpSecret,
  normalRecoveryCode,
  recoveryHash,
  totpStep,
} from './two-factor.ts';
import type { IssuedLink, PendingSignIn, ResetAnswer, TwoFactorState } from './types.ts';

/** How long an invitation link stays valid. */
export const INVITE_TTL_MS = 7 * 24 * 60 * 60 * 1000;
/** How long a password-reset link stays valid. */
export const RESET_TTL_MS = 60 * 60 * 1000;
/** How long the first-run owner link stays valid. */
export const SETUP_TTL_MS = 24 * 60 * 60 * 1000;
/** Live personal tokens one user may hold. */
export const MAX_PERSONAL_TOKENS = 20;
/** Custom roles a workspace may define (the built-in ones not counted). */
export const MAX_ROLES = 200;

/** The one answer to every failed password sign-in, whatever failed. */
const SIGN_IN_FAILED = 'Wrong email or password';

/** A one-time link to hand to a person: the secret is in the fragment, which browsers never send. */
export interface OneTimeLink {
  url: string;
  expiresAt: string;
}

/** Where people's notices go. Never a link's secret: that goes only to who asked for it. */
export interface PeopleLog {
  info(message: string): void;
  warn(message: string): void;
}

/** What people's mail, password resets and two-factor need besides the database. */
export interface PeopleDeps {
  mailer: Mailer;
  resets: ResetThrottle;
  /** Seals TOTP secrets at rest, bound to the user id. */
  sealer: Sealer;
}

/** A completed sign-in: the session, and after an enrolment at sign-in the recovery codes (shown once). */
export interface SignedIn {
  session: NewSession;
  user: User;
  recoveryCodes?: string[];
  usedRecoveryCode?: boolean;
}

/** A password sign-in: done (a session), or waiting for the second step. */
export type SignInResult = SignedIn | { pending: PendingSignIn };

/** Why a second step failed, decided inside the transaction and thrown after it (so counts stay). */
type StepOutcome =
  | { kind: 'gone' }
  | { kind: 'blocked'; error: AppError }
  | { kind: 'wrong'; email: string }
  | { kind: 'done'; user: UserCredentials; recoveryCodes?: string[]; usedRecoveryCode: boolean };

const STEP_GONE = 'This sign-in expired or was already used: sign in with your password again';
const WRONG_CODE = 'Wrong code';

/**
 * People: users with one role each, custom roles, invitations and first-run links, password
 * sign-in with throttling, and the end of a user's sessions and personal tokens when suspended.
 */
export class PeopleService {
  private readonly repo: PeopleRepository;
  private readonly tokens: AccessRepository;

  constructor(
    private readonly db: Db,
    private readonly bus: ChangeBus,
    private readonly sessions: SessionService,
    private readonly throttle: SignInThrottle,
    private readonly now: () => Date,
    private readonly publicUrl: string,
    private readonly log: PeopleLog,
    private readonly mail: PeopleDeps,
  ) {
    this.repo = new PeopleRepository(db);
    this.tokens = new AccessRepository(db);
  }

  private tx<T>(fn: (repo: PeopleRepository, q: Queryable) => Promise<T>): Promise<T> {
    return this.db.tx((q) => fn(new PeopleRepository(q), q));
  }

  /* Roles */

  listRoles(): Promise<Role[]> {
    return this.repo.listRoles();
  }

  async createRole(v: { name: string; description?: string | undefined; scopes: Scope[] }): Promise<Role> {
    return this.tx(async (repo) => {
      if ((await repo.countRoles()) >= MAX_ROLES + 7) throw conflict(`At most ${MAX_ROLES} custom roles`);
      if (await repo.findRoleByName(v.name))
        throw conflict(`A role named ${v.name} exists`, { field: 'name' });
      return repo.insertRole({ name: v.name, description: v.description ?? '', scopes: v.scopes });
    });
  }

  /** Changes a custom role; its holders' sessions and personal tokens follow from the next request. */
  async updateRole(
    id: number,
    v: { name?: string | undefined; description?: string | undefined; scopes?: Scope[] | undefined },
  ): Promise<{ before: Role; after: Role }> {
    const out = await this.tx(async (repo) => {
      const before = await repo.findRole(id);
      if (!before) throw notFound('Role');
      if (before.builtIn) throw new AppError('forbidden', 'Built-in roles cannot be changed');
      if (v.name !== undefined) {
        const same = await repo.findRoleByName(v.name);
        if (same && same.id !== id) throw conflict(`A role named ${v.name} exists`, { field: 'name' });
      }
      return { before, after: (await repo.updateRole(id, v))! };
    });
    await this.bus.publish({ kind: 'tokens' });
    return out;
  }

  async deleteRole(id: number): Promise<Role> {
    return this.tx(async (repo) => {
      const found = await repo.findRole(id);
      if (!found) throw notFound('Role');
      if (found.builtIn) throw new AppError('forbidden', 'Built-in roles cannot be deleted');
      if (!(await repo.deleteRole(id)))
        throw conflict('Users hold this role: give them another role first', {
          users: await repo.countUsersWithRole(id),
        });
      return found;
    });
  }

  /* Users */

  listUsers(f: { status?: UserStatus | undefined; afterId?: number | undefined; limit: number }) {
    return this.repo.listUsers(f);
  }

  async getUser(id: number): Promise<User> {
    const u = await this.repo.findUser(id);
    if (!u) throw notFound('User');
    return publicUser(u);
  }

  /** Whether the actor is a user holding the built-in owner role (service tokens are not). */
  private async actorIsOwner(actor: AdminPrincipal, repo: PeopleRepository): Promise<boolean> {
    if (actor.userId === null) return false;
    const u = await repo.findUser(actor.userId);
    return u?.role.builtIn === true && u.role.name === 'owner' && u.status === 'active';
  }

  private async roleOf(repo: PeopleRepository, roleId: number): Promise<Role> {
    const r = await repo.findRole(roleId);
    if (!r) throw invalidField('roleId', `no role has id ${roleId}`);
    return r;
  }

  private static isOwnerRole(r: { builtIn: boolean; name: string }): boolean {
    return r.builtIn && r.name === 'owner';
  }

  /**
   * Invites an email with a role: the user is created `invited` and a one-time link mailed to
   * them, or returned to the inviting admin when no mail server is configured or the mail
   * failed. The link never goes to the log. Inviting an owner takes an owner.
   */
  async invite(
    actor: AdminPrincipal,
    v: { email: string; displayName?: string | undefined; roleId: number },
  ): Promise<{ user: User; invitation: IssuedLink }> {
    const out = await this.tx(async (repo) => {
      const role = await this.roleOf(repo, v.roleId);
      if (PeopleService.isOwnerRole(role) && !(await this.actorIsOwner(actor, repo)))
        throw new AppError('forbidden', 'Only an owner can make someone an owner');
      if (await repo.findUserByEmail(v.email))
        throw conflict(`A user with email ${v.email} exists`, { field: 'email' });
      const created = await repo.insertUser({
        email: v.email,
        displayName: v.displayName ?? '',
        roleId: role.id,
        status: 'invited',
      });
      const link = await this.newLink(repo, created.id, 'invite', INVITE_TTL_MS);
      return { user: publicUser(created), link, role: role.name };
    });
    const invitation = await this.deliver(out.user, out.link, inviteMail(out.user.email, out.role, out.link));
    this.log.info(`user ${out.user.id} invited; ${outcome(invitation)}`);
    return { user: out.user, invitation };
  }

  /** A new invitation link for a user who has not accepted yet (the earlier link stops working). */
  async reinvite(id: number): Promise<IssuedLink> {
    const out = await this.tx(async (repo) => {
      const u = await repo.findUser(id);
      if (!u) throw notFound('User');
      if (u.status !== 'invited') throw conflict('This user already accepted their invitation');
      return { user: u, link: await this.newLink(repo, id, 'invite', INVITE_TTL_MS) };
    });
    const issued = await this.deliver(
      out.user,
      out.link,
      inviteMail(out.user.email, out.user.role.name, out.link),
    );
    this.log.info(`user ${id} invited again; ${outcome(issued)}`);
    return issued;
  }

  /**
   * Mails a freshly made link when a mail server is configured. A failed mail loses nothing:
   * the link comes back to the issuer with a warning (and the log says it failed, never the link).
   */
  private async deliver(
    to: { id: number; email: string },
    link: OneTimeLink,
    mail: { subject: string; text: string },
  ): Promise<IssuedLink> {
    if (!this.mail.mailer.configured) return { mailed: false, url: link.url, expiresAt: link.expiresAt };
    try {
      await this.mail.mailer.send({ to: to.email, ...mail });
      return { mailed: true, expiresAt: link.expiresAt };
    } catch (err) {
      const why = mailError(err);
      this.log.warn(`mail to user ${to.id} failed: ${why}`);
      return {
        mailed: false,
        url: link.url,
        expiresAt: link.expiresAt,
        warning: `The mail to ${to.email} could not be sent (${why}): pass this one-time link on yourself.`,
      };
    }
  }

  private async newLink(
    repo: PeopleRepository,
    userId: number,
    purpose: LinkPurpose,
    ttlMs: number,
  ): Promise<OneTimeLink> {
    const secret = randomBytes(32).toString('base64url');
    const expiresAt = new Date(this.now().getTime() + ttlMs);
    await repo.insertLink({ userId, purpose, secretHash: hashToken(secret), expiresAt });
    const page = purpose === 'reset' ? 'reset' : 'accept';
    return { url: `${this.publicUrl}/console/#/${page}/${secret}`, expiresAt: expiresAt.toISOString() };
  }

  /* Password reset */

  /**
   * `POST /session/reset`: mails a one-time reset link to an active account with this email.
   * The answer is the same for every email, known or not; the account is looked up and mailed
   * after the answer, so its time does not tell either. Over the address budget: 429; over the account's: no mail.
   */
  async requestReset(email: string, address: string): Promise<ResetAnswer> {
    const allowed = await this.mail.resets.allow(email, address);
    if (!this.mail.mailer.configured)
      return {
        mailConfigured: false,
        message: 'This Podium sends no mail: ask an administrator for a password-reset link (Users screen).',
      };
    const answer = {
      mailConfigured: true,
      message: 'If an active account has this email, a password-reset link is on its way to it.',
    };
    // Looking the account up, making its link and mailing it all happen after the answer, so
    // an email with an account takes no longer to answer than one without.
    if (allowed) void this.mailReset(email);
    return answer;
  }

  private async mailReset(email: string): Promise<void> {
    let userId: number | undefined;
    try {
      const u = await this.repo.findUserByEmail(email);
      if (u?.status !== 'active') return;
      userId = u.id;
      const link = await this.tx((repo) => this.newLink(repo, u.id, 'reset', RESET_TTL_MS));
      await this.mail.mailer.send({ to: u.email, ...resetMail(link) });
      this.log.info(`password-reset link mailed to user ${u.id}`);
    } catch (err) {
      this.log.warn(`password-reset mail to user ${userId ?? '(not found yet)'} failed: ${mailError(err)}`);
    }
  }

  /**
   * An admin issues a reset link for an active user: mailed when mail works, else returned to
   * copy. Resetting an owner's password takes an owner (else an admin could take the account).
   */
  async issueReset(actor: AdminPrincipal, id: number): Promise<IssuedLink> {
    const out = await this.tx(async (repo) => {
      const u = await repo.findUser(id);
      if (!u) throw notFound('User');
      if (u.status !== 'active')
        throw conflict(`This user is ${u.status}: only an active user's password can be reset`);
      if (PeopleService.isOwnerRole(u.role) && !(await this.actorIsOwner(actor, repo)))
        throw new AppError('forbidden', "Only an owner can reset an owner's password");
      return { user: u, link: await this.newLink(repo, id, 'reset', RESET_TTL_MS) };
    });
    const issued = await this.deliver(out.user, out.link, resetMail(out.link));
    this.log.info(`password reset issued for user ${id}; ${outcome(issued)}`);
    return issued;
  }

  /**
   * Changes a user's display name, role or sites. Touching an owner, or granting the owner role, takes
   * an owner; the last active owner keeps the role. Sessions and personal tokens follow at once.
   */
  async updateUser(
    actor: AdminPrincipal,
    id: number,
    v: {
      displayName?: string | undefined;
      roleId?: number | undefined;
      siteIds?: number[] | null | undefined;
    },
  ): Promise<{ before: User; after: User }> {
    const out = await this.tx(async (repo) => {
      const before = await repo.findUser(id);
      if (!before) throw notFound('User');
      if (v.siteIds) {
        const missing = await repo.missingSites(v.siteIds);
        if (missing.length) throw invalidField('siteIds', `no site with id ${missing.join(', ')}`);
      }
      if (v.roleId !== undefined && v.roleId !== before.role.id) {
        const role = await this.roleOf(repo, v.roleId);
        const touchesOwner = PeopleService.isOwnerRole(role) || PeopleService.isOwnerRole(before.role);
        if (touchesOwner && !(await this.actorIsOwner(actor, repo)))
          throw new AppError('forbidden', 'Only an owner can change an owner or make someone an owner');
        if (PeopleService.isOwnerRole(before.role) && before.status === 'active')
          await this.keepAnOwner(repo);
      } else if (PeopleService.isOwnerRole(before.role) && actor.userId !== id) {
        if (!(await this.actorIsOwner(actor, repo)))
          throw new AppError('forbidden', 'Only an owner can change an owner');
      }
      const after = (await repo.updateUser(id, v))!;
      return { before: publicUser(before), after: publicUser(after) };
    });
    await this.bus.publish({ kind: 'tokens' });
    return out;
  }

  private async keepAnOwner(repo: PeopleRepository): Promise<void> {
    if ((await repo.countActiveOwners()) <= 1)
      throw conflict('This is the last active owner: make someone else an owner first');
  }

  /**
   * Suspends a user: their password sessions end and their personal tokens are revoked in the
   * same transaction, so every process refuses them from the next request.
   */
  async suspend(actor: AdminPrincipal, id: number): Promise<{ before: User; after: User }> {
    const out = await this.tx(async (repo, q) => {
      const before = await repo.findUser(id);
      if (!before) throw notFound('User');
      if (actor.userId === id) throw conflict('You cannot suspend yourself');
      if (PeopleService.isOwnerRole(before.role)) {
        if (!(await this.actorIsOwner(actor, repo)))
          throw new AppError('forbidden', 'Only an owner can suspend an owner');
        if (before.status === 'active') await this.keepAnOwner(repo);
      }
      const after = (await repo.updateUser(id, { status: 'suspended' }))!;
      const tokens = new AccessRepository(q);
      await tokens.revokeUserSessions(id, this.now());
      await tokens.revokeUserTokens(id, this.now());
      return { before: publicUser(before), after: publicUser(after) };
    });
    await this.bus.publish({ kind: 'tokens' });
    return out;
  }

  /** Lifts a suspension: back to active (or invited, when they never set a password). Their tokens stay revoked. */
  async reactivate(actor: AdminPrincipal, id: number): Promise<{ before: User; after: User }> {
    return this.tx(async (repo) => {
      const before = await repo.findUser(id);
      if (!before) throw notFound('User');
      if (before.status !== 'suspended') throw conflict('This user is not suspended');
      if (PeopleService.isOwnerRole(before.role) && !(await this.actorIsOwner(actor, repo)))
        throw new AppError('forbidden', 'Only an owner can reactivate an owner');
      const after = (await repo.updateUser(id, { status: before.passwordHash ? 'active' : 'invited' }))!;
      return { before: publicUser(before), after: publicUser(after) };
    });
  }

  /* Sign-in */

  /**
   * Password sign-in. Unknown email, wrong password, a suspended or not yet active user all get
   * the same 401 after the same hashing work; a throttled account or address gets 429 before
   * any check. The session id is new at every sign-in.
   */
  async signIn(
    email: string,
    password: string,
    client: SessionClient & { address: string },
  ): Promise<SignInResult> {
    const blocked = await this.throttle.blocked(email, client.address);
    if (blocked) throw blocked;
    const found = await this.repo.findUserByEmail(email);
    const ok =
      found?.passwordHash && password.length <= PASSWORD_MAX
        ? await verifyPassword(password, found.passwordHash)
        : await verifyDecoy(password.slice(0, PASSWORD_MAX));
    if (!found || !ok || found.status !== 'active') {
      throw (
        (await this.throttle.failed(email, client.address)) ?? new AppError('unauthorized', SIGN_IN_FAILED)
      );
    }
    if (found.twoFactorEnabled || (await this.repo.requireTwoFactor()))
      return { pending: await this.challenge(found.id, found.twoFactorEnabled ? 'totp' : 'enrol') };
    const session = await this.sessions.openForUser(found, client);
    await this.repo.touchSignIn(found.id, this.now());
    return { session, user: publicUser(found) };
  }

  /**
   * Signs in the person an OpenID Connect provider vouched for (ID token verified by the caller).
   * The user is found by the linked identity, else by email (verified by the provider), which
   * links them; else, for an allowed email domain, created active. A suspended user is refused.
   * The role follows the group mapping at every sign-in, except an owner's (granted in Podium
   * only). Podium's own two-factor is not asked: the provider's sign-in (and its MFA) replaces
   * the password and code. Nothing is written when the sign-in is refused.
   */
  async signInWithSso(
    id: SsoIdentity,
    allowedDomains: readonly string[],
    client: SessionClient,
  ): Promise<SignedIn> {
    const out = await this.tx(async (repo) => {
      let u = await repo.findUserBySso(id.issuer, id.subject);
      let how = 'signed in';
      if (!u) {
        if (!id.emailVerified)
          throw ssoRefused(
            'forbidden',
            'email_unverified',
            `The provider has not verified the email ${id.email}: single sign-on takes verified emails only`,
          );
        u = await repo.findUserByEmail(id.email);
        if (u?.ssoSubject)
          throw ssoRefused(
            'forbidden',
            'identity_taken',
            `The account of ${id.email} is linked to another identity at the provider: ask an administrator`,
          );
        if (!u) {
          const domain = id.email.slice(id.email.lastIndexOf('@') + 1).toLowerCase();
          if (!allowedDomains.includes(domain))
            throw ssoRefused(
              'forbidden',
              'domain_not_allowed',
              `No account has the email ${id.email}, and single sign-on makes accounts for ${allowedDomains.length ? allowedDomains.join(', ') : 'no domain'} only: ask an administrator for an invitation`,
            );
          const role = await this.ssoRole(repo, id.roleName);
          u = await repo.insertUser({
            email: id.email,
            displayName: id.displayName,
            roleId: role.id,
            status: 'active',
          });
          how = 'account created at first sign-in';
        } else how = 'linked by email';
        await repo.linkSso(u.id, id.issuer, id.subject);
      }
      if (u.status === 'suspended') throw ssoRefused('forbidden', 'suspended', 'This account is suspended');
      let roleChanged = false;
      if (!PeopleService.isOwnerRole(u.role)) {
        const role = await this.ssoRole(repo, id.roleName);
        if (role.id !== u.role.id) {
          await repo.updateUser(u.id, { roleId: role.id });
          roleChanged = true;
        }
      }
      if (u.status === 'invited') await repo.updateUser(u.id, { status: 'active' });
      return { user: (await repo.findUser(u.id))!, how, roleChanged };
    });
    if (out.roleChanged) await this.bus.publish({ kind: 'tokens' });
    const session = await this.sessions.openForUser(out.user, client);
    await this.repo.touchSignIn(out.user.id, this.now());
    this.log.info(
      `user ${out.user.id} signed in with SSO (${out.how}${out.roleChanged ? `; role now ${out.user.role.name}` : ''})`,
    );
    return { session, user: publicUser(out.user) };
  }

  /** The role the mapping names; refused when none applies, an error of the settings when it does not exist. */
  private async ssoRole(repo: PeopleRepository, name: string | null): Promise<Role> {
    if (name === null)
      throw ssoRefused(
        'forbidden',
        'no_role',
        'None of your groups at the provider gives a role in Podium: ask an administrator',
      );
    const role = await repo.findRoleByName(name);
    if (!role || PeopleService.isOwnerRole(role))
      throw ssoRefused(
        'internal_error',
        'misconfigured',
        `PODIUM_SSO_ROLE_MAP or PODIUM_SSO_DEFAULT_ROLE names the role ${name}, which Podium does not have`,
      );
    return role;
  }

  /* Two-factor */

  private async challenge(userId: number, step: 'totp' | 'enrol'): Promise<PendingSignIn> {
    const token = randomBytes(32).toString('base64url');
    const expiresAt = new Date(this.now().getTime() + CHALLENGE_TTL_MS);
    await this.repo.insertChallenge({ userId, secretHash: hashToken(token), step, expiresAt });
    return { pendingToken: token, step, expiresAt: expiresAt.toISOString() };
  }

  private static totpAad = (userId: number) => `user:${userId}:totp`;

  private openTotp(userId: number, sealed: string): string {
    return this.mail.sealer.open(sealed, PeopleService.totpAad(userId));
  }

  /**
   * A current TOTP code (never one already taken: its step is recorded) or an unused recovery
   * code (spent). Which one matched, or null.
   */
  private async secondFactor(
    repo: PeopleRepository,
    u: UserCredentials,
    typed: string,
  ): Promise<'totp' | 'recovery' | null> {
    const code = typed.trim();
    if (/^\d{6}$/.test(code)) {
      if (!u.totpSealed) return null;
      const step = totpStep(this.openTotp(u.id, u.totpSealed), code, this.now().getTime());
      return step !== null && (await repo.takeTotpStep(u.id, step)) ? 'totp' : null;
    }
    if (normalRecoveryCode(code) && (await repo.spendRecoveryCode(u.id, recoveryHash(code), this.now())))
      return 'recovery';
    return null;
  }

  /** Loads a live pending sign-in (locked) and its active user, or null. */
  private async liveChallenge(repo: PeopleRepository, token: string) {
    if (token.length > 100) return null;
    const hash = hashToken(token);
    const c = await repo.findChallengeForUpdate(hash);
    if (!c || !sameBytes(c.secretHash, hash) || c.usedAt || c.expiresAt <= this.now()) return null;
    const u = await repo.findUser(c.userId);
    return u?.status === 'active' ? { c, u } : null;
  }

  /**
   * The second step of a password sign-in: a TOTP code or a recovery code (step `totp`), or the
   * first code of the enrolment started with `startSignInEnrolment` (step `enrol`, which also
   * returns the new recovery codes). Wrong codes count against the pending sign-in (spent after
   * five) and the account's sign-in budget, so guessing meets the same lockout as passwords.
   */
  async completeSignIn(
    token: string,
    code: string,
    client: SessionClient & { address: string },
  ): Promise<SignedIn> {
    const out = await this.tx(async (repo): Promise<StepOutcome> => {
      const live = await this.liveChallenge(repo, token);
      if (!live) return { kind: 'gone' };
      const { c, u } = live;
      const blocked = await this.throttle.blocked(u.email, client.address);
      if (blocked) return { kind: 'blocked', error: blocked };
      if (c.step === 'totp') {
        const proof = await this.secondFactor(repo, u, code);
        if (!proof) {
          await repo.failChallenge(c.id, CHALLENGE_ATTEMPTS, this.now());
          return { kind: 'wrong', email: u.email };
        }
        await repo.spendChallenge(c.id, this.now());
        return { kind: 'done', user: u, usedRecoveryCode: proof === 'recovery' };
      }
      const codes = await this.confirmPending(repo, u, code);
      if (!codes) {
        await repo.failChallenge(c.id, CHALLENGE_ATTEMPTS, this.now());
        return { kind: 'wrong', email: u.email };
      }
      await repo.spendChallenge(c.id, this.now());
      return { kind: 'done', user: u, recoveryCodes: codes, usedRecoveryCode: false };
    });
    if (out.kind === 'gone') throw new AppError('unauthorized', STEP_GONE);
    if (out.kind === 'blocked') throw out.error;
    if (out.kind === 'wrong')
      throw (
        (await this.throttle.failed(out.email, client.address)) ?? new AppError('unauthorized', WRONG_CODE)
      );
    const { user, recoveryCodes, usedRecoveryCode } = out;
    const session = await this.sessions.openForUser(user, client);
    await this.repo.touchSignIn(user.id, this.now());
    if (usedRecoveryCode) this.log.info(`user ${user.id} signed in with a recovery code`);
    return {
      session,
      user: publicUser((await this.repo.findUser(user.id))!),
      usedRecoveryCode,
      ...(recoveryCodes ? { recoveryCodes } : {}),
    };
  }

  /** Enables the pending enrolment when `code` is its current code; the new recovery codes, or null. */
  private async confirmPending(
    repo: PeopleRepository,
    u: UserCredentials,
    code: string,
  ): Promise<string[] | null> {
    if (!u.totpPendingSealed) return null;
    const step = totpStep(this.openTotp(u.id, u.totpPendingSealed), code.trim(), this.now().getTime());
    if (step === null) return null;
    await repo.enableTotp(u.id, u.totpPendingSealed, step, this.now());
    const codes = newRecoveryCodes();
    await repo.replaceRecoveryCodes(u.id, codes.map(recoveryHash));
    return codes;
  }

  private async beginEnrolment(repo: PeopleRepository, u: UserCredentials): Promise<Enrolment> {
    const secret = newTotpSecret();
    await repo.setPendingTotp(u.id, this.mail.sealer.seal(secret, PeopleService.totpAad(u.id)));
    return enrolmentOf(secret, u.email);
  }

  /** Step `enrol` of a sign-in (two-factor required, none yet): a new secret to scan, confirmed by `completeSignIn`. */
  async startSignInEnrolment(token: string): Promise<Enrolment> {
    const out = await this.tx(async (repo) => {
      const live = await this.liveChallenge(repo, token);
      if (!live) throw new AppError('unauthorized', STEP_GONE);
      if (live.c.step !== 'enrol') throw conflict('This sign-in asks for a code, not an enrolment');
      return this.beginEnrolment(repo, live.u);
    });
    return out;
  }

  /** Whether two-factor is on for the user, how many recovery codes are left, whether it is required. */
  async twoFactorState(userId: number): Promise<TwoFactorState> {
    const u = await this.repo.findUser(userId);
    if (!u) throw notFound('User');
    return {
      enabled: u.twoFactorEnabled,
      recoveryCodesLeft: u.twoFactorEnabled ? await this.repo.countRecoveryCodesLeft(userId) : 0,
      required: await this.repo.requireTwoFactor(),
    };
  }

  /** Starts enrolment for a signed-in user (a new secret replaces an unconfirmed one); 409 when it is on. */
  async startEnrolment(userId: number): Promise<Enrolment> {
    return this.tx(async (repo) => {
      const u = await repo.findUser(userId);
      if (!u) throw notFound('User');
      if (u.twoFactorEnabled) throw conflict('Two-factor is already on: turn it off first to enrol again');
      return this.beginEnrolment(repo, u);
    });
  }

  /** Confirms enrolment with the app's current code: two-factor is on, the ten recovery codes are returned once. */
  async confirmEnrolment(userId: number, code: string, address: string): Promise<string[]> {
    const out = await this.tx(async (repo) => {
      const u = await repo.findUser(userId);
      if (!u) throw notFound('User');
      if (u.twoFactorEnabled) throw conflict('Two-factor is already on');
      if (!u.totpPendingSealed) throw conflict('Start the enrolment first (POST /me/two-factor)');
      return { email: u.email, codes: await this.confirmPending(repo, u, code) };
    });
    if (!out.codes) await this.wrongProof(out.email, address, 'code', 'is not the current code of your app');
    return out.codes!;
  }

  /** Counts a wrong second factor or password against the account's sign-in budget; throws the 422 (or 429). */
  private async wrongProof(email: string, address: string, field: string, why: string): Promise<never> {
    throw (await this.throttle.failed(email, address)) ?? invalidField(field, why);
  }

  /**
   * Turns two-factor off with a current code, a recovery code or the password. Refused while
   * the owner requires two-factor for everyone.
   */
  async disableTwoFactor(
    userId: number,
    proof: { code?: string | undefined; password?: string | undefined },
    address: string,
  ): Promise<void> {
    if (proof.code === undefined && proof.password === undefined)
      throw invalidField('code', 'send a current code (or a recovery code), or your password');
    const out = await this.tx(async (repo) => {
      const u = await repo.findUser(userId);
      if (!u) throw notFound('User');
      if (!u.twoFactorEnabled) throw conflict('Two-factor is not on');
      if (await repo.requireTwoFactor()) throw conflict('The owner requires two-factor for everyone');
      const ok =
        proof.code !== undefined
          ? (await this.secondFactor(repo, u, proof.code)) !== null
          : Boolean(u.passwordHash) &&
            proof.password!.length <= PASSWORD_MAX &&
            (await verifyPassword(proof.password!, u.passwordHash!));
      if (ok) await repo.disableTotp(userId);
      return { ok, email: u.email };
    });
    if (!out.ok)
      await (proof.code !== undefined
        ? this.wrongProof(out.email, address, 'code', 'is not a current code nor an unused recovery code')
        : this.wrongProof(out.email, address, 'password', 'is not your password'));
  }

  /** New recovery codes (the old ones stop working), with a current code as proof. */
  async renewRecoveryCodes(userId: number, code: string, address: string): Promise<string[]> {
    const out = await this.tx(async (repo) => {
      const u = await repo.findUser(userId);
      if (!u) throw notFound('User');
      if (!u.twoFactorEnabled) throw conflict('Two-factor is not on');
      if (!(await this.secondFactor(repo, u, code))) return { email: u.email, codes: null };
      const codes = newRecoveryCodes();
      await repo.replaceRecoveryCodes(userId, codes.map(recoveryHash));
      return { email: u.email, codes };
    });
    if (!out.codes) await this.wrongProof(out.email, address, 'code', 'is not a current code');
    return out.codes!;
  }

  /** An admin turns a user's two-factor off (a lost phone and lost codes); an owner's takes an owner. */
  async resetTwoFactor(actor: AdminPrincipal, id: number): Promise<User> {
    return this.tx(async (repo) => {
      const u = await repo.findUser(id);
      if (!u) throw notFound('User');
      if (PeopleService.isOwnerRole(u.role) && !(await this.actorIsOwner(actor, repo)))
        throw new AppError('forbidden', "Only an owner can turn off an owner's two-factor");
      await repo.disableTotp(id);
      return publicUser((await repo.findUser(id))!);
    });
  }

  /** Workspace people settings. */
  async settings(): Promise<{ requireTwoFactor: boolean }> {
    return { requireTwoFactor: await this.repo.requireTwoFactor() };
  }

  /**
   * The owner requires two-factor for everyone (or stops requiring it). Turning it on takes
   * the owner's own two-factor, and ends the sessions of users without it: they enrol at
   * their next sign-in before anything else.
   */
  async setRequireTwoFactor(
    actor: AdminPrincipal,
    on: boolean,
  ): Promise<{
    before: { requireTwoFactor: boolean };
    after: { requireTwoFactor: boolean };
    sessionsEnded: number;
  }> {
    const out = await this.tx(async (repo) => {
      if (!(await this.actorIsOwner(actor, repo)))
        throw new AppError('forbidden', 'Only an owner can require two-factor');
      const me = (await repo.findUser(actor.userId!))!;
      if (on && !me.twoFactorEnabled) throw conflict('Turn on two-factor for yourself first (Profile)');
      const before = await repo.requireTwoFactor();
      await repo.setRequireTwoFactor(on);
      const sessionsEnded = on && !before ? await repo.endSessionsWithoutTwoFactor(this.now()) : 0;
      return { before: { requireTwoFactor: before }, after: { requireTwoFactor: on }, sessionsEnded };
    });
    await this.bus.publish({ kind: 'tokens' });
    return out;
  }

  /** Re-seals every TOTP secret not sealed with the current key. */
  async rotateTotpKeys(): Promise<ResealReport> {
    return this.mail.sealer.reseal(await this.repo.sealedTotpSecrets(), (s, sealed) =>
      this.repo.replaceSealedTotp(s.userId, s.pending, s.sealed, sealed),
    );
  }

  /** The signed-in user with their role's scopes (for `GET /session`). */
  async whoAmI(userId: number): Promise<User | undefined> {
    const u = await this.repo.findUser(userId);
    return u && publicUser(u);
  }

  /* One-time links */

  /**
   * Accepts an invitation or the first-run link (or, with `purposes` ['reset'], a password
   * reset): checks the password's strength, sets it and activates the user; the link is spent.
   * A reset ends every session of the user. Unknown, used and expired links each answer clearly.
   */
  async acceptLink(
    secret: string,
    password: string,
    displayName?: string,
    purposes: readonly LinkPurpose[] = ['invite', 'setup'],
  ): Promise<User> {
    if (secret.length > 100) throw new AppError('not_found', 'This link is not valid');
    const hash = hashToken(secret);
    return this.tx(async (repo, q) => {
      const link = await repo.findLinkForUpdate(hash);
      if (!link || !sameBytes(link.secretHash, hash) || !purposes.includes(link.purpose))
        throw new AppError('not_found', 'This link is not valid');
      if (link.usedAt)
        throw new AppError('conflict', 'This link was already used or replaced by a newer one');
      if (link.expiresAt <= this.now())
        throw new AppError('conflict', 'This link expired: ask for a new one');
      const u = (await repo.findUser(link.userId))!;
      if (u.status === 'suspended') throw ssoRefused('forbidden', 'suspended', 'This account is suspended');
      checkPasswordStrength(password, u.email);
      await repo.markLinkUsed(link.id, this.now());
      const after = await repo.updateUser(u.id, {
        passwordHash: await hashPassword(password),
        status: 'active',
        displayName: displayName || undefined,
      });
      if (link.purpose === 'reset') await new AccessRepository(q).revokeUserSessions(u.id, this.now());
      return publicUser(after!);
    });
  }

  /** Changes one's own password (the current one required); other sessions of the user end. */
  async changePassword(userId: number, keepSessionId: number | null, current: string, next: string) {
    const u = await this.repo.findUser(userId);
    if (!u?.passwordHash) throw notFound('User');
    if (current.length > PASSWORD_MAX || !(await verifyPassword(current, u.passwordHash)))
      throw invalidField('currentPassword', 'is not your current password');
    checkPasswordStrength(next, u.email);
    const hash = await hashPassword(next);
    await this.tx(async (repo, q) => {
      await repo.updateUser(userId, { passwordHash: hash });
      await new AccessRepository(q).revokeUserSessionsExcept(userId, keepSessionId, this.now());
    });
  }

  /* First run */

  /**
   * On a database without an owner: creates the owner account (`invited` until its password is
   * set) and returns the one-time set-up link for the caller to print. Null when users exist.
   */
  async firstRun(email: string): Promise<{ user: User; link: OneTimeLink } | null> {
    const out = await this.tx(async (repo) => {
      if ((await repo.countOwners()) > 0 || (await repo.findUserByEmail(email))) return null;
      const owner = await repo.findRoleByName('owner');
      const created = await repo.insertUser({
        email,
        displayName: 'Owner',
        roleId: owner!.id,
        status: 'invited',
      });
      return { user: publicUser(created), link: await this.newLink(repo, created.id, 'setup', SETUP_TTL_MS) };
    });
    if (out) this.log.info(`first run: owner account ${out.user.id} created, waiting for its password`);
    return out;
  }

  /** Adds an invited user with a built-in role unless the email exists (the demo dataset's people). */
  async addDemoUser(email: string, displayName: string, roleName: string): Promise<void> {
    await this.tx(async (repo) => {
      if (await repo.findUserByEmail(email)) return;
      const role = await repo.findRoleByName(roleName);
      if (!role) throw new Error(`no role ${roleName}`);
      await repo.insertUser({ email, displayName, roleId: role.id, status: 'invited' });
    });
  }

  /* Personal tokens */

  /**
   * Mints a personal admin token for a user: never more than the user's role holds now (422
   * naming `scopes`); at use it is narrowed to the role again, so a later role change applies.
   */
  async createPersonalToken(
    userId: number,
    name: string,
    scopes: Scope[],
  ): Promise<AdminToken & { token: string }> {
    const u = await this.repo.findUser(userId);
    if (u?.status !== 'active') throw notFound('User');
    const beyond = scopes.filter((sc) => !hasScope(u.scopes, sc));
    if (beyond.length)
      throw new AppError(
        'validation_failed',
        `scopes: your role (${u.role.name}) does not hold ${beyond.join(', ')}`,
        {
          field: 'scopes',
          beyondRole: beyond,
        },
      );
    const { token, hash, hint } = newToken('admin');
    const count = (await this.tokens.listAdminTokens(userId)).filter((t) => !t.revokedAt).length;
    if (count >= MAX_PERSONAL_TOKENS)
      throw conflict(`At most ${MAX_PERSONAL_TOKENS} live personal tokens: revoke one first`);
    const row = await this.tokens.insertAdminToken({ name, scopes, hash, hint, createdBy: null, userId });
    await this.bus.publish({ kind: 'tokens' });
    return { ...row, token };
  }

  listPersonalTokens(userId: number): Promise<AdminToken[]> {
    return this.tokens.listAdminTokens(userId);
  }

  async revokePersonalToken(userId: number, id: number): Promise<AdminToken> {
    const row = await this.tokens.revokeAdminToken(id, userId);
    if (!row) throw notFound('Personal token');
    await this.bus.publish({ kind: 'tokens' });
    return row;
  }
}

/** What the log says of an issued link: whether it was mailed, never the link. */
const outcome = (l: IssuedLink): string =>
  l.mailed ? 'the link was mailed' : `the link (valid until ${l.expiresAt}) was shown to the admin only`;

/** An SMTP failure in words for the admin and the log: nodemailer's code and message, no more. */
function mailError(err: unknown): string {
  const e = err as { code?: unknown; message?: unknown };
  const text = typeof e.message === 'string' ? e.message.slice(0, 200) : 'unknown error';
  return typeof e.code === 'string' ? `${e.code}: ${text}` : text;
}

function inviteMail(email: string, role: string, link: OneTimeLink) {
  return {
    subject: 'You are invited to Podium',
    text: [
      `You were invited to the Podium console as ${email} (role ${role}).`,
      '',
      'Choose your password here (the link works once):',
      link.url,
      '',
      `It expires at ${link.expiresAt}.`,
    ].join('\n'),
  };
}

function resetMail(link: OneTimeLink) {
  return {
    subject: 'Reset your Podium password',
    text: [
      'Someone asked to reset the password of your Podium account. If it was you, choose a new',
      'password here (the link works once; every session of yours ends when you use it):',
      link.url,
      '',
      `It expires at ${link.expiresAt}. If it was not you, ignore this mail: your password stays as it is.`,
    ].join('\n'),
  };
}

import type { Queryable } from '../../db/index.ts';

/** A role as the admin API returns it. */
export interface Role {
  id: number;
  name: string;
  description: string;
  scopes: string[];
  builtIn: boolean;
  createdAt: string;
  updatedAt: string;
}

export type UserStatus = 'invited' | 'active' | 'suspended';

/** A user as the admin API returns it: never the password hash. */
export interface User {
  id: number;
  email: string;
  displayName: string;
  status: UserStatus;
  role: { id: number; name: string; builtIn: boolean };
  /** The sites the user (and their personal tokens) is limited to on every admin route; null: every site. */
  siteIds: number[] | null;
  hasPassword: boolean;
  /** Whether sign-in asks for a TOTP code after the password. */
  twoFactorEnabled: boolean;
  lastSignInAt: string | null;
  createdAt: string;
  updatedAt: string;
}

/** A user with what sign-in needs: the stored hash, the role's scopes and the sealed TOTP secrets. */
export interface UserCredentials extends User {
  passwordHash: string | null;
  scopes: string[];
  totpSealed: string | null;
  totpPendingSealed: string | null;
  /** The `sub` of the OpenID Connect identity the user is linked to; null: not linked. */
  ssoSubject: string | null;
}

/** A pending sign-in between the password and the second step. */
export interface ChallengeRow {
  id: number;
  userId: number;
  secretHash: Uint8Array;
  step: 'totp' | 'enrol';
  attempts: number;
  expiresAt: Date;
  usedAt: Date | null;
}

/** What a one-time link is for: an invitation, the first-run owner set-up, a password reset. */
export type LinkPurpose = 'invite' | 'setup' | 'reset';

/** A one-time link found by its secret's hash, with its user. */
export interface LinkRow {
  id: number;
  userId: number;
  purpose: LinkPurpose;
  secretHash: Uint8Array;
  expiresAt: Date;
  usedAt: Date | null;
}

type Row = Record<string, unknown>;
const iso = (d: unknown): string | null => (d ? new Date(d as Date).toISOString() : null);

const role = (r: Row): Role => ({
  id: r.id as number,
  name: r.name as string,
  description: r.description as string,
  scopes: r.scopes as string[],
  builtIn: r.built_in as boolean,
  createdAt: iso(r.created_at)!,
  updatedAt: iso(r.updated_at)!,
});

const user = (r: Row): UserCredentials => ({
  id: r.id as number,
  email: r.email as string,
  displayName: r.display_name as string,
  status: r.status as UserStatus,
  role: { id: r.role_id as number, name: r.role_name as string, builtIn: r.role_built_in as boolean },
  siteIds: (r.site_ids as number[] | null) ?? null,
  hasPassword: r.password_hash != null,
  twoFactorEnabled: r.totp_enabled_at != null,
  lastSignInAt: iso(r.last_sign_in_at),
  createdAt: iso(r.created_at)!,
  updatedAt: iso(r.updated_at)!,
  passwordHash: (r.password_hash as string | null) ?? null,
  scopes: r.role_scopes as string[],
  totpSealed: (r.totp_sealed as string | null) ?? null,
  totpPendingSealed: (r.totp_pending_sealed as string | null) ?? null,
  ssoSubject: (r.sso_subject as string | null) ?? null,
});

/** Strips what only sign-in may see. */
export const publicUser = ({
  passwordHash: _h,
  scopes: _s,
  totpSealed: _t,
  totpPendingSealed: _p,
  ssoSubject: _o,
  ...u
}: UserCredentials): User => u;

const USER_SELECT = `SELECT u.*, r.name AS role_name, r.built_in AS role_built_in, r.scopes AS role_scopes
  FROM users u JOIN roles r ON r.id = u.role_id`;

/** SQL of people: tables roles, users, user_links, user_recovery_codes, sign_in_challenges, people_settings. */
export class PeopleRepository {
  constructor(private readonly db: Queryable) {}

  /* Roles */

  async listRoles(): Promise<Role[]> {
    return (await this.db.query('SELECT * FROM roles ORDER BY built_in DESC, id LIMIT 1000')).map(role);
  }

  async findRole(id: number): Promise<Role | undefined> {
    const [r] = await this.db.query('SELECT * FROM roles WHERE id = $1', [id]);
    return r && role(r);
  }

  async findRoleByName(name: string): Promise<Role | undefined> {
    const [r] = await this.db.query('SELECT * FROM roles WHERE lower(name) = lower($1)', [name]);
    return r && role(r);
  }

  async countRoles(): Promise<number> {
    const [r] = await this.db.query<{ n: number }>('SELECT count(*)::int AS n FROM roles');
    return r!.n;
  }

  async insertRole(v: { name: string; description: string; scopes: string[] }): Promise<Role> {
    const [r] = await this.db.query(
      'INSERT INTO roles (name, description, scopes) VALUES ($1, $2, $3) RETURNING *',
      [v.name, v.description, v.scopes],
    );
    return role(r!);
  }

  /** Changes a custom role (built-in roles are never matched). */
  async updateRole(
    id: number,
    v: { name?: string | undefined; description?: string | undefined; scopes?: string[] | undefined },
  ): Promise<Role | undefined> {
    const [r] = await this.db.query(
      `UPDATE roles SET name = COALESCE($2, name), description = COALESCE($3, description),
              scopes = COALESCE($4, scopes), updated_at = now()
        WHERE id = $1 AND NOT built_in RETURNING *`,
      [id, v.name ?? null, v.description ?? null, v.scopes ?? null],
    );
    return r && role(r);
  }

  /** Deletes a custom role no user holds; false when it is built in, held or missing. */
  async deleteRole(id: number): Promise<boolean> {
    const rows = await this.db.query(
      'DELETE FROM roles WHERE id = $1 AND NOT built_in AND NOT EXISTS (SELECT 1 FROM users WHERE role_id = $1) RETURNING id',
      [id],
    );
    return rows.length > 0;
  }

  async countUsersWithRole(roleId: number): Promise<number> {
    const [r] = await this.db.query<{ n: number }>(
      'SELECT count(*)::int AS n FROM users WHERE role_id = $1',
      [roleId],
    );
    return r!.n;
  }

  /* Users */

  /** Users by id, after `afterId`, at most `limit`; optionally of one status. */
  async listUsers(f: { status?: UserStatus | undefined; afterId?: number | undefined; limit: number }) {
    const rows = await this.db.query(
      `${USER_SELECT} WHERE ($1::text IS NULL OR u.status = $1) AND u.id > $2 ORDER BY u.id LIMIT $3`,
      [f.status ?? null, f.afterId ?? 0, f.limit],
    );
    return rows.map((r) => publicUser(user(r)));
  }

  async findUser(id: number): Promise<UserCredentials | undefined> {
    const [r] = await this.db.query(`${USER_SELECT} WHERE u.id = $1`, [id]);
    return r && user(r);
  }

  async findUserByEmail(email: string): Promise<UserCredentials | undefined> {
    const [r] = await this.db.query(`${USER_SELECT} WHERE lower(u.email) = lower($1)`, [email]);
    return r && user(r);
  }

  /** Users of any status holding the built-in owner role. */
  async countOwners(): Promise<number> {
    const [r] = await this.db.query<{ n: number }>(
      `SELECT count(*)::int AS n FROM users u JOIN roles r ON r.id = u.role_id WHERE r.built_in AND r.name = 'owner'`,
    );
    return r!.n;
  }

  /** Active users holding the built-in owner role. */
  async countActiveOwners(): Promise<number> {
    const [r] = await this.db.query<{ n: number }>(
      `SELECT count(*)::int AS n FROM users u JOIN roles r ON r.id = u.role_id
        WHERE r.built_in AND r.name = 'owner' AND u.status = 'active'`,
    );
    return r!.n;
  }

  async insertUser(v: {
    email: string;
    displayName: string;
    roleId: number;
    status: UserStatus;
  }): Promise<UserCredentials> {
    const [r] = await this.db.query<{ id: number }>(
      'INSERT INTO users (email, display_name, role_id, status) VALUES ($1, $2, $3, $4) RETURNING id',
      [v.email, v.displayName, v.roleId, v.status],
    );
    return (await this.findUser(r!.id))!;
  }

  async updateUser(
    id: number,
    v: {
      displayName?: string | undefined;
      roleId?: number | undefined;
      status?: UserStatus | undefined;
      passwordHash?: string | undefined;
      /** null lifts the restriction; undefined leaves it. */
      siteIds?: number[] | null | undefined;
    },
  ): Promise<UserCredentials | undefined> {
    if (v.siteIds !== undefined)
      await this.db.query('UPDATE users SET site_ids = $2, updated_at = now() WHERE id = $1', [
        id,
        v.siteIds,
      ]);
    const rows = await this.db.query(
      `UPDATE users SET display_name = COALESCE($2, display_name), role_id = COALESCE($3, role_id),
              status = COALESCE($4, status), password_hash = COALESCE($5, password_hash), updated_at = now()
        WHERE id = $1 RETURNING id`,
      [id, v.displayName ?? null, v.roleId ?? null, v.status ?? null, v.passwordHash ?? null],
    );
    return rows.length ? this.findUser(id) : undefined;
  }

  /** The ids among `ids` that name no site. */
  async missingSites(ids: readonly number[]): Promise<number[]> {
    const rows = await this.db.query<{ id: number }>('SELECT id FROM sites WHERE id = ANY($1::int[])', [
      [...ids],
    ]);
    const found = new Set(rows.map((r) => r.id));
    return ids.filter((id) => !found.has(id));
  }

  /** The user linked to this OpenID Connect identity. */
  async findUserBySso(issuer: string, subject: string): Promise<UserCredentials | undefined> {
    const [r] = await this.db.query(`${USER_SELECT} WHERE u.sso_issuer = $1 AND u.sso_subject = $2`, [
      issuer,
      subject,
    ]);
    return r && user(r);
  }

  /** Links a user to an OpenID Connect identity (found by email at its first SSO sign-in). */
  async linkSso(id: number, issuer: string, subject: string): Promise<void> {
    await this.db.query(
      'UPDATE users SET sso_issuer = $2, sso_subject = $3, updated_at = now() WHERE id = $1',
      [id, issuer, subject],
    );
  }

  async touchSignIn(id: number, at: Date): Promise<void> {
    await this.db.query('UPDATE users SET last_sign_in_at = $2 WHERE id = $1', [id, at]);
  }

  /* One-time links */

  async insertLink(v: {
    userId: number;
    purpose: LinkPurpose;
    secretHash: Buffer;
    expiresAt: Date;
  }): Promise<void> {
    // A new link replaces the user's earlier unused ones: only the latest invitation works.
    await this.db.query('UPDATE user_links SET used_at = now() WHERE user_id = $1 AND used_at IS NULL', [
      v.userId,
    ]);
    await this.db.query(
      'INSERT INTO user_links (user_id, purpose, secret_hash, expires_at) VALUES ($1, $2, $3, $4)',
      [v.userId, v.purpose, v.secretHash, v.expiresAt],
    );
  }

  /** The link with this secret hash, locked for the accepting transaction. */
  async findLinkForUpdate(secretHash: Buffer): Promise<LinkRow | undefined> {
    const [r] = await this.db.query<Row>('SELECT * FROM user_links WHERE secret_hash = $1 FOR UPDATE', [
      secretHash,
    ]);
    if (!r) return undefined;
    return {
      id: r.id as number,
      userId: r.user_id as number,
      purpose: r.purpose as LinkPurpose,
      secretHash: r.secret_hash as Uint8Array,
      expiresAt: new Date(r.expires_at as Date),
      usedAt: r.used_at ? new Date(r.used_at as Date) : null,
    };
  }

  async markLinkUsed(id: number, at: Date): Promise<void> {
    await this.db.query('UPDATE user_links SET used_at = $2 WHERE id = $1', [id, at]);
  }

  /* Two-factor */

  /** Stores (or clears, with null) the sealed secret of an enrolment waiting for its first code. */
  async setPendingTotp(userId: number, sealed: string | null): Promise<void> {
    await this.db.query('UPDATE users SET totp_pending_sealed = $2, updated_at = now() WHERE id = $1', [
      userId,
      sealed,
    ]);
  }

  /** Turns two-factor on with the confirmed secret; `step` is that of the confirming code. */
  async enableTotp(userId: number, sealed: string, step: number, at: Date): Promise<void> {
    await this.db.query(
      `UPDATE users SET totp_sealed = $2, totp_pending_sealed = NULL, totp_enabled_at = $4,
              totp_last_step = $3, updated_at = now() WHERE id = $1`,
      [userId, sealed, step, at],
    );
  }

  /** Turns two-factor off and drops the recovery codes. */
  async disableTotp(userId: number): Promise<void> {
    await this.db.query(
      `UPDATE users SET totp_sealed = NULL, totp_pending_sealed = NULL, totp_enabled_at = NULL,
              totp_last_step = NULL, updated_at = now() WHERE id = $1`,
      [userId],
    );
    await this.db.query('DELETE FROM user_recovery_codes WHERE user_id = $1', [userId]);
  }

  /**
   * Records `step` as the last accepted one if it is newer than the last: false when a code of
   * this step (or a later one) was already taken, so no code works twice. Atomic across processes.
   */
  async takeTotpStep(userId: number, step: number): Promise<boolean> {
    const rows = await this.db.query(
      'UPDATE users SET totp_last_step = $2 WHERE id = $1 AND (totp_last_step IS NULL OR totp_last_step < $2) RETURNING id',
      [userId, step],
    );
    return rows.length === 1;
  }

  /** Replaces the user's recovery codes with these hashes. */
  async replaceRecoveryCodes(userId: number, hashes: Buffer[]): Promise<void> {
    await this.db.query('DELETE FROM user_recovery_codes WHERE user_id = $1', [userId]);
    for (const h of hashes)
      await this.db.query('INSERT INTO user_recovery_codes (user_id, code_hash) VALUES ($1, $2)', [
        userId,
        h,
      ]);
  }

  /** Spends an unused recovery code of the user; false when none matches. */
  async spendRecoveryCode(userId: number, hash: Buffer, at: Date): Promise<boolean> {
    const rows = await this.db.query(
      `UPDATE user_recovery_codes SET used_at = $3
        WHERE id = (SELECT id FROM user_recovery_codes WHERE user_id = $1 AND code_hash = $2 AND used_at IS NULL
                     LIMIT 1 FOR UPDATE)
        RETURNING id`,
      [userId, hash, at],
    );
    return rows.length === 1;
  }

  async countRecoveryCodesLeft(userId: number): Promise<number> {
    const [r] = await this.db.query<{ n: number }>(
      'SELECT count(*)::int AS n FROM user_recovery_codes WHERE user_id = $1 AND used_at IS NULL',
      [userId],
    );
    return r!.n;
  }

  /** Every sealed TOTP secret at rest (for key rotation), by user. */
  async sealedTotpSecrets(): Promise<
    { record: string; aad: string; sealed: string; pending: boolean; userId: number }[]
  > {
    return this.db.query(
      `SELECT 'user ' || id AS record, 'user:' || id || ':totp' AS aad, totp_sealed AS sealed,
              false AS pending, id AS "userId"
         FROM users WHERE totp_sealed IS NOT NULL
       UNION ALL
       SELECT 'user ' || id || ' (pending)', 'user:' || id || ':totp', totp_pending_sealed, true, id
         FROM users WHERE totp_pending_sealed IS NOT NULL
       ORDER BY record`,
    );
  }

  /** Replaces one sealed TOTP secret only if it is still `old`; false when it changed meanwhile. */
  async replaceSealedTotp(userId: number, pending: boolean, old: string, sealed: string): Promise<boolean> {
    const column = pending ? 'totp_pending_sealed' : 'totp_sealed';
    const rows = await this.db.query(
      `UPDATE users SET ${column} = $3 WHERE id = $1 AND ${column} = $2 RETURNING id`,
      [userId, old, sealed],
    );
    return rows.length === 1;
  }

  /* Pending sign-ins */

  async insertChallenge(v: { userId: number; secretHash: Buffer; step: 'totp' | 'enrol'; expiresAt: Date }) {
    await this.db.query('DELETE FROM sign_in_challenges WHERE expires_at < $1', [
      new Date(v.expiresAt.getTime() - 86_400_000),
    ]);
    await this.db.query(
      'INSERT INTO sign_in_challenges (user_id, secret_hash, step, expires_at) VALUES ($1, $2, $3, $4)',
      [v.userId, v.secretHash, v.step, v.expiresAt],
    );
  }

  /** The pending sign-in with this secret hash, locked for the step that uses it. */
  async findChallengeForUpdate(secretHash: Buffer): Promise<ChallengeRow | undefined> {
    const [r] = await this.db.query<Row>(
      'SELECT * FROM sign_in_challenges WHERE secret_hash = $1 FOR UPDATE',
      [secretHash],
    );
    if (!r) return undefined;
    return {
      id: r.id as number,
      userId: r.user_id as number,
      secretHash: r.secret_hash as Uint8Array,
      step: r.step as 'totp' | 'enrol',
      attempts: r.attempts as number,
      expiresAt: new Date(r.expires_at as Date),
      usedAt: r.used_at ? new Date(r.used_at as Date) : null,
    };
  }

  /** Counts a wrong code; the challenge is spent once it reached `max` attempts. */
  async failChallenge(id: number, max: number, at: Date): Promise<void> {
    await this.db.query(
      `UPDATE sign_in_challenges SET attempts = attempts + 1,
              used_at = CASE WHEN attempts + 1 >= $2 THEN $3 ELSE used_at END WHERE id = $1`,
      [id, max, at],
    );
  }

  async spendChallenge(id: number, at: Date): Promise<void> {
    await this.db.query('UPDATE sign_in_challenges SET used_at = $2 WHERE id = $1', [id, at]);
  }

  /* Settings */

  async requireTwoFactor(): Promise<boolean> {
    const [r] = await this.db.query<{ require_two_factor: boolean }>(
      'SELECT require_two_factor FROM people_settings LIMIT 1',
    );
    return r?.require_two_factor === true;
  }

  async setRequireTwoFactor(on: boolean): Promise<void> {
    await this.db.query('UPDATE people_settings SET require_two_factor = $1, updated_at = now()', [on]);
  }

  /** Ends the password sessions of active users without two-factor (when it becomes required); how many. */
  async endSessionsWithoutTwoFactor(at: Date): Promise<number> {
    const rows = await this.db.query(
      `UPDATE admin_sessions s SET revoked_at = $1 FROM users u
        WHERE s.user_id = u.id AND s.revoked_at IS NULL AND u.totp_enabled_at IS NULL RETURNING s.id`,
      [at],
    );
    return rows.length;
  }
}

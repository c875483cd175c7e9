import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SCOPES } from '../src/modules/access/scopes.ts';
import { verifyPassword } from '../src/modules/people/passwords.ts';
import { ACCOUNT_TIERS } from '../src/modules/people/sign-in-throttle.ts';
import { adminCall, type TestApp, testApp } from './helpers.ts';
import { suiteLogText } from './log-capture.ts';

const P = '/api/admin/v1';
const OWNER = { email: 'Owner@Example.com', password: 'correct horse battery staple' };

type Jar = { cookie: string; csrf: string; sessionId: string };

describe('people, roles and password sign-in', () => {
  let t: TestApp;
  let service: string;
  let owner: Jar;
  const secrets: string[] = [];
  const roleId = async (name: string) => {
    const r = await adminCall(t.app, service, 'GET', '/roles');
    return (r.body.data as { id: number; name: string }[]).find((x) => x.name === name)!.id;
  };
  const signIn = async (email: string, password: string, ip = '10.0.0.1') => {
    const res = await t.app.inject({
      method: 'POST',
      url: `${P}/session`,
      payload: { email, password },
      remoteAddress: ip,
      headers: { 'user-agent': 'people-test' },
    });
    const sid = res.cookies.find((c) => c.name === 'podium_session')?.value ?? '';
    if (sid) secrets.push(sid);
    return {
      res,
      jar: { cookie: `podium_session=${sid}`, csrf: res.json().data?.csrfToken as string, sessionId: sid },
    };
  };
  const as = (jar: Jar, method: 'GET' | 'POST' | 'PATCH' | 'DELETE', url: string, payload?: object) =>
    t.app.inject({
      method,
      url: `${P}${url}`,
      headers: { cookie: jar.cookie, 'x-csrf-token': jar.csrf },
      ...(payload ? { payload } : {}),
    });
  const secretOf = (url: string) => {
    const s = new URL(url).hash.replace('#/accept/', '');
    secrets.push(s);
    return s;
  };
  const invite = async (email: string, role: string, by: Jar = owner) => {
    const res = await as(by, 'POST', '/users', { email, roleId: await roleId(role), displayName: email });
    expect(res.statusCode, res.body).toBe(201);
    return { user: res.json().data, secret: secretOf(res.json().invitation.url) };
  };
  const accept = (secret: string, password: string) =>
    t.app.inject({ method: 'POST', url: `${P}/invitations/accept`, payload: { secret, password } });

  beforeAll(async () => {
    t = await testApp({ authFailureLimit: 20 });
    service = (await t.app.services.access.createAdminToken('root', ['admin'], null)).token;
    const first = await t.app.services.people.firstRun(OWNER.email);
    expect(first!.user.status).toBe('invited');
    expect(await t.app.services.people.firstRun('again@example.com')).toBeNull();
    expect((await accept(secretOf(first!.link.url), OWNER.password)).statusCode).toBe(200);
    secrets.push(OWNER.password);
    owner = (await signIn(OWNER.email.toLowerCase(), OWNER.password)).jar;
  });
  afterAll(() => t.close());

  it('signs in with email and password: HttpOnly cookie, the role scopes, the user named', async () => {
    const { res, jar } = await signIn('OWNER@example.COM', OWNER.password);
    expect(res.statusCode).toBe(201);
    expect(res.cookies.find((c) => c.name === 'podium_session')).toMatchObject({
      httpOnly: true,
      sameSite: 'Strict',
    });
    expect(res.json().data).toMatchObject({ adminTokenId: null, scopes: ['admin'], user: { role: 'owner' } });
    expect(jar.sessionId).not.toBe(owner.sessionId);
    const who = await as(jar, 'GET', '/session');
    expect(who.json().data.user.email).toBe(OWNER.email);
    const me = await as(jar, 'GET', '/me');
    expect(me.json().data).toMatchObject({ status: 'active', hasPassword: true });
    expect(me.json().data.lastSignInAt).not.toBeNull();
    expect(JSON.stringify(me.json())).not.toMatch(/scrypt/);
  });

  it('stores scrypt hashes with their parameters', async () => {
    const [row] = await t.db.query<{ password_hash: string }>('SELECT password_hash FROM users WHERE id = 1');
    expect(row!.password_hash).toMatch(/^scrypt\$32768\$8\$1\$[A-Za-z0-9+/=]{24}\$[A-Za-z0-9+/=]{88}$/);
    expect(await verifyPassword(OWNER.password, row!.password_hash)).toBe(true);
    expect(await verifyPassword('wrong password here', row!.password_hash)).toBe(false);
  });

  it('answers the same 401 for an unknown email, a wrong password and a suspended user', async () => {
    const { secret } = await invite('sus@example.com', 'viewer');
    expect((await accept(secret, 'a long enough passphrase')).statusCode).toBe(200);
    const sus = (await signIn('sus@example.com', 'a long enough passphrase', '10.0.1.1')).jar;
    const id = (await as(owner, 'GET', '/users?status=active'))
      .json()
      .data.find((u: { email: string }) => u.email === 'sus@example.com').id;
    expect((await as(owner, 'POST', `/users/${id}/suspend`)).statusCode).toBe(200);
    // Thrown out at the next request.
    expect((await as(sus, 'GET', '/session')).statusCode).toBe(401);
    const bodies = [];
    for (const [email, pw] of [
      ['nobody@example.com', 'whatever password'],
      [OWNER.email, 'not the password at all'],
      ['sus@example.com', 'a long enough passphrase'],
    ] as const) {
      const { res } = await signIn(email, pw, '10.0.1.2');
      expect(res.statusCode).toBe(401);
      bodies.push(res.body);
    }
    expect(new Set(bodies).size).toBe(1);
    expect(JSON.parse(bodies[0]!)).toEqual({ code: 'unauthorized', message: 'Wrong email or password' });
    expect((await as(owner, 'POST', `/users/${id}/reactivate`)).json().data.status).toBe('active');
  });

  it('refuses weak passwords with a 422 naming password, and spent or unknown links clearly', async () => {
    const { secret } = await invite('weak@example.com', 'editor');
    for (const pw of ['short', 'password1234', 'aaaaaaaaaaaaaaaa', 'weak@example.com!!', 'x'.repeat(201)]) {
      const res = await accept(secret, pw);
      expect(res.statusCode, pw).toBe(422);
      expect(res.json()).toMatchObject({ code: 'validation_failed', details: { field: 'password' } });
    }
    expect((await accept(secret, 'a fine long passphrase')).statusCode).toBe(200);
    const again = await accept(secret, 'a fine long passphrase');
    expect(again.statusCode).toBe(409);
    expect(again.json().message).toMatch(/already used/);
    expect((await accept('nope', 'a fine long passphrase')).statusCode).toBe(404);
    const { secret: late } = await invite('late@example.com', 'editor');
    t.clock.now = new Date(Date.now() + 8 * 86_400_000);
    try {
      const expired = await accept(late, 'a fine long passphrase');
      expect(expired.statusCode).toBe(409);
      expect(expired.json().message).toMatch(/expired/);
    } finally {
      t.clock.now = new Date();
    }
  });

  it('a role change takes effect on the next request; editors cannot manage users', async () => {
    const { user, secret } = await invite('ed@example.com', 'editor');
    await accept(secret, 'editor passphrase ok');
    const ed = (await signIn('ed@example.com', 'editor passphrase ok', '10.0.2.1')).jar;
    expect((await as(ed, 'GET', '/sites')).statusCode).toBe(200);
    expect((await as(ed, 'GET', '/users')).statusCode).toBe(403);
    expect((await as(ed, 'GET', '/tracking/programs')).statusCode).toBe(403);
    const changed = await as(owner, 'PATCH', `/users/${user.id}`, {
      roleId: await roleId('affiliate-manager'),
    });
    expect(changed.statusCode).toBe(200);
    expect((await as(ed, 'GET', '/tracking/programs')).statusCode).toBe(200);
    expect((await as(ed, 'GET', '/session')).json().data.scopes).toContain('tracking:write');
  });

  it('guards owners: only an owner grants or changes the owner role, the last owner stays', async () => {
    const { user, secret } = await invite('adm@example.com', 'admin');
    await accept(secret, 'admin passphrase ok');
    const adm = (await signIn('adm@example.com', 'admin passphrase ok', '10.0.3.1')).jar;
    const ownerRole = await roleId('owner');
    const grant = await as(adm, 'POST', '/users', { email: 'o2@example.com', roleId: ownerRole });
    expect(grant.statusCode).toBe(403);
    expect((await as(adm, 'POST', '/users/1/suspend')).statusCode).toBe(403);
    expect((await as(adm, 'PATCH', '/users/1', { roleId: await roleId('viewer') })).statusCode).toBe(403);
    // A service token is no owner either.
    expect((await adminCall(t.app, service, 'POST', '/users/1/suspend')).status).toBe(403);
    const last = await as(owner, 'PATCH', '/users/1', { roleId: await roleId('viewer') });
    expect(last.statusCode).toBe(409);
    expect((await as(owner, 'POST', '/users/1/suspend')).statusCode).toBe(409);
    expect((await as(owner, 'PATCH', `/users/${user.id}`, { roleId: ownerRole })).statusCode).toBe(200);
    const dup = await as(owner, 'POST', '/users', { email: 'ADM@example.com', roleId: ownerRole });
    expect(dup.statusCode).toBe(409);
  });

  it('the built-in roles hold the scopes the People page lists, each a known scope', async () => {
    const page = readFileSync(new URL('../docs/people.md', import.meta.url), 'utf8');
    const documented = Object.fromEntries(
      [...page.matchAll(/^\| `([a-z-]+)` \| ((?:`[a-z:-]+`(?:, )?)+) \|/gm)].map((m) => [
        m[1],
        [...m[2]!.matchAll(/`([a-z:-]+)`/g)].map((x) => x[1]).sort(),
      ]),
    );
    const r = await adminCall(t.app, service, 'GET', '/roles');
    const builtIn = (r.body.data as { name: string; scopes: string[]; builtIn: boolean }[]).filter(
      (x) => x.builtIn,
    );
    expect(Object.fromEntries(builtIn.map((x) => [x.name, [...x.scopes].sort()]))).toEqual(documented);
    for (const role of builtIn) for (const scope of role.scopes) expect(SCOPES).toContain(scope);
  });

  it('custom roles: created with scopes, built-ins untouchable, a held role not deleted', async () => {
    const created = await as(owner, 'POST', '/roles', { name: 'Stats reader', scopes: ['tracking:read'] });
    expect(created.statusCode).toBe(201);
    const id = created.json().data.id;
    expect(
      (await as(owner, 'POST', '/roles', { name: 'stats READER', scopes: ['tracking:read'] })).statusCode,
    ).toBe(409);
    expect(
      (await as(owner, 'PATCH', `/roles/${await roleId('viewer')}`, { scopes: ['admin'] })).statusCode,
    ).toBe(403);
    const bad = await as(owner, 'POST', '/roles', { name: 'x', scopes: ['root'] });
    expect(bad.statusCode).toBe(422);
    await invite('stats@example.com', 'Stats reader');
    expect((await as(owner, 'DELETE', `/roles/${id}`)).statusCode).toBe(409);
    const patched = await as(owner, 'PATCH', `/roles/${id}`, { scopes: ['tracking:read', 'catalog:read'] });
    expect(patched.json().data.scopes).toEqual(['tracking:read', 'catalog:read']);
  });

  it('personal tokens: never beyond the role, narrowed at use, revoked on suspension', async () => {
    const { user, secret } = await invite('pm@example.com', 'publisher');
    await accept(secret, 'publisher passphrase');
    const pm = (await signIn('pm@example.com', 'publisher passphrase', '10.0.4.1')).jar;
    const beyond = await as(pm, 'POST', '/me/tokens', {
      name: 'ci',
      scopes: ['catalog:write', 'tracking:read'],
    });
    expect(beyond.statusCode).toBe(422);
    expect(beyond.json().details).toMatchObject({ field: 'scopes', beyondRole: ['tracking:read'] });
    const made = await as(pm, 'POST', '/me/tokens', {
      name: 'ci',
      scopes: ['catalog:read', 'catalog:write'],
    });
    expect(made.statusCode).toBe(201);
    const token = made.json().data.token as string;
    secrets.push(token);
    expect((await adminCall(t.app, token, 'GET', '/sites')).status).toBe(200);
    // Writes with the personal token name the person in the audit log.
    const site = await adminCall(t.app, token, 'POST', '/sites', {
      domain: 'people.example',
      name: 'People',
    });
    expect(site.status).toBe(201);
    const audit = await adminCall(t.app, service, 'GET', `/audit?user_id=${user.id}`);
    expect(audit.body.data[0]).toMatchObject({
      userId: user.id,
      actor: `user:${user.id}`,
      action: 'POST /api/admin/v1/sites',
    });
    expect(audit.body.data[0].address).toBeTruthy();
    // Down to viewer: the token keeps only what the role holds.
    await as(owner, 'PATCH', `/users/${user.id}`, { roleId: await roleId('viewer') });
    expect((await adminCall(t.app, token, 'GET', '/sites')).status).toBe(200);
    expect((await adminCall(t.app, token, 'POST', '/sites', { domain: 'x.example', name: 'X' })).status).toBe(
      403,
    );
    expect((await as(pm, 'GET', '/me/sessions')).json().data).toHaveLength(1);
    await as(owner, 'POST', `/users/${user.id}/suspend`);
    expect((await adminCall(t.app, token, 'GET', '/sites')).status).toBe(401);
    expect((await as(pm, 'GET', '/sites')).statusCode).toBe(401);
    const [row] = await t.db.query<{ revoked_at: Date | null }>(
      'SELECT revoked_at FROM admin_tokens WHERE user_id = $1',
      [user.id],
    );
    expect(row!.revoked_at).not.toBeNull();
  });

  it('sends an invitation again (the earlier link stops working), then only while still invited', async () => {
    const { user, secret: first } = await invite('again-invited@example.com', 'viewer');
    const again = await as(owner, 'POST', `/users/${user.id}/invitation`);
    expect(again.statusCode, again.body).toBe(201);
    const second = secretOf(again.json().data.url);
    expect(second).not.toBe(first);
    const replaced = await accept(first, 'a viewer passphrase');
    expect(replaced.statusCode).toBe(409);
    expect(replaced.json().message).toContain('replaced by a newer one');
    expect((await accept(second, 'a viewer passphrase')).statusCode).toBe(200);
    const spent = await as(owner, 'POST', `/users/${user.id}/invitation`);
    expect(spent.statusCode).toBe(409);
    expect((await as(owner, 'POST', '/users/999999/invitation')).statusCode).toBe(404);
    const one = await as(owner, 'GET', `/users/${user.id}`);
    expect(one.json().data).toMatchObject({
      id: user.id,
      email: 'again-invited@example.com',
      status: 'active',
    });
  });

  it("reads and renames one's own profile, lists and revokes one's own personal tokens", async () => {
    const { secret } = await invite('self@example.com', 'editor');
    await accept(secret, 'an editor passphrase');
    const me = (await signIn('self@example.com', 'an editor passphrase', '10.0.6.1')).jar;
    expect((await as(me, 'GET', '/me')).json().data).toMatchObject({ email: 'self@example.com' });
    const renamed = await as(me, 'PATCH', '/me', { displayName: 'Self Editor' });
    expect(renamed.json().data.displayName).toBe('Self Editor');
    const made = await as(me, 'POST', '/me/tokens', { name: 'laptop', scopes: ['catalog:read'] });
    secrets.push(made.json().data.token);
    const list = (await as(me, 'GET', '/me/tokens')).json().data;
    expect(list).toEqual([
      expect.objectContaining({ id: made.json().data.id, name: 'laptop', revokedAt: null }),
    ]);
    expect(JSON.stringify(list)).not.toContain(made.json().data.token);
    const revoked = await as(me, 'DELETE', `/me/tokens/${made.json().data.id}`);
    expect(revoked.json().data.revokedAt).not.toBeNull();
    expect((await adminCall(t.app, made.json().data.token, 'GET', '/sites')).status).toBe(401);
    // Someone else's token is not one's own to revoke.
    const other = await as(owner, 'POST', '/me/tokens', { name: 'owner ci', scopes: ['catalog:read'] });
    secrets.push(other.json().data.token);
    expect((await as(me, 'DELETE', `/me/tokens/${other.json().data.id}`)).statusCode).toBe(404);
  });

  it('lists sessions and signs out everywhere; a password change ends the other sessions', async () => {
    const { secret } = await invite('multi@example.com', 'viewer');
    expect((await accept(secret, 'several device passphrase')).statusCode).toBe(200);
    const a = (await signIn('multi@example.com', 'several device passphrase', '10.0.5.1')).jar;
    const b = (await signIn('multi@example.com', 'several device passphrase', '10.0.5.2')).jar;
    const list = (await as(a, 'GET', '/me/sessions')).json().data;
    expect(list).toHaveLength(2);
    expect(list[0]).toMatchObject({ address: '10.0.5.2', userAgent: 'people-test' });
    expect(JSON.stringify(list)).not.toContain(a.sessionId);
    const wrong = await as(a, 'POST', '/me/password', {
      currentPassword: 'nope',
      newPassword: 'another fine passphrase',
    });
    expect(wrong.statusCode).toBe(422);
    expect(wrong.json().details.field).toBe('currentPassword');
    const changed = await as(a, 'POST', '/me/password', {
      currentPassword: 'several device passphrase',
      newPassword: 'another fine passphrase',
    });
    expect(changed.statusCode).toBe(204);
    secrets.push('another fine passphrase');
    expect((await as(b, 'GET', '/session')).statusCode).toBe(401);
    expect((await as(a, 'GET', '/session')).statusCode).toBe(200);
    const c = (await signIn('multi@example.com', 'another fine passphrase', '10.0.5.3')).jar;
    const out = await as(c, 'DELETE', '/me/sessions');
    expect(out.json().data.ended).toBe(2);
    expect((await as(a, 'GET', '/session')).statusCode).toBe(401);
    expect((await as(c, 'GET', '/session')).statusCode).toBe(401);
    // A service token is not a person.
    expect((await adminCall(t.app, service, 'GET', '/me')).status).toBe(403);
  });

  it('backs off then locks an account after repeated failures, the right password included', async () => {
    const { secret } = await invite('lock@example.com', 'viewer');
    expect((await accept(secret, 'a guarded passphrase')).statusCode).toBe(200);
    const backoff = ACCOUNT_TIERS[0];
    for (let i = 1; i <= backoff.max; i++) {
      // Each from its own address: the account budget counts them together.
      expect((await signIn('lock@example.com', `wrong guess ${i}`, `10.1.0.${i}`)).res.statusCode).toBe(401);
    }
    const over = await signIn('lock@example.com', 'wrong again', '10.1.1.1');
    expect(over.res.statusCode).toBe(429);
    expect(Number(over.res.headers['retry-after'])).toBeGreaterThan(0);
    const right = await signIn('LOCK@example.com', 'a guarded passphrase', '10.1.1.2');
    expect(right.res.statusCode).toBe(429);
    t.clock.now = new Date(Date.now() + backoff.blockMs + 1000);
    try {
      expect((await signIn('lock@example.com', 'a guarded passphrase', '10.1.1.3')).res.statusCode).toBe(201);
    } finally {
      t.clock.now = new Date();
    }
  });

  it('throttles per address across accounts', async () => {
    let last = 0;
    for (let i = 0; i < 21; i++)
      last = (await signIn(`ghost${i}@example.com`, 'whatever it is', '10.2.0.1')).res.statusCode;
    expect(last).toBe(429);
    expect((await signIn(OWNER.email, OWNER.password, '10.2.0.1')).res.statusCode).toBe(429);
    expect((await signIn(OWNER.email, OWNER.password, '10.2.0.2')).res.statusCode).toBe(201);
  });

  it('keeps the token sign-in, and refuses a body mixing both ways', async () => {
    const res = await t.app.inject({ method: 'POST', url: `${P}/session`, payload: { token: service } });
    expect(res.statusCode).toBe(201);
    expect(res.json().data).toMatchObject({ user: null, userId: null, scopes: ['admin'] });
    const both = await t.app.inject({
      method: 'POST',
      url: `${P}/session`,
      payload: { token: service, email: 'a@b.c' },
    });
    expect(both.statusCode).toBe(422);
    const none = await t.app.inject({ method: 'POST', url: `${P}/session`, payload: {} });
    expect(none.json().details.field).toBe('email');
  });

  it('writes no password, link secret or session id to the log', async () => {
    const log = await suiteLogText();
    expect(secrets.length).toBeGreaterThan(10);
    for (const s of secrets) expect(log.includes(s), 'a secret in the log').toBe(false);
  });
});

describe('first run', () => {
  it('creates the owner on a database without one and prints a one-time link once; the demo adds people', async () => {
    const { startServer } = await import('../src/server.ts');
    const { loadConfig } = await import('../src/config.ts');
    const { testDb } = await import('./helpers.ts');
    const d = await testDb();
    const config = loadConfig(
      {},
      {
        publicUrl: 'https://podium.test',
        host: '127.0.0.1',
        port: 0,
        logLevel: 'silent',
        ownerEmail: 'boss@example.com',
        demoOnEmpty: true,
      },
    );
    const lines: string[] = [];
    // The server closes the database it was given: each start gets the same one reopened by reference.
    const db = { ...d.db, close: async () => {} };
    try {
      const first = await startServer(config, { db, log: (m) => lines.push(m) });
      try {
        expect(first.ownerLink).toMatch(/^https:\/\/podium\.test\/console\/#\/accept\/[A-Za-z0-9_-]{43}$/);
        expect(lines.some((l) => l.includes(first.ownerLink!))).toBe(true);
        const users = await first.app.services.people.listUsers({ limit: 50 });
        expect(users.map((u) => u.role.name).sort()).toEqual([
          'ad-ops',
          'admin',
          'affiliate-manager',
          'editor',
          'owner',
          'publisher',
          'viewer',
        ]);
        expect(users.find((u) => u.role.name === 'owner')).toMatchObject({
          email: 'boss@example.com',
          status: 'invited',
        });
        const secret = new URL(first.ownerLink!).hash.replace('#/accept/', '');
        const set = await first.app.inject({
          method: 'POST',
          url: '/api/admin/v1/invitations/accept',
          payload: { secret, password: 'the owner passphrase' },
        });
        expect(set.json().data.status).toBe('active');
      } finally {
        await first.close();
      }
      const second = await startServer(config, { db, log: (m) => lines.push(m) });
      expect(second.ownerLink).toBeNull();
      await second.close();
    } finally {
      await d.close();
    }
  });
});

import { Secret, TOTP } from 'otpauth';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CHALLENGE_ATTEMPTS } from '../src/modules/people/two-factor.ts';
import { adminCall, type TestApp, testApp } from './helpers.ts';
import { suiteLogText } from './log-capture.ts';

const P = '/api/admin/v1';
const OWNER = { email: 'owner@example.com', password: 'correct horse battery staple' };
type Jar = { cookie: string; csrf: string };
type Method = 'GET' | 'POST' | 'PUT' | 'DELETE';

// Two-factor sign-in against the real app: codes are computed with the same RFC 6238 library
// from the secret the enrolment showed, at the app's own (injected) clock.
describe('two-factor (TOTP) sign-in, recovery codes and the owner requiring it', () => {
  let t: TestApp;
  let service: string;
  let owner: Jar;
  const secrets: string[] = [];
  const code = (secret: string, shiftSteps = 0) =>
    new TOTP({ secret: Secret.fromBase32(secret) }).generate({
      timestamp: t.clock.now.getTime() + shiftSteps * 30_000,
    });
  const tick = (ms = 30_000) => {
    t.clock.now = new Date(t.clock.now.getTime() + ms);
  };
  const post = (url: string, payload: object, ip = '10.9.0.1') =>
    t.app.inject({ method: 'POST', url: `${P}${url}`, payload, remoteAddress: ip });
  const jarOf = (res: Awaited<ReturnType<typeof post>>): Jar => {
    const sid = res.cookies.find((c) => c.name === 'podium_session')!.value;
    secrets.push(sid);
    return { cookie: `podium_session=${sid}`, csrf: res.json().data.csrfToken };
  };
  const as = (jar: Jar, method: Method, url: string, payload?: object) =>
    t.app.inject({
      method,
      url: `${P}${url}`,
      headers: { cookie: jar.cookie, 'x-csrf-token': jar.csrf },
      ...(payload ? { payload } : {}),
    });
  const password = async (email: string, pw: string) => {
    const res = await post('/session', { email, password: pw });
    if (res.statusCode === 202) secrets.push(res.json().data.pendingToken);
    return res;
  };
  /** A new active user with a role; signed in (no two-factor yet). */
  const person = async (email: string, role = 'editor') => {
    const roles = (await adminCall(t.app, service, 'GET', '/roles')).body.data as {
      id: number;
      name: string;
    }[];
    const made = await adminCall(t.app, service, 'POST', '/users', {
      email,
      roleId: roles.find((r) => r.name === role)!.id,
    });
    const pw = `${role} passphrase of this test`;
    const secret = new URL(made.body.invitation.url).hash.replace('#/accept/', '');
    secrets.push(secret, pw);
    await t.app.services.people.acceptLink(secret, pw);
    const res = await password(email, pw);
    expect(res.statusCode, res.body).toBe(201);
    return { id: made.body.data.id as number, pw, jar: jarOf(res) };
  };
  /** Enrols a signed-in user; the base32 secret and the recovery codes. */
  const enrol = async (jar: Jar) => {
    const started = await as(jar, 'POST', '/me/two-factor');
    expect(started.statusCode, started.body).toBe(201);
    const e = started.json().data as { otpauthUri: string; qrCodeDataUrl: string; secret: string };
    secrets.push(e.secret);
    const confirmed = await as(jar, 'POST', '/me/two-factor/confirm', { code: code(e.secret) });
    expect(confirmed.statusCode, confirmed.body).toBe(201);
    const codes = confirmed.json().data.recoveryCodes as string[];
    secrets.push(...codes);
    return { ...e, codes };
  };

  beforeAll(async () => {
    t = await testApp({ authFailureLimit: 100 });
    service = (await t.app.services.access.createAdminToken('root', ['admin'], null)).token;
    const first = await t.app.services.people.firstRun(OWNER.email);
    await t.app.services.people.acceptLink(
      new URL(first!.link.url).hash.replace('#/accept/', ''),
      OWNER.password,
    );
    owner = jarOf(await password(OWNER.email, OWNER.password));
  });
  afterAll(() => t.close());

  it('enrols: secret shown once as otpauth URI and QR code, sealed at rest, confirmed by a first code', async () => {
    const { jar, id } = await person('ana@example.com');
    expect((await as(jar, 'GET', '/me/two-factor')).json().data).toEqual({
      enabled: false,
      recoveryCodesLeft: 0,
      required: false,
    });
    const started = await as(jar, 'POST', '/me/two-factor');
    expect(started.headers['cache-control']).toBe('no-store');
    const e = started.json().data;
    secrets.push(e.secret);
    expect(e.secret).toMatch(/^[A-Z2-7]{32}$/);
    expect(e.otpauthUri).toBe(
      `otpauth://totp/Podium:ana%40example.com?issuer=Podium&secret=${e.secret}&algorithm=SHA1&digits=6&period=30`,
    );
    expect(e.qrCodeDataUrl).toMatch(/^data:image\/png;base64,[A-Za-z0-9+/=]{200,}$/);
    const [row] = await t.db.query<{ totp_pending_sealed: string; totp_sealed: string | null }>(
      'SELECT totp_pending_sealed, totp_sealed FROM users WHERE id = $1',
      [id],
    );
    expect(row!.totp_pending_sealed).toMatch(/^gcm1:/);
    expect(row!.totp_pending_sealed).not.toContain(e.secret);
    expect(row!.totp_sealed).toBeNull();

    const wrong = await as(jar, 'POST', '/me/two-factor/confirm', { code: code(e.secret, 5) });
    expect(wrong.statusCode).toBe(422);
    expect(wrong.json().details.field).toBe('code');
    const ok = await as(jar, 'POST', '/me/two-factor/confirm', { code: code(e.secret) });
    expect(ok.statusCode, ok.body).toBe(201);
    const codes = ok.json().data.recoveryCodes as string[];
    secrets.push(...codes);
    expect(codes).toHaveLength(10);
    expect(new Set(codes).size).toBe(10);
    for (const c of codes) expect(c).toMatch(/^[a-z2-9]{4}(-[a-z2-9]{4}){3}$/);
    const stored = await t.db.query<{ code_hash: Uint8Array }>(
      'SELECT code_hash FROM user_recovery_codes WHERE user_id = $1',
      [id],
    );
    expect(stored).toHaveLength(10);
    expect(stored.every((r) => r.code_hash.length === 32)).toBe(true);
    expect((await as(jar, 'GET', '/me/two-factor')).json().data).toMatchObject({
      enabled: true,
      recoveryCodesLeft: 10,
    });
    expect((await as(jar, 'GET', '/me')).json().data.twoFactorEnabled).toBe(true);
    expect((await as(jar, 'POST', '/me/two-factor')).statusCode).toBe(409);

    // Signing in is now two steps; the code that confirmed the enrolment is not taken again.
    const first = await password('ana@example.com', 'editor passphrase of this test');
    expect(first.statusCode).toBe(202);
    expect(first.cookies).toHaveLength(0);
    expect(first.headers['cache-control']).toBe('no-store');
    const pending = first.json().data;
    expect(pending).toMatchObject({
      step: 'totp',
      pendingToken: expect.stringMatching(/^[A-Za-z0-9_-]{43}$/),
    });
    const replay = await post('/session/two-factor', {
      pendingToken: pending.pendingToken,
      code: code(e.secret),
    });
    expect(replay.statusCode).toBe(401);
    expect(replay.json().message).toBe('Wrong code');
    tick();
    const done = await post('/session/two-factor', {
      pendingToken: pending.pendingToken,
      code: code(e.secret),
    });
    expect(done.statusCode, done.body).toBe(201);
    expect(done.json().data.user.email).toBe('ana@example.com');
    const signedIn = jarOf(done);
    expect((await as(signedIn, 'GET', '/me')).statusCode).toBe(200);
    // The pending sign-in is spent, and its code too.
    const again = await post('/session/two-factor', {
      pendingToken: pending.pendingToken,
      code: code(e.secret),
    });
    expect(again.statusCode).toBe(401);
    expect(again.json().message).toMatch(/sign in with your password again/);
    const other = await password('ana@example.com', 'editor passphrase of this test');
    const reused = await post('/session/two-factor', {
      pendingToken: other.json().data.pendingToken,
      code: code(e.secret),
    });
    expect(reused.statusCode).toBe(401);
  });

  it('wrong codes spend the pending sign-in; it also expires; recovery codes work once each', async () => {
    const { pw } = await person('ben@example.com');
    const ben = (await password('ben@example.com', pw)).json().data;
    expect(ben.pendingToken).toBeUndefined();
    const jar = jarOf(await password('ben@example.com', pw));
    const e = await enrol(jar);
    tick();

    const p1 = (await password('ben@example.com', pw)).json().data.pendingToken;
    for (let i = 0; i < CHALLENGE_ATTEMPTS; i++) {
      const r = await post('/session/two-factor', { pendingToken: p1, code: code(e.secret, 10) });
      expect(r.statusCode).toBe(401);
    }
    const late = await post('/session/two-factor', { pendingToken: p1, code: code(e.secret) });
    expect(late.json().message).toMatch(/sign in with your password again/);
    // Those failures count against the account's budget: let its backoff pass.
    tick(61_000);

    const p2 = (await password('ben@example.com', pw)).json().data.pendingToken;
    tick(6 * 60_000);
    expect((await post('/session/two-factor', { pendingToken: p2, code: code(e.secret) })).statusCode).toBe(
      401,
    );

    const p3 = (await password('ben@example.com', pw)).json().data.pendingToken;
    const typed = e.codes[0]!.toUpperCase().replace(/-/g, ' ');
    const rec = await post('/session/two-factor', { pendingToken: p3, code: typed });
    expect(rec.statusCode, rec.body).toBe(201);
    const benId = rec.json().data.userId;
    jarOf(rec);
    const p4 = (await password('ben@example.com', pw)).json().data.pendingToken;
    expect((await post('/session/two-factor', { pendingToken: p4, code: e.codes[0]! })).statusCode).toBe(401);
    const audit = await adminCall(t.app, service, 'GET', `/audit?user_id=${benId}`);
    const actions = (audit.body.data as { action: string; after: unknown }[]).map((a) => [a.action, a.after]);
    expect(actions).toContainEqual([`POST ${P}/session/two-factor`, { twoFactor: 'recovery code used' }]);
    expect(actions).toContainEqual([`POST ${P}/me/two-factor/confirm`, { twoFactor: 'on' }]);
    const state = await as(
      jarOf(await post('/session/two-factor', { pendingToken: p4, code: e.codes[1]! })),
      'GET',
      '/me/two-factor',
    );
    expect(state.json().data.recoveryCodesLeft).toBe(8);
  });

  it('turns off with a current code or the password; new recovery codes replace the old', async () => {
    const { pw, jar, id } = await person('cy@example.com');
    const e = await enrol(jar);
    tick();
    const renewed = await as(jar, 'POST', '/me/two-factor/recovery-codes', { code: code(e.secret) });
    expect(renewed.statusCode, renewed.body).toBe(201);
    const fresh = renewed.json().data.recoveryCodes as string[];
    secrets.push(...fresh);
    expect(fresh.some((c) => e.codes.includes(c))).toBe(false);
    expect((await as(jar, 'POST', '/me/two-factor/disable', {})).statusCode).toBe(422);
    const wrongPw = await as(jar, 'POST', '/me/two-factor/disable', { password: 'not the password at all' });
    expect(wrongPw.statusCode).toBe(422);
    expect(wrongPw.json().details.field).toBe('password');
    const oldCode = await as(jar, 'POST', '/me/two-factor/disable', { code: e.codes[0]! });
    expect(oldCode.json().details.field).toBe('code');
    expect((await as(jar, 'POST', '/me/two-factor/disable', { password: pw })).statusCode).toBe(204);
    expect((await as(jar, 'POST', '/me/two-factor/disable', { password: pw })).statusCode).toBe(409);
    const [row] = await t.db.query<{ n: number }>(
      'SELECT count(*)::int AS n FROM user_recovery_codes WHERE user_id = $1',
      [id],
    );
    expect(row!.n).toBe(0);
    expect((await password('cy@example.com', pw)).statusCode).toBe(201);
    // Enrolled again, an admin can turn it off for them (lost phone and codes).
    await enrol((await person('dee@example.com')).jar);
    const dee = (await adminCall(t.app, service, 'GET', '/users?limit=200')).body.data.find(
      (u: { email: string }) => u.email === 'dee@example.com',
    );
    expect(dee.twoFactorEnabled).toBe(true);
    const off = await adminCall(t.app, service, 'DELETE', `/users/${dee.id}/two-factor`);
    expect(off.status).toBe(200);
    expect(off.body.data.twoFactorEnabled).toBe(false);
  });

  it('the owner requires two-factor: sessions without it end, sign-in enrols first, it cannot be turned off', async () => {
    const { pw, jar: eveJar } = await person('eve@example.com', 'admin');
    expect((await as(owner, 'PUT', '/settings/people', { requireTwoFactor: true })).statusCode).toBe(409);
    expect((await as(eveJar, 'PUT', '/settings/people', { requireTwoFactor: true })).statusCode).toBe(403);
    const ownerTotp = await enrol(owner);
    const on = await as(owner, 'PUT', '/settings/people', { requireTwoFactor: true });
    expect(on.statusCode, on.body).toBe(200);
    expect(on.json().data).toMatchObject({ requireTwoFactor: true });
    expect(on.json().data.sessionsEnded).toBeGreaterThan(0);
    expect((await as(owner, 'GET', '/settings/people')).json().data).toEqual({ requireTwoFactor: true });
    expect((await as(eveJar, 'GET', '/me')).statusCode).toBe(401);

    const pending = await password('eve@example.com', pw);
    expect(pending.statusCode).toBe(202);
    const { pendingToken, step } = pending.json().data;
    expect(step).toBe('enrol');
    // Nothing else works with a pending sign-in: it is no session and no token.
    const asBearer = await t.app.inject({
      method: 'GET',
      url: `${P}/me`,
      headers: { authorization: `Bearer ${pendingToken}` },
    });
    expect(asBearer.statusCode).toBe(401);
    expect((await post('/session/two-factor', { pendingToken, code: '123456' })).statusCode).toBe(401);
    const started = await post('/session/two-factor/enrol', { pendingToken });
    expect(started.statusCode, started.body).toBe(201);
    const secret = started.json().data.secret as string;
    secrets.push(secret);
    const done = await post('/session/two-factor', { pendingToken, code: code(secret) });
    expect(done.statusCode, done.body).toBe(201);
    const codes = done.json().data.recoveryCodes as string[];
    secrets.push(...codes);
    expect(codes).toHaveLength(10);
    const eve = jarOf(done);
    expect((await as(eve, 'GET', '/me/two-factor')).json().data).toMatchObject({
      enabled: true,
      required: true,
    });
    tick();
    expect((await as(eve, 'POST', '/me/two-factor/disable', { code: code(secret) })).statusCode).toBe(409);
    const totpPending = await post('/session/two-factor/enrol', {
      pendingToken: (await password('eve@example.com', pw)).json().data.pendingToken,
    });
    expect(totpPending.statusCode).toBe(409);

    // The owner, signed out by the switch too? No: the owner has two-factor, the session stays.
    expect((await as(owner, 'GET', '/me')).statusCode).toBe(200);
    expect((await as(owner, 'PUT', '/settings/people', { requireTwoFactor: false })).statusCode).toBe(200);
    secrets.push(ownerTotp.secret);
  });

  it('re-seals TOTP secrets with the key rotation', async () => {
    const r = await t.app.services.rotateSecretKeys();
    expect(r.kinds.totp_secrets.total).toBeGreaterThan(0);
    expect(r.kinds.totp_secrets.unreadable).toEqual([]);
  });

  it('writes no password, TOTP secret, recovery code, pending token or session id to the log', async () => {
    const log = await suiteLogText();
    expect(secrets.length).toBeGreaterThan(40);
    for (const s of secrets) expect(log.includes(s), 'a secret in the log').toBe(false);
  });
});

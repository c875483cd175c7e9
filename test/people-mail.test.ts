import { createServer } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RESET_BUDGET } from '../src/modules/people/sign-in-throttle.ts';
import { adminCall, type TestApp, testApp } from './helpers.ts';
import { suiteLogText } from './log-capture.ts';
import { linkIn, type SmtpSink, startSmtpSink } from './smtp-sink.ts';

const P = '/api/admin/v1';
const OWNER = { email: 'owner@example.com', password: 'correct horse battery staple' };
const secretOf = (url: string) => new URL(url).hash.replace(/^#\/(accept|reset)\//, '');

/** Signs in with a password; the cookie and CSRF token of the new session. */
async function signIn(t: TestApp, email: string, password: string, ip = '10.1.0.1') {
  const res = await t.app.inject({
    method: 'POST',
    url: `${P}/session`,
    payload: { email, password },
    remoteAddress: ip,
  });
  expect(res.statusCode, res.body).toBe(201);
  const sid = res.cookies.find((c) => c.name === 'podium_session')!.value;
  return { cookie: `podium_session=${sid}`, csrf: res.json().data.csrfToken as string, sid };
}

async function bootOwner(t: TestApp) {
  const first = await t.app.services.people.firstRun(OWNER.email);
  await t.app.services.people.acceptLink(secretOf(first!.link.url), OWNER.password);
  return signIn(t, OWNER.email, OWNER.password);
}

const as = (
  t: TestApp,
  jar: { cookie: string; csrf: string },
  method: 'GET' | 'POST',
  url: string,
  payload?: object,
) =>
  t.app.inject({
    method,
    url: `${P}${url}`,
    headers: { cookie: jar.cookie, 'x-csrf-token': jar.csrf },
    ...(payload ? { payload } : {}),
  });

describe('people mail through a real SMTP server on loopback', () => {
  let smtp: SmtpSink;
  let t: TestApp;
  let owner: Awaited<ReturnType<typeof signIn>>;
  let viewerRole: number;
  const secrets: string[] = [];

  beforeAll(async () => {
    smtp = await startSmtpSink();
    t = await testApp({ smtpUrl: smtp.url, mailFrom: 'Podium <podium@podium.test>', authFailureLimit: 50 });
    owner = await bootOwner(t);
    secrets.push(owner.sid, OWNER.password);
    const roles = await as(t, owner, 'GET', '/roles');
    viewerRole = (roles.json().data as { id: number; name: string }[]).find((r) => r.name === 'viewer')!.id;
  });
  afterAll(async () => {
    await t.close();
    await smtp.close();
  });

  it('mails the invitation: the link is in the message only, and accepting it activates the user', async () => {
    const res = await as(t, owner, 'POST', '/users', {
      email: 'Mia@Example.com',
      roleId: viewerRole,
      displayName: 'Mia',
    });
    expect(res.statusCode, res.body).toBe(201);
    expect(res.json().invitation).toEqual({ mailed: true, expiresAt: expect.any(String) });
    expect(res.body).not.toMatch(/accept\//);
    const mail = await smtp.next('mia@example.com');
    expect(mail.from?.value[0]).toMatchObject({ name: 'Podium', address: 'podium@podium.test' });
    expect(mail.subject).toBe('You are invited to Podium');
    expect(mail.text).toContain('role viewer');
    const link = linkIn(mail);
    expect(link).toMatch(/^https:\/\/podium\.test\/console\/#\/accept\/[A-Za-z0-9_-]{43}$/);
    secrets.push(secretOf(link));
    const password = 'mia picks a long passphrase';
    secrets.push(password);
    const accepted = await t.app.inject({
      method: 'POST',
      url: `${P}/invitations/accept`,
      payload: { secret: secretOf(link), password },
    });
    expect(accepted.statusCode, accepted.body).toBe(200);
    expect(accepted.json().data).toMatchObject({ email: 'Mia@Example.com', status: 'active' });
    const jar = await signIn(t, 'mia@example.com', password);
    secrets.push(jar.sid);

    // Sending it again mails a new link; the first one no longer works.
    const other = await as(t, owner, 'POST', '/users', { email: 'noah@example.com', roleId: viewerRole });
    const firstLink = linkIn(await smtp.next('noah@example.com'));
    const again = await as(t, owner, 'POST', `/users/${other.json().data.id}/invitation`);
    expect(again.json().data).toMatchObject({ mailed: true });
    const second = linkIn(await smtp.next('noah@example.com'));
    expect(second).not.toBe(firstLink);
    secrets.push(secretOf(firstLink), secretOf(second));
  });

  it('resets a password: the same 202 for known and unknown emails, a one-time link, every session ends', async () => {
    const email = 'reset.me@example.com';
    const invited = await as(t, owner, 'POST', '/users', { email, roleId: viewerRole });
    const inviteLink = linkIn(await smtp.next(email));
    const old = 'the password before the reset';
    secrets.push(secretOf(inviteLink), old);
    await t.app.services.people.acceptLink(secretOf(inviteLink), old);
    const before = await signIn(t, email, old);
    secrets.push(before.sid);

    const ask = (e: string, ip = '10.1.0.7') =>
      t.app.inject({ method: 'POST', url: `${P}/session/reset`, payload: { email: e }, remoteAddress: ip });
    const known = await ask(email.toUpperCase());
    const unknown = await ask('nobody@example.com');
    expect(known.statusCode).toBe(202);
    expect(unknown.statusCode).toBe(202);
    expect(known.body).toBe(unknown.body);
    expect(known.json().data).toMatchObject({ mailConfigured: true });
    const mail = await smtp.next(email);
    expect(mail.subject).toBe('Reset your Podium password');
    const link = linkIn(mail);
    expect(link).toMatch(/\/console\/#\/reset\/[A-Za-z0-9_-]{43}$/);
    const secret = secretOf(link);
    secrets.push(secret);

    // A reset link is not an invitation: the invitation route does not take it.
    const wrongDoor = await t.app.inject({
      method: 'POST',
      url: `${P}/invitations/accept`,
      payload: { secret, password: 'a new long passphrase' },
    });
    expect(wrongDoor.statusCode).toBe(404);
    const weak = await t.app.inject({
      method: 'POST',
      url: `${P}/session/reset/accept`,
      payload: { secret, password: 'short' },
    });
    expect(weak.statusCode).toBe(422);
    expect(weak.json().details.field).toBe('password');
    const next = 'the password after the reset';
    secrets.push(next);
    const done = await t.app.inject({
      method: 'POST',
      url: `${P}/session/reset/accept`,
      payload: { secret, password: next },
    });
    expect(done.statusCode, done.body).toBe(200);
    expect(done.json().data.id).toBe(invited.json().data.id);
    // The session from before the reset is over; the old password is refused, the new one works.
    expect((await as(t, before, 'GET', '/me')).statusCode).toBe(401);
    const oldPw = await t.app.inject({
      method: 'POST',
      url: `${P}/session`,
      payload: { email, password: old },
    });
    expect(oldPw.statusCode).toBe(401);
    secrets.push((await signIn(t, email, next)).sid);
    const reused = await t.app.inject({
      method: 'POST',
      url: `${P}/session/reset/accept`,
      payload: { secret, password: 'yet another passphrase' },
    });
    expect(reused.statusCode).toBe(409);

    // An expired link says so.
    await ask(email, '10.1.0.8');
    const late = secretOf(linkIn(await smtp.next(email)));
    secrets.push(late);
    t.clock.now = new Date(t.clock.now.getTime() + 61 * 60 * 1000);
    try {
      const expired = await t.app.inject({
        method: 'POST',
        url: `${P}/session/reset/accept`,
        payload: { secret: late, password: 'yet another passphrase' },
      });
      expect(expired.statusCode).toBe(409);
      expect(expired.json().message).toMatch(/expired/);
    } finally {
      t.clock.now = new Date(t.clock.now.getTime() - 61 * 60 * 1000);
    }
  });

  it('throttles reset requests: per account no more mail (same answer), per address 429', async () => {
    const email = 'flood@example.com';
    const invited = await as(t, owner, 'POST', '/users', { email, roleId: viewerRole });
    const pw = 'a long passphrase for this one';
    secrets.push(pw);
    const l = linkIn(await smtp.next(email));
    secrets.push(secretOf(l));
    await t.app.services.people.acceptLink(secretOf(l), pw);
    expect(invited.statusCode).toBe(201);
    const answers: string[] = [];
    for (let i = 0; i < RESET_BUDGET.accountMax + 2; i++) {
      const r = await t.app.inject({
        method: 'POST',
        url: `${P}/session/reset`,
        payload: { email },
        remoteAddress: `10.2.0.${i}`,
      });
      expect(r.statusCode).toBe(202);
      answers.push(r.body);
    }
    expect(new Set(answers).size).toBe(1);
    for (let i = 0; i < RESET_BUDGET.accountMax; i++) secrets.push(secretOf(linkIn(await smtp.next(email))));
    // Every request was answered before its mail left: wait for the mails that should not come.
    await t.app.inject({
      method: 'POST',
      url: `${P}/session/reset`,
      payload: { email: 'marker@example.com' },
      remoteAddress: '10.2.9.9',
    });
    expect(
      smtp.messages.filter((m) => m.text?.includes('reset') && (m.to as { text: string }).text === email),
    ).toHaveLength(RESET_BUDGET.accountMax);

    let last = 0;
    for (let i = 0; i <= RESET_BUDGET.addressMax; i++) {
      const r = await t.app.inject({
        method: 'POST',
        url: `${P}/session/reset`,
        payload: { email: `n${i}@example.com` },
        remoteAddress: '10.3.0.1',
      });
      last = r.statusCode;
      if (i < RESET_BUDGET.addressMax) expect(r.statusCode).toBe(202);
    }
    expect(last).toBe(429);
  });

  it("an admin issues a reset link: mailed; an owner's takes an owner", async () => {
    const email = 'ad.min@example.com';
    const adminRole = (await as(t, owner, 'GET', '/roles'))
      .json()
      .data.find((r: { name: string }) => r.name === 'admin').id;
    const created = await as(t, owner, 'POST', '/users', { email, roleId: adminRole });
    const pw = 'admin has a long passphrase';
    const l = linkIn(await smtp.next(email));
    secrets.push(pw, secretOf(l));
    await t.app.services.people.acceptLink(secretOf(l), pw);
    const admin = await signIn(t, email, pw);
    secrets.push(admin.sid);
    const ownerId = (await as(t, owner, 'GET', '/me')).json().data.id;
    const refused = await as(t, admin, 'POST', `/users/${ownerId}/password-reset`);
    expect(refused.statusCode).toBe(403);
    const issued = await as(t, owner, 'POST', `/users/${created.json().data.id}/password-reset`);
    expect(issued.statusCode).toBe(201);
    expect(issued.headers['cache-control']).toBe('no-store');
    expect(issued.json().data).toEqual({ mailed: true, expiresAt: expect.any(String) });
    secrets.push(secretOf(linkIn(await smtp.next(email))));
    const invitedOnly = await as(t, owner, 'POST', '/users', {
      email: 'pending@example.com',
      roleId: viewerRole,
    });
    secrets.push(secretOf(linkIn(await smtp.next('pending@example.com'))));
    expect(
      (await as(t, owner, 'POST', `/users/${invitedOnly.json().data.id}/password-reset`)).statusCode,
    ).toBe(409);
    expect((await as(t, owner, 'POST', '/users/999999/password-reset')).statusCode).toBe(404);
  });

  it('writes no password, link secret or session id to the log', async () => {
    const log = await suiteLogText();
    expect(secrets.length).toBeGreaterThan(15);
    for (const s of secrets) expect(log.includes(s), 'a secret in the log').toBe(false);
    expect(log).toMatch(/invited; the link was mailed/);
  });
});

describe('people mail when the SMTP server fails or is not configured', () => {
  it('a failed mail loses no invitation: the admin gets the link and a warning', async () => {
    // A port that refuses connections: a server socket opened and closed again.
    const port = await new Promise<number>((resolve) => {
      const s = createServer().listen(0, '127.0.0.1', () => {
        const p = (s.address() as { port: number }).port;
        s.close(() => resolve(p));
      });
    });
    const t = await testApp({ smtpUrl: `smtp://127.0.0.1:${port}` });
    try {
      const owner = await bootOwner(t);
      const roles = (await as(t, owner, 'GET', '/roles')).json().data as { id: number; name: string }[];
      const res = await as(t, owner, 'POST', '/users', {
        email: 'lost@example.com',
        roleId: roles.find((r) => r.name === 'editor')!.id,
      });
      expect(res.statusCode, res.body).toBe(201);
      const inv = res.json().invitation;
      expect(inv).toMatchObject({ mailed: false, url: expect.stringMatching(/\/console\/#\/accept\//) });
      expect(inv.warning).toMatch(
        /^The mail to lost@example\.com could not be sent \(.*ECONNREFUSED.*\): pass this one-time link on yourself\.$/,
      );
      const ok = await t.app.inject({
        method: 'POST',
        url: `${P}/invitations/accept`,
        payload: { secret: secretOf(inv.url), password: 'the link still works fine' },
      });
      expect(ok.statusCode).toBe(200);
    } finally {
      await t.close();
    }
  });

  it('without SMTP: the link goes to the admin, a reset request says no mail is sent, an admin issues the link', async () => {
    const t = await testApp();
    try {
      const owner = await bootOwner(t);
      const service = (await t.app.services.access.createAdminToken('root', ['admin'], null)).token;
      const roles = (await adminCall(t.app, service, 'GET', '/roles')).body.data as {
        id: number;
        name: string;
      }[];
      const res = await as(t, owner, 'POST', '/users', {
        email: 'copy@example.com',
        roleId: roles.find((r) => r.name === 'viewer')!.id,
      });
      expect(res.json().invitation).toEqual({
        mailed: false,
        url: expect.stringMatching(/\/console\/#\/accept\//),
        expiresAt: expect.any(String),
      });
      await t.app.services.people.acceptLink(
        secretOf(res.json().invitation.url),
        'a long passphrase of theirs',
      );
      const asked = await t.app.inject({
        method: 'POST',
        url: `${P}/session/reset`,
        payload: { email: 'copy@example.com' },
      });
      expect(asked.statusCode).toBe(202);
      expect(asked.json().data).toEqual({
        mailConfigured: false,
        message: expect.stringMatching(/ask an administrator/),
      });
      const issued = await as(t, owner, 'POST', `/users/${res.json().data.id}/password-reset`);
      expect(issued.json().data).toMatchObject({
        mailed: false,
        url: expect.stringMatching(/\/console\/#\/reset\//),
      });
      const set = await t.app.inject({
        method: 'POST',
        url: `${P}/session/reset/accept`,
        payload: { secret: secretOf(issued.json().data.url), password: 'a new passphrase of theirs' },
      });
      expect(set.statusCode).toBe(200);
      const bad = await t.app.inject({
        method: 'POST',
        url: `${P}/session/reset/accept`,
        payload: { secret: 'x'.repeat(43), password: 'a new passphrase of theirs' },
      });
      expect(bad.statusCode).toBe(404);
    } finally {
      await t.close();
    }
  });
});

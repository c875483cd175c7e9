import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SESSION_TTL_MS } from '../src/modules/access/sessions.ts';
import { type DemoTokens, loadDemo } from '../src/modules/catalog/demo.ts';
import { type TestApp, testApp } from './helpers.ts';

const P = '/api/admin/v1';

describe('console sessions', () => {
  let t: TestApp;
  let demo: DemoTokens;
  beforeAll(async () => {
    t = await testApp();
    demo = await loadDemo(t.app.services);
  });
  afterAll(() => t.close());

  const signIn = async (token: string) => {
    const res = await t.app.inject({ method: 'POST', url: `${P}/session`, payload: { token } });
    const cookies = Object.fromEntries(res.cookies.map((c) => [c.name, c]));
    return { res, cookies, cookie: `podium_session=${cookies.podium_session?.value}` };
  };

  it('exchanges an admin token for an HttpOnly SameSite=Strict cookie and a CSRF token', async () => {
    const { res, cookies } = await signIn(demo.adminToken);
    expect(res.statusCode).toBe(201);
    expect(res.headers['cache-control']).toBe('no-store');
    const session = cookies.podium_session!;
    expect(session).toMatchObject({ httpOnly: true, sameSite: 'Strict', path: P });
    // PODIUM_PUBLIC_URL is https (the tests' https://podium.test): Secure although this came over http.
    expect(session.secure).toBe(true);
    expect(cookies.podium_csrf!.secure).toBe(true);
    expect(cookies.podium_csrf).toMatchObject({ sameSite: 'Strict', path: '/' });
    expect(cookies.podium_csrf!.httpOnly).toBeFalsy();
    expect(res.json().data.csrfToken).toBe(cookies.podium_csrf!.value);
    expect(res.json().data.scopes).toEqual(['admin']);
    const rows = await t.db.query<{ session_hash: Uint8Array }>('SELECT session_hash FROM admin_sessions');
    expect(rows.some((r) => Buffer.from(r.session_hash).toString('utf8').includes(session.value))).toBe(
      false,
    );
  });

  it('on a plain-http public URL, marks the cookie Secure only when the request came over https', async () => {
    const https = await testApp({ trustProxy: true, publicUrl: 'http://podium.test' });
    try {
      const tokens = await https.app.services.access.createAdminToken('x', ['admin'], null);
      const res = await https.app.inject({
        method: 'POST',
        url: `${P}/session`,
        headers: { 'x-forwarded-proto': 'https' },
        payload: { token: tokens.token },
      });
      expect(res.cookies.find((c) => c.name === 'podium_session')!.secure).toBe(true);
      const plain = await https.app.inject({
        method: 'POST',
        url: `${P}/session`,
        payload: { token: tokens.token },
      });
      expect(plain.statusCode).toBe(201);
      expect(plain.cookies.map((c) => c.secure ?? false)).toEqual([false, false]);
    } finally {
      await https.close();
    }
  });

  it('refuses a site token or garbage with 401', async () => {
    expect((await signIn(demo.siteTokens[0]!.token)).res.statusCode).toBe(401);
    expect((await signIn('pda_nope')).res.statusCode).toBe(401);
  });

  it('reads with the cookie, writes only with the CSRF header, audits as the admin token', async () => {
    const { res, cookie } = await signIn(demo.adminToken);
    const csrf = res.json().data.csrfToken as string;
    const read = await t.app.inject({ method: 'GET', url: `${P}/sites`, headers: { cookie } });
    expect(read.statusCode).toBe(200);
    const body = { name: 'csrf-test' };
    const noCsrf = await t.app.inject({
      method: 'POST',
      url: `${P}/sites/1/tokens`,
      headers: { cookie },
      payload: body,
    });
    expect(noCsrf.statusCode).toBe(403);
    const wrong = await t.app.inject({
      method: 'POST',
      url: `${P}/sites/1/tokens`,
      headers: { cookie, 'x-csrf-token': 'x'.repeat(43) },
      payload: body,
    });
    expect(wrong.statusCode).toBe(403);
    const ok = await t.app.inject({
      method: 'POST',
      url: `${P}/sites/1/tokens`,
      headers: { cookie, 'x-csrf-token': csrf },
      payload: body,
    });
    expect(ok.statusCode).toBe(201);
    const audit = await t.app.inject({
      method: 'GET',
      url: `${P}/audit?target_type=sites`,
      headers: { cookie },
    });
    expect(audit.json().data[0]).toMatchObject({ action: 'POST /api/admin/v1/sites/:id/tokens' });
    const who = await t.app.inject({ method: 'GET', url: `${P}/session`, headers: { cookie } });
    expect(who.json().data).toMatchObject({ scopes: ['admin'] });
    expect(audit.json().data[0].adminTokenId).toBe(who.json().data.adminTokenId);
  });

  it('signs out (CSRF required) and then refuses the cookie', async () => {
    const { res, cookie } = await signIn(demo.adminToken);
    const csrf = res.json().data.csrfToken as string;
    expect(
      (await t.app.inject({ method: 'DELETE', url: `${P}/session`, headers: { cookie } })).statusCode,
    ).toBe(403);
    const out = await t.app.inject({
      method: 'DELETE',
      url: `${P}/session`,
      headers: { cookie, 'x-csrf-token': csrf },
    });
    expect(out.statusCode).toBe(204);
    expect(out.cookies.find((c) => c.name === 'podium_session')!.value).toBe('');
    expect((await t.app.inject({ method: 'GET', url: `${P}/sites`, headers: { cookie } })).statusCode).toBe(
      401,
    );
    expect((await t.app.inject({ method: 'GET', url: `${P}/session`, headers: { cookie } })).statusCode).toBe(
      401,
    );
  });

  it('expires after its lifetime and ends when its admin token is revoked', async () => {
    const { cookie } = await signIn(demo.adminToken);
    const started = t.clock.now;
    t.clock.now = new Date(started.getTime() + SESSION_TTL_MS + 1000);
    try {
      expect((await t.app.inject({ method: 'GET', url: `${P}/sites`, headers: { cookie } })).statusCode).toBe(
        401,
      );
    } finally {
      t.clock.now = started;
    }
    const extra = await t.app.services.access.createAdminToken('short', ['catalog:read'], null);
    const s = await signIn(extra.token);
    expect(
      (await t.app.inject({ method: 'GET', url: `${P}/sites`, headers: { cookie: s.cookie } })).statusCode,
    ).toBe(200);
    expect(
      (await t.app.inject({ method: 'POST', url: `${P}/brands`, headers: { cookie: s.cookie }, payload: {} }))
        .statusCode,
    ).toBe(403);
    await t.app.services.access.revokeAdminToken(extra.id);
    expect(
      (await t.app.inject({ method: 'GET', url: `${P}/sites`, headers: { cookie: s.cookie } })).statusCode,
    ).toBe(401);
  });
});

import { randomBytes } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import { createServer } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ConfigError, loadConfig } from '../src/config.ts';
import { OutboundClient } from '../src/lib/outbound.ts';
import { consoleReturnPath } from '../src/modules/access/session-routes.ts';
import { type TestApp, testApp } from './helpers.ts';
import { suiteLogText } from './log-capture.ts';
import { type SsoAccount, startProvider, type TestProvider } from './oidc-provider-fixture.ts';

const P = '/api/admin/v1';
const PUBLIC = 'https://podium.test';
const CLIENT_SECRET = `sso-client-secret-${randomBytes(12).toString('hex')}`;
const KEYS = [{ version: 1, key: randomBytes(32) }];

/** The people of the test provider, by account id (the `sub`); tests change their groups. */
const accounts: Record<string, SsoAccount> = {
  ann: { email: 'Ann@Corp.example', email_verified: true, name: 'Ann Editor', groups: ['podium-editors'] },
  olga: { email: 'olga@elsewhere.example', email_verified: true, name: 'Olga', groups: ['podium-editors'] },
  uma: { email: 'uma@corp.example', email_verified: false, name: 'Uma', groups: ['podium-editors'] },
  sam: { email: 'sam@partner.example', email_verified: true, name: 'Sam', groups: ['podium-publishers'] },
  nog: { email: 'nog@corp.example', email_verified: true, name: 'Nog', groups: ['marketing'] },
};

type Answer = Awaited<ReturnType<TestApp['app']['inject']>>;

describe('single sign-on with OpenID Connect against a real provider', () => {
  let t: TestApp;
  let idp: TestProvider;
  /** Every secret the flows handled: none may reach the log. */
  const secrets: string[] = [CLIENT_SECRET];

  /**
   * Drives the whole code flow as a browser would: Podium's start (302 to the provider), the
   * provider's login and consent pages with its cookies, back to Podium's callback. `tamper`
   * may change the callback query before it is sent.
   */
  const ssoSignIn = async (
    account: string,
    opts: {
      returnTo?: string;
      tamper?: (q: URLSearchParams) => void;
      dropCookie?: boolean;
      accept?: string;
    } = {},
  ): Promise<Answer> => {
    const ret = opts.returnTo ? `?return=${encodeURIComponent(opts.returnTo)}` : '';
    const start = await t.app.inject({
      method: 'GET',
      url: `${P}/session/sso${ret}`,
      remoteAddress: '10.9.0.1',
    });
    expect(start.statusCode, start.body).toBe(302);
    const flow = start.cookies.find((c) => c.name === 'podium_sso')!;
    expect(flow).toMatchObject({ httpOnly: true, sameSite: 'Lax', path: `${P}/session/sso` });
    secrets.push(flow.value);
    const jar = new Map<string, string>();
    let url = start.headers.location as string;
    expect(url.startsWith(`${idp.issuer}/`)).toBe(true);
    expect(new URL(url).searchParams.get('code_challenge_method')).toBe('S256');
    let method = 'GET';
    let body: string | undefined;
    for (let hop = 0; hop < 20 && !url.startsWith(PUBLIC); hop++) {
      const res = await fetch(url, {
        method,
        redirect: 'manual',
        headers: {
          cookie: [...jar].map(([k, v]) => `${k}=${v}`).join('; '),
          ...(body ? { 'content-type': 'application/x-www-form-urlencoded' } : {}),
        },
        body,
      });
      for (const c of res.headers.getSetCookie()) {
        const [pair = ''] = c.split(';');
        const at = pair.indexOf('=');
        const value = pair.slice(at + 1);
        if (value) jar.set(pair.slice(0, at), value);
        else jar.delete(pair.slice(0, at));
      }
      if (res.status >= 300 && res.status < 400) {
        url = new URL(res.headers.get('location')!, url).href;
        method = 'GET';
        body = undefined;
        continue;
      }
      const html = await res.text();
      expect(res.status, html).toBe(200);
      const action = /action="([^"]+)"/.exec(html)![1]!;
      const prompt = /name="prompt" value="(\w+)"/.exec(html)![1]!;
      url = new URL(action, url).href;
      method = 'POST';
      body = prompt === 'login' ? `prompt=login&login=${account}&password=any` : 'prompt=consent';
    }
    const back = new URL(url);
    expect(back.pathname).toBe(`${P}/session/sso/callback`);
    secrets.push(back.searchParams.get('code')!, back.searchParams.get('state')!);
    opts.tamper?.(back.searchParams);
    const res = await t.app.inject({
      method: 'GET',
      url: `${back.pathname}?${back.searchParams}`,
      headers: {
        ...(opts.dropCookie ? {} : { cookie: `podium_sso=${flow.value}` }),
        ...(opts.accept ? { accept: opts.accept } : {}),
      },
      remoteAddress: '10.9.0.1',
    });
    const sid = res.cookies.find((c) => c.name === 'podium_session')?.value;
    if (sid) secrets.push(sid);
    return res;
  };
  const sessionOf = (res: Answer) =>
    t.app.inject({
      method: 'GET',
      url: `${P}/session`,
      headers: { cookie: `podium_session=${res.cookies.find((c) => c.name === 'podium_session')!.value}` },
    });
  const userRow = async (email: string) =>
    (
      await t.db.query<{ id: number; status: string; sso_subject: string | null; role: string }>(
        `SELECT u.id, u.status, u.sso_subject, r.name AS role FROM users u JOIN roles r ON r.id = u.role_id
          WHERE lower(u.email) = lower($1)`,
        [email],
      )
    )[0];

  beforeAll(async () => {
    idp = await startProvider(`${PUBLIC}/api/admin/v1/session/sso/callback`, CLIENT_SECRET, accounts);
    t = await testApp({
      publicUrl: PUBLIC,
      secretKeys: KEYS,
      ssoIssuer: idp.issuer,
      ssoClientId: 'podium',
      ssoClientSecret: CLIENT_SECRET,
      ssoScopes: 'openid email profile groups',
      ssoAllowedDomains: ['corp.example'],
      ssoRoleMap: [
        { group: 'podium-publishers', role: 'publisher' },
        { group: 'podium-editors', role: 'editor' },
      ],
      // The explicit local-only allowance: the provider's exact address and port, nothing else.
      outboundLoopbackAllow: [`127.0.0.1:${idp.port}`],
    });
  });
  afterAll(async () => {
    await t?.close();
    await idp?.close();
  });

  it('tells the sign-in page that SSO is on', async () => {
    const res = await t.app.inject({ method: 'GET', url: `${P}/session/methods` });
    expect(res.json()).toEqual({ data: { password: true, sso: { url: `${P}/session/sso` } } });
  });

  it('creates a just-in-time account with the mapped role and signs in like a password sign-in', async () => {
    const res = await ssoSignIn('ann', { returnTo: '/console/#/toplists' });
    expect(res.statusCode, res.body).toBe(302);
    expect(res.headers.location).toBe('/console/#/toplists');
    expect(res.cookies.find((c) => c.name === 'podium_session')).toMatchObject({
      httpOnly: true,
      sameSite: 'Strict',
      secure: true,
      path: P,
    });
    expect(res.cookies.find((c) => c.name === 'podium_csrf')?.value).toMatch(/^[\w-]{20,}$/);
    // The state cookie is spent.
    expect(res.cookies.find((c) => c.name === 'podium_sso')?.value).toBe('');
    const who = await sessionOf(res);
    expect(who.json().data).toMatchObject({
      adminTokenId: null,
      user: { email: 'Ann@Corp.example', displayName: 'Ann Editor', role: 'editor' },
      scopes: ['catalog:read', 'catalog:write'],
    });
    expect(await userRow('ann@corp.example')).toMatchObject({
      status: 'active',
      sso_subject: 'ann',
      role: 'editor',
    });
    // A second sign-in is a new session (the id rotates) of the same account.
    const again = await ssoSignIn('ann');
    expect(again.headers.location).toBe('/console/');
    const sid = (r: Answer) => r.cookies.find((c) => c.name === 'podium_session')!.value;
    expect(sid(again)).not.toBe(sid(res));
    expect((await t.db.query("SELECT id FROM users WHERE lower(email) = 'ann@corp.example'")).length).toBe(1);
  });

  it('takes the role from the groups at every sign-in, and refuses once no group maps to a role', async () => {
    accounts.ann!.groups = ['podium-editors', 'podium-publishers'];
    const promoted = await ssoSignIn('ann');
    expect(promoted.statusCode).toBe(302);
    expect((await sessionOf(promoted)).json().data.user.role).toBe('publisher');
    accounts.ann!.groups = [];
    const dropped = await ssoSignIn('ann');
    expect(dropped.statusCode).toBe(403);
    expect(dropped.json().message).toMatch(/None of your groups/);
    expect(dropped.cookies.find((c) => c.name === 'podium_session')).toBeUndefined();
    expect((await userRow('ann@corp.example'))!.role).toBe('publisher');
    accounts.ann!.groups = ['podium-editors'];
  });

  it('refuses a new account outside the allowed domains, an unverified email, and no mapped group', async () => {
    const outside = await ssoSignIn('olga');
    expect(outside.statusCode).toBe(403);
    expect(outside.json()).toMatchObject({ code: 'forbidden' });
    expect(outside.json().message).toMatch(/corp\.example only/);
    expect(await userRow('olga@elsewhere.example')).toBeUndefined();
    const unverified = await ssoSignIn('uma');
    expect(unverified.statusCode).toBe(403);
    expect(unverified.json().message).toMatch(/not verified/);
    expect(await userRow('uma@corp.example')).toBeUndefined();
    const unmapped = await ssoSignIn('nog');
    expect(unmapped.statusCode).toBe(403);
    expect(await userRow('nog@corp.example')).toBeUndefined();
  });

  it('refuses a wrong state, a missing state cookie and a code used twice', async () => {
    const wrong = await ssoSignIn('ann', { tamper: (q) => q.set('state', 'not-the-state-we-sent') });
    expect(wrong.statusCode).toBe(401);
    expect(wrong.json().message).toMatch(/does not match/);
    expect(wrong.cookies.find((c) => c.name === 'podium_session')).toBeUndefined();
    const lost = await ssoSignIn('ann', { dropCookie: true });
    expect(lost.statusCode).toBe(401);
    expect(lost.json().message).toMatch(/No single sign-on was started/);
    const forged = await t.app.inject({
      method: 'GET',
      url: `${P}/session/sso/callback?code=x&state=y`,
      headers: { cookie: 'podium_sso=forged' },
    });
    expect(forged.statusCode).toBe(401);
  });

  it('sends a refused browser back to the sign-in page with a fixed reason, and keeps JSON for API clients', async () => {
    const BROWSER = 'text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8';
    const outside = await ssoSignIn('olga', { accept: BROWSER });
    expect(outside.statusCode).toBe(302);
    expect(outside.headers.location).toBe('/console/#/sign-in?sso_error=domain_not_allowed');
    expect(outside.cookies.find((c) => c.name === 'podium_session')).toBeUndefined();
    expect(outside.cookies.find((c) => c.name === 'podium_sso')?.value).toBe('');
    const unmapped = await ssoSignIn('nog', { accept: BROWSER });
    expect(unmapped.headers.location).toBe('/console/#/sign-in?sso_error=no_role');
    // The provider's own error text never reaches the URL: only the fixed reason does.
    const cancelled = await ssoSignIn('ann', {
      accept: BROWSER,
      tamper: (q) => {
        q.delete('code');
        q.set('error', 'access_denied');
        q.set('error_description', '<script>alert(1)</script> https://evil.example');
      },
    });
    expect(cancelled.statusCode).toBe(302);
    expect(cancelled.headers.location).toBe('/console/#/sign-in?sso_error=provider_refused');
    const wrong = await ssoSignIn('ann', { accept: BROWSER, tamper: (q) => q.set('state', 'nope') });
    expect(wrong.headers.location).toBe('/console/#/sign-in?sso_error=state_mismatch');
    const malformed = await t.app.inject({
      method: 'GET',
      url: `${P}/session/sso/callback?state=s&error_description=${'x'.repeat(1200)}`,
      headers: { accept: BROWSER },
    });
    expect(malformed.headers.location).toBe('/console/#/sign-in?sso_error=refused');
    const malformedApi = await t.app.inject({
      method: 'GET',
      url: `${P}/session/sso/callback?state=s&error_description=${'x'.repeat(1200)}`,
    });
    expect(malformedApi.statusCode).toBe(422);
    expect(malformedApi.json()).toMatchObject({
      code: 'validation_failed',
      details: { field: 'error_description' },
    });
    const lost = await t.app.inject({
      method: 'GET',
      url: `${P}/session/sso/callback?code=x&state=y`,
      headers: { accept: BROWSER },
    });
    expect(lost.headers.location).toBe('/console/#/sign-in?sso_error=flow_lost');
    // A client asking for JSON first gets the error itself, its reason in details.
    const api = await ssoSignIn('olga', { accept: 'application/json, text/html;q=0.5' });
    expect(api.statusCode).toBe(403);
    expect(api.json()).toMatchObject({ code: 'forbidden', details: { reason: 'domain_not_allowed' } });
    const log = await suiteLogText();
    expect(log).toMatch(
      /single sign-on refused \(domain_not_allowed\): No account has the email olga@elsewhere\.example/,
    );
    expect(log).toMatch(/single sign-on refused \(provider_refused\)/);
  });

  it('links an existing user by email (case-insensitive), and refuses them once suspended', async () => {
    await t.app.services.people.addDemoUser('Sam@Partner.example', 'Sam P.', 'viewer');
    // partner.example is not an allowed domain: linking an existing account does not need it.
    const linked = await ssoSignIn('sam');
    expect(linked.statusCode, linked.body).toBe(302);
    expect((await sessionOf(linked)).json().data.user).toMatchObject({
      email: 'Sam@Partner.example',
      role: 'publisher',
    });
    const row = (await userRow('sam@partner.example'))!;
    expect(row).toMatchObject({ status: 'active', sso_subject: 'sam' });
    const admin = { kind: 'admin' as const, tokenId: null, userId: null, scopes: ['admin'], siteIds: null };
    await t.app.services.people.suspend(admin, row.id);
    // Their open session ends with the suspension; a new SSO sign-in is refused.
    expect((await sessionOf(linked)).statusCode).toBe(401);
    const refused = await ssoSignIn('sam');
    expect(refused.statusCode).toBe(403);
    expect(refused.json().message).toBe('This account is suspended');
  });

  it('calls the provider only through the SSRF guard: loopback outside the allowance is refused', async () => {
    const discovery = `${idp.issuer}/.well-known/openid-configuration`;
    await expect(new OutboundClient().fetch(discovery)).rejects.toThrow(/must start with https/);
    await expect(new OutboundClient({ testOnly: { allowHttp: true } }).fetch(discovery)).rejects.toThrow(
      /not a public address \(loopback\)/,
    );
    const small = new OutboundClient({ loopbackAllow: [`127.0.0.1:${idp.port}`], maxBodyBytes: 100 });
    const allowed = new OutboundClient({ loopbackAllow: [`127.0.0.1:${idp.port}`] });
    try {
      await expect(small.fetch(discovery)).rejects.toThrow(/larger than 100 bytes/);
      const res = await allowed.fetch(discovery);
      expect(res.status).toBe(200);
      expect(((await res.json()) as { issuer: string }).issuer).toBe(idp.issuer);
    } finally {
      await small.close();
      await allowed.close();
    }
  });

  it('sends the browser back only to console paths (no open redirect)', async () => {
    for (const bad of [
      'https://evil.example/',
      '//evil.example/console/',
      '/console/../admin',
      '/docs/',
      '/console\\@evil',
    ])
      expect(() => consoleReturnPath(bad), bad).toThrow(/return/);
    expect(consoleReturnPath('/console/#/toplists/3')).toBe('/console/#/toplists/3');
    const res = await t.app.inject({
      method: 'GET',
      url: `${P}/session/sso?return=${encodeURIComponent('https://evil.example')}`,
    });
    expect(res.statusCode).toBe(422);
    expect(res.json().message).toMatch(/return/);
  });

  it('writes no client secret, code, state, state cookie or session id to the log', async () => {
    const log = await suiteLogText();
    expect(log).toMatch(/signed in with SSO \(account created at first sign-in\)/);
    expect(secrets.length).toBeGreaterThan(20);
    for (const s of secrets) expect(log.includes(s), 'a secret in the log').toBe(false);
  });
});

describe('single sign-on settings', () => {
  it('refuses plain http to a provider outside the loopback allowance, half a configuration, and owner in the map', () => {
    const bad = (env: Record<string, string>) => {
      try {
        loadConfig(env);
      } catch (err) {
        return (err as ConfigError).problems.join('\n');
      }
      return '';
    };
    expect(bad({ PODIUM_SSO_ISSUER: 'http://127.0.0.1:9', PODIUM_SSO_CLIENT_ID: 'c' })).toMatch(
      /PODIUM_SSO_ISSUER: must be https/,
    );
    expect(bad({ PODIUM_SSO_ISSUER: 'https://id.example' })).toMatch(/needs PODIUM_SSO_CLIENT_ID/);
    expect(bad({ PODIUM_SSO_ROLE_MAP: 'admins=owner' })).toMatch(/owner cannot be granted/);
    expect(
      bad({
        PODIUM_SSO_ISSUER: 'http://127.0.0.1:9',
        PODIUM_SSO_CLIENT_ID: 'c',
        PODIUM_OUTBOUND_LOOPBACK_ALLOW: '127.0.0.1:9',
      }),
    ).toBe('');
  });

  it('sends a browser back to the sign-in page when the provider cannot be reached at the start', async () => {
    const closed = createServer();
    await new Promise<void>((r) => closed.listen(0, '127.0.0.1', r));
    const { port } = closed.address() as AddressInfo;
    await new Promise((r) => closed.close(r));
    const t = await testApp({
      publicUrl: PUBLIC,
      secretKeys: KEYS,
      ssoIssuer: `http://127.0.0.1:${port}`,
      ssoClientId: 'podium',
      outboundLoopbackAllow: [`127.0.0.1:${port}`],
    });
    try {
      const browser = await t.app.inject({
        method: 'GET',
        url: `${P}/session/sso?return=/console/`,
        headers: { accept: 'text/html,*/*;q=0.8' },
      });
      expect(browser.statusCode).toBe(302);
      expect(browser.headers.location).toBe('/console/#/sign-in?sso_error=provider_failed');
      expect(browser.cookies.find((c) => c.name === 'podium_sso')).toBeUndefined();
      const api = await t.app.inject({ method: 'GET', url: `${P}/session/sso` });
      expect(api.statusCode).toBe(502);
      expect(api.json()).toMatchObject({ code: 'bad_gateway', details: { reason: 'provider_failed' } });
    } finally {
      await t.close();
    }
  });

  it('answers 404 for SSO routes and sso null when SSO is not configured', async () => {
    const t = await testApp();
    try {
      expect((await t.app.inject({ method: 'GET', url: `${P}/session/methods` })).json().data.sso).toBeNull();
      expect((await t.app.inject({ method: 'GET', url: `${P}/session/sso` })).statusCode).toBe(404);
    } finally {
      await t.close();
    }
  });
});

import { randomBytes } from 'node:crypto';
import { createServer } from 'node:net';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ConsoleBrowser, closeInTurn, consoleApp, openConsole } from './console-browser.ts';
import type { TestApp } from './helpers.ts';
import { type SsoAccount, startProvider, type TestProvider } from './oidc-provider-fixture.ts';

const CLIENT_SECRET = `sso-e2e-secret-${randomBytes(12).toString('hex')}`;
const accounts: Record<string, SsoAccount> = {
  pia: {
    email: 'pia@corp.example',
    email_verified: true,
    name: 'Pia Publisher',
    groups: ['podium-publishers'],
  },
  olga: {
    email: 'olga@elsewhere.example',
    email_verified: true,
    name: 'Olga Outside',
    groups: ['podium-publishers'],
  },
};

/** A TCP port free on loopback now: the app's public URL (and the provider's redirect URL) name it before it listens. */
async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const { port } = server.address() as { port: number };
  await new Promise((r) => server.close(r));
  return port;
}

// The sign-in page asks whether SSO is on, shows "Sign in with SSO", and the whole code flow runs
// in headless Chromium: Podium → the provider's login and consent pages → back, signed in.
describe('console: single sign-on in headless Chromium', { timeout: 300_000 }, () => {
  let idp: TestProvider;
  let t: TestApp;
  let browser: Browser;
  let page: Page;
  let base: string;
  let shot: ConsoleBrowser['shot'];

  beforeAll(async () => {
    const port = await freePort();
    idp = await startProvider(
      `http://127.0.0.1:${port}/api/admin/v1/session/sso/callback`,
      CLIENT_SECRET,
      accounts,
    );
    t = await consoleApp(
      {
        publicUrl: `http://127.0.0.1:${port}`,
        ssoIssuer: idp.issuer,
        ssoClientId: 'podium',
        ssoClientSecret: CLIENT_SECRET,
        ssoScopes: 'openid email profile groups',
        ssoAllowedDomains: ['corp.example'],
        ssoRoleMap: [{ group: 'podium-publishers', role: 'publisher' }],
      },
      [`127.0.0.1:${idp.port}`],
    );
    ({ browser, page, base, shot } = await openConsole(t, 800, port));
  }, 600_000);
  afterAll(async () => {
    await closeInTurn(browser, t, idp);
  });

  it('signs in with SSO from the sign-in page and lands on the screen it started from', async () => {
    await page.goto(`${base}/console/#/toplists`);
    await page.getByRole('heading', { name: 'Sign in to Podium' }).waitFor();
    await shot('sso-01-sign-in');
    await page.getByRole('link', { name: 'Sign in with SSO' }).click();
    await page.locator('input[name="login"]').fill('pia');
    await page.locator('input[name="password"]').fill('any password');
    await page.getByRole('button', { name: 'Sign-in' }).click();
    await page.getByRole('button', { name: 'Continue' }).click();
    await page.getByRole('heading', { name: 'Toplists' }).waitFor();
    expect(new URL(page.url()).hash).toBe('#/toplists');
    const who = (await page.evaluate(async () => (await fetch('/api/admin/v1/session')).json())) as {
      data: { user: unknown };
    };
    expect(who.data.user).toMatchObject({ email: 'pia@corp.example', role: 'publisher' });
    await shot('sso-02-signed-in');
  });

  it('brings a refused sign-in back to the sign-in page with the reason in a sentence', async () => {
    // A fresh browser: neither Podium's session nor the provider's.
    await page.context().clearCookies();
    await page.goto('about:blank');
    await page.goto(`${base}/console/#/toplists`);
    await page.getByRole('link', { name: 'Sign in with SSO' }).click();
    await page.locator('input[name="login"]').fill('olga');
    await page.locator('input[name="password"]').fill('any password');
    await page.getByRole('button', { name: 'Sign-in' }).click();
    await page.getByRole('button', { name: 'Continue' }).click();
    await page.getByRole('heading', { name: 'Sign in to Podium' }).waitFor();
    expect(new URL(page.url()).hash).toBe('#/sign-in?sso_error=domain_not_allowed');
    await expect
      .poll(() => page.getByRole('alert').textContent())
      .toMatch(/No Podium account has your email.*Ask an administrator for an invitation/);
    await shot('sso-03-refused');
    // No session came of it.
    const who = await page.evaluate(async () => (await fetch('/api/admin/v1/session')).status);
    expect(who).toBe(401);
    // A reason the console does not know (anyone can write a URL) shows the general sentence, as text.
    await page.goto(`${base}/console/#/sign-in?sso_error=%3Cb%3Eyou%20were%20hacked%3C%2Fb%3E`);
    await expect.poll(() => page.getByRole('alert').textContent()).toMatch(/^Single sign-on was refused\./);
    expect(await page.locator('b', { hasText: 'hacked' }).count()).toBe(0);
  });
});

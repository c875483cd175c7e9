import type { Browser, Page } from 'playwright-core';
import { Webhook } from 'standardwebhooks';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ConsoleBrowser, closeInTurn, consoleApp, openConsole, signIn } from './console-browser.ts';
import type { TestApp } from './helpers.ts';
import { json, type LoopbackServer, loopbackServer } from './hostile-server.ts';

// The Webhooks screen against a real server and a receiver on loopback (test-only allow-list).
describe('console: webhooks screen in headless Chromium', { timeout: 300_000 }, () => {
  let t: TestApp;
  let receiver: LoopbackServer;
  let browser: Browser;
  let page: Page;
  let base: string;
  let adminToken: string;
  let secret: string;

  let shot: ConsoleBrowser['shot'];

  beforeAll(async () => {
    t = await consoleApp();
    receiver = await loopbackServer();
    receiver.handle((_req, res) => json(res, 200, { ok: true }));
    await t.app.services.catalog.sites.create({ domain: 'hooks-site.example', name: 'Hooks site' });
    adminToken = (await t.app.services.access.createAdminToken('e2e', ['admin'], null)).token;
    ({ browser, page, base, shot } = await openConsole(t, 900));
  }, 600_000);
  afterAll(() => closeInTurn(browser, t, receiver));

  it('signs in and creates an endpoint: a bad URL is refused beside the field, the secret is shown once', async () => {
    await signIn(page, base, adminToken, '#/webhooks', 'Webhooks');
    await page.getByText('No webhook endpoints yet.').waitFor();

    await page.getByLabel('URL (https)').fill('https://10.0.0.7/hook');
    await page.getByRole('button', { name: 'Create endpoint' }).click();
    await page.locator('#webhook-url-error').waitFor();

    await page.getByLabel('URL (https)').fill(`${receiver.origin}/wp-json/podium/v1/hook`);
    await page.getByLabel('Site').selectOption({ label: 'hooks-site.example' });
    await page.getByLabel('toplist.window_closed').uncheck();
    await page.getByRole('button', { name: 'Create endpoint' }).click();
    secret = (await page.getByTestId('webhook-secret').textContent())!;
    expect(secret).toMatch(/^whsec_/);
    await page.getByRole('button', { name: 'Copy secret' }).click();
    expect(await page.evaluate<string>('navigator.clipboard.readText()')).toBe(secret);
    await page.getByTestId('webhook-state').filter({ hasText: 'enabled' }).waitFor();
    await page.getByText('toplist.published, toplist.unpublished, toplist.window_opened').waitFor();
    await page.getByRole('button', { name: 'Done' }).click();
    expect(await page.getByTestId('webhook-secret').count()).toBe(0);
  });

  it('sends a test event the receiver verifies, and shows the delivery and its try', async () => {
    await page.getByRole('button', { name: 'Send test' }).click();
    await page.getByRole('status').filter({ hasText: 'Test delivered: HTTP 200' }).waitFor();
    const hit = receiver.hits.at(-1)!;
    expect(new Webhook(secret).verify(hit.body, hit.headers as Record<string, string>)).toMatchObject({
      type: 'webhook.test',
    });
    const table = page.getByRole('table', { name: 'Deliveries' });
    await table.getByRole('cell', { name: 'webhook.test' }).waitFor();
    await table.getByText('succeeded').waitFor();
    await shot('webhooks-01-test');
  });

  it('shows a failing receiver: the failed try with its HTTP status and error, and the next try', async () => {
    receiver.handle((_req, res) => json(res, 500, { error: 'wordpress fatal error' }));
    const [site] = (await t.app.services.catalog.sites.list()).data;
    await t.app.services.webhooks.recordAll([
      {
        type: 'toplist.published',
        toplistId: 12,
        siteId: site!.id,
        slug: 'best-casinos-se',
        templateId: 1,
        geo: { geo_type: 'country', code: 'SE' },
        version: '3',
        liveFrom: null,
        liveUntil: null,
        occurredAt: new Date(),
      },
    ]);
    await t.app.services.webhooks.worker.kick();
    await page.reload();
    const table = page.getByRole('table', { name: 'Deliveries' });
    await table.getByRole('cell', { name: 'toplist.published' }).waitFor();
    await table.getByText('pending').waitFor();
    await table
      .getByText(/HTTP 500/)
      .first()
      .waitFor();
    await table.getByRole('button', { name: '1 / 8' }).click();
    const tries = page.getByRole('table', { name: /^Tries of msg_/ });
    await tries.getByRole('cell', { name: '500', exact: true }).waitFor();
    await shot('webhooks-02-failing');
  });

  it('disables and re-enables the endpoint, shown as such', async () => {
    await page.getByRole('button', { name: 'Disable' }).click();
    await page.getByTestId('webhook-state').filter({ hasText: 'disabled' }).waitFor();
    await page.getByRole('alert').filter({ hasText: 'disabled by an admin' }).waitFor();
    await page.getByRole('list', { name: 'Webhook endpoints' }).getByText('disabled').waitFor();
    await shot('webhooks-03-disabled');
    await page.getByRole('button', { name: 'Enable' }).click();
    await page.getByTestId('webhook-state').filter({ hasText: 'enabled' }).waitFor();
  });

  it('rotates the secret: the new one is shown once and both verify the next message', async () => {
    receiver.handle((_req, res) => json(res, 204, ''));
    page.once('dialog', (d) => d.accept());
    await page.getByRole('button', { name: 'Rotate secret' }).click();
    const rotated = (await page.getByTestId('webhook-secret').textContent())!;
    expect(rotated).toMatch(/^whsec_/);
    expect(rotated).not.toBe(secret);
    await page.getByText(/the previous secret also signs until/).waitFor();
    await page.getByRole('button', { name: 'Send test' }).click();
    await page.getByRole('status').filter({ hasText: 'Test delivered: HTTP 204' }).waitFor();
    const hit = receiver.hits.at(-1)!;
    for (const s of [secret, rotated])
      expect(new Webhook(s).verify(hit.body, hit.headers as Record<string, string>)).toMatchObject({
        type: 'webhook.test',
      });
  });

  it('shows a failed test as an error, and the failed try in the deliveries', async () => {
    receiver.handle((_req, res) => json(res, 500, { error: 'receiver down' }));
    const before = receiver.hits.length;
    await page.getByRole('button', { name: 'Send test' }).click();
    const alert = page.getByRole('alert').filter({ hasText: 'Test failed' });
    await alert.waitFor();
    expect(await alert.getAttribute('class')).toBe('error');
    expect(await page.getByRole('status').filter({ hasText: 'Test delivered' }).count()).toBe(0);
    expect(receiver.hits.length).toBeGreaterThan(before);
    await shot('webhooks-05-test-failed');
  });
});

import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadDemo } from '../src/modules/catalog/demo.ts';
import { type ConsoleBrowser, closeInTurn, consoleApp, openConsole } from './console-browser.ts';
import type { TestApp } from './helpers.ts';

const EDITOR = { email: 'limited.editor@example.com', password: 'one site is plenty for me' };

// A site-restricted editor signs in with a password in headless Chromium: the toplists screen
// lists only their site's toplists, and another site's toplist, opened by its URL, is not found.
describe('console: a site-restricted editor in headless Chromium', { timeout: 300_000 }, () => {
  let t: TestApp;
  let browser: Browser;
  let page: Page;
  let base: string;
  let shot: ConsoleBrowser['shot'];
  const sites = { a: 0, b: 0 };
  let otherToplist = 0;

  beforeAll(async () => {
    t = await consoleApp();
    await loadDemo(t.app.services);
    const [a, b] = await t.db.query<{ id: number }>('SELECT id FROM sites ORDER BY id LIMIT 2');
    sites.a = a!.id;
    sites.b = b!.id;
    otherToplist = (
      await t.db.query<{ id: number }>('SELECT id FROM toplists WHERE site_id = $1 ORDER BY id LIMIT 1', [
        sites.b,
      ])
    )[0]!.id;
    const people = t.app.services.people;
    const service = { kind: 'admin' as const, tokenId: null, userId: null, scopes: ['admin'], siteIds: null };
    const editor = (await people.listRoles()).find((r) => r.name === 'editor')!;
    const { user, invitation } = await people.invite(service, { email: EDITOR.email, roleId: editor.id });
    if (invitation.mailed) throw new Error('no mail server in this test: the link comes back');
    await people.acceptLink(new URL(invitation.url).hash.slice('#/accept/'.length), EDITOR.password);
    await people.updateUser(service, user.id, { siteIds: [sites.a] });
    ({ browser, page, base, shot } = await openConsole(t));
  }, 600_000);
  afterAll(async () => closeInTurn(browser, t));

  it('sees only their site’s toplists, and another site’s toplist URL shows not found', async () => {
    await page.goto(`${base}/console/#/toplists`);
    await page.getByLabel('Email').fill(EDITOR.email);
    await page.getByLabel('Password', { exact: true }).fill(EDITOR.password);
    await page.getByRole('button', { name: 'Sign in', exact: true }).click();
    await page.getByRole('heading', { name: 'Toplists' }).waitFor();
    const edits = page.getByRole('button', { name: /^Edit / });
    await edits.first().waitFor();
    const shown = await edits.count();
    const [own] = await t.db.query<{ n: number }>(
      'SELECT count(*)::int AS n FROM toplists WHERE site_id = $1',
      [sites.a],
    );
    const [all] = await t.db.query<{ n: number }>('SELECT count(*)::int AS n FROM toplists');
    expect(all!.n).toBeGreaterThan(own!.n);
    expect(shown).toBe(Math.min(own!.n, 50));
    // Every listed toplist is on site A: the names of site B's toplists are nowhere on the page.
    const others = await t.db.query<{ name: string; geo_code: string }>(
      'SELECT name, geo_code FROM toplists WHERE site_id <> $1',
      [sites.a],
    );
    const labels = await edits.evaluateAll((els) => els.map((e) => e.getAttribute('aria-label')));
    for (const o of others) expect(labels).not.toContain(`Edit ${o.name} (${o.geo_code})`);
    await shot('site-restriction-01-toplists');

    await page.goto(`${base}/console/#/toplists/${otherToplist}`);
    await page.reload();
    await page.getByRole('alert').filter({ hasText: 'Toplist not found' }).waitFor();
    await shot('site-restriction-02-not-found');
  });
});

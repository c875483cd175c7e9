import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type DemoTokens, loadDemo } from '../src/modules/catalog/demo.ts';
import { type ConsoleBrowser, closeInTurn, consoleApp, openConsole, signIn } from './console-browser.ts';
import type { TestApp } from './helpers.ts';

// An editor makes a toplist in the console only: New toplist (the slug follows the name, a
// taken slug is refused beside its field), the editor opens at the toplist's own address, and
// the toplist is renamed there; the audit log says both, the rename's name before and after.
describe('console: a new toplist and its rename in headless Chromium', { timeout: 300_000 }, () => {
  let t: TestApp;
  let browser: Browser;
  let page: Page;
  let base: string;
  let shot: ConsoleBrowser['shot'];
  let demo: DemoTokens;

  beforeAll(async () => {
    t = await consoleApp();
    demo = await loadDemo(t.app.services);
    ({ browser, page, base, shot } = await openConsole(t, 1100));
  }, 600_000);
  afterAll(() => closeInTurn(browser, t));

  const apiGet = async (path: string) => {
    const res = await t.app.inject({
      url: `/api/admin/v1${path}`,
      headers: { authorization: `Bearer ${demo.adminToken}` },
    });
    return res.json();
  };

  it('creates a toplist by clicking, refusing a taken slug beside its field, then opens it at its address', async () => {
    await signIn(page, base, demo.adminToken, '#/toplists', 'Toplists');
    await page.getByRole('button', { name: 'New toplist' }).click();
    const form = page.getByRole('form', { name: 'New toplist' });
    await form.getByLabel('Name (required)').fill('Casino bonuses (draft)');
    expect(await form.getByLabel('Slug (required)').inputValue()).toBe('casino-bonuses-draft');
    // A slug the demo already uses on this site.
    await form.getByLabel('Slug (required)').fill('casino-bonuses-se');
    await form.getByLabel('Site').selectOption({ label: 'casinoguide.example' });
    await form.getByLabel('Country code (e.g. SE)').fill('se');
    await form.getByRole('button', { name: 'Create toplist' }).click();
    await form
      .getByRole('alert')
      .filter({ hasText: /taken|already/ })
      .waitFor();
    await shot('toplist-create-01-taken-slug');

    await form.getByLabel('Slug (required)').fill('casino-bonuses-baltics');
    await form.getByLabel('Geo type').selectOption('market');
    await form.getByLabel('Market code (e.g. NORDICS)').fill('baltics');
    await form.getByLabel('Countries it covers (comma-separated)').fill('ee, lv, lt');
    await form.getByLabel('Period it covers (e.g. December 2026)').fill('December 2026');
    await form.getByRole('button', { name: 'Create toplist' }).click();
    await page.getByRole('heading', { name: 'Casino bonuses (draft)', level: 1 }).waitFor();
    await page.getByRole('heading', { name: 'Draft items' }).waitFor();
    const hash = new URL(page.url()).hash;
    expect(hash).toMatch(/^#\/toplists\/\d+$/);
    const id = Number(hash.split('/')[2]);
    const made = (await apiGet(`/toplists/${id}`)).data;
    expect(made).toMatchObject({
      name: 'Casino bonuses (draft)',
      slug: 'casino-bonuses-baltics',
      geo: { type: 'market', code: 'BALTICS', coveredCountries: ['EE', 'LV', 'LT'] },
      currentPeriod: 'December 2026',
      liveVersion: null,
    });
    await shot('toplist-create-02-editor');

    // The demo's "(draft)" name does not have to go live: it is renamed in the editor.
    const rename = page.getByRole('form', { name: 'Name and slug' });
    await rename.getByLabel('Name (required)').fill('Casino bonuses Baltics');
    await rename.getByRole('button', { name: 'Rename' }).click();
    await page.getByRole('heading', { name: 'Casino bonuses Baltics', level: 1 }).waitFor();
    expect((await apiGet(`/toplists/${id}`)).data.name).toBe('Casino bonuses Baltics');
    await shot('toplist-create-03-renamed');

    // A reload opens the same toplist: it has its own address.
    await page.reload();
    await page.getByRole('heading', { name: 'Casino bonuses Baltics', level: 1 }).waitFor();

    await page.getByRole('link', { name: 'Audit log' }).click();
    const audit = page.getByTestId('audit');
    await audit.getByText('Admin token “demo” changed toplist “Casino bonuses Baltics”').waitFor();
    await audit.getByText('Admin token “demo” created toplist “Casino bonuses Baltics”').waitFor();
    await page
      .getByRole('button', { name: 'Details of Admin token “demo” changed toplist “Casino bonuses Baltics”' })
      .click();
    const name = page.getByRole('table', { name: 'What changed' }).getByRole('row', { name: /^Name/ });
    expect(await name.locator('td').allTextContents()).toEqual([
      'Casino bonuses (draft)',
      'Casino bonuses Baltics',
    ]);
    await shot('toplist-create-04-audit-rename');
  });
});

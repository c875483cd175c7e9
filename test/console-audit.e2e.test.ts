import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadDemo } from '../src/modules/catalog/demo.ts';
import { type ConsoleBrowser, closeInTurn, consoleApp, openConsole } from './console-browser.ts';
import type { TestApp } from './helpers.ts';

const ANA = { email: 'ana@example.com', password: 'correct horse battery staple' };
const PUBLISH = 'POST /api/admin/v1/toplists/:id/publish';

/** Signs in with Ana's email and password on the page the browser is at, and waits for `heading`. */
async function signInAsAna(page: Page, heading: string) {
  await page.getByLabel('Email').fill(ANA.email);
  await page.getByLabel('Password', { exact: true }).fill(ANA.password);
  await page.getByRole('button', { name: 'Sign in', exact: true }).click();
  await page.getByRole('heading', { name: heading }).waitFor();
}

// A person publishes in the console; the audit log says so as a sentence naming her and the
// toplist, opens the row's before/after field by field, keeps her sign-ins apart, and a link
// with filters in its address opens the same filtered view in another browser.
describe('console: the audit log in headless Chromium', { timeout: 300_000 }, () => {
  let t: TestApp;
  let browser: Browser;
  let page: Page;
  let base: string;
  let shot: ConsoleBrowser['shot'];
  let adminToken: string;
  let draft: { id: number; name: string };
  let other: { id: number; name: string };

  beforeAll(async () => {
    t = await consoleApp();
    ({ adminToken } = await loadDemo(t.app.services));
    const people = t.app.services.people;
    const first = await people.firstRun(ANA.email);
    await people.acceptLink(new URL(first!.link.url).hash.slice('#/accept/'.length), ANA.password);
    await t.db.query('UPDATE users SET display_name = $1 WHERE id = $2', ['Ana Novak', first!.user.id]);
    const lists = await t.db.query<{ id: number; name: string }>(
      "SELECT id, name FROM toplists WHERE slug IN ('casino-bonuses-se', 'casino-bonuses') ORDER BY slug DESC",
    );
    [draft, other] = lists as [typeof draft, typeof other];
    ({ browser, page, base, shot } = await openConsole(t));
  }, 600_000);
  afterAll(() => closeInTurn(browser, t));

  it('says who published what as a sentence, opens the field changes, and links the toplist', async () => {
    // A token's publish, which the person filter below leaves out.
    const byToken = await t.app.inject({
      method: 'POST',
      url: `/api/admin/v1/toplists/${other.id}/publish`,
      headers: { authorization: `Bearer ${adminToken}` },
      payload: {},
    });
    expect(byToken.statusCode).toBe(200);

    await page.goto(`${base}/console/#/toplists/${draft.id}`);
    await signInAsAna(page, 'Draft items');
    await page.getByRole('button', { name: 'Publish', exact: true }).click();
    await page.getByRole('status').filter({ hasText: 'Published version' }).waitFor();

    await page.getByRole('link', { name: 'Audit log' }).click();
    await page.getByRole('heading', { name: 'Audit log' }).waitFor();
    const audit = page.getByTestId('audit');
    const sentence = `Ana Novak published toplist “${draft.name}”`;
    await audit.getByText(sentence).waitFor();
    const sentences = await audit.getByTestId('audit-sentence').allTextContents();
    expect(sentences).toEqual([sentence, `Admin token “demo” published toplist “${other.name}”`]);
    // Sign-ins are kept apart: not among the changes, there under Show.
    expect(sentences.some((s) => s.includes('signed in'))).toBe(false);
    expect(await audit.locator('tbody').textContent()).not.toContain('/api/admin/v1');
    await shot('audit-01-sentences');

    await page.getByRole('button', { name: `Details of ${sentence}` }).click();
    const changed = page.getByRole('table', { name: 'What changed' });
    const row = changed.getByRole('row', { name: /Live version/ });
    await row.waitFor();
    expect(await row.locator('td').allTextContents()).toEqual(['—', '1']);
    await page.getByTestId('audit-detail').getByText(PUBLISH).waitFor();
    await shot('audit-02-detail');

    await page.getByLabel('Show').selectOption({ label: 'Sign-ins and sign-outs' });
    await audit.getByText('Ana Novak signed in to the console').waitFor();
    expect(new URL(page.url()).hash).toBe('#/audit?show=sign-ins');
    await page.getByLabel('Show').selectOption({ label: 'Changes' });
    await audit.getByRole('link', { name: `“${draft.name}”` }).click();
    await page.getByRole('heading', { name: 'Draft items' }).waitFor();
    expect(new URL(page.url()).hash).toBe(`#/toplists/${draft.id}`);
  });

  it('opens a shared link with its filters: action, person and days, in another browser', async () => {
    const [ana] = await t.db.query<{ id: number }>('SELECT id FROM users WHERE email = $1', [ANA.email]);
    const today = new Date().toLocaleDateString('sv');
    const shared = new URLSearchParams({ action: PUBLISH, person: String(ana!.id), from: today });
    const second = await (await browser.newContext({ viewport: { width: 1280, height: 800 } })).newPage();
    second.setDefaultTimeout(120_000);
    await second.goto(`${base}/console/#/audit?${shared}`);
    await signInAsAna(second, 'Audit log');
    const audit = second.getByTestId('audit');
    await audit.getByText(`Ana Novak published toplist “${draft.name}”`).waitFor();
    expect(await audit.getByTestId('audit-sentence').count()).toBe(1);
    expect(await second.getByLabel('Action').locator('option:checked').textContent()).toBe(
      'Published toplist',
    );
    expect(await second.getByLabel('Person').inputValue()).toBe(String(ana!.id));
    expect(await second.getByLabel('From').inputValue()).toBe(today);
    await shot('audit-03-shared-link');

    // The same link for days long past: nothing then.
    shared.set('from', '2001-01-01');
    shared.set('to', '2001-01-31');
    await second.goto(`${base}/console/#/audit?${shared}`);
    await second.getByText('Nothing recorded.').waitFor();
    await second.context().close();
  });
});

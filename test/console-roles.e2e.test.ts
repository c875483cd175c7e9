import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ConsoleBrowser, closeInTurn, consoleApp, openConsole } from './console-browser.ts';
import type { TestApp } from './helpers.ts';

const OWNER = { email: 'owner@example.com', password: 'correct horse battery staple' };
const RITA = { email: 'rita@example.com', password: 'she reads the stats only' };

/** Fills the email sign-in form at `hash` and waits for that screen's heading. */
async function passwordSignIn(
  page: Page,
  base: string,
  who: { email: string; password: string },
  hash: string,
  heading: string,
) {
  await page.goto(`${base}/console/${hash}`);
  await page.getByLabel('Email').fill(who.email);
  await page.getByLabel('Password', { exact: true }).fill(who.password);
  await page.getByRole('button', { name: 'Sign in', exact: true }).click();
  await page.getByRole('heading', { name: heading }).waitFor();
}

// The owner makes a custom role on the Roles screen, gives it to Rita on the Users screen, and
// Rita signs in to find exactly what the role allows, in headless Chromium on loopback.
describe('console: roles in headless Chromium', { timeout: 300_000 }, () => {
  let t: TestApp;
  let browser: Browser;
  let page: Page;
  let base: string;
  let shot: ConsoleBrowser['shot'];

  beforeAll(async () => {
    t = await consoleApp();
    const people = t.app.services.people;
    const first = await people.firstRun(OWNER.email);
    await people.acceptLink(new URL(first!.link.url).hash.slice('#/accept/'.length), OWNER.password);
    const admin = { kind: 'admin' as const, tokenId: null, userId: null, scopes: ['admin'], siteIds: null };
    const viewer = (await people.listRoles()).find((r) => r.name === 'viewer')!;
    const { invitation } = await people.invite(admin, {
      email: RITA.email,
      displayName: 'Rita',
      roleId: viewer.id,
    });
    if (invitation.mailed) throw new Error('no SMTP here: the invitation link is handed back');
    await people.acceptLink(new URL(invitation.url).hash.slice('#/accept/'.length), RITA.password);
    ({ browser, page, base, shot } = await openConsole(t, 1400));
  }, 600_000);
  afterAll(async () => {
    await closeInTurn(browser, t);
  });

  it('creates a custom role, assigns it, and its holder sees only what it allows', async () => {
    await passwordSignIn(page, base, OWNER, '#/roles', 'Roles');
    const roles = page.getByRole('table', { name: 'Roles' });
    // Built-in roles: their scopes shown with what each allows, and nothing to change them with.
    const editor = roles.getByRole('row').filter({ has: page.getByRole('rowheader', { name: /^editor/ }) });
    await editor.getByText('catalog:write').waitFor();
    await editor.getByText('Create and change sites, brands').waitFor();
    expect(await editor.getByRole('button').count()).toBe(0);
    await shot('roles-01-list');

    // A role needs at least one scope: the API's answer shows beside the scopes.
    const form = page.getByRole('form', { name: 'New role' });
    await form.getByLabel('Name').fill('Stats reader');
    await form.getByLabel('Description').fill('Tracking numbers only');
    await form.getByRole('button', { name: 'Create role' }).click();
    const scopes = form.getByRole('group', { name: 'Scopes' });
    await scopes
      .getByRole('alert')
      .filter({ hasText: /must not have fewer than 1/i })
      .waitFor();
    expect(await scopes.getAttribute('aria-invalid')).toBe('true');
    await form.getByRole('checkbox', { name: /^tracking:read/ }).check();
    await form.getByRole('button', { name: 'Create role' }).click();
    await page.getByRole('status').filter({ hasText: 'Role Stats reader created.' }).waitFor();
    const custom = roles
      .getByRole('row')
      .filter({ has: page.getByRole('rowheader', { name: /^Stats reader/ }) });
    await custom.getByText('tracking:read').waitFor();
    expect(await custom.getByRole('cell', { name: 'custom' }).count()).toBe(1);
    const [row] = await t.db.query<{ scopes: string[]; description: string }>(
      "SELECT scopes, description FROM roles WHERE name = 'Stats reader'",
    );
    expect(row).toEqual({ scopes: ['tracking:read'], description: 'Tracking numbers only' });

    // Given to Rita on the Users screen.
    await page.getByRole('link', { name: 'Users' }).click();
    await page.getByRole('heading', { name: 'Users' }).waitFor();
    await page.getByLabel(`Role of ${RITA.email}`).selectOption({ label: 'Stats reader' });
    await page
      .getByRole('status')
      .filter({ hasText: `Changed the role of ${RITA.email}.` })
      .waitFor();

    // A role someone holds cannot be deleted: the API's sentence shows.
    await page.getByRole('link', { name: 'Roles' }).click();
    page.once('dialog', (d) => void d.accept());
    await page.getByRole('button', { name: 'Delete Stats reader' }).click();
    await page
      .getByRole('alert')
      .filter({ hasText: 'Users hold this role: give them another role first' })
      .waitFor();
    await shot('roles-02-delete-refused');

    // Rita, in a browser of her own: tracking reads work, the catalogue and people are refused.
    const rita = await (await browser.newContext()).newPage();
    rita.setDefaultTimeout(120_000);
    await passwordSignIn(rita, base, RITA, '#/conversions', 'Conversions');
    const who = (await rita.evaluate(async () => (await fetch('/api/admin/v1/session')).json())) as {
      data: { scopes: string[]; user: { role: string } };
    };
    expect(who.data).toMatchObject({ scopes: ['tracking:read'], user: { role: 'Stats reader' } });
    expect(await rita.getByText('Could not load').count()).toBe(0);
    await rita.goto(`${base}/console/#/toplists`);
    await rita
      .getByRole('alert')
      .filter({ hasText: /Could not load.*catalog:read/ })
      .first()
      .waitFor();
    await rita.goto(`${base}/console/#/roles`);
    await rita
      .getByRole('alert')
      .filter({ hasText: /Could not load.*users:read/ })
      .waitFor();
    expect(await rita.getByRole('form', { name: 'New role' }).count()).toBe(0);

    // The owner edits the role to let it read people; Rita now sees the roles, but cannot change them.
    await page.getByRole('button', { name: 'Edit Stats reader' }).click();
    const edit = page.getByRole('form', { name: 'Role: Stats reader' });
    await edit.getByRole('checkbox', { name: /^users:read/ }).check();
    await edit.getByRole('button', { name: 'Save role' }).click();
    await page.getByRole('status').filter({ hasText: 'Role saved.' }).waitFor();
    await custom.getByText('users:read').waitFor();
    await rita.reload();
    await rita
      .getByRole('table', { name: 'Roles' })
      .getByRole('rowheader', { name: /^Stats reader/ })
      .waitFor();
    expect(await rita.getByRole('form', { name: 'New role' }).count()).toBe(0);
    expect(await rita.getByRole('button', { name: /^(Edit|Delete) / }).count()).toBe(0);
    await shot('roles-03-read-only');

    // Once no one holds it, the owner deletes it.
    await page.getByRole('link', { name: 'Users' }).click();
    await page.getByLabel(`Role of ${RITA.email}`).selectOption({ label: 'viewer' });
    await page
      .getByRole('status')
      .filter({ hasText: `Changed the role of ${RITA.email}.` })
      .waitFor();
    await page.getByRole('link', { name: 'Roles' }).click();
    page.once('dialog', (d) => void d.accept());
    await page.getByRole('button', { name: 'Delete Stats reader' }).click();
    await page.getByRole('status').filter({ hasText: 'Role Stats reader deleted.' }).waitFor();
    expect(await roles.getByRole('rowheader', { name: /^Stats reader/ }).count()).toBe(0);
  });
});

import { Secret, TOTP } from 'otpauth';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ConsoleBrowser, closeInTurn, consoleApp, openConsole } from './console-browser.ts';
import type { TestApp } from './helpers.ts';
import { linkIn, type SmtpSink, startSmtpSink } from './smtp-sink.ts';

const OWNER = { email: 'owner@example.com', password: 'correct horse battery staple' };
const EVE = { email: 'eve@example.com', password: 'eve chooses a passphrase' };
const FINN = 'finn@example.com';

/** Fills the email sign-in form and waits for the first screen. */
async function passwordSignIn(page: Page, who: { email: string; password: string }) {
  await page.getByLabel('Email').fill(who.email);
  await page.getByLabel('Password', { exact: true }).fill(who.password);
  await page.getByRole('button', { name: 'Sign in', exact: true }).click();
  await page.getByRole('heading', { name: 'Toplists' }).waitFor();
}

// Invite (mailed through a real SMTP server on loopback) → accept through the mailed link → set
// the password → enrol TOTP → sign out → sign in with password and code → suspended while signed
// in → thrown out at the next request, in headless Chromium against a real server on loopback.
describe('console: people in headless Chromium', { timeout: 300_000 }, () => {
  let t: TestApp;
  let browser: Browser;
  let page: Page;
  let base: string;
  let shot: ConsoleBrowser['shot'];
  let smtp: SmtpSink;

  beforeAll(async () => {
    smtp = await startSmtpSink();
    t = await consoleApp({ smtpUrl: smtp.url });
    const first = await t.app.services.people.firstRun(OWNER.email);
    await t.app.services.people.acceptLink(
      new URL(first!.link.url).hash.slice('#/accept/'.length),
      OWNER.password,
    );
    ({ browser, page, base, shot } = await openConsole(t));
  }, 600_000);
  afterAll(async () => {
    await closeInTurn(browser, t);
    await smtp.close();
  });
  // The app's clock is the test's: codes are computed at it, and moving it on 30 s makes a new one.
  const totpCode = (secret: string) =>
    new TOTP({ secret: Secret.fromBase32(secret) }).generate({ timestamp: t.clock.now.getTime() });

  it('invites by mail, the invitee sets a password and TOTP and signs in with both, and a suspension throws them out', async () => {
    await page.goto(`${base}/console/#/users`);
    await page.getByLabel('Email').fill(OWNER.email);
    await page.getByLabel('Password', { exact: true }).fill('not the password');
    await page.getByRole('button', { name: 'Sign in', exact: true }).click();
    await page.getByRole('alert').filter({ hasText: 'Wrong email or password' }).waitFor();
    await page.getByLabel('Password', { exact: true }).fill(OWNER.password);
    await page.getByRole('button', { name: 'Sign in', exact: true }).click();
    await page.getByRole('heading', { name: 'Users' }).waitFor();
    await shot('people-01-users');

    const invite = page.getByRole('form', { name: 'Invite a person' });
    await invite.getByLabel('Email').fill(EVE.email);
    await invite.getByLabel('Display name').fill('Eve');
    await invite.getByLabel('Role').selectOption({ label: 'editor' });
    await invite.getByRole('button', { name: 'Invite' }).click();
    await page
      .getByRole('status')
      .filter({ hasText: `Mailed the invitation link to ${EVE.email}` })
      .waitFor();
    const link = linkIn(await smtp.next(EVE.email));
    expect(link).toMatch(/\/console\/#\/accept\/[A-Za-z0-9_-]{43}$/);
    await page.getByRole('cell', { name: EVE.email, exact: true }).waitFor();
    await shot('people-02-invited');

    // Eve, in a browser of her own, opens the link and chooses a password.
    const eve = await (await browser.newContext()).newPage();
    eve.setDefaultTimeout(120_000);
    await eve.goto(link.replace('https://podium.test', base));
    await eve.getByRole('heading', { name: 'Set your password' }).waitFor();
    await eve.getByLabel('New password (12 characters or more)').fill('short');
    await eve.getByRole('button', { name: 'Set password' }).click();
    await eve.getByRole('alert').filter({ hasText: 'password: must be at least 12' }).waitFor();
    await eve.getByLabel('New password (12 characters or more)').fill(EVE.password);
    await eve.getByRole('button', { name: 'Set password' }).click();
    await eve.getByRole('status').filter({ hasText: 'is ready' }).waitFor();
    await eve.getByRole('link', { name: 'Sign in' }).click();
    await passwordSignIn(eve, EVE);
    await eve.getByText(`${EVE.email} ·`).waitFor();
    await eve.getByRole('link', { name: 'Profile' }).click();
    await eve.getByRole('heading', { name: 'Your profile' }).waitFor();
    await eve.getByText('role editor').waitFor();

    // Eve turns on two-factor: scans (here: reads) the key, confirms with a code, saves the codes.
    const card = eve.getByRole('region', { name: 'Two-factor sign-in' });
    await card.getByRole('button', { name: 'Set up two-factor' }).click();
    await card.getByRole('img', { name: 'QR code for your authenticator app' }).waitFor();
    const secret = (await card.getByTestId('totp-secret').textContent())!;
    expect(secret).toMatch(/^[A-Z2-7]{32}$/);
    await card.getByLabel('Code from your app').fill(totpCode(secret));
    await card.getByRole('button', { name: 'Turn on two-factor' }).click();
    await expect.poll(() => card.getByTestId('recovery-codes').getByRole('listitem').count()).toBe(10);
    await shot('people-03-recovery-codes');
    await card.getByRole('button', { name: 'I saved them' }).click();
    await card.getByText('Two-factor is on · 10 recovery codes left').waitFor();

    // Signed out and in again: the password, then a code (a new one: the clock moved a step).
    await eve.getByRole('button', { name: 'Sign out', exact: true }).click();
    await eve.getByRole('heading', { name: 'Sign in to Podium' }).waitFor();
    await eve.getByLabel('Email').fill(EVE.email);
    await eve.getByLabel('Password', { exact: true }).fill(EVE.password);
    await eve.getByRole('button', { name: 'Sign in', exact: true }).click();
    await eve.getByRole('heading', { name: 'Two-factor sign-in' }).waitFor();
    await eve.getByLabel('Authentication code (or a recovery code)').fill('000000');
    await eve.getByRole('button', { name: 'Verify' }).click();
    await eve.getByRole('alert').filter({ hasText: 'Wrong code' }).waitFor();
    t.clock.now = new Date(t.clock.now.getTime() + 30_000);
    await eve.getByLabel('Authentication code (or a recovery code)').fill(totpCode(secret));
    await eve.getByRole('button', { name: 'Verify' }).click();
    // Back where she signed out: her profile, two-factor on.
    await eve.getByRole('heading', { name: 'Your profile' }).waitFor();
    await card.getByText('Two-factor is on · 10 recovery codes left').waitFor();
    await eve.getByText(`${EVE.email} · until`).waitFor();

    // The owner suspends Eve while she is signed in.
    await page.reload();
    await page.getByRole('heading', { name: 'Users' }).waitFor();
    page.once('dialog', (d) => void d.accept());
    await page.getByRole('button', { name: `Suspend ${EVE.email}` }).click();
    await page
      .getByRole('status')
      .filter({ hasText: `Suspended ${EVE.email}` })
      .waitFor();
    await page.getByRole('button', { name: `Reactivate ${EVE.email}` }).waitFor();

    // The audit log by person: the owner's writes, named; Eve's own profile writes are not among them.
    await page.getByRole('link', { name: 'Audit' }).click();
    const [owner] = await t.db.query<{ id: number }>('SELECT id FROM users WHERE email = $1', [OWNER.email]);
    await page.getByLabel('Person').selectOption(String(owner!.id));
    const audit = page.getByTestId('audit');
    await audit.getByText('suspended user “Eve”').waitFor();
    const who = new Set(await audit.locator('tbody tr td:nth-child(2)').allTextContents());
    expect([...who]).toHaveLength(1);
    expect([...who][0]).toContain('(owner@example.com)');
    await shot('people-05-audit-by-person');

    await eve.getByRole('link', { name: 'Brands and offers' }).click();
    await eve.getByRole('heading', { name: 'Sign in to Podium' }).waitFor();
    await eve.getByRole('status').filter({ hasText: 'Your session has ended' }).waitFor();
    await eve.getByLabel('Email').fill(EVE.email);
    await eve.getByLabel('Password', { exact: true }).fill(EVE.password);
    await eve.getByRole('button', { name: 'Sign in', exact: true }).click();
    await eve.getByRole('alert').filter({ hasText: 'Wrong email or password' }).waitFor();
    await shot('people-04-suspended');
    await eve.context().close();
  });

  it('lists pending invitations: a new link replaces the mailed one, and a withdrawn invitation cannot be accepted', async () => {
    await page.goto(`${base}/console/#/users`);
    const invite = page.getByRole('form', { name: 'Invite a person' });
    await invite.getByLabel('Email').fill(FINN);
    await invite.getByLabel('Role').selectOption({ label: 'viewer' });
    await invite.getByRole('button', { name: 'Invite' }).click();
    await page
      .getByRole('status')
      .filter({ hasText: `Mailed the invitation link to ${FINN}` })
      .waitFor();
    const first = linkIn(await smtp.next(FINN));

    await page.getByRole('link', { name: 'Invitations' }).click();
    await page.getByRole('heading', { name: 'Invitations' }).waitFor();
    const table = page.getByTestId('invitations');
    await table.getByRole('rowheader', { name: FINN }).waitFor();
    await table.getByRole('cell', { name: 'viewer', exact: true }).waitFor();
    // Eve accepted hers: only Finn is pending.
    expect(await table.getByRole('rowheader').count()).toBe(1);
    await page.getByRole('button', { name: `New link for ${FINN}` }).click();
    await page
      .getByRole('status')
      .filter({ hasText: `Mailed the invitation link to ${FINN}` })
      .waitFor();
    const second = linkIn(await smtp.next(FINN));
    expect(second).not.toBe(first);
    await shot('people-04-invitations');

    const finn = await (await browser.newContext()).newPage();
    finn.setDefaultTimeout(120_000);
    const accept = async (link: string, refusal: string) => {
      await finn.goto(link.replace('https://podium.test', base));
      await finn.getByLabel('New password (12 characters or more)').fill('finn picks a long one');
      await finn.getByRole('button', { name: 'Set password' }).click();
      await finn.getByRole('alert').filter({ hasText: refusal }).waitFor();
    };
    await accept(first, 'replaced by a newer one');

    page.once('dialog', (d) => void d.accept());
    await page.getByRole('button', { name: `Withdraw invitation to ${FINN}` }).click();
    await page
      .getByRole('status')
      .filter({ hasText: `Withdrew the invitation to ${FINN}` })
      .waitFor();
    await page.getByText('No pending invitations.').waitFor();
    await accept(second, 'This account is suspended');
    await finn.context().close();
  });

  it('forgot password: the mailed reset link sets a new password and ends the old sessions', async () => {
    const other = await (await browser.newContext()).newPage();
    other.setDefaultTimeout(120_000);
    await other.goto(`${base}/console/#/toplists`);
    await other.getByRole('heading', { name: 'Sign in to Podium' }).waitFor();
    await other.getByRole('button', { name: 'Forgot password?' }).click();
    await other.getByRole('heading', { name: 'Reset your password' }).waitFor();
    await other.getByLabel('Email').fill(OWNER.email);
    await other.getByRole('button', { name: 'Send reset link' }).click();
    await other.getByRole('status').filter({ hasText: 'a password-reset link is on its way' }).waitFor();
    const link = linkIn(await smtp.next(OWNER.email));
    expect(link).toMatch(/\/console\/#\/reset\/[A-Za-z0-9_-]{43}$/);
    await other.goto(link.replace('https://podium.test', base));
    await other.getByRole('heading', { name: 'Choose a new password' }).waitFor();
    const next = 'a brand new passphrase';
    await other.getByLabel('New password (12 characters or more)').fill(next);
    await other.getByRole('button', { name: 'Set new password' }).click();
    await other
      .getByRole('status')
      .filter({ hasText: 'every session of the account was signed out' })
      .waitFor();
    await shot('people-05-reset');
    // The owner's first browser was signed in: its next request finds the session ended.
    await page.getByRole('link', { name: 'Profile' }).click();
    await page.getByRole('heading', { name: 'Sign in to Podium' }).waitFor();
    await other.getByRole('link', { name: 'Sign in' }).click();
    await passwordSignIn(other, { email: OWNER.email, password: next });
    await other.context().close();
  });
});

import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { admin, bookable, type ReferenceServer, referenceServer } from './adserver-fixture.ts';
import { type ConsoleBrowser, closeInTurn, consoleApp, openConsole, signIn } from './console-browser.ts';
import { png, SVG } from './creative-images.ts';
import { eventually, type TestApp } from './helpers.ts';

// The creative library and moderation queue against a real server and the reference ad server:
// upload → approve → the frame shows it → replace → approve → same tag, new image, follow-up push.
describe('console: creatives in headless Chromium', { timeout: 300_000 }, () => {
  let t: TestApp & { admin: string };
  let ref: ReferenceServer;
  let browser: Browser;
  let page: Page;
  let base: string;
  let shot: ConsoleBrowser['shot'];
  let booking: string;
  const dir = mkdtempSync(join(tmpdir(), 'podium-e2e-creatives-'));

  beforeAll(async () => {
    const app = await consoleApp({ dataDir: dir, creativeStore: 'files' });
    t = { ...app, admin: (await app.app.services.access.createAdminToken('e2e', ['admin'], null)).token };
    ref = await referenceServer();
    const fx = await bookable(t, ref, 'acme');
    const b = await admin(t, 'POST', '/adserver/bookings', {
      connection_id: fx.conn,
      currency: 'EUR',
      advertiser: { name: 'Lucky Spin Ltd' },
      campaign: { name: 'Winter push', external_ref: 'winter-e2e' },
      lines: [
        { placement_id: fx.leaderboard, month: '2027-02', goal_impressions: 50_000, sizes: ['728x90'] },
      ],
    });
    booking = b.body.data.id;
    // On the ad server already, as an empty draft line (contract rule 5).
    expect((await admin(t, 'POST', `/adserver/bookings/${booking}/push`)).status).toBe(200);
    ({ browser, page, base, shot } = await openConsole(t, 1100));
  }, 600_000);
  afterAll(async () => {
    await closeInTurn(browser, t, ref);
    rmSync(dir, { recursive: true, force: true });
  });

  const pushes = async () =>
    (await admin(t, 'GET', `/adserver/bookings/${booking}/pushes`)).body.data as {
      status: string;
    }[];
  const line = async () => (await admin(t, 'GET', `/adserver/bookings/${booking}`)).body.data.lines[0];
  /** The `src` of the image the line's frame shows, read by the browser from the frame itself. */
  const framed = async (code: string) => {
    const frame = await browser.newPage();
    await frame.goto(`${base}/ad/${code}`);
    const src = await frame.evaluate('document.querySelector("a img").getAttribute("src")');
    await frame.close();
    return src as string;
  };
  const uploadFile = async (name: string, buffer: Buffer, mimeType = 'image/png') => {
    await page.getByLabel('Landing page').fill('https://advertiser.test/winter');
    await page.getByLabel('Name (optional)').fill(name);
    await page
      .getByLabel('Image (PNG, JPEG, GIF or WebP)')
      .setInputFiles({ name: `${name}.png`, mimeType, buffer });
    await page.getByRole('button', { name: 'Upload', exact: true }).click();
  };
  const approve = async (name: string) => {
    await page.getByTestId('creatives').getByRole('img', { name }).waitFor();
    const loaded = await page.evaluate(
      `(() => { const i = document.querySelector('[data-testid="creatives"] img[alt="${name}"]'); return i.complete && i.naturalWidth; })()`,
    );
    expect(loaded).toBe(728);
    await page.getByRole('button', { name: `Approve ${name}` }).click();
    await page
      .getByRole('status')
      .filter({ hasText: `Approved ${name}` })
      .waitFor();
  };

  it('refuses an SVG beside the file field, naming the rule', async () => {
    await signIn(page, base, t.admin, '#/creatives', 'Creatives');
    await page.getByText('No creative awaits moderation.').waitFor();
    await uploadFile('sneaky', SVG);
    await page
      .locator('#creative-file ~ .error')
      .filter({ hasText: 'SVG and other types are refused' })
      .waitFor();
    expect((await admin(t, 'GET', '/creatives')).body.data).toEqual([]);
  });

  it('upload → approve → the frame shows it → replace → approve: same tag, new image, follow-up pushes', async () => {
    const before = (await pushes()).length;
    await uploadFile('winter-red', png(728, 90, { rgb: [220, 20, 40] }));
    await page.getByRole('status').filter({ hasText: 'Uploaded winter-red' }).waitFor();
    await approve('winter-red');
    const first = await line();
    const code = first.click_codes[0] as string;
    const tag = first.creatives[0].tag as string;
    const red = (await admin(t, 'GET', '/creatives?status=approved')).body.data[0];
    expect(await framed(code)).toBe(red.url);
    expect(
      await eventually(
        async () => (await pushes()).at(-1)?.status === 'succeeded' && (await pushes()).length === before + 1,
        30_000,
      ),
    ).toBe(true);
    await shot('creatives-approved');

    await uploadFile('winter-blue', png(728, 90, { rgb: [20, 40, 220] }));
    await page.getByRole('status').filter({ hasText: 'Uploaded winter-blue' }).waitFor();
    await approve('winter-blue');
    const second = await line();
    expect(second.click_codes).toEqual([code]);
    expect(second.creatives[0].tag).toBe(tag);
    const blue = (await admin(t, 'GET', '/creatives?status=approved')).body.data[0];
    expect(blue.name).toBe('winter-blue');
    expect(await framed(code)).toBe(blue.url);
    expect(blue.url).not.toBe(red.url);
    expect(
      await eventually(
        async () => (await pushes()).length === before + 2 && (await pushes()).at(-1)?.status === 'succeeded',
        30_000,
      ),
    ).toBe(true);
    const [stored] = await ref.store.query<{ creatives: { tag: string }[] }>(
      'SELECT creatives FROM line_items WHERE id = $1',
      [second.line_item_id],
    );
    expect(stored!.creatives[0]!.tag).toBe(tag);
    await page.getByLabel('Show').selectOption({ label: 'Replaced' });
    await page.getByTestId('creatives').getByRole('img', { name: 'winter-red' }).waitFor();
    await shot('creatives-replaced');
  });
});

import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEMO_CAMPAIGNS, type MarketDemo, monthOf, seedMarketDemo } from '../src/modules/market/demo.ts';
import { admin, bookable, type ReferenceServer, referenceServer } from './adserver-fixture.ts';
import { type ConsoleBrowser, closeInTurn, consoleApp, openConsole, signIn } from './console-browser.ts';
import { png } from './creative-images.ts';
import type { TestApp } from './helpers.ts';

// The reservations inbox against a real server and the reference ad server on loopback.
describe('console: reservations inbox in headless Chromium', { timeout: 300_000 }, () => {
  let t: TestApp & { admin: string };
  let ref: ReferenceServer;
  let browser: Browser;
  let page: Page;
  let base: string;
  let shot: ConsoleBrowser['shot'];
  const ids: Record<string, string> = {};

  beforeAll(async () => {
    const app = await consoleApp();
    t = { ...app, admin: (await app.app.services.access.createAdminToken('e2e', ['admin'], null)).token };
    ref = await referenceServer();
    const fx = await bookable(t, ref, 'acme');
    const adv = (await admin(t, 'POST', '/market/advertisers', { publisher: 'acme', name: 'Lucky Spin Ltd' }))
      .body.data.id;
    const product = (
      await admin(t, 'POST', '/market/products', {
        connection_id: fx.conn,
        placement_id: fx.leaderboard,
        name: 'Home leaderboard',
        geos: ['MT', 'DE'],
        first_month: '2027-01',
        last_month: '2027-03',
        pricing: 'cpm',
        price: '12.50',
      })
    ).body.data.id;
    const reserve = async (name: string, geo: string) => {
      const r = await admin(t, 'POST', '/market/reservations', {
        advertiser_id: adv,
        campaign_name: name,
        lines: [{ product_id: product, geo, month: '2027-02', impressions: 25_000 }],
      });
      if (r.status !== 201) throw new Error(r.raw);
      ids[name] = r.body.data.id;
    };
    // Reserved three days ago: its two-day hold has run out (the expiry job has not run yet).
    t.clock.now = new Date(Date.now() - 3 * 86_400_000);
    await reserve('Stale spring', 'MT');
    t.clock.now = new Date();
    await reserve('Winter push', 'MT');
    await reserve('Summer teaser', 'DE');
    ({ browser, page, base, shot } = await openConsole(t, 1000));
  }, 600_000);
  afterAll(() => closeInTurn(browser, t, ref));

  it('lists held reservations; an expired hold cannot be approved and says why', async () => {
    await signIn(page, base, t.admin, '#/reservations', 'Reservations');
    const table = page.getByTestId('reservations');
    for (const name of ['Winter push', 'Summer teaser', 'Stale spring'])
      await table.getByText(name).waitFor();
    await page.getByRole('button', { name: 'Open reservation Stale spring' }).click();
    await page.getByRole('heading', { name: /Stale spring/ }).waitFor();
    const approve = page.getByRole('button', { name: 'Approve and push draft order' });
    expect(await approve.isDisabled()).toBe(true);
    await page.getByText('Its hold has run out: approving it would be refused.').waitFor();
  });

  it("uploads a creative for a held reservation's line; the line shows it and its moderation state", async () => {
    await page.getByRole('button', { name: 'Open reservation Winter push' }).click();
    await page.getByRole('heading', { name: /Winter push/ }).waitFor();
    const lines = page.getByTestId('reservation-lines');
    await lines.getByText('none yet').waitFor();
    await page.getByLabel('Landing page').fill('https://luckyspin.test/winter');
    await page.getByLabel('Name (optional)').fill('winter-leaderboard');
    // A size the line's product does not take is refused beside the file field.
    await page
      .getByLabel('Image (PNG, JPEG, GIF or WebP)')
      .setInputFiles({ name: 'wrong.png', mimeType: 'image/png', buffer: png(300, 250) });
    await page.getByRole('button', { name: 'Upload', exact: true }).click();
    await page.locator('#creative-file ~ .error').filter({ hasText: '300x250' }).waitFor();
    await page
      .getByLabel('Image (PNG, JPEG, GIF or WebP)')
      .setInputFiles({ name: 'winter.png', mimeType: 'image/png', buffer: png(728, 90) });
    await page.getByRole('button', { name: 'Upload', exact: true }).click();
    await page.getByRole('status').filter({ hasText: 'Uploaded winter-leaderboard' }).waitFor();
    await lines.getByText('pending').waitFor();
    await lines.getByRole('img', { name: 'winter-leaderboard' }).waitFor();
    const [c] = (await admin(t, 'GET', `/creatives?reservation_id=${ids['Winter push']}`)).body.data;
    expect(c).toMatchObject({ reservation_line_no: 1, width: 728, height: 90, status: 'pending' });
    expect((await admin(t, 'POST', `/creatives/${c.id}/approve`)).status).toBe(200);
    await page.getByRole('button', { name: 'Open reservation Summer teaser' }).click();
    await page.getByRole('heading', { name: /Summer teaser/ }).waitFor();
  });

  it('approves: the reference ad server holds the DRAFT order and the timeline shows every step', async () => {
    await page.getByRole('button', { name: 'Open reservation Winter push' }).click();
    await page.getByRole('heading', { name: /Winter push/ }).waitFor();
    await page.getByRole('button', { name: 'Approve and push draft order' }).click();
    await page.getByRole('status').filter({ hasText: 'Booked: draft order' }).waitFor();
    const orders = await ref.store.query<{ status: string }>(
      'SELECT status FROM orders WHERE external_ref = $1',
      [ids['Winter push']],
    );
    expect(orders).toEqual([{ status: 'DRAFT' }]);
    // The line's creative approved before the reservation went out with the first push.
    const [line] = await ref.store.query<{ creatives: { tag: string }[] }>(
      'SELECT l.creatives FROM line_items l JOIN orders o ON o.id = l.order_id WHERE o.external_ref = $1',
      [ids['Winter push']],
    );
    expect(line!.creatives).toHaveLength(1);
    expect(line!.creatives[0]!.tag).toContain('/ad/');
    await page.getByLabel('Show').selectOption({ label: 'Booked' });
    await page.getByRole('heading', { name: /Winter push/ }).waitFor();
    const timeline = page.getByTestId('reservation-timeline');
    for (const kind of ['held', 'approval_started', 'booked'])
      await timeline.getByRole('cell', { name: kind, exact: true }).waitFor();
    expect(await page.getByTestId('reservation-lines').getByRole('code').count()).toBe(1);
    await page.getByTestId('reservation-lines').getByText('approved', { exact: true }).waitFor();
    await shot('reservation-booked');

    // Its month is not over: issuing a statement is refused, and the screen says why.
    await page.getByTestId('reservation-statements').getByText('None issued yet.').waitFor();
    await page.getByRole('button', { name: 'Issue statement' }).click();
    await page.getByRole('alert').filter({ hasText: '2027-02 is not over yet' }).waitFor();
  });

  it('rejects with a reason; a blank reason is refused beside the field', async () => {
    await page.getByLabel('Show').selectOption({ label: 'Awaiting approval (held)' });
    await page.getByRole('button', { name: 'Open reservation Summer teaser' }).click();
    await page.getByRole('heading', { name: /Summer teaser/ }).waitFor();
    await page.getByLabel('Reason for rejecting').fill('   ');
    await page.getByRole('button', { name: 'Reject' }).click();
    await page.locator('#reject-reason ~ .error').waitFor();
    await page.getByLabel('Reason for rejecting').fill('Creative not compliant in DE');
    await page.getByRole('button', { name: 'Reject' }).click();
    await page.getByRole('status').filter({ hasText: 'Rejected: Creative not compliant in DE.' }).waitFor();
    const r = (await admin(t, 'GET', `/market/reservations/${ids['Summer teaser']}`)).body.data;
    expect(r).toMatchObject({ status: 'rejected', reason: 'Creative not compliant in DE' });
  });
});

// The marketplace screens on the demo's marketplace, seeded as `npm start` seeds it against the
// reference ad server reached through the local-only allowance.
describe('console: marketplace screens on the demo in headless Chromium', { timeout: 300_000 }, () => {
  let t: TestApp & { admin: string };
  let ref: ReferenceServer;
  let browser: Browser;
  let page: Page;
  let base: string;
  let shot: ConsoleBrowser['shot'];
  let demo: MarketDemo;

  beforeAll(async () => {
    ref = await referenceServer();
    const app = await consoleApp({}, [`127.0.0.1:${new URL(ref.url).port}`]);
    t = { ...app, admin: (await app.app.services.access.createAdminToken('e2e', ['admin'], null)).token };
    demo = await seedMarketDemo(t.app.services, ref, t.clock);
    ({ browser, page, base, shot } = await openConsole(t, 1000));
  }, 600_000);
  afterAll(() => closeInTurn(browser, t, ref));

  it('lists products with their prices and edits one', async () => {
    await signIn(page, base, t.admin, '#/products', 'Products and prices');
    const table = page.getByTestId('products');
    for (const name of ['Home leaderboard', 'Home MPU', 'Site skin (monthly)'])
      await table.getByText(name).first().waitFor();
    await table.getByText('€1,500.00 per month').waitFor();
    await page.getByRole('button', { name: 'Edit price of Home MPU' }).click();
    await page.getByLabel('Price (EUR)').first().fill('9.25');
    await page.getByRole('button', { name: 'Save price' }).click();
    await page.getByRole('status').filter({ hasText: 'Price of Home MPU: €9.25 CPM.' }).waitFor();
    const mpu = (await admin(t, 'GET', `/market/products/${demo.products[1]}`)).body.data;
    expect(mpu.price).toBe('9.2500');
    await shot('market-products');
  });

  it('shows the availability calendar: figures, holds and bookings per geo and month', async () => {
    await page.goto(`${base}/console/#/calendar`);
    await page.getByRole('heading', { name: 'Availability calendar' }).waitFor();
    await page.locator('#calendar-product').selectOption({ label: 'Home leaderboard' });
    const next = monthOf(t.clock.now, 1);
    const cell = page.getByTestId('calendar').locator(`[data-cell="SE ${next}"]`);
    await cell.getByText('150,000 booked').waitFor();
    expect(await cell.textContent()).toMatch(/available/);
    const awaiting = page.getByTestId('calendar').locator(`[data-cell="MT ${monthOf(t.clock.now, 2)}"]`);
    await awaiting.getByText('60,000 held').waitFor();
    await shot('market-calendar');
  });

  it('approves the awaiting reservation: the reference ad server holds its DRAFT order', async () => {
    await page.goto(`${base}/console/#/reservations`);
    await page.getByRole('button', { name: `Open reservation ${DEMO_CAMPAIGNS.awaiting}` }).click();
    await page.getByRole('button', { name: 'Approve and push draft order' }).click();
    await page.getByRole('status').filter({ hasText: 'Booked: draft order' }).waitFor();
    const orders = await ref.store.query<{ status: string }>(
      'SELECT status FROM orders WHERE external_ref = $1',
      [demo.reservations.awaiting],
    );
    expect(orders).toEqual([{ status: 'DRAFT' }]);
  });

  it("issues a month's statement from the delivered reservation; an issued month cannot be issued twice", async () => {
    await page.goto(`${base}/console/#/reservations`);
    await page.getByLabel('Show').selectOption({ label: 'Booked' });
    await page.getByRole('button', { name: `Open reservation ${DEMO_CAMPAIGNS.delivered}` }).click();
    await page.getByRole('heading', { name: new RegExp(DEMO_CAMPAIGNS.delivered) }).waitFor();
    const issued = (await admin(t, 'GET', `/market/statements/${demo.statementId}`)).body.data;
    await page.getByTestId('reservation-statements').getByText(`Issued for ${issued.month}.`).waitFor();
    await page.getByLabel('Month').selectOption(issued.month);
    expect(await page.getByRole('button', { name: 'Issue statement' }).isDisabled()).toBe(true);
  });

  it('pulls a report and opens the statement: lines, CSV download and the printable view', async () => {
    await page.goto(`${base}/console/#/statements`);
    await page.getByRole('heading', { name: 'Statements' }).waitFor();
    // A line ended last month is pulled again only for its trailing days: pull on this month's
    // first day, whatever day the suite runs.
    const realNow = t.clock.now;
    t.clock.now = new Date(`${monthOf(realNow)}-01T12:00:00Z`);
    await page.getByRole('button', { name: 'Pull delivery now' }).click();
    await page
      .getByRole('status')
      .filter({ hasText: /Pulled \d+ delivery rows of/ })
      .waitFor();
    t.clock.now = realNow;
    const pulls = (await admin(t, 'GET', `/adserver/connections/${demo.connectionId}/reports/pulls`)).body
      .data;
    expect(pulls.length).toBeGreaterThanOrEqual(2);

    const last = monthOf(t.clock.now, -1);
    await page.getByRole('button', { name: `Open statement ${DEMO_CAMPAIGNS.delivered} ${last}` }).click();
    await page.getByRole('heading', { name: `Statement ${last}` }).waitFor();
    const s = (await admin(t, 'GET', `/market/statements/${demo.statementId}`)).body.data;
    expect(await page.getByTestId('statement-lines').locator('tbody tr').count()).toBe(s.lines.length);
    await page
      .getByTestId('statement-total')
      .getByText(new Intl.NumberFormat('en', { style: 'currency', currency: 'EUR' }).format(Number(s.total)))
      .waitFor();

    const [download] = await Promise.all([
      page.waitForEvent('download'),
      page.getByRole('button', { name: 'Download CSV' }).click(),
    ]);
    expect(download.suggestedFilename()).toMatch(/\.csv$/);
    const csv = await new Promise<string>((resolve, reject) => {
      download.createReadStream().then((stream) => {
        let text = '';
        stream.on('data', (c: Buffer) => {
          text += c;
        });
        stream.on('end', () => resolve(text));
        stream.on('error', reject);
      }, reject);
    });
    expect(csv).toContain(s.total);

    await page.getByRole('link', { name: 'Printable view' }).click();
    await page.getByRole('button', { name: 'Print' }).waitFor();
    expect(page.url()).toContain(`#/statements/print/${demo.statementId}`);
    // The view's statement loads after its Print button shows: wait for it, then print.
    await page.getByTestId('statement').waitFor({ state: 'visible' });
    await page.emulateMedia({ media: 'print' });
    await expect.poll(() => page.getByRole('navigation', { name: 'Screens' }).isVisible()).toBe(false);
    await expect.poll(() => page.getByTestId('statement').isVisible()).toBe(true);
    await shot('market-statement-print');
    await page.emulateMedia({ media: 'screen' });
  });
});

import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type DemoTokens, loadDemo } from '../src/modules/catalog/demo.ts';
import { adserverAppOptions, approved, type ReferenceServer, referenceServer } from './adserver-fixture.ts';
import { buildConsole, type ConsoleBrowser, closeInTurn, openConsole } from './console-browser.ts';
import { type TestApp, testApp } from './helpers.ts';
import { json, type LoopbackServer, loopbackServer } from './hostile-server.ts';

const BROWSER_UA =
  'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/130.0 Safari/537.36';

describe('operator console in headless Chromium', { timeout: 300_000 }, () => {
  let t: TestApp;
  let ref: ReferenceServer;
  /** A pass-through in front of the reference ad server, closed for maintenance until a test opens it. */
  let gate: LoopbackServer;
  let gateOpen = false;
  /** The operator's daily report endpoint for the reconciliation step. */
  let operator: LoopbackServer;
  let demo: DemoTokens;
  let browser: Browser;
  let page: Page;
  let base: string;
  /** The DE toplist's public document before the console edited it. */
  let firstDoc: { version: string; items: { position: number; brand: { id: number; name: string } }[] };

  let shot: ConsoleBrowser['shot'];
  const publicGet = async (path: string, token: string) => {
    const res = await fetch(`${base}/api/v1${path}`, { headers: { authorization: `Bearer ${token}` } });
    return { status: res.status, body: (await res.json()) as Record<string, unknown> };
  };

  beforeAll(async () => {
    const consoleDir = await buildConsole();
    const [overrides, extra] = adserverAppOptions(false);
    t = await testApp(overrides, { ...extra, consoleDir });
    // The reference ad server reads the app's clock, so a month of delivery can pass in the bookings step.
    ref = await referenceServer({ now: () => t.clock.now });
    gate = await loopbackServer();
    operator = await loopbackServer();
    gate.handle(async (req, res, body) => {
      if (!gateOpen) return json(res, 503, { code: 'maintenance', message: 'down for maintenance' });
      const up = await fetch(`${new URL(ref.url).origin}${req.url}`, {
        method: req.method,
        headers: {
          authorization: req.headers.authorization ?? '',
          'content-type': req.headers['content-type'] ?? 'application/json',
          ...(req.headers['idempotency-key']
            ? { 'idempotency-key': String(req.headers['idempotency-key']) }
            : {}),
        },
        body: req.method === 'GET' ? undefined : body,
      });
      res
        .writeHead(up.status, { 'content-type': up.headers.get('content-type') ?? 'application/json' })
        .end(await up.text());
    });
    demo = await loadDemo(t.app.services);
    ({ browser, page, base, shot } = await openConsole(t));
  }, 600_000);
  afterAll(() => closeInTurn(browser, t, gate, operator, ref));

  it('refuses a wrong token, then signs in with the demo admin token', async () => {
    await page.goto(`${base}/console/`);
    await page.getByRole('heading', { name: 'Sign in to Podium' }).waitFor();
    await shot('01-sign-in');
    await page.getByRole('button', { name: 'Use an admin token instead' }).click();
    await page.getByLabel('Admin token').fill('pda_wrong');
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('alert').filter({ hasText: 'not valid' }).waitFor();
    await page.getByLabel('Admin token').fill(demo.adminToken);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('heading', { name: 'Home' }).waitFor();
    const cookies = await page.context().cookies();
    const session = cookies.find((c) => c.name === 'podium_session')!;
    expect(session).toMatchObject({ httpOnly: true, sameSite: 'Strict' });
    expect(await page.evaluate<string>('document.cookie')).not.toContain('podium_session');
    await page.getByRole('link', { name: 'Toplists' }).click();
    await page.getByRole('heading', { name: 'Toplists' }).waitFor();
  });

  it('filters toplists by site and geo, edits the draft by keyboard, publishes, and the public API shows it', async () => {
    const site = demo.siteTokens[0]!;
    const before = await publicGet('/toplists/by-slug/best-casinos-de', site.token);
    expect(before.status).toBe(200);
    const beforeDoc = before.body.data as typeof firstDoc;
    firstDoc = beforeDoc;
    const beforeBrands = beforeDoc.items.map((i) => i.brand.id);

    await page.getByLabel('Site').selectOption({ label: site.domain });
    await page.getByLabel('Geo type').selectOption('country');
    await page.getByLabel('Geo code').fill('de');
    await page.getByRole('button', { name: /^Edit Best Online Casinos .* \(DE\)$/ }).waitFor();
    await shot('02-toplists');
    await page.getByRole('button', { name: /^Edit Best Online Casinos .* \(DE\)$/ }).click();
    await page.getByRole('heading', { name: 'Draft items' }).waitFor();
    await expect.poll(() => page.locator('ol.items > li').count()).toBe(beforeBrands.length);

    // Keyboard: focus the first row's handle and move it down one place.
    await page.locator('[data-handle="0"]').focus();
    await page.keyboard.press('ArrowDown');
    await expect
      .poll(() => page.evaluate<string | null>("document.activeElement?.getAttribute('data-handle')"))
      .toBe('1');
    // Remove the last item.
    await page.getByRole('button', { name: `Remove position ${beforeBrands.length}` }).click();
    await page.getByRole('button', { name: 'Publish', exact: true }).click();
    await page.getByRole('status').filter({ hasText: 'Published version' }).waitFor();
    // The public JSON is folded until asked for.
    await page.getByTestId('edition-json').waitFor({ state: 'attached' });
    expect(await page.getByTestId('edition-json').isVisible()).toBe(false);
    await page.getByText(/^Public JSON of version/).click();
    await page.getByTestId('edition-json').waitFor();
    await shot('03-toplist-editor');

    const expected = [beforeBrands[1], beforeBrands[0], ...beforeBrands.slice(2, -1)];
    const after = await publicGet('/toplists/by-slug/best-casinos-de', site.token);
    const afterDoc = after.body.data as { version: string; items: { brand: { id: number } }[] };
    expect(afterDoc.items.map((i) => i.brand.id)).toEqual(expected);
    expect(Number(afterDoc.version)).toBeGreaterThan(Number(beforeDoc.version));
    // The preview is the exact document the site receives.
    const previewText = await page.getByTestId('edition-json').textContent();
    expect(JSON.parse(previewText!)).toEqual(afterDoc);
  });

  it('schedules the publish window: a future start hides the toplist from sites, clearing it shows it again', async () => {
    const site = demo.siteTokens[0]!;
    const local = (d: Date) =>
      new Date(d.getTime() - d.getTimezoneOffset() * 60_000).toISOString().slice(0, 16);
    const tomorrow = new Date(Date.now() + 24 * 3600_000);
    // An end before the start: the API's message appears next to "Live until".
    await page.getByLabel(/^Live from/).fill(local(tomorrow));
    await page.getByLabel(/^Live until/).fill(local(new Date(Date.now() - 3600_000)));
    await page.getByRole('button', { name: 'Save schedule' }).click();
    await page.locator('#live-until-error').waitFor();
    // Beside its field, in words: no API field names.
    expect(await page.locator('#live-until-error').textContent()).toBe('must be later than live from');
    expect(await page.getByLabel(/^Live until/).getAttribute('aria-invalid')).toBe('true');

    await page.getByLabel(/^Live until/).fill('');
    await page.getByRole('button', { name: 'Save schedule' }).click();
    await page.getByRole('status').filter({ hasText: 'Schedule saved.' }).waitFor();
    await page
      .getByTestId('schedule-state')
      .filter({ hasText: 'Scheduled: sites receive it from' })
      .waitFor();
    expect((await publicGet('/toplists/by-slug/best-casinos-de', site.token)).status).toBe(404);
    await shot('03b-toplist-schedule');

    await page.getByRole('button', { name: 'Clear schedule' }).click();
    await page.getByRole('status').filter({ hasText: 'Schedule cleared.' }).waitFor();
    await page.getByTestId('schedule-state').filter({ hasText: 'No schedule' }).waitFor();
    expect((await publicGet('/toplists/by-slug/best-casinos-de', site.token)).status).toBe(200);
  });

  it('compares two editions: the moved and removed items of the console edit', async () => {
    const diff = page.getByTestId('edition-diff');
    await diff.waitFor();
    expect(await page.getByLabel('Older version').inputValue()).toBe(firstDoc.version);
    const rows = await diff.locator('tbody tr').allInnerTexts();
    const [first, second] = firstDoc.items;
    const last = firstDoc.items.at(-1)!;
    const cells = rows.map((r) => r.split('\t').map((c) => c.trim()));
    expect(cells.map((c) => c.slice(0, 3))).toEqual([
      ['1', 'Changed', second!.brand.name],
      ['2', 'Changed', first!.brand.name],
      [String(last.position), 'Removed', last.brand.name],
    ]);
    expect(cells[0]![3]).toBe('moved from position 2 to 1');
    expect(cells[1]![3]).toBe('moved from position 1 to 2');
    await diff.scrollIntoViewIfNeeded();
    await shot('03c-edition-diff');
    // The same version on both sides is no comparison.
    await page.getByLabel('Older version').selectOption(await page.getByLabel('Newer version').inputValue());
    await page.getByText('Pick two different versions.').waitFor();
  });

  it('shows the API field error next to the brand field', async () => {
    await page.getByRole('link', { name: 'Brands and offers' }).click();
    await page.getByRole('heading', { name: /^Brand: / }).waitFor();
    await page.getByLabel('Logo background colour').fill('red');
    await page.getByRole('button', { name: 'Save brand' }).click();
    const msg = page.locator('#brand-bg-error');
    await msg.waitFor();
    expect(await msg.textContent()).not.toContain('backgroundColor');
    expect(await msg.textContent()).not.toMatch(/^logo/);
    expect(await page.getByLabel('Logo background colour').getAttribute('aria-invalid')).toBe('true');
    await shot('04-brands');
    await page.getByLabel('Logo background colour').fill('#123456');
    await page.getByRole('button', { name: 'Save brand' }).click();
    await page.getByRole('status').filter({ hasText: 'Brand saved.' }).waitFor();
  });

  it('creates a brand, then an offer of it', async () => {
    await page.getByRole('button', { name: 'New brand' }).click();
    await page.getByRole('heading', { name: 'New brand' }).waitFor();
    await page.getByLabel('External id').fill('e2e-brand');
    await page.getByLabel('Name', { exact: true }).fill('E2E Casino');
    await page.getByLabel('Slug').fill('e2e-casino');
    await page.getByLabel('Rating (0–10)').fill('7.5');
    await page.getByLabel('Logo background colour').fill('#102030');
    await page.getByLabel('Rectangular logo URL').fill('https://cdn.example/e2e-r.png');
    await page.getByLabel('Square logo URL').fill('https://cdn.example/e2e-s.png');
    await page.getByRole('button', { name: 'Create brand' }).click();
    await page.getByRole('heading', { name: 'Brand: E2E Casino' }).waitFor();
    await page.getByText('This brand has no offers.').waitFor();

    const form = page.getByRole('form', { name: 'New offer' });
    await form.getByLabel('External id').fill('e2e-offer');
    await form.getByLabel('Offer text').fill('100% up to €100');
    await form.getByRole('button', { name: 'Create offer' }).click();
    await form.locator('#new-offer-expiry-error').waitFor();
    // The contract's offers always carry a bonus expiry date: the form says so up front.
    await form.getByLabel('Bonus expiry date (required)', { exact: true }).fill('2027-06-30');
    await form.getByRole('button', { name: 'Create offer' }).click();
    await form
      .getByRole('status')
      .filter({ hasText: /^Offer \d+ created\.$/ })
      .waitFor();
    await page.getByRole('form', { name: /^Offer \d+$/ }).waitFor();
    await shot('04b-brand-created');

    // Its tracking links lead nowhere until a tracker says where: one added, edited, removed.
    const offerId = Number(
      (await page.getByRole('form', { name: /^Offer \d+$/ }).getAttribute('aria-label'))!.slice(
        'Offer '.length,
      ),
    );
    const trackers = page.getByRole('region', { name: `Trackers of offer ${offerId}` });
    await trackers.getByText('No tracker yet').waitFor();
    const add = trackers.getByRole('form', { name: `New tracker for offer ${offerId}` });
    await add.getByLabel('Campaign name (required)').fill('E2E launch');
    await add.getByLabel('Landing URL (where /go redirects) (required)').fill('not a url');
    await add.getByRole('button', { name: `Add tracker to offer ${offerId}` }).click();
    await add.locator(`#new-tracker-${offerId}-landing-error`).waitFor();
    await add
      .getByLabel('Landing URL (where /go redirects) (required)')
      .fill('https://e2e-casino.example/welcome');
    await add.getByLabel('Countries (comma-separated names; empty: every country)').fill('Sweden, Malta');
    await add.getByRole('button', { name: `Add tracker to offer ${offerId}` }).click();
    await add.getByRole('status').filter({ hasText: 'Tracker E2E launch added' }).waitFor();
    await trackers.getByRole('rowheader', { name: 'E2E launch' }).waitFor();
    await trackers.getByRole('cell', { name: 'Sweden, Malta' }).waitFor();
    type Stored = { data: { trackers: { landingUrl: string; geos: { countries: string[] } }[] } };
    const stored = async () => {
      const res = await fetch(`${base}/api/admin/v1/offers/${offerId}`, {
        headers: { authorization: `Bearer ${demo.adminToken}` },
      });
      return ((await res.json()) as Stored).data.trackers;
    };
    expect(await stored()).toEqual([
      expect.objectContaining({
        landingUrl: 'https://e2e-casino.example/welcome',
        geos: expect.objectContaining({ countries: ['Sweden', 'Malta'] }),
      }),
    ]);

    await trackers.getByRole('button', { name: 'Edit tracker E2E launch' }).click();
    const edit = trackers.getByRole('form', { name: 'Tracker: E2E launch' });
    await edit
      .getByLabel('Landing URL (where /go redirects) (required)')
      .fill('https://e2e-casino.example/v2');
    await edit.getByRole('button', { name: 'Save tracker E2E launch' }).click();
    await trackers.getByText('https://e2e-casino.example/v2').waitFor();
    expect((await stored())[0]!.landingUrl).toBe('https://e2e-casino.example/v2');

    page.once('dialog', (d) => void d.accept());
    await trackers.getByRole('button', { name: 'Remove tracker E2E launch' }).click();
    await trackers.getByRole('status').filter({ hasText: 'Tracker E2E launch removed.' }).waitFor();
    await trackers.getByText('No tracker yet').waitFor();
    expect(await stored()).toEqual([]);
  });

  it('creates a site token shown once with a copy button, which works, then revokes it', async () => {
    const site = demo.siteTokens[0]!;
    await page.getByRole('link', { name: 'Sites and tokens' }).click();
    await page.getByRole('heading', { name: 'Tokens' }).waitFor();
    await page.getByLabel('Domain').fill('Not A Host');
    await page.getByRole('button', { name: 'Create site' }).click();
    await page.locator('#site-domain-error').waitFor();
    await page.getByLabel('Domain').fill('e2e-site.example');
    await page.getByLabel('Name', { exact: true }).fill('E2E Site');
    await page.getByRole('button', { name: 'Create site' }).click();
    await page.getByRole('button', { name: 'E2E Site e2e-site.example', pressed: true }).waitFor();
    await page.getByText('No tokens.').waitFor();
    await page.getByRole('button', { name: new RegExp(`${site.domain}$`) }).click();
    await page.getByRole('button', { name: 'Revoke' }).first().waitFor();
    await page.getByLabel('New token name').fill('e2e-token');
    await page.getByRole('button', { name: 'Create token' }).click();
    const token = (await page.getByTestId('new-token').textContent())!;
    expect(token).toMatch(/^pds_/);
    await page.getByRole('button', { name: 'Copy token' }).click();
    await page.getByRole('button', { name: 'Copied' }).waitFor();
    expect(await page.evaluate<string>('navigator.clipboard.readText()')).toBe(token);
    expect((await publicGet('/toplists/by-slug/best-casinos-de', token)).status).toBe(200);
    await shot('05-sites-tokens');

    page.once('dialog', (d) => d.accept());
    await page.getByRole('button', { name: 'Revoke e2e-token' }).click();
    await page.getByRole('status').filter({ hasText: 'Revoked' }).waitFor();
    expect((await publicGet('/toplists/by-slug/best-casinos-de', token)).status).toBe(401);
    expect((await publicGet('/toplists/by-slug/best-casinos-de', site.token)).status).toBe(200);
  });

  it('adds an ad-server connection while the server is down, Re-verify connects it, syncs inventory and maps a placement', async () => {
    const admin = { authorization: `Bearer ${demo.adminToken}` };
    await page.getByRole('link', { name: 'Ad servers' }).click();
    await page.getByRole('heading', { name: 'Ad servers' }).waitFor();
    await page.getByText('No ad-server connections yet.').waitFor();
    await page.getByRole('button', { name: 'Add a connection' }).click();
    await page.getByLabel('Publisher (slug)').fill('casinoguide');
    await page.getByLabel('Base URL (…/api/v1)').fill(`${gate.origin}/api/v1`);
    await page.getByLabel('API key').fill(ref.apiKey);
    await page.getByRole('button', { name: 'Add connection' }).click();
    await page.getByRole('status').filter({ hasText: 'Added casinoguide (production): error.' }).waitFor();
    const row = page.getByTestId('connection-casinoguide');
    await row.getByText('error · unreachable').waitFor();
    // The row shows the base URL, whose random port may hold the digits 503: read it without.
    const withoutUrl = async () => (await row.textContent())?.replace(gate.origin, '');
    expect(await withoutUrl()).toContain('503');
    expect(await row.textContent()).toContain('inventory read: not verified');
    // The key went to the server once; the page never shows it again.
    expect(await page.content()).not.toContain(ref.apiKey);
    await shot('07a-adservers-unreachable');

    gateOpen = true;
    await page.getByRole('button', { name: 'Re-verify casinoguide (production)' }).click();
    await page
      .getByRole('status')
      .filter({ hasText: 'Re-verified casinoguide (production): connected.' })
      .waitFor();
    await row.getByText('connected', { exact: true }).waitFor();
    const text = await row.textContent();
    expect(text).toContain('inventory read: confirmed');
    expect(text).toContain('forecast: not verified');
    expect(text).toContain('reporting: not verified');
    expect(text).toContain('draft booking: not verified');
    expect(text).toContain('Europe/Malta · EUR');
    expect(await withoutUrl()).not.toContain('503');
    await shot('07-adservers');

    await page.getByRole('button', { name: 'Sync inventory' }).click();
    await page
      .getByRole('status')
      .filter({ hasText: /^Synced 6 slots \(6 new\)/ })
      .waitFor();
    await expect.poll(() => page.getByTestId('inventory').locator('tbody tr').count()).toBe(6);
    await page.getByLabel('Name', { exact: true }).fill('Sidebar MPU');
    await page.getByLabel(/^Sizes/).fill('300x250, 300x600');
    await page.getByRole('button', { name: 'Create placement' }).click();
    await page.getByRole('status').filter({ hasText: 'Placement Sidebar MPU created.' }).waitFor();
    const select = page.getByLabel('Slot for Sidebar MPU');
    // Only the active slot taking both sizes is offered.
    await expect
      .poll(() => select.locator('option').allTextContents())
      .toEqual(['— not mapped —', 'Article sidebar (slot-article-sidebar)']);
    await select.selectOption('slot-article-sidebar');
    await page.getByRole('button', { name: 'Map Sidebar MPU', exact: true }).click();
    await page.getByRole('status').filter({ hasText: 'Mapped to slot-article-sidebar.' }).waitFor();
    const res = await fetch(`${base}/api/admin/v1/adserver/placements?publisher=casinoguide`, {
      headers: admin,
    });
    const [placement] = ((await res.json()) as { data: { name: string; slots: Record<string, string> }[] })
      .data;
    const conn = (await (
      await fetch(`${base}/api/admin/v1/adserver/connections`, { headers: admin })
    ).json()) as {
      data: { id: string }[];
    };
    expect(placement).toMatchObject({
      name: 'Sidebar MPU',
      slots: { [conn.data[0]!.id]: 'slot-article-sidebar' },
    });
    await shot('08-adserver-inventory');
  });

  it('charts clicks seeded through the /go links of the demo toplist, by position and brand, exports CSV, and reconciles with the operator report', async () => {
    const doc = (await publicGet('/toplists/by-slug/best-casinos-de', demo.siteTokens[0]!.token)).body
      .data as {
      items: {
        position: number;
        brand: { name: string };
        offer: { trackers: { id: number; trackerLink: string }[] };
      }[];
    };
    // A programme owning the demo trackers, whose operator reports 3 clicks two days ago and 4 yesterday.
    const admin = { authorization: `Bearer ${demo.adminToken}`, 'content-type': 'application/json' };
    const created = await fetch(`${base}/api/admin/v1/tracking/programs`, {
      method: 'POST',
      headers: admin,
      body: JSON.stringify({
        slug: 'demo-operator',
        name: 'Demo Operator',
        timezone: 'UTC',
        landingParams: 'cid={click_id}',
        trackerIds: [...new Set(doc.items.flatMap((i) => i.offer.trackers.map((tr) => tr.id)))],
      }),
    });
    expect(created.status).toBe(201);
    const program = ((await created.json()) as { data: { id: number; postbackToken: string } }).data;
    const programId = program.id;
    const link = (position: number) => {
      const url = new URL(doc.items[position - 1]!.offer.trackers[0]!.trackerLink);
      return `${base}${url.pathname}`;
    };
    /** Hits `url` `times` times; the click id the last redirect carried (`cid`), if any. */
    const hit = async (url: string, times: number) => {
      let clickId: string | null = null;
      for (let i = 0; i < times; i++) {
        const res = await fetch(url, { redirect: 'manual', headers: { 'user-agent': BROWSER_UA } });
        expect(res.status).toBe(url.includes('/go/') ? 302 : 200);
        const location = res.headers.get('location');
        clickId = location ? new URL(location).searchParams.get('cid') : null;
      }
      return clickId;
    };
    // Two days ago, yesterday and today, on the app's clock: a real series, not one point.
    const today = t.clock.now;
    const day = 86_400_000;
    t.clock.now = new Date(today.getTime() - 2 * day);
    await hit(link(1), 3);
    t.clock.now = new Date(today.getTime() - day);
    await hit(link(1), 2);
    await hit(link(2), 4);
    await hit(link(2).replace('/go/', '/imp/'), 2);
    t.clock.now = today;
    const todayClick = await hit(link(3), 1);
    expect(todayClick).toBeTruthy();

    const dayOf = (back: number) => new Date(today.getTime() - back * day).toISOString().slice(0, 10);
    const reported: Record<string, number> = { [dayOf(2)]: 3, [dayOf(1)]: 4 };
    operator.handle((req, res) => {
      const date = new URL(req.url ?? '/', 'http://x').searchParams.get('date') ?? '';
      json(res, 200, {
        date,
        currency: 'EUR',
        rows: [{ tracker: 'demo', clicks: reported[date] ?? 0, registrations: 0, ftds: 0 }],
        next_cursor: null,
      });
    });
    const report = await fetch(`${base}/api/admin/v1/tracking/programs/${programId}/report`, {
      method: 'PUT',
      headers: admin,
      body: JSON.stringify({ url: operator.origin, key: 'opk_e2e_0123456789abcdef' }),
    });
    expect(report.status).toBe(200);
    const pulls = await t.app.services.aggregates.pullRange(programId, dayOf(2), dayOf(1));
    expect(pulls.map((p) => p.status)).toEqual(['ok', 'ok']);

    await page.getByRole('link', { name: 'Tracking' }).click();
    await page.getByRole('heading', { name: 'Tracking' }).waitFor();
    await page
      .getByTestId('stats-summary')
      .filter({ hasText: '10 clicks · 2 impressions · 0 conversions' })
      .waitFor();
    const chart = page.getByRole('img', { name: /per day from/ });
    await chart.waitFor();
    expect(await chart.getAttribute('aria-label')).toContain('10 clicks, 2 impressions, 0 conversions');
    expect((await chart.boundingBox())!.height).toBeGreaterThan(100);

    await page.getByLabel('Break down by').selectOption('position');
    const totals = page.getByTestId('stats-totals');
    await totals.getByText('position 2').waitFor();
    const rows = (await totals.locator('tbody tr').allInnerTexts()).map((r) => r.split('\t').slice(0, 3));
    expect(rows).toEqual([
      ['position 1', '5', '0'],
      ['position 2', '4', '2'],
      ['position 3', '1', '0'],
    ]);
    await shot('10-tracking');

    await page.getByLabel('Break down by').selectOption('brand');
    await totals.getByText(doc.items[0]!.brand.name).waitFor();
    await page.getByLabel('Metric').selectOption('impressions');
    await page.getByRole('img', { name: /impressions by brand per day/ }).waitFor();

    // The CSV export is a plain link: the session cookie authorises it.
    const href = (await page.getByRole('link', { name: 'Export CSV' }).getAttribute('href'))!;
    const csv = await page.evaluate(async (u) => (await fetch(u)).text(), href);
    const lines = csv.trim().split(/\r?\n/);
    const clicksAt = lines[0]!.split(',').indexOf('clicks');
    expect(lines[0]).toMatch(/^day,timezone,site_id,toplist_id,position,brand_id,program_id,clicks,/);
    expect(lines.slice(1).reduce((n, l) => n + Number(l.split(',')[clicksAt]), 0)).toBe(10);

    // Reconciliation: yesterday we counted 6 clicks, the operator 4 — flagged; two days ago both say 3.
    await page.getByText('Pick a programme to reconcile').waitFor();
    await page.getByLabel('Programme').selectOption({ label: 'Demo Operator' });
    const rec = page.getByTestId('reconciliation');
    await rec.waitFor();
    const recRow = (d: string) =>
      rec.locator('tbody tr').filter({ has: page.getByRole('rowheader', { name: d }) });
    await expect
      .poll(() => recRow(dayOf(1)).locator('td').allTextContents())
      .toEqual([
        'pulled',
        '6',
        '4',
        'Clicks differ beyond the threshold: ⚠ +2 (50.00 %)',
        '0',
        '0',
        '0 (0.00 %)',
        '0',
        '0',
        '0 (0.00 %)',
      ]);
    expect(await recRow(dayOf(1)).getAttribute('class')).toBe('flagged-row');
    expect(await recRow(dayOf(2)).locator('td').nth(3).textContent()).toBe('0 (0.00 %)');
    expect(await recRow(dayOf(2)).getAttribute('class')).toBeNull();
    expect(await recRow(dayOf(0)).locator('td').first().textContent()).toBe('not pulled');
    await page.getByTestId('rec-summary').filter({ hasText: 'flagged: 1 of 14 days' }).waitFor();
    await rec.scrollIntoViewIfNeeded();
    await shot('12-reconciliation');

    // Money today: a deposit without a click (unattributed) and a commission on today's click of
    // position 3; then the Home dashboard: today against yesterday (1 click against 6), and the
    // last 7 days with the brands that led them.
    for (const [n, event, amount, click] of [
      [1, 'ftd', '50', ''],
      [2, 'cpa', '30.5', `&click_id=${todayClick}`],
    ] as const) {
      const pb = await fetch(
        `${base}/api/postback/demo-operator/${program.postbackToken}?transaction_id=H${n}&event=${event}&amount=${amount}&currency=EUR${click}`,
      );
      expect(pb.status).toBe(200);
    }
    await page.getByRole('link', { name: 'Home' }).click();
    await page.getByRole('heading', { name: 'Home' }).waitFor();
    await page.getByLabel('Period').selectOption('today');
    const tile = async (name: string) =>
      (await page.getByRole('region', { name, exact: true }).textContent())?.replace(/\s+/g, '');
    await expect.poll(() => tile('Clicks')).toBe('Clicks1▼83%vs6');
    await expect.poll(() => tile('Revenue')).toBe('Revenue€50.00newvs—');
    await expect.poll(() => tile('Commission')).toBe('Commission€30.50newvs—');
    await page.getByLabel('Period').selectOption('7d');
    await expect.poll(() => tile('Clicks')).toBe('Clicks10newvs0');
    const leaders = page.getByTestId('top-brands');
    await expect
      .poll(async () =>
        (await leaders.locator('tbody tr').allInnerTexts()).map((r) => r.split('\t').slice(0, 2)),
      )
      .toEqual([
        [doc.items[0]!.brand.name, '5'],
        [doc.items[1]!.brand.name, '4'],
        [doc.items[2]!.brand.name, '1'],
      ]);
    // Yesterday's clicks differ from the operator's report (above): a warning under the leaders.
    await page
      .getByTestId('attention')
      .getByText(/^Demo Operator: 1 of 7 days differ from the operator's report beyond \d+(\.\d+)? %\.$/)
      .waitFor();
    await shot('13-home');

    // Tracking, today by programme: the money beside the counts, and the clicks of yesterday.
    await page.getByRole('link', { name: 'Tracking' }).click();
    await page.getByLabel('Period').selectOption('today');
    await page.getByLabel('Break down by').selectOption('program');
    const byProgram = page.getByTestId('stats-totals');
    const cells = async () =>
      (await byProgram.locator('tbody tr').allTextContents()).map((r) => r.replace(/\s+/g, ''));
    // Clicks, impressions, registrations, FTDs, conversions, reg. per click, revenue, commission,
    // EPC, then yesterday's clicks and the change.
    await expect.poll(cells).toEqual(['DemoOperator100120.0%€50.00€30.50€30.506▼83%']);
    await page.getByLabel('Then by').selectOption('position');
    await expect
      .poll(cells)
      .toEqual([
        'DemoOperatorposition3100010.0%—€30.50€30.500new',
        'DemoOperatorunattributed00011—€50.00——0',
      ]);
    await shot('14-tracking-money');

    // The commission in the Conversions list, under the names of what it came through.
    await page.getByRole('link', { name: 'Conversions' }).click();
    await page.getByLabel('Programme').selectOption({ label: 'Demo Operator' });
    const commission = page.getByTestId('conversions').locator('tbody tr').filter({ hasText: 'H2' });
    await expect
      .poll(async () => (await commission.locator('td').allTextContents()).slice(1, 5))
      .toEqual(['Demo Operator', 'cpa', 'H2', '€30.50']);
    // The names arrive after the rows (their own lists): until then the cell reads "brand 33".
    await expect
      .poll(() => commission.locator('td').nth(5).textContent())
      .toBe(
        `${doc.items[2]!.brand.name} · Best Online Casinos Germany (DE) #3 · ${demo.siteTokens[0]!.domain}`,
      );
  });

  it('books the mapped placement, pushes it from the Bookings screen, and shows the order ids and delivery beside Podium counts', async () => {
    const admin = { authorization: `Bearer ${demo.adminToken}`, 'content-type': 'application/json' };
    const get = async <T>(path: string) =>
      ((await (await fetch(`${base}/api/admin/v1${path}`, { headers: admin })).json()) as { data: T }).data;
    const [conn] = await get<{ id: string }[]>('/adserver/connections');
    const [placement] = await get<{ id: number }[]>('/adserver/placements?publisher=casinoguide');
    const today = t.clock.now;
    const month = new Intl.DateTimeFormat('en-CA', {
      timeZone: 'Europe/Malta',
      year: 'numeric',
      month: '2-digit',
    }).format(today);
    // The operator creates the booking in the console: campaign, a line on the mapped placement
    // with its month, goal and approved creative, after running the line's forecast.
    await page.getByRole('link', { name: 'Ad servers' }).click();
    await page.getByRole('link', { name: 'Bookings' }).click();
    await page.getByRole('heading', { name: 'Bookings' }).waitFor();
    const form = page.getByRole('form', { name: 'New booking' });
    const creative = approved(300, 250, 'console');
    await form.getByLabel('Advertiser').fill('Lucky Spin Ltd');
    await form.getByLabel('Campaign', { exact: true }).fill('Console campaign');
    await form.getByLabel('Campaign reference').fill('cmp-console');
    await form.getByLabel('Placement', { exact: true }).selectOption(String(placement!.id));
    await form.getByLabel('Month (flight)').fill(month);
    await form.getByLabel('Goal impressions').fill('50000');
    await form.getByLabel('Creative image URL').fill(creative.image_url);
    await form.getByLabel('Creative landing URL').fill('javascript:alert(1)');
    await form.getByRole('button', { name: 'Run forecast' }).click();
    await form
      .getByRole('status')
      .filter({ hasText: /^Forecast: [\d,]+ available of [\d,]+ forecast\.$/ })
      .waitFor();
    await form.getByRole('button', { name: 'Create booking' }).click();
    await form.getByRole('alert').filter({ hasText: 'must be an http: or https: URL' }).waitFor();
    await form.getByLabel('Creative landing URL').fill(creative.landing_url);
    await form.getByRole('button', { name: 'Create booking' }).click();
    await form.getByRole('status').filter({ hasText: 'Booking Console campaign created.' }).waitFor();
    const listed = await get<{ id: string; external_ref: string }[]>('/adserver/bookings');
    const bookingId = listed.find((b) => b.external_ref === 'cmp-console')!.id;
    const createdBooking = await get<{
      lines: { click_codes: string[]; creatives: { tag: string }[]; approved_creatives: unknown[] }[];
    }>(`/adserver/bookings/${bookingId}`);
    expect(createdBooking.lines[0]!.approved_creatives).toEqual([creative]);
    // The line's own banner code: its only counts are the ones made here.
    const code = createdBooking.lines[0]!.click_codes[0]!;
    const tagText = createdBooking.lines[0]!.creatives[0]!.tag;
    expect(tagText).toContain(`/ad/${code}"`);
    expect(await page.getByTestId('tag-1').textContent()).toBe(tagText);

    await page.getByTestId('booking-order').filter({ hasText: 'not pushed yet' }).waitFor();
    await page.getByText('Never pushed.').waitFor();
    await page.getByRole('button', { name: 'Push as draft order' }).click();
    await page
      .getByRole('status')
      .filter({ hasText: /^Pushed revision 1: order / })
      .waitFor();
    const booking = await get<{ order_id: string; lines: { line_item_id: string }[] }>(
      `/adserver/bookings/${bookingId}`,
    );
    const lineItemId = booking.lines[0]!.line_item_id;
    expect(booking.order_id).toBeTruthy();
    // The ad server holds the line's tag exactly as generated, carrying the line's code.
    const [pushedLine] = await ref.store.query<{ creatives: { tag: string }[] }>(
      'SELECT creatives FROM line_items WHERE id = $1',
      [lineItemId],
    );
    expect(pushedLine!.creatives[0]!.tag).toBe(tagText);
    expect(lineItemId).toBeTruthy();
    await page.getByTestId('booking-order').getByText(booking.order_id, { exact: true }).waitFor();
    await page.getByTestId('booking-lines').getByText(lineItemId, { exact: true }).waitFor();
    // The push history is its own read, reloaded after the push: wait for its row, not the lines'.
    const pushes = page.getByTestId('booking-pushes').locator('tbody tr');
    await pushes.filter({ hasText: 'succeeded' }).waitFor();
    const pushRows = await pushes.allInnerTexts();
    expect(pushRows).toHaveLength(1);
    expect(pushRows[0]).toMatch(/^1\tsucceeded\t20\d\t1\t/);

    // Ad-ops takes the draft live; on its first day Podium counts 3 impressions and 1 click of the
    // creative's code; once the month has ended the report pull stores the ad server's figures.
    expect(await ref.activate(booking.order_id)).toBe(true);
    t.clock.now = new Date(`${month}-01T12:00:00Z`);
    for (const [kind, times] of [
      ['imp', 3],
      ['go', 1],
    ] as const)
      for (let i = 0; i < times; i++) {
        const res = await fetch(`${base}/${kind}/${code}`, {
          redirect: 'manual',
          headers: { 'user-agent': BROWSER_UA },
        });
        expect(res.status).toBe(kind === 'go' ? 302 : 200);
      }
    const [y, m] = month.split('-').map(Number) as [number, number];
    t.clock.now = new Date(Date.UTC(y, m, 1, 12));
    const pulled = await fetch(`${base}/api/admin/v1/adserver/connections/${conn!.id}/reports/pull`, {
      method: 'POST',
      headers: { authorization: admin.authorization },
    });
    const pull = ((await pulled.json()) as { data: { state: string; matched: number } }).data;
    t.clock.now = today;
    const days = new Date(Date.UTC(y, m, 0)).getUTCDate();
    expect(pull).toMatchObject({ state: 'ok', matched: days });
    type Line = { totals: Record<string, number | string | null> };
    await expect
      .poll(
        async () =>
          (await get<{ lines: Line[] }>(`/adserver/bookings/${bookingId}/delivery`)).lines[0]!.totals,
      )
      .toMatchObject({ podium_impressions: 3, podium_clicks: 1 });
    const { totals } = (await get<{ lines: Line[] }>(`/adserver/bookings/${bookingId}/delivery`)).lines[0]!;
    expect(totals.impressions).toBeGreaterThan(0);

    await page.getByRole('link', { name: 'Connections' }).click();
    await page.getByRole('link', { name: 'Bookings' }).click();
    const delivery = page.getByTestId('booking-delivery');
    await delivery.waitFor();
    const cells = (await delivery.locator('tbody tr').first().locator('td').allTextContents()).map((c) =>
      c.replaceAll(',', ''),
    );
    expect(cells).toEqual([
      String(days),
      String(totals.impressions),
      '3',
      `${totals.impression_discrepancy_pct} %`,
      String(totals.clicks),
      '1',
      totals.click_discrepancy_pct === null ? '—' : `${totals.click_discrepancy_pct} %`,
    ]);
    await delivery.getByText(lineItemId, { exact: true }).waitFor();
    await shot('13-bookings');
  });

  it('fits a tablet width', async () => {
    await page.setViewportSize({ width: 768, height: 1024 });
    await page.getByRole('link', { name: 'Toplists' }).click();
    await page.getByRole('heading', { name: 'Toplists' }).waitFor();
    const overflow = await page.evaluate<number>('document.documentElement.scrollWidth - window.innerWidth');
    expect(overflow).toBeLessThanOrEqual(0);
    await shot('06-toplists-tablet');
    await page.getByRole('link', { name: 'Ad servers' }).click();
    await page.getByTestId('connection-casinoguide').waitFor();
    expect(
      await page.evaluate<number>('document.documentElement.scrollWidth - window.innerWidth'),
    ).toBeLessThanOrEqual(0);
    await shot('09-adservers-tablet');
  });

  it('follows the system dark mode', async () => {
    // Read in the page (a string: this file is type-checked without the DOM library).
    const colours = () =>
      page.evaluate<{ page: string; text: string; button: string }>(`(() => {
        const root = getComputedStyle(document.documentElement);
        const button = getComputedStyle(document.querySelector('header button'));
        return { page: root.backgroundColor, text: root.color, button: button.backgroundColor };
      })()`);
    const light = await colours();
    expect(light).toEqual({
      page: 'rgb(246, 247, 249)',
      text: 'rgb(26, 26, 26)',
      button: 'rgb(255, 255, 255)',
    });
    await page.emulateMedia({ colorScheme: 'dark' });
    await page.getByRole('link', { name: 'Home' }).click();
    await page.getByRole('heading', { name: 'Home' }).waitFor();
    expect(await colours()).toEqual({
      page: 'rgb(19, 19, 20)',
      text: 'rgb(227, 227, 227)',
      button: 'rgb(31, 31, 33)',
    });
    await shot('15-home-dark');
    await page.emulateMedia({ colorScheme: 'light' });
    expect(await colours()).toEqual(light);
    // Leave Home once its figures are in, so none of its requests is still out for the next test.
    await page.getByTestId('attention').getByRole('listitem').first().waitFor();
    await page.getByRole('link', { name: 'Toplists' }).click();
    await page.getByRole('heading', { name: 'Toplists' }).waitFor();
  });

  it('an expired session returns to sign-in with a message; signing in again comes back to the same screen', async () => {
    const now = t.clock.now;
    t.clock.now = new Date(now.getTime() + 9 * 3600_000);
    await page.getByRole('link', { name: 'Brands and offers' }).click();
    await page.getByRole('heading', { name: 'Sign in to Podium' }).waitFor();
    await page.getByRole('status').filter({ hasText: 'Your session has ended' }).waitFor();
    await shot('11-session-expired');
    await page.getByRole('button', { name: 'Use an admin token instead' }).click();
    await page.getByLabel('Admin token').fill(demo.adminToken);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('heading', { name: /^Brand: / }).waitFor();
    t.clock.now = now;
  });

  it('shows the answer of the latest filter, also when an earlier request answers after it', async () => {
    await page.goto(`${base}/console/#/toplists`);
    await page.getByRole('heading', { name: 'Toplists' }).waitFor();
    await page.getByLabel('Geo type').selectOption('country');
    // The request for geo code "D" is held until the one for "DE" has been answered and shown.
    let release = () => {};
    const held = new Promise<void>((r) => {
      release = r;
    });
    const earlier = /\/toplists\?[^#]*geo_code=D(&|$)/;
    await page.route(earlier, async (route) => {
      await held;
      await route.continue();
    });
    const sentEarlier = page.waitForRequest(earlier);
    await page.getByLabel('Geo code').fill('d');
    await sentEarlier;
    await page.getByLabel('Geo code').fill('de');
    const de = page.getByRole('button', { name: /^Edit Best Online Casinos .* \(DE\)$/ });
    await de.waitFor();
    const answeredEarlier = page.waitForResponse(earlier);
    release();
    await answeredEarlier;
    // Give the late answer every chance to be rendered: React commits it within a frame or two.
    await page.evaluate('new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r)))');
    expect(await de.count()).toBe(1);
    expect(await page.getByRole('alert').count()).toBe(0);
    await page.unroute(earlier);
  });

  it('signs out and is back at the sign-in form; the old cookie no longer works', async () => {
    const cookie = (await page.context().cookies()).find((c) => c.name === 'podium_session')!.value;
    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.getByRole('heading', { name: 'Sign in to Podium' }).waitFor();
    const res = await fetch(`${base}/api/admin/v1/sites`, {
      headers: { cookie: `podium_session=${cookie}` },
    });
    expect(res.status).toBe(401);
  });
});

import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type DemoTokens, loadDemo } from '../src/modules/catalog/demo.ts';
import { type ConsoleBrowser, closeInTurn, consoleApp, openConsole, signIn } from './console-browser.ts';
import type { TestApp } from './helpers.ts';

// The Compliance screen and the draft editor's compliance panel on the demo, in headless Chromium
// against a real server on loopback.
describe('console: the compliance report and a draft’s violations in headless Chromium', {
  timeout: 300_000,
}, () => {
  let t: TestApp;
  let demo: DemoTokens;
  let browser: Browser;
  let page: Page;
  let base: string;
  let shot: ConsoleBrowser['shot'];

  const admin = async (path: string) => {
    const res = await fetch(`${base}/api/admin/v1${path}`, {
      headers: { authorization: `Bearer ${demo.adminToken}` },
    });
    return (await res.json()) as { data: { id: number; name: string; classificationTypes: string[] }[] };
  };

  beforeAll(async () => {
    t = await consoleApp();
    demo = await loadDemo(t.app.services);
    ({ browser, page, base, shot } = await openConsole(t, 900));
  }, 600_000);
  afterAll(() => closeInTurn(browser, t));

  it('lists what the live lists withhold, filters it by country and status, and links its CSV', async () => {
    await signIn(page, base, demo.adminToken, '#/compliance', 'Compliance');
    const report = page.getByTestId('compliance-report');
    await report.getByText('restricted_country').first().waitFor();

    await page.getByLabel('Country (code)').fill('se');
    // Once the filter applies, only Swedish entries are left (the demo restricts no brand in Sweden).
    await report.getByText('restricted_country').first().waitFor({ state: 'detached' });
    await report.getByText('licence_required').first().waitFor();
    await report.getByText('visitors of the global list').first().waitFor();
    await shot('40-compliance-report');
    const csvHref = (await page.getByRole('link', { name: 'Export CSV' }).getAttribute('href'))!;
    expect(csvHref).toContain('country=SE');
    expect(csvHref).toContain('format=csv');
    const csv = await fetch(`${base}${csvHref}`, { headers: { authorization: `Bearer ${demo.adminToken}` } });
    const lines = (await csv.text()).trimEnd().split('\r\n');
    expect(lines[0]).toMatch(/^status,scope,site_id,/);
    expect(lines.length).toBeGreaterThan(1);
    expect(lines.slice(1).every((l) => l.includes(',SE,licence_required,'))).toBe(true);

    await page.getByLabel('Status').selectOption('overridden');
    await page.getByText('Nothing is withheld').waitFor();
  });

  it('shows the violations of the draft as a brand is added to it, before it is saved', async () => {
    // A sportsbook holds no Swedish licence: adding one to the Swedish list's draft breaks the rule.
    const sportsbook = (await admin('/brands?q=bet&per_page=100')).data.find((b) =>
      b.classificationTypes.includes('Sportsbook'),
    )!;
    await page.getByRole('link', { name: 'Toplists' }).click();
    await page.getByLabel('Search toplists').fill('best-casinos-se');
    await page.getByRole('button', { name: 'Edit Best Online Casinos Sweden (SE)' }).click();
    await page.getByRole('heading', { name: 'Draft items' }).waitFor();
    await page.getByTestId('draft-compliant').waitFor();

    await page.getByLabel('Add a brand').fill(sportsbook.name);
    await page
      .getByRole('list', { name: 'Matches for Add a brand' })
      .getByRole('button', { name: sportsbook.name, exact: true })
      .click();
    // Judged as it stands in the editor: nothing saved yet, and the saved draft is still clean.
    const violations = page.getByTestId('draft-violations');
    await violations.getByText(`${sportsbook.name}`).waitFor();
    await violations.getByText('licence_required').waitFor();
    await shot('41-draft-violations');
    const lists = (await admin('/toplists?q=best-casinos-se&per_page=100')).data as unknown as {
      id: number;
      slug: string;
    }[];
    const listId = lists.find((l) => l.slug === 'best-casinos-se')!.id;
    const saved = (await admin(`/toplists/${listId}/compliance`)) as unknown as {
      data: { publishable: boolean };
    };
    expect(saved.data.publishable).toBe(true);

    // Removing it again clears the warning without a save.
    await page
      .getByRole('button', { name: /^Remove position / })
      .last()
      .click();
    await page
      .getByTestId('draft-compliant')
      .getByText(/unsaved changes/)
      .waitFor();
    await page.getByLabel('Add a brand').fill(sportsbook.name);
    await page
      .getByRole('list', { name: 'Matches for Add a brand' })
      .getByRole('button', { name: sportsbook.name, exact: true })
      .click();
    await violations.getByText('licence_required').waitFor();
    await page.getByRole('button', { name: 'Save draft' }).click();
    await page.getByText('Draft saved.').waitFor();

    await page.getByRole('button', { name: 'Publish', exact: true }).click();
    await page
      .getByText(/may not be advertised in SE/)
      .first()
      .waitFor();
  });
  it('counts a click the guard kept from the operator as blocked, beside the brand in Tracking', async () => {
    // A live link of a brand the demo restricts somewhere, clicked from that country.
    const [hit] = await t.db.query<{ slug: string; name: string; country: string; landing: string }>(
      `SELECT l.slug, b.name, b.restricted_countries[1] AS country, tr.landing_url AS landing
         FROM tracking_links l JOIN trackers tr ON tr.id = l.tracker_id
         JOIN offers o ON o.id = tr.offer_id JOIN brands b ON b.id = o.brand_id
        WHERE cardinality(b.restricted_countries) > 0 AND l.toplist_id IS NOT NULL
        ORDER BY l.id LIMIT 1`,
    );
    expect(hit).toBeDefined();
    const res = await fetch(`${base}/go/${hit!.slug}`, {
      redirect: 'manual',
      headers: {
        'user-agent': 'Mozilla/5.0 (X11; Linux x86_64) Firefox/140.0',
        'cf-ipcountry': hit!.country,
      },
    });
    // The demo's sites set no fallback page: Podium's own 451 page answers, the operator is never reached.
    expect(res.status).toBe(451);
    expect(res.headers.get('location')).toBeNull();

    await page.getByRole('link', { name: 'Tracking' }).click();
    await page.getByLabel('Period').selectOption('today');
    await page.getByLabel('Break down by').selectOption('brand');
    const totals = page.getByTestId('stats-totals');
    await expect.poll(() => totals.locator('thead th').allTextContents()).toContain('Blocked clicks');
    const column = (await totals.locator('thead th').allTextContents()).indexOf('Blocked clicks');
    const row = totals.locator('tbody tr').filter({ hasText: hit!.name });
    // The brand heads its row (a th), so the row's cells line up with the header's.
    await expect.poll(() => row.locator('th, td').nth(column).textContent()).toBe('1');
    await shot('42-blocked-clicks');
  });
});

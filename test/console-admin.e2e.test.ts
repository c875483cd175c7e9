import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type DemoTokens, loadDemo } from '../src/modules/catalog/demo.ts';
import { type ConsoleBrowser, closeInTurn, consoleApp, openConsole, signIn } from './console-browser.ts';
import type { TestApp } from './helpers.ts';
import { json, type LoopbackServer, loopbackServer } from './hostile-server.ts';

const BULK = 5000;
const PICK = 4101;

// The programme, admin token, audit log and template screens, and a brand picked by server search
// from an imported catalogue of 5 000 brands, against a real server on loopback.
describe('console: programmes, tokens, audit, templates and a 5 000-brand catalogue in headless Chromium', {
  timeout: 300_000,
}, () => {
  let t: TestApp;
  let demo: DemoTokens;
  let browser: Browser;
  let page: Page;
  let base: string;
  let shot: ConsoleBrowser['shot'];
  /** The operator's daily report endpoint on loopback. */
  let operator: LoopbackServer;
  /** Path of the programme's postback URL (with its current token). */
  let postbackPath: string;

  const admin = async (path: string, token = demo.adminToken) => {
    const res = await fetch(`${base}/api/admin/v1${path}`, { headers: { authorization: `Bearer ${token}` } });
    return {
      status: res.status,
      body: (await res.json()) as { data: Record<string, unknown> & Record<string, unknown>[] },
    };
  };

  /** Adds row `n` to the programme's parameter mapping: our postback field and the operator's name for it. */
  const addParameter = async (n: number, ours: string, operators: string) => {
    await page.getByRole('button', { name: 'Add our parameter' }).click();
    await page.getByLabel(`Our parameter ${n}`, { exact: true }).fill(ours);
    await page.getByLabel(`Operator parameter ${n}`, { exact: true }).fill(operators);
  };

  beforeAll(async () => {
    t = await consoleApp();
    operator = await loopbackServer();
    operator.handle((req, res) => {
      const date = new URL(req.url ?? '/', 'http://x').searchParams.get('date') ?? '';
      json(res, 200, {
        date,
        currency: 'EUR',
        rows: [{ tracker: 'e2e', clicks: 5, registrations: 2, ftds: 1 }],
        next_cursor: null,
      });
    });
    demo = await loadDemo(t.app.services);
    const [offerType] = await t.app.services.catalog.listNamedTypes('offer_types');
    const logo = {
      rectangular: 'https://cdn.example/r.png',
      square: 'https://cdn.example/s.png',
      backgroundColor: '#112233',
    };
    // Through the catalogue import, as an operator's bulk file would arrive.
    await t.app.services.catalog.importer.importCatalog({
      brands: Array.from({ length: BULK }, (_, i) => ({
        externalId: `bulk-${i + 1}`,
        name: `Bulk Brand ${String(i + 1).padStart(4, '0')}`,
        slug: `bulk-brand-${i + 1}`,
        rating: 6,
        logo,
      })),
      offers: [
        {
          externalId: `bulk-offer-${PICK}`,
          brand: `bulk-${PICK}`,
          offerType: offerType!.name,
          offerText: 'Bulk welcome 50 spins',
          bonusExpiryDate: '2099-12-31',
        },
      ],
    });
    ({ browser, page, base, shot } = await openConsole(t, 900));
    page.on('dialog', (d) => d.accept());
  }, 600_000);
  afterAll(() => closeInTurn(browser, t, operator));

  it('creates a programme with a parameter mapping: a bad name is refused, the postback URL is shown once', async () => {
    await signIn(page, base, demo.adminToken, '#/programmes', 'Programmes');
    await page.getByRole('button', { name: 'New programme' }).click();
    await page.getByLabel('Slug').fill('e2e-operator');
    await page.getByLabel('Name', { exact: true }).fill('E2E Operator');
    await addParameter(1, 'nonsense', 'txid');
    await page.getByRole('button', { name: 'Create programme' }).click();
    await page.getByRole('alert').filter({ hasText: 'is not a postback field' }).waitFor();

    await page.getByLabel('Our parameter 1', { exact: true }).fill('transaction_id');
    await page.getByRole('button', { name: 'Create programme' }).click();
    const url = (await page.getByTestId('postback-url').textContent())!;
    expect(url).toMatch(/\/api\/postback\/e2e-operator\/\S+$/);
    await page.getByRole('heading', { name: 'Programme: E2E Operator' }).waitFor();
    await shot('20-programme-created');
    await page.getByRole('button', { name: 'Done' }).click();
    expect(await page.content()).not.toContain(url);
  });

  it('edits the mapping, rotates the token (the new one shown once) and sets the report endpoint', async () => {
    await page.getByLabel('Operator parameter 1', { exact: true }).fill('tid');
    await addParameter(2, 'event', 'goal');
    await page.getByRole('button', { name: 'Save programme' }).click();
    await page.getByRole('status').filter({ hasText: 'Programme saved.' }).waitFor();
    const list = await admin('/tracking/programs?per_page=100');
    const program = (
      list.body.data as unknown as { id: number; slug: string; paramMap: object; postbackTokenHint: string }[]
    ).find((p) => p.slug === 'e2e-operator')!;
    expect(program.paramMap).toEqual({ transaction_id: 'tid', event: 'goal' });

    const hintBefore = await page.getByTestId('token-hint').textContent();
    await page.getByRole('button', { name: 'Rotate token' }).click();
    const url = (await page.getByTestId('postback-url').textContent())!;
    const token = url.split('/').at(-1)!;
    postbackPath = new URL(url).pathname;
    expect(url).toContain('/api/postback/e2e-operator/');
    await expect.poll(() => page.getByTestId('token-hint').textContent()).not.toBe(hintBefore);
    await page.getByRole('button', { name: 'Done' }).click();
    expect(await page.content()).not.toContain(token);

    await page.getByLabel('Report URL (https)').fill('https://reports.operator.example/api');
    await page.getByLabel('Credential').fill('operator-secret-key');
    await page.getByRole('button', { name: 'Save report endpoint' }).click();
    await page.getByRole('status').filter({ hasText: 'Report endpoint saved.' }).waitFor();
    await page.getByLabel(/^New credential \(set/).waitFor();
    expect(await page.getByLabel(/^New credential \(set/).inputValue()).toBe('');
    const report = await admin(`/tracking/programs/${program.id}/report`);
    expect(report.body.data).toMatchObject({ url: 'https://reports.operator.example/api', keySet: true });
    expect(JSON.stringify(report.body)).not.toContain('operator-secret-key');
    await shot('21-programme-report');
  });

  it('tests the operator report and pulls past days, with progress to done', async () => {
    await page.getByLabel('Report URL (https)').fill(operator.origin);
    await page.getByRole('button', { name: 'Save report endpoint' }).click();
    await page.getByRole('status').filter({ hasText: 'Report endpoint saved.' }).waitFor();
    await page.getByRole('button', { name: 'Test', exact: true }).click();
    const result = page.getByTestId('report-test');
    await result.getByText('1 rows in EUR').waitFor();
    await result.getByRole('row').filter({ hasText: 'e2e' }).waitFor();
    expect(await result.locator('strong').textContent()).toBe('ok');

    await page.getByRole('button', { name: 'Pull now' }).click();
    await page.getByRole('status').filter({ hasText: 'queued' }).waitFor();
    const backfill = page.getByTestId('backfills').getByRole('row').nth(1);
    await backfill.getByText('done').waitFor();
    await backfill.getByText('7 / 7').waitFor();
    await shot('25-report-pulled');
  });

  it('lists conversions with filters and CSV, and replays a rejected postback once the mapping fits', async () => {
    const send = (query: string) => fetch(`${base}${postbackPath}?${query}`);
    expect((await send('tid=e2e-tx-1&goal=registration')).status).toBe(200);
    expect((await send('txid=e2e-tx-2&goal=ftd')).status).toBeGreaterThanOrEqual(400);

    await page.getByRole('link', { name: 'Conversions' }).click();
    await page.getByRole('heading', { name: 'Conversions' }).waitFor();
    await page.getByLabel('Programme').selectOption({ label: 'E2E Operator' });
    const conversions = page.getByTestId('conversions');
    await conversions.getByText('e2e-tx-1').waitFor();
    expect(await conversions.getByText('e2e-tx-2').count()).toBe(0);
    const csvHref = (await page.getByRole('link', { name: 'Export CSV' }).getAttribute('href'))!;
    expect(csvHref).toContain('format=csv');
    const csv = await fetch(`${base}${csvHref}`, { headers: { authorization: `Bearer ${demo.adminToken}` } });
    expect(await csv.text()).toContain('e2e-tx-1');

    await page.getByRole('link', { name: 'Postback log' }).click();
    await page.getByRole('heading', { name: 'Postback log' }).waitFor();
    await page.getByLabel('Outcome').selectOption('rejected');
    const rejected = page.getByTestId('postbacks').getByRole('row').filter({ hasText: 'e2e-tx-2' });
    await rejected.waitFor();
    // The reason the operator was answered, not only its code, in the programme's own words.
    await rejected.getByText('tid: is required').waitFor();
    await page.getByLabel('Reason').fill('is required');
    await rejected.waitFor();
    const programs = (await admin('/tracking/programs?per_page=100')).body.data as unknown as {
      id: number;
      slug: string;
    }[];
    const id = programs.find((p) => p.slug === 'e2e-operator')!.id;
    const patched = await fetch(`${base}/api/admin/v1/tracking/programs/${id}`, {
      method: 'PATCH',
      headers: { authorization: `Bearer ${demo.adminToken}`, 'content-type': 'application/json' },
      body: JSON.stringify({ paramMap: { transaction_id: 'txid', event: 'goal' } }),
    });
    expect(patched.status).toBe(200);
    await rejected.getByRole('button', { name: /^Replay / }).click();
    await page
      .getByRole('status')
      .filter({ hasText: /Replayed .*: accepted/ })
      .waitFor();
    await shot('26-postback-replayed');

    await page.getByRole('link', { name: 'Conversions' }).click();
    await page.getByLabel('Programme').selectOption({ label: 'E2E Operator' });
    await page.getByTestId('conversions').getByText('e2e-tx-2').waitFor();
  });

  it('creates an admin token with scopes (shown once), which works until it is revoked', async () => {
    await page.getByRole('link', { name: 'Admin tokens' }).click();
    await page.getByRole('heading', { name: 'Admin tokens' }).waitFor();
    await page.getByLabel('Name').fill('e2e-reader');
    await page.getByLabel('tracking:read').check();
    await page.getByRole('button', { name: 'Create admin token' }).click();
    const token = (await page.getByTestId('new-admin-token').textContent())!;
    expect((await admin('/tracking/programs', token)).status).toBe(200);
    expect((await admin('/admin-tokens', token)).status).toBe(403);
    await page.getByRole('button', { name: 'Done' }).click();
    expect(await page.content()).not.toContain(token);
    const row = page.getByRole('row').filter({ hasText: 'e2e-reader' });
    await row.getByText('catalog:read, tracking:read').waitFor();

    await page.getByRole('button', { name: 'Revoke e2e-reader' }).click();
    await page.getByRole('status').filter({ hasText: 'Revoked e2e-reader.' }).waitFor();
    await row.getByText('revoked').waitFor();
    expect((await admin('/tracking/programs', token)).status).toBe(401);
    await shot('22-admin-tokens');
  });

  it('shows the token revocation and the programme changes in the audit log', async () => {
    await page.getByRole('link', { name: 'Audit log' }).click();
    await page.getByRole('heading', { name: 'Audit log' }).waitFor();
    const audit = page.getByTestId('audit');
    await audit.getByText('Admin token “demo” revoked admin token “e2e-reader”').waitFor();
    await audit.getByText('issued a new postback token for programme “E2E Operator”').waitFor();
    await audit
      .getByText(/replayed postback #\d+/)
      .first()
      .waitFor();
    await page.getByLabel('Area').selectOption('admin-tokens');
    await expect.poll(() => audit.getByText('programme').count()).toBe(0);
    await audit.getByText('created admin token “e2e-reader”').waitFor();
    await shot('23-audit');
  });

  it('lists and creates templates', async () => {
    await page.getByRole('link', { name: 'Templates' }).click();
    await page.getByRole('heading', { name: 'Templates' }).waitFor();
    await page.getByRole('heading', { name: /^Template: / }).waitFor();
    // Hold the product-type list back: until it arrives there is no type to send, so the button waits
    // (a click before it loaded once earned a 422 and left the new template uncreated).
    let release = () => {};
    const held = new Promise<void>((resolve) => {
      release = resolve;
    });
    const typesPath = '**/api/admin/v1/product-types*';
    await page.route(typesPath, async (route) => {
      await held;
      await route.continue();
    });
    await page.getByRole('button', { name: 'New template' }).click();
    await page.getByLabel('Name').fill('E2E weekly picks');
    await page.getByLabel('External id (optional)').fill('e2e-weekly');
    const create = page.getByRole('button', { name: 'Create template' });
    await expect.poll(() => create.isDisabled()).toBe(true);
    release();
    await expect.poll(() => create.isEnabled()).toBe(true);
    await page.unroute(typesPath);
    await create.click();
    await page.getByRole('heading', { name: 'Template: E2E weekly picks' }).waitFor();
    await page.getByLabel('Search templates').fill('WEEKLY');
    await expect
      .poll(() => page.locator('.picklist button').allTextContents())
      .toEqual([expect.stringContaining('E2E weekly picks')]);
  });

  it(`finds brand ${PICK} of ${BULK} by search on the Brands screen and picks it in the toplist editor`, async () => {
    await page.getByRole('link', { name: 'Brands and offers' }).click();
    await page
      .getByRole('navigation', { name: 'Brand pages' })
      .getByText(/of \d+ · \d+ in all/)
      .waitFor();
    await page.getByLabel('Search brands').fill(`bulk-brand-${PICK}`);
    await page.getByRole('button', { name: `Bulk Brand ${PICK}` }).click();
    await page.getByRole('heading', { name: `Brand: Bulk Brand ${PICK}` }).waitFor();

    await page.getByRole('link', { name: 'Toplists' }).click();
    await page
      .getByRole('button', { name: /^Edit Best Online Casinos/ })
      .first()
      .click();
    await page.getByRole('heading', { name: 'Draft items' }).waitFor();
    await page.getByLabel('Brand at position 1', { exact: true }).fill(`brand ${PICK}`);
    await page
      .getByRole('list', { name: 'Matches for Brand at position 1' })
      .getByRole('button', { name: `Bulk Brand ${PICK}` })
      .click();
    await page.locator('ol.items > li').first().getByText(`Bulk Brand ${PICK}`).waitFor();
    await page.locator('ol.items > li').first().getByText('Bulk welcome 50 spins').waitFor();
    await shot('24-brand-picked');
    await page.getByRole('button', { name: 'Save draft' }).click();
    await page.getByRole('status').filter({ hasText: 'Draft saved.' }).waitFor();
    const picked = await admin(`/brands?q=bulk-brand-${PICK}`);
    const brandId = (picked.body.data as unknown as { id: number; slug: string }[]).find(
      (b) => b.slug === `bulk-brand-${PICK}`,
    )!.id;
    const toplists = await admin('/toplists?q=best-casinos&per_page=100');
    const ids = (toplists.body.data as unknown as { id: number }[]).map((x) => x.id);
    const firsts = await Promise.all(
      ids.map(async (id) => {
        const d = (await admin(`/toplists/${id}`)).body.data as unknown as {
          items: { brandId: number; position: number }[];
        };
        return d.items.find((i) => i.position === 1)?.brandId;
      }),
    );
    expect(firsts).toContain(brandId);
  });
  it('shows the suggested order beside the draft, as the API ranks it, and applies it to the draft', async () => {
    await page.getByRole('button', { name: 'Suggest' }).click();
    await page.getByTestId('suggest-summary').waitFor();
    const shown = (await page.getByTestId('suggested-order').getByRole('row').allTextContents()).slice(1);
    // The editor's toplist is the one whose suggestion, as the API ranks it, is the table shown.
    const toplists = await admin('/toplists?q=best-casinos&per_page=100');
    type Suggested = { items: { brandName: string; brandId: number; suggestedPosition: number }[] };
    const ranked = (x: Suggested) => [...x.items].sort((a, b) => a.suggestedPosition - b.suggestedPosition);
    let toplistId: number | undefined;
    let suggested: Suggested | undefined;
    for (const { id } of toplists.body.data as unknown as { id: number }[]) {
      const answer = (await admin(`/toplists/${id}/suggested-order?days=30`)).body
        .data as unknown as Suggested;
      const names = ranked(answer).map((i) => i.brandName);
      if (names.length === shown.length && names.every((n, i) => shown[i]!.includes(n))) {
        toplistId = id;
        suggested = answer;
        break;
      }
    }
    expect(toplistId, shown.join(' | ')).toBeDefined();

    await page.getByRole('button', { name: 'Apply to draft' }).click();
    await page.getByRole('status').filter({ hasText: 'Suggested order written to the draft' }).waitFor();
    const draft = (await admin(`/toplists/${toplistId}`)).body.data as unknown as {
      items: { brandId: number; position: number }[];
    };
    const order = ranked(suggested!)
      .map((i) => i.brandId)
      .filter((id) => draft.items.some((d) => d.brandId === id));
    const saved = [...draft.items].sort((a, b) => a.position - b.position).map((i) => i.brandId);
    expect(saved.slice(0, order.length)).toEqual(order);
    await shot('25-suggested-order');
  });

  it('searches programmes by name or slug on the server', async () => {
    await page.getByRole('link', { name: 'Programmes' }).click();
    await page.getByLabel('Search programmes').fill('zz-no-such-programme');
    await page.getByText('No programmes yet.').waitFor();
    const all = (await admin('/tracking/programs?per_page=100')).body.data as unknown as {
      name: string;
      slug: string;
    }[];
    const one = all[0]!;
    await page.getByLabel('Search programmes').fill(one.slug);
    await page
      .getByRole('button', { name: new RegExp(one.name) })
      .first()
      .waitFor();
    const searched = await admin(`/tracking/programs?q=${encodeURIComponent(one.slug)}`);
    expect((searched.body.data as unknown as { slug: string }[]).map((p) => p.slug)).toContain(one.slug);
  });
});

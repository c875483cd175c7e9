import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { OutboundClient } from '../src/lib/outbound.ts';
import { sealerFromConfig } from '../src/lib/seal.ts';
import { type DemoTokens, loadDemo } from '../src/modules/catalog/demo.ts';
import { loadPages, type Page } from '../src/modules/docs/pages.ts';
import { AggregateRepository } from '../src/modules/reporting/aggregate-repository.ts';
import { OperatorAggregates } from '../src/modules/reporting/aggregates.ts';
import { type ReferenceServer, referenceServer } from './adserver-fixture.ts';
import { type DocExample, extractExamples, headerLines, mismatches } from './doc-examples.ts';
import { DB_KIND, type TestApp, testApp } from './helpers.ts';

// Every `http` example of every page runs, in navigation order, against the real server on the
// other side of it:
// - pages where you call Podium run against one live Podium holding the demo dataset (pages may
//   build on earlier writes);
// - the ad-server contract (Podium calls your ad server) runs against the reference ad server
//   of packages/adserver-kit;
// - the operator daily aggregate (Podium calls the operator) serves the page's answer from a
//   loopback operator, lets Podium's own pull code fetch it, and checks that the request Podium
//   sent is the one the page shows.
// Pages without an HTTP example say why below; a new page without examples fails until it does.
// The pages' TypeScript examples run in docs-ts-examples.test.ts.
const WITHOUT_HTTP_EXAMPLES: Record<string, string> = {
  index: 'navigation only; its list of pages is generated from the front matter (docs-server.test.ts)',
  configuration: 'generated from the settings table by `npm run docs:config`; config.test.ts fails on drift',
  'toplist-client': 'a client library page: its TypeScript examples run in docs-ts-examples.test.ts',
};

const pages = loadPages();
const SECRET_KEYS = [{ version: 1, key: Buffer.alloc(32, 7) }];

/** Replaces each placeholder of the pages with the value of this run. */
const substitute = (s: string, values: Map<string, string>) => {
  let out = s;
  for (const [from, to] of values) out = out.replaceAll(from, to);
  return out;
};

interface Answer {
  status: number;
  headers: Record<string, string | string[] | number | undefined>;
  body: string;
}

/** Checks one answer against the response block the page shows after the request. */
function check(ex: DocExample, where: string, res: Answer, values: Map<string, string>): void {
  expect(ex.expect, `${where}: no response block follows`).toBeDefined();
  const want = { ...ex.expect!, body: substitute(ex.expect!.body, values) };
  expect(res.status, `${where}: ${res.body.slice(0, 300)}`).toBe(want.status);
  if (want.kind === 'json') {
    expect(mismatches(JSON.parse(want.body), JSON.parse(res.body), '$', want.shape), where).toEqual([]);
  } else if (want.kind === 'headers') {
    for (const [name, value] of headerLines(want.body))
      expect(res.headers[name], `${where}: ${name}`).toBe(value);
  } else {
    expect(res.body, where).toContain(want.body.trim());
  }
}

describe(`documentation examples (${DB_KIND})`, () => {
  let t: TestApp;
  let demo: DemoTokens;
  let ref: ReferenceServer;
  const values = new Map<string, string>();

  beforeAll(async () => {
    t = await testApp({ secretKeys: SECRET_KEYS });
    demo = await loadDemo(t.app.services);
    values.set('pds_YOUR_SITE_TOKEN', demo.siteTokens[0]!.token);
    values.set('pda_YOUR_ADMIN_TOKEN', demo.adminToken);
    // A tracking link of the demo (its slug stands for the pages' example slug and pixel code),
    // and a programme owning its tracker, as an affiliate manager would set it up.
    const [link] = await t.db.query<{ slug: string; tracker_id: number }>(
      'SELECT slug, tracker_id FROM tracking_links WHERE toplist_id IS NOT NULL ORDER BY id LIMIT 1',
    );
    const program = await t.app.services.tracking.createProgram({
      slug: 'blaze-spins',
      name: 'Blaze Spins',
      affiliateId: 'podium-42',
      currency: 'EUR',
      trackerIds: [link!.tracker_id],
    });
    values.set('_FdzMmNZrGqB', link!.slug);
    values.set('bnr-casino-top-728', link!.slug);
    values.set('pdp_YOUR_PROGRAM_SECRET', program.postbackToken);
    // The pages' click id is a real click's id here, so postbacks are attributed as shown.
    const click = await t.app.inject({ url: `/go/${link!.slug}` });
    const clickId = /[0-9A-HJKMNP-TV-Z]{26}/.exec(click.headers.location as string)?.[0];
    expect(clickId, String(click.headers.location)).toBeDefined();
    values.set('01JD3Q8X9R6T2V4W5Y7Z8A9B0C', clickId!);

    ref = await referenceServer({
      account: { name: 'Casino Guide Media', trafficSeed: 1042 },
      now: () => new Date('2027-01-05T10:00:00Z'),
    });
    values.set('YOUR_AD_SERVER_KEY', ref.apiKey);
  }, 180_000);
  afterAll(async () => {
    await ref?.close();
    await t?.close();
  });

  it('every page has HTTP examples, or says why not', () => {
    for (const page of pages) {
      const n = extractExamples(page.body).length;
      if (page.slug in WITHOUT_HTTP_EXAMPLES) expect(n, `${page.slug} now has examples: run them`).toBe(0);
      else expect(n, `${page.slug}.md has no http example`).toBeGreaterThan(0);
    }
    for (const slug of Object.keys(WITHOUT_HTTP_EXAMPLES)) expect(pages.map((p) => p.slug)).toContain(slug);
  });

  /** Runs a page's examples against Podium, in order. */
  async function againstPodium(page: Page): Promise<void> {
    for (const ex of extractExamples(page.body)) {
      const where = `${page.slug}.md body line ${ex.line}: ${ex.method} ${ex.url}`;
      const headers = Object.fromEntries(
        Object.entries(ex.headers).map(([k, v]) => [k, substitute(v, values)]),
      );
      const res = await t.app.inject({
        method: ex.method as 'GET',
        url: substitute(ex.url, values),
        headers,
        ...(ex.body !== undefined ? { payload: substitute(ex.body, values) } : {}),
      });
      check(ex, where, { status: res.statusCode, headers: res.headers, body: res.body }, values);
    }
  }

  /** Runs the ad-server contract against the reference ad server, over HTTP. */
  async function againstReferenceAdServer(page: Page): Promise<void> {
    const origin = new URL(ref.url).origin;
    for (const ex of extractExamples(page.body)) {
      const where = `${page.slug}.md body line ${ex.line}: ${ex.method} ${ex.url}`;
      const headers = Object.fromEntries(
        Object.entries(ex.headers).map(([k, v]) => [k, substitute(v, values)]),
      );
      const res = await fetch(`${origin}${substitute(ex.url, values)}`, {
        method: ex.method,
        headers,
        ...(ex.body !== undefined ? { body: substitute(ex.body, values) } : {}),
      });
      const body = await res.text();
      check(ex, where, { status: res.status, headers: Object.fromEntries(res.headers), body }, values);
      if (ex.url.endsWith('/orders') && res.status === 201) {
        // The page's later examples use the ids this answer returned; ad-ops then take the draft live.
        const order = JSON.parse(body) as { order_id: string; line_items: { line_item_id: string }[] };
        values.set('li_cF0Oj4yRNpFH', order.line_items[0]!.line_item_id);
        expect(await ref.activate(order.order_id)).toBe(true);
      }
    }
  }

  /** Serves the page's operator answers from loopback and lets Podium's pull code fetch them. */
  async function operatorAggregate(page: Page): Promise<void> {
    const [ex, ...more] = extractExamples(page.body);
    expect(more, 'one request example').toEqual([]);
    const mappedAnswer = /an operator answering\s+```json\n([\s\S]*?)```/.exec(page.body)?.[1];
    const mapping = /the mapping is\s+`(\{[^`]+\})`/.exec(page.body)?.[1];
    expect(mappedAnswer && mapping, 'the mapping example and its mapping').toBeTruthy();
    const seen: { method: string; url: string; headers: http.IncomingHttpHeaders }[] = [];
    let answer = ex!.expect!.body;
    const op = http.createServer((req, res) => {
      seen.push({ method: req.method!, url: req.url!, headers: req.headers });
      res.writeHead(ex!.expect!.status, { 'content-type': 'application/json' }).end(answer);
    });
    await new Promise<void>((ok) => op.listen(0, '127.0.0.1', ok));
    const outbound = new OutboundClient({ testOnly: { allowHttp: true, allowAddresses: ['127.0.0.1'] } });
    try {
      const aggregates = new OperatorAggregates(
        new AggregateRepository(t.db),
        sealerFromConfig(t.config),
        outbound,
        t.config,
        () => new Date(),
      );
      const programId = await aggregates.programIdBySlug('blaze-spins');
      const origin = `http://127.0.0.1:${(op.address() as AddressInfo).port}`;
      await aggregates.setReport(programId, { url: origin, key: 'OPERATOR_REPORT_KEY' });
      const day = new URL(ex!.url, origin).searchParams.get('date')!;
      const pulled = await aggregates.pullDay(programId, day, 'backfill');
      expect(pulled, JSON.stringify(pulled)).toMatchObject({ status: 'ok', rows: 1 });
      // The request Podium sent is the one the page shows.
      expect(seen[0]).toMatchObject({ method: ex!.method, url: ex!.url });
      for (const [name, value] of Object.entries(ex!.headers))
        expect(seen[0]!.headers[name], name).toBe(value);
      const [row] = await aggregates.aggregates(programId, day, day);
      expect(row).toMatchObject({ tracker: 'trk-blaze-spins-1-1', clicks: 412, commission: '615.5000' });

      // The differently shaped answer, read through the documented mapping.
      answer = mappedAnswer!;
      await aggregates.setReport(programId, { url: origin, mapping: JSON.parse(mapping!) });
      const mapped = await aggregates.pullDay(programId, '2026-11-22', 'backfill');
      expect(mapped, JSON.stringify(mapped)).toMatchObject({ status: 'ok', rows: 1 });
      const [m] = await aggregates.aggregates(programId, '2026-11-22', '2026-11-22');
      expect(m).toMatchObject({ tracker: 'trk-9', clicks: 12, ftds: 2, commission: '30.0000' });
    } finally {
      await outbound.close();
      op.close();
    }
  }

  const RUNNERS: Record<string, (page: Page) => Promise<void>> = {
    'adserver-contract': againstReferenceAdServer,
    'operator-aggregate': operatorAggregate,
  };

  it.each(pages.filter((p) => !(p.slug in WITHOUT_HTTP_EXAMPLES)).map((p) => [p.slug, p] as const))(
    '%s',
    async (slug, page) => (RUNNERS[slug] ?? againstPodium)(page),
    120_000,
  );

  it('the toplist API sends no CORS headers, the docs do', async () => {
    const origin = 'https://evil.example';
    const auth = { authorization: `Bearer ${demo.siteTokens[0]!.token}`, origin };
    const get = await t.app.inject({ url: '/api/v1/toplists?per_page=1', headers: auth });
    expect(get.statusCode).toBe(200);
    expect(Object.keys(get.headers).filter((h) => h.startsWith('access-control-'))).toEqual([]);
    const pre = await t.app.inject({
      method: 'OPTIONS',
      url: '/api/v1/toplists',
      headers: {
        origin,
        'access-control-request-method': 'GET',
        'access-control-request-headers': 'authorization',
      },
    });
    expect(pre.statusCode).toBe(404);
    expect(Object.keys(pre.headers).filter((h) => h.startsWith('access-control-'))).toEqual([]);
    const docs = await t.app.inject({ url: '/docs/llms.txt', headers: { origin } });
    expect(docs.headers['access-control-allow-origin']).toBe('*');
  });
});

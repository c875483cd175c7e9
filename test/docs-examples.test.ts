import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type DemoTokens, loadDemo } from '../src/modules/catalog/demo.ts';
import { loadPages } from '../src/modules/docs/pages.ts';
import { extractExamples, mismatches } from './doc-examples.ts';
import { DB_KIND, type TestApp, testApp } from './helpers.ts';

// Pages marked `examples: executed` run every request example against a live app holding the
// demo dataset, in navigation order, one app for all (pages may build on earlier writes).
const pages = loadPages().filter((p) => p.examples === 'executed');

describe(`documentation examples (${DB_KIND})`, () => {
  let t: TestApp;
  let demo: DemoTokens;

  beforeAll(async () => {
    t = await testApp();
    demo = await loadDemo(t.app.services);
  }, 180_000);
  afterAll(() => t.close());

  const substitute = (s: string) =>
    s
      .replaceAll('pds_YOUR_SITE_TOKEN', demo.siteTokens[0]!.token)
      .replaceAll('pda_YOUR_ADMIN_TOKEN', demo.adminToken);

  it.each(pages.map((p) => [p.slug, p] as const))('%s', async (_slug, page) => {
    const examples = extractExamples(page.body);
    expect(examples.length, 'an executed page has examples').toBeGreaterThan(0);
    for (const ex of examples) {
      const where = `${page.slug}.md body line ${ex.line}: ${ex.method} ${ex.url}`;
      expect(ex.expect, `${where}: no response block follows`).toBeDefined();
      const headers = Object.fromEntries(Object.entries(ex.headers).map(([k, v]) => [k, substitute(v)]));
      const res = await t.app.inject({
        method: ex.method as 'GET',
        url: ex.url,
        headers,
        ...(ex.body !== undefined ? { payload: substitute(ex.body) } : {}),
      });
      expect(res.statusCode, `${where}: ${res.body.slice(0, 300)}`).toBe(ex.expect!.status);
      if (ex.expect!.kind === 'json') {
        expect(mismatches(JSON.parse(ex.expect!.body), res.json()), where).toEqual([]);
      } else {
        expect(res.body, where).toContain(ex.expect!.body.trim());
      }
    }
  });

  it('every example on a contract page is well formed (request line and expected status)', () => {
    for (const page of loadPages().filter((p) => p.examples === 'contract')) {
      for (const ex of extractExamples(page.body)) {
        expect(ex.expect, `${page.slug}.md line ${ex.line}`).toBeDefined();
        if (ex.expect!.kind === 'json' && ex.expect!.body.trim())
          expect(() => JSON.parse(ex.expect!.body)).not.toThrow();
      }
    }
  });
});

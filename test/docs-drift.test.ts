import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ERRORS } from '../src/lib/errors.ts';
import { DEFAULT_PER_PAGE, MAX_PER_PAGE } from '../src/lib/paging.ts';
import { loadPages, type Page } from '../src/modules/docs/pages.ts';
import { DOCS_BLOCK_MS, DOCS_BODY_LIMIT, DOCS_RATE_WINDOW_MS } from '../src/modules/docs/routes.ts';
import { MAX_QUERY_LENGTH, MAX_RESULTS } from '../src/modules/docs/search.ts';
import { POSTBACK_BODY_LIMIT } from '../src/modules/tracking/routes.ts';
import { GoQuery } from '../src/modules/tracking/schemas.ts';
import { type TestApp, testApp } from './helpers.ts';

// The pages must not contradict the code: every status/code pair they state is the error
// catalog's, every route they list answers, every public toplist route is listed, and the
// limits they quote are the constants the code enforces.

const pages = loadPages();
const page = (slug: string): Page => pages.find((p) => p.slug === slug)!;
/** Pages describing a server someone else runs (its codes and routes are theirs, not Podium's). */
const COUNTERPART = new Set(['adserver-contract', 'operator-aggregate']);
const podiumPages = pages.filter((p) => !COUNTERPART.has(p.slug));

/** Markdown table rows as arrays of cell texts. */
const tableRows = (md: string): string[][] =>
  md
    .split('\n')
    .filter((l) => /^\s*\|.*\|\s*$/.test(l) && !/^\s*\|[\s:|-]+\|\s*$/.test(l))
    .map((l) =>
      l
        .trim()
        .slice(1, -1)
        .split(/(?<!\\)\|/)
        .map((c) => c.trim()),
    );

describe('docs agree with the code', () => {
  it('every status and error code a Podium page pairs is the error catalog’s pair', () => {
    const codes = ERRORS as Record<string, number>;
    let checked = 0;
    for (const p of podiumPages) {
      // Error tables: a row with a 3-digit status cell and a `code` cell.
      for (const row of tableRows(p.body)) {
        const status = row.map((c) => /^`?(\d{3})`?$/.exec(c)?.[1]).find(Boolean);
        if (!status) continue;
        for (const cell of row)
          for (const [, code] of cell.matchAll(/`"?([a-z]+_[a-z_]+|[a-z]+)"?`/g))
            if (code! in codes) {
              expect(codes[code!], `${p.slug}: | ${row.join(' | ')} |`).toBe(Number(status));
              checked++;
            }
      }
      // Prose such as `401 unauthorized`, `422 validation_failed` or `404` with code `not_found`.
      for (const [text, status, code] of p.body.matchAll(/`?(\d{3})`? `?([a-z]+(?:_[a-z]+)*)`?/g))
        if (code! in codes) {
          expect(codes[code!], `${p.slug}: ${text}`).toBe(Number(status));
          checked++;
        }
    }
    expect(checked).toBeGreaterThan(15);
  });

  describe('routes', () => {
    let t: TestApp;
    beforeAll(async () => {
      t = await testApp();
    }, 120_000);
    afterAll(() => t.close());

    /** Base of a page's relative paths. */
    const BASES: Record<string, string> = {
      'toplist-api': '/api/v1',
      'geo-families': '/api/v1',
      'getting-started': '/api/v1',
      'toplist-client': '/api/v1',
      'admin-api': '/api/admin/v1',
      compliance: '/api/admin/v1',
      'adserver-connections': '/api/admin/v1',
      marketplace: '/api/admin/v1',
      'affiliate-tracking': '/api/admin/v1',
      webhooks: '/api/admin/v1',
      people: '/api/admin/v1',
    };
    const ROOTED = /^\/(api|go|imp|ad|creatives|docs|adcp|healthz|readyz|metrics)(\/|$|\.)/;

    const ROUTE = /`((?:GET|POST|PUT|PATCH|DELETE)(?:[/|](?:GET|POST|PUT|PATCH|DELETE))*),? (\/[^`\s]*)`/g;
    // Routes of the servers Podium calls (ad servers, operators), quoted on Podium's pages too.
    const theirs = new Set(
      [...COUNTERPART].flatMap((slug) =>
        [...page(slug).body.matchAll(ROUTE)].map((m) => m[2]!.split('?')[0]!),
      ),
    );

    it('every route a Podium page lists exists (the router matches it)', async () => {
      let checked = 0;
      for (const p of podiumPages) {
        for (const [, methods, rawPath] of p.body.matchAll(ROUTE)) {
          const path = rawPath!.split('?')[0]!;
          if (path.includes('…') || theirs.has(path)) continue;
          const url = (ROOTED.test(path) ? path : `${BASES[p.slug] ?? ''}${path}`).replace(/\{[^}]+\}/g, '1');
          for (const method of methods!.split(/[/|]/)) {
            const res = await t.app.inject({
              method: method as 'GET',
              url,
              remoteAddress: `10.1.${checked >> 8}.${checked & 255}`,
            });
            const unrouted = res.statusCode === 404 && res.body.includes('No route for');
            expect(unrouted, `${p.slug}: ${method} ${path} → ${url}`).toBe(false);
            checked++;
          }
        }
      }
      expect(checked).toBeGreaterThan(40);
    });

    it('the toplist API page lists every public route of the OpenAPI document', async () => {
      const listed = page('toplist-api').body;
      const doc = (await t.app.inject({ method: 'GET', url: '/api/v1/openapi.json' })).json();
      const paths = Object.keys(doc.paths as object);
      expect(paths.length).toBeGreaterThan(3);
      for (const path of paths) expect(listed, path).toContain(`\`GET ${path}\``);
    });
  });

  it('quotes the limits the code enforces', () => {
    const docsServer = page('docs-server').body;
    expect(docsServer).toContain(`${DOCS_BODY_LIMIT} bytes`);
    expect(docsServer).toContain(`8 KB (${DOCS_BODY_LIMIT} bytes)`);
    expect(docsServer).toMatch(new RegExp(`\`search_docs\` query \\| ${MAX_QUERY_LENGTH} characters`));
    expect(docsServer).toContain(`\`search_docs\` results | ${MAX_RESULTS} sections`);
    expect(docsServer).toContain(`About 60 in ${DOCS_RATE_WINDOW_MS / 1000} seconds`);
    expect(docsServer).toContain(`blocked for ${DOCS_BLOCK_MS / 1000} seconds`);
    expect(docsServer).toContain(`1–${MAX_QUERY_LENGTH} characters`);

    const toplistApi = page('toplist-api').body;
    expect(toplistApi).toContain(`| \`per_page\` | integer 1–${MAX_PER_PAGE} | \`${DEFAULT_PER_PAGE}\` |`);
    expect(page('admin-api').body).toContain(`\`per_page\` (1–${MAX_PER_PAGE}, default ${DEFAULT_PER_PAGE})`);

    expect(page('postbacks').body).toContain(`Body over ${POSTBACK_BODY_LIMIT / 1024} KB`);
    expect(page('affiliate-tracking').body).toContain(`a body over ${POSTBACK_BODY_LIMIT / 1024} KB`);
    expect(page('affiliate-tracking').body).toContain(
      `up to ${GoQuery.properties.sub_id.maxLength} characters`,
    );
  });

  it('the home page lists every page, from the front matter', () => {
    const home = page('index');
    for (const p of pages.filter((x) => x.slug !== 'index')) {
      expect(home.body).toContain(`| [${p.title}](${p.slug}) |`);
      expect(home.source).toContain(p.summary);
    }
  });
});

import { describe, expect, it } from 'vitest';
import { evaluate, QUESTIONS } from '../bench/docs-search.ts';
import { loadPages } from '../src/modules/docs/pages.ts';
import { tokenize } from '../src/modules/docs/search.ts';
import { splitSections } from '../src/modules/docs/sections.ts';
import { DocsService } from '../src/modules/docs/service.ts';

describe('docs search: sections, identifiers, snippets', () => {
  const docs = new DocsService(loadPages(), '/docs', 'https://podium.test');
  const sectionPaths = new Set(
    docs.pages.flatMap((p) =>
      splitSections(p).map((s) => `${docs.pathOf(p)}${s.anchor ? `#${s.anchor}` : ''}`),
    ),
  );

  it('the evaluation set has 40+ questions from four personas, each naming sections that exist', () => {
    expect(QUESTIONS.length).toBeGreaterThanOrEqual(40);
    expect(new Set(QUESTIONS.map((q) => q.persona))).toEqual(
      new Set(['publisher-developer', 'affiliate-manager', 'publisher-ad-ops', 'operator']),
    );
    for (const q of QUESTIONS) for (const path of q.expect) expect(sectionPaths, q.q).toContain(path);
  });

  it('answers at least 95 % of the evaluation questions with an expected section in the top 3', () => {
    const report = evaluate(docs);
    expect(report.recall_at_3, JSON.stringify(report.misses_at_3, null, 2)).toBeGreaterThanOrEqual(0.95);
  });

  it('each result is a section: path#anchor, "Page › heading" title, its page, a snippet with the matched term', () => {
    const [top] = docs.find('forecast_unsupported');
    expect(top).toMatchObject({
      path: '/docs/adserver-contract#post-forecast',
      title: 'Ad-server contract › POST /forecast',
      page: '/docs/adserver-contract',
      product: 'adserver',
      direction: 'we-call-you',
    });
    expect(top!.snippet).toContain('forecast_unsupported');
    const nested = docs
      .find('landing url placeholders')
      .find((h) => h.path.endsWith('#landing-url-placeholders'));
    expect(nested?.title).toBe(
      'Tracking links and impression pixels › Click redirect: GET /go/{slug} › Landing URL placeholders',
    );
  });

  it('identifiers match whole and by their parts, and the snippet shows them', () => {
    expect(tokenize('Send Idempotency-Key to /imp/{code}; forecast_unsupported, coveredCountries')).toEqual(
      expect.arrayContaining([
        'Idempotency-Key',
        'Idempotency',
        'Key',
        '/imp/{code}',
        'imp',
        'code',
        'forecast_unsupported',
        'forecast',
        'unsupported',
        'coveredCountries',
        'covered',
        'Countries',
      ]),
    );
    // The first hit shows the identifier as asked; every hit of the top 3 shows a part of it.
    for (const [query, whole, parts] of [
      ['forecast_unsupported', 'forecast_unsupported', ['forecast', 'unsupported']],
      ['unsupported', 'unsupported', ['unsupported']],
      ['Idempotency-Key', 'idempotency-key', ['idempotency', 'key']],
      ['idempotency', 'idempotency', ['idempotency']],
      ['/imp/{code}', '/imp/{code}', ['imp', 'code']],
      ['covered countries', 'covered', ['covered', 'countries']],
    ] as const) {
      const hits = docs.find(query);
      expect(hits[0]?.snippet.toLowerCase(), query).toContain(whole);
      for (const h of hits.slice(0, 3)) {
        const shown = h.snippet.toLowerCase();
        expect(
          parts.some((p) => shown.includes(p)),
          `${query} → ${h.path}: ${h.snippet}`,
        ).toBe(true);
      }
    }
    expect(docs.find('/imp/{code}')[0]!.path).toMatch(/#impression-pixel-get-imp-code$/);
  });

  it('ignores common words, returns at most 10 sections, counts the query in characters', () => {
    expect(docs.find('the and of what how')).toEqual([]);
    expect(docs.find('toplist token site page api').length).toBe(10);
    // 200 emoji are 400 UTF-16 units but 200 characters: accepted; 201 characters are refused.
    expect(() => docs.find('🎰'.repeat(200))).not.toThrow();
    expect(() => docs.find(`${'🎰'.repeat(200)}x`)).toThrow(RangeError);
    expect(() => docs.find('x'.repeat(201))).toThrow(RangeError);
  });

  it('reads a section by its path#anchor, the whole page by its path, nothing for an unknown anchor', () => {
    const section = docs.read('/docs/toplist-api#errors')!;
    expect(section).toMatch(
      /^<!-- Toplist API › Errors · https:\/\/podium\.test\/docs\/toplist-api#errors -->\n\n## Errors\n/,
    );
    expect(section).not.toContain('## Caching and ETag');
    expect(docs.read('/docs/toplist-api')).toBe(docs.byAddress('/docs/toplist-api')!.source);
    expect(docs.read('/docs/toplist-api#nope')).toBeUndefined();
    expect(docs.read('/docs/toplist-api#')).toBeUndefined();
    expect(docs.read('/docs/nope#errors')).toBeUndefined();
  });
});

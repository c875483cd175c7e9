import { describe, expect, it } from 'vitest';
import { evaluate, FRESH, HELD_OUT, QUESTIONS } from '../bench/docs-search.ts';
import { loadPages } from '../src/modules/docs/pages.ts';
import { plainText, tokenize } from '../src/modules/docs/search.ts';
import { splitSections } from '../src/modules/docs/sections.ts';
import { DocsService } from '../src/modules/docs/service.ts';
import { spellSignals } from '../src/modules/docs/vocabulary.ts';

describe('docs search: sections, identifiers, snippets', () => {
  const docs = new DocsService(loadPages(), '/docs', 'https://podium.test');
  const sectionPaths = new Set(
    docs.pages.flatMap((p) => splitSections(p).map((s) => `${docs.pathOf(p)}#${s.anchor}`)),
  );

  it('the evaluation set has 150+ questions in two halves from four personas, each naming sections that exist', () => {
    expect(QUESTIONS.length + HELD_OUT.length).toBeGreaterThanOrEqual(150);
    expect(HELD_OUT.length).toBeGreaterThanOrEqual(75);
    const personas = new Set(['publisher-developer', 'affiliate-manager', 'publisher-ad-ops', 'operator']);
    for (const half of [QUESTIONS, HELD_OUT]) expect(new Set(half.map((q) => q.persona))).toEqual(personas);
    const asked = new Set(QUESTIONS.map((q) => q.q));
    for (const q of HELD_OUT) expect(asked, 'a held-out question is also a tuning one').not.toContain(q.q);
    for (const q of [...QUESTIONS, ...HELD_OUT, ...FRESH])
      for (const path of q.expect) expect(sectionPaths, q.q).toContain(path);
    expect(FRESH.length).toBeGreaterThanOrEqual(20);
    for (const q of FRESH) expect(asked, 'a fresh question is also a tuning one').not.toContain(q.q);
  });

  // Floors just below the figures measured when the ranking or the docs last changed (CHANGELOG).
  // The held-out half is below its goal (GOALS: 95 % / 80 %) since the player data, compliance and
  // copy sections and their 24 held-out questions (109 in all: 94.5 % / 78.9 %; the 85 earlier
  // ones reached 95.3 % / 80.0 % before those pages); these only go up.
  it('ranks an expected section in the top 3 and first, on the held-out half and the tuning half', () => {
    const held = evaluate(docs, HELD_OUT);
    expect(held.recall_at_3, JSON.stringify(held.misses_at_3, null, 2)).toBeGreaterThanOrEqual(0.94);
    expect(held.recall_at_1).toBeGreaterThanOrEqual(0.78);
    // The 75 tuning questions these floors were set on; the 20 after them came later, about the
    // people, creatives and marketplace pages, and are harder (the whole half has floors of its own).
    const tuning = evaluate(docs, QUESTIONS.slice(0, 75));
    expect(tuning.recall_at_3, JSON.stringify(tuning.misses_at_3, null, 2)).toBeGreaterThanOrEqual(0.94);
    expect(tuning.recall_at_1).toBeGreaterThanOrEqual(0.8);
    const whole = evaluate(docs, QUESTIONS);
    expect(whole.recall_at_3, JSON.stringify(whole.misses_at_3, null, 2)).toBeGreaterThanOrEqual(0.93);
    expect(whole.recall_at_1).toBeGreaterThanOrEqual(0.75);
  });

  // Floors just below its figures (CHANGELOG has the figures from before its misses were read).
  it('ranks an expected section in the top 3 and first on the fresh questions', () => {
    const fresh = evaluate(docs, FRESH);
    expect(fresh.recall_at_3, JSON.stringify(fresh.misses_at_3, null, 2)).toBeGreaterThanOrEqual(0.8);
    expect(fresh.recall_at_1).toBeGreaterThanOrEqual(0.56);
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
    // The first hit shows the identifier as asked; every hit of the top 3 shows a part of it (or
    // the docs' word it is an alias for: idempotency → duplicate).
    for (const [query, whole, parts] of [
      ['forecast_unsupported', 'forecast_unsupported', ['forecast', 'unsupported']],
      ['unsupported', 'unsupported', ['unsupported']],
      ['Idempotency-Key', 'idempotency-key', ['idempotency', 'key']],
      ['idempotency', 'idempotency', ['idempotency', 'duplicate']],
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

describe('docs search: wording users write', () => {
  const docs = new DocsService(loadPages(), '/docs', 'https://podium.test');
  const top = (q: string, n = 3) =>
    docs
      .find(q)
      .slice(0, n)
      .map((h) => h.path);

  it('treats the product name as noise: "Podium" in a question changes nothing', () => {
    for (const q of ['shutdown SIGTERM', 'readiness probe', 'rotate the secret key'])
      expect(top(`How does Podium handle ${q}`, 5)).toEqual(top(`How does handle ${q}`, 5));
  });

  it('matches word forms by their stem and the docs own words for a signal', () => {
    expect(top('paginated toplists')).toContain(
      '/docs/toplist-api#order-pagination-and-the-per-page-maximum',
    );
    expect(top('kill -TERM the process')).toContain('/docs/operations#shutdown');
    expect(top('revoking a site token')).toContain('/docs/admin-api#site-tokens');
  });

  it('reads logging in as the docs sign-in, and leaves logs alone', () => {
    for (const q of ['log in to the console', 'login to the console', 'logged in to the console'])
      expect(top(q, 5), q).toEqual(top('sign-in to the console', 5));
    expect(top('log out everywhere', 1)).toEqual(['/docs/people#sessions-and-suspension']);
    expect(spellSignals('log in, logged on, login, Log-in; log files, logging, logs; log out')).toBe(
      'sign-in, sign-in, sign-in, sign-in; log files, logging, logs; logout',
    );
  });

  it('keeps product names and token prefixes whole, in terms and in snippets', () => {
    expect(tokenize('WordPress')).toEqual(['WordPress']);
    expect(tokenize('pds_ and whsec_')).toEqual(expect.arrayContaining(['pds_', 'pds', 'whsec_', 'whsec']));
    expect(docs.find('whsec_')[0]!.snippet).toContain('whsec_');
    expect(docs.find('pds_ token prefix')[0]!.snippet).toContain('pds_');
  });

  it('expands no short word by prefix: every hit for "back" holds the word back itself (or backs)', () => {
    const hits = docs.find('back');
    expect(hits.length).toBeGreaterThan(0);
    for (const h of hits) expect(docs.read(h.path)!.toLowerCase(), h.path).toMatch(/\bbacks?\b/);
  });

  it('gives each result its score, section length and absolute URL, and drops results below a fifth of the best', () => {
    const hits = docs.find('forecast_unsupported');
    expect(hits.length).toBeGreaterThan(0);
    expect(hits.length).toBeLessThan(10);
    for (const [i, h] of hits.entries()) {
      expect(h.url).toBe(`https://podium.test${h.path}`);
      expect(h.length).toBe(docs.read(h.path)!.split('\n\n').slice(1).join('\n\n').trimEnd().length);
      expect(h.score).toBeGreaterThanOrEqual(hits[0]!.score * 0.2 - 0.01);
      if (i) expect(h.score).toBeLessThanOrEqual(hits[i - 1]!.score);
    }
  });

  it('snippets never show table rules, and keep brackets of JSON', () => {
    for (const q of ['per_page maximum', 'pageType tracker', 'error codes status', 'webhook events'])
      for (const h of docs.find(q)) expect(h.snippet, `${q} → ${h.path}`).not.toMatch(/---/);
    expect(plainText('Past the end: `"data": []`.\n\n| a | b |\n|---|:---:|\n| 1 | 2 |')).toBe(
      'Past the end: "data": [] .\n a b \n 1 2',
    );
  });

  it('a page introduction is a section of its own: get_page on it is not the whole page', () => {
    const intro = docs.find('set of toplists built from one list template')[0];
    expect(intro?.path).toBe('/docs/geo-families#geo-families');
    for (const q of ['webhooks', 'mcp', 'toplist'])
      for (const h of docs.find(q)) expect(h.path).toContain('#');
    const text = docs.read('/docs/toplist-api#toplist-api')!;
    expect(text).toContain('# Toplist API');
    expect(text).not.toContain('## Envelope');
    expect(text.length).toBeLessThan(docs.read('/docs/toplist-api')!.length / 5);
  });
});

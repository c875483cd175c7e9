import { describe, expect, it } from 'vitest';
import { loadPages } from '../src/modules/docs/pages.ts';
import { DocsService } from '../src/modules/docs/service.ts';

// Questions a publisher's developer (or an agent acting for one) actually asks, with the page
// that answers them. The expected page must rank in the top 3.
const QUESTIONS: [string, string][] = [
  ['how do I page through a geo family', 'geo-families'],
  ['what does 409 mean on orders', 'adserver-contract'],
  ['postback duplicate', 'postbacks'],
  ['where do I get a site token', 'getting-started'],
  ['per_page maximum', 'toplist-api'],
  ['which variant for a visitor from Iceland market', 'geo-families'],
  ['max_bonus_amount decimal string float', 'toplist-api'],
  ['ETag If-None-Match 304', 'toplist-api'],
  ['click id redirect landing page parameters', 'tracking-links'],
  ['impression pixel', 'tracking-links'],
  ['ftd first deposit event transaction_id', 'postbacks'],
  ['operator daily report commission registrations', 'operator-aggregate'],
  ['idempotency key replay same body', 'adserver-contract'],
  ['health timezone currency capabilities', 'adserver-contract'],
  ['forecast_unsupported 501', 'adserver-contract'],
  ['conformance checker adserver-check', 'adserver-contract'],
  ['publish a toplist new edition version', 'admin-api'],
  ['revoke a token rotation', 'getting-started'],
  ['rate limit 429 Retry-After mcp', 'docs-server'],
  ['llms.txt markdown', 'docs-server'],
  ['coveredCountries market', 'geo-families'],
  ['paginaton next link', 'toplist-api'],
];

describe('docs search quality', () => {
  const docs = new DocsService(loadPages(), '/docs', 'https://podium.test');

  it.each(QUESTIONS)('"%s" → %s in the top 3', (question, slug) => {
    const top = docs
      .find(question)
      .slice(0, 3)
      .map((h) => h.path);
    expect(top).toContain(`/docs/${slug}`);
  });

  it('ignores common words, returns at most 10 hits with snippets, refuses 201 characters', () => {
    expect(docs.find('the and of what how')).toEqual([]);
    const hits = docs.find('toplist token site page api');
    expect(hits.length).toBeLessThanOrEqual(10);
    for (const h of hits) expect(h.snippet.length).toBeGreaterThan(0);
    expect(() => docs.find('x'.repeat(201))).toThrow(RangeError);
  });
});

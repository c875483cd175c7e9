import MiniSearch from 'minisearch';
import type { Page } from './pages.ts';

/** Longest accepted search query, in characters (spec limit). */
export const MAX_QUERY_LENGTH = 200;
/** Most pages one search returns (spec limit). */
export const MAX_RESULTS = 10;

// Words that carry no meaning in a question about the API; ignored in pages and queries alike.
const STOP_WORDS = new Set(
  `a about above after again all also am an and any are as at be because been before being below between
  both but by can could did do does doing don down during each few for from further get got had has have
  having he her here hers how i if in into is it its itself just me mean means more most my no nor not of
  off on once only or other our out over own same she should so some such than that the their them then
  there these they this those through to too under until up very via was we were what when where which
  while who whom why will with would you your yours`.split(/\s+/),
);

/** Lower-cases a token and drops stop words (MiniSearch `processTerm`). */
function processTerm(term: string): string | null {
  const t = term.toLowerCase();
  return t.length < 2 || STOP_WORDS.has(t) ? null : t;
}

/** Markdown to searchable prose: front matter, link targets and markup characters removed. */
export function plainText(markdown: string): string {
  return markdown
    .replace(/\]\([^)]*\)/g, ']')
    .replace(/[#*_`>|[\]]+/g, ' ')
    .replace(/[ \t]+/g, ' ')
    .replace(/\n{2,}/g, '\n')
    .trim();
}

export interface SearchHit {
  path: string;
  title: string;
  product: string;
  direction: string;
  snippet: string;
}

interface IndexedPage {
  id: string;
  title: string;
  headings: string;
  text: string;
  summary: string;
}

const SNIPPET_RADIUS = 90;

/** Full-text search over the pages (MiniSearch: prefix matching, typo tolerance, stop words ignored). */
export class DocsSearch {
  private readonly index: MiniSearch<IndexedPage>;
  private readonly texts = new Map<string, string>();

  constructor(
    private readonly pages: readonly Page[],
    private readonly pathOf: (page: Page) => string,
  ) {
    this.index = new MiniSearch<IndexedPage>({
      fields: ['title', 'summary', 'headings', 'text'],
      processTerm,
      searchOptions: {
        boost: { title: 4, summary: 2, headings: 2 },
        prefix: (term) => term.length >= 3,
        fuzzy: (term) => (term.length >= 5 ? 0.2 : false),
        combineWith: 'OR',
      },
    });
    const docs = pages.map((p) => {
      const text = plainText(p.body);
      this.texts.set(pathOf(p), text);
      return {
        id: pathOf(p),
        title: p.title,
        summary: p.summary,
        headings: [...p.body.matchAll(/^#{1,4} (.+)$/gm)].map((h) => h[1]).join('\n'),
        text,
      };
    });
    this.index.addAll(docs);
  }

  /** The best pages for a query, at most 10, each with a snippet around the first match. */
  search(query: string): SearchHit[] {
    if (query.length > MAX_QUERY_LENGTH)
      throw new RangeError(`query is longer than ${MAX_QUERY_LENGTH} characters`);
    const byPath = new Map(this.pages.map((p) => [this.pathOf(p), p]));
    return this.index
      .search(query)
      .slice(0, MAX_RESULTS)
      .map((r) => {
        const page = byPath.get(r.id)!;
        return {
          path: r.id,
          title: page.title,
          product: page.product,
          direction: page.direction,
          snippet: this.snippet(this.texts.get(r.id) ?? '', r.terms, page.summary),
        };
      });
  }

  private snippet(text: string, terms: string[], fallback: string): string {
    const lower = text.toLowerCase();
    let at = -1;
    for (const term of terms) {
      const i = lower.indexOf(term);
      if (i !== -1 && (at === -1 || i < at)) at = i;
    }
    if (at === -1) return fallback;
    const start = Math.max(0, at - SNIPPET_RADIUS);
    const end = Math.min(text.length, at + SNIPPET_RADIUS);
    const core = text.slice(start, end).replace(/\s+/g, ' ').trim();
    return `${start > 0 ? '…' : ''}${core}${end < text.length ? '…' : ''}`;
  }
}

import MiniSearch from 'minisearch';
import { partitionPoint } from '../../lib/partition-point.ts';
import type { Page } from './pages.ts';
import { type Section, splitSections } from './sections.ts';
import { aliasesOf, isIgnored, spellSignals, stem, WHOLE_NAMES } from './vocabulary.ts';

/** Longest accepted search query, in characters (Unicode code points, not UTF-16 units; spec limit). */
export const MAX_QUERY_LENGTH = 200;
/** Most sections one search returns (spec limit). */
export const MAX_RESULTS = 10;

/** Length in characters (code points): 150 emoji are 150 characters, not 300 UTF-16 units. */
export const charLength = (s: string): number => {
  let n = 0;
  for (const _ of s) n++;
  return n;
};

/** The first `max` characters (code points) of a string, never splitting a surrogate pair. */
export const sliceChars = (s: string, max: number): string => [...s].slice(0, max).join('');

// A run of letters and digits joined by the characters identifiers are made of:
// `forecast_unsupported`, `Idempotency-Key`, `/imp/{code}`, `llms-full.txt`, `tracking:read`,
// and a token prefix ending in `_` (`pds_`, `whsec_`).
const RUN = /[/{]*[\p{L}\p{N}]+(?:[_\-./:{}]+[\p{L}\p{N}]+)*(?:_(?![\p{L}\p{N}]))?[}/]*/gu;
const WORD = /[\p{L}\p{N}]+/gu;
const CAMEL = /\p{Lu}?\p{Ll}+|\p{Lu}+(?!\p{Ll})|\p{N}+/gu;

/**
 * Splits text into search terms. An identifier counts whole and by its parts, so
 * `forecast_unsupported` matches both the query `forecast_unsupported` and `unsupported`, and
 * `coveredCountries` matches `covered countries`; a product name (`WordPress`) stays whole.
 */
export function tokenize(text: string): string[] {
  const out: string[] = [];
  for (const [run] of text.matchAll(RUN)) {
    const words = run.match(WORD) ?? [];
    if (words.length > 1 || run !== words[0]) out.push(run);
    for (const w of words) {
      out.push(w);
      if (WHOLE_NAMES.has(w.toLowerCase())) continue;
      const parts = w.match(CAMEL) ?? [];
      if (parts.length > 1) out.push(...parts);
    }
  }
  return out;
}

/** The index form of a term: lower-cased and stemmed, or null for a stop or noise word (MiniSearch `processTerm`). */
export function processTerm(term: string): string | null {
  const t = term.toLowerCase();
  return isIgnored(t) ? null : stem(t);
}

/** Markdown to searchable prose: link targets, markup characters and table rules removed; identifiers kept whole. */
export function plainText(markdown: string): string {
  return markdown
    .replace(/\[([^\]]*)\]\([^)]*\)/g, '$1')
    .replace(/^#{1,6} .*$/gm, '')
    .replace(/^\s*\|?(?:\s*:?-{3,}:?\s*\|)+\s*(?::?-{3,}:?\s*)?$/gm, '')
    .replace(/^\s*-{3,}\s*$/gm, '')
    .replace(/^\s*```\w*\s*$/gm, '')
    .replace(/^\s*>+/gm, '')
    .replace(/[*`|]+/g, ' ')
    .replace(/[ \t]+/g, ' ')
    .replace(/\n\s*\n+/g, '\n')
    .trim();
}

/** One search result: a section of a page. */
export interface SearchHit {
  /** Address of the section: the page path and `#anchor` (the introduction's is the page title's anchor). */
  path: string;
  /** Page title and heading path: `Ad-server contract › POST /forecast`. */
  title: string;
  /** Absolute URL of the section's HTML. */
  url: string;
  product: string;
  direction: string;
  /** Relevance (BM25 over the section's fields); results below a fifth of the best one are left out. */
  score: number;
  /** Length of the section's markdown in characters: what `get_page` on `path` returns. */
  length: number;
  /** Text of the section around the matched terms. */
  snippet: string;
  /** Address of the whole page. */
  page: string;
}

interface IndexedSection {
  id: string;
  page: string;
  heading: string;
  text: string;
}

interface Entry {
  page: Page;
  section: Section;
  title: string;
  text: string;
  lower: string;
  /** Each index term of the section's text with the words it was made from, lower-cased. */
  surfaces: Map<string, string[]>;
}

/** Field weights, chosen on the tuning half of bench/docs-search-eval.json. */
export const FIELD_BOOSTS = { heading: 1.5, page: 0.5, text: 1 } as const;
/**
 * BM25 saturation `k` and length normalisation `b` (MiniSearch's defaults are 1.2 / 0.7), chosen on
 * the tuning half: a term repeated in a section counts a little longer before it saturates.
 */
export const BM25 = { k: 1.6, b: 0.7, d: 0.5 } as const;
/** Weight of a query term the docs' own words were added for (`kill` → `shutdown`), against 1 for the words asked. */
const ALIAS_WEIGHT = 0.5;
/** Results scoring below this share of the best one are noise, not answers. */
const RELEVANCE_FLOOR = 0.2;
/** Shortest query term matched by prefix (`back` must not match backfill, `per` percent). */
const PREFIX_MIN = 6;
/** Shortest query term matched with a small typo. */
const FUZZY_MIN = 6;

const SNIPPET_WIDTH = 220;
const SNIPPET_LEAD = 50;

/** Full-text search over the h2/h3 sections of the pages (MiniSearch with stemming, aliases, long prefixes, small typos). */
export class DocsSearch {
  private readonly index: MiniSearch<IndexedSection>;
  private readonly entries = new Map<string, Entry>();

  /**
   * @param pathOf address of a page (`/docs/toplist-api`)
   * @param origin absolute origin the docs are reached at, for result URLs
   */
  constructor(
    pages: readonly Page[],
    pathOf: (page: Page) => string,
    private readonly origin = '',
  ) {
    this.index = new MiniSearch<IndexedSection>({
      fields: ['page', 'heading', 'text'],
      tokenize,
      processTerm,
      searchOptions: {
        boost: { ...FIELD_BOOSTS },
        // At most two edits, whatever the term's length: 20 % of an identifier of 13 characters or
        // more allowed three, the costliest walks of the index.
        maxFuzzy: 2,
        combineWith: 'OR',
        bm25: { ...BM25 },
      },
    });
    const docs: IndexedSection[] = [];
    for (const page of pages) {
      for (const section of splitSections(page)) {
        const id = section.anchor ? `${pathOf(page)}#${section.anchor}` : pathOf(page);
        // The home page's generated list repeats every page's summary, which that page's own
        // sections carry in their `page` field already: indexed, it would match almost any question.
        const text = plainText(
          page.generated ? section.markdown.replace(page.generated, '') : section.markdown,
        );
        const title = [page.title, ...section.headings].join(' › ');
        this.entries.set(id, {
          page,
          section,
          title,
          text,
          lower: text.toLowerCase(),
          surfaces: surfaces(text),
        });
        docs.push({
          id,
          page: `${page.title}\n${page.summary}`,
          heading: section.headings.join('\n'),
          text,
        });
      }
    }
    this.index.addAll(docs);
  }

  /** A section by its `path#anchor` address. */
  section(address: string): { page: Page; section: Section; title: string } | undefined {
    return this.entries.get(address);
  }

  /** The best sections for a query, at most 10, each with its score and a snippet holding the matched terms. */
  search(query: string): SearchHit[] {
    if (charLength(query) > MAX_QUERY_LENGTH)
      throw new RangeError(`query is longer than ${MAX_QUERY_LENGTH} characters`);
    const { terms, weights, asked } = analyse(query);
    if (!terms.length) return [];
    const found = this.index.search(terms.join(' '), {
      tokenize: (s) => s.split(' '),
      processTerm: (t) => t,
      boostTerm: (term) => weights.get(term) ?? 1,
      prefix: (term) => term.length >= PREFIX_MIN,
      fuzzy: (term) => (term.length >= FUZZY_MIN && !/[\d_\-./:{}]/.test(term) ? 0.2 : false),
    });
    const floor = (found[0]?.score ?? 0) * RELEVANCE_FLOOR;
    return found
      .filter((r) => r.score >= floor)
      .slice(0, MAX_RESULTS)
      .map((r) => {
        const e = this.entries.get(r.id)!;
        const shown = [...new Set(r.terms.flatMap((t) => e.surfaces.get(t) ?? [t]))];
        return {
          path: r.id,
          title: e.title,
          url: `${this.origin}${r.id}`,
          product: e.page.product,
          direction: e.page.direction,
          score: Math.round(r.score * 100) / 100,
          length: e.section.markdown.length,
          snippet: e.text ? snippet(e.text, shown, asked, e.lower) : snippet(e.page.summary, shown, asked),
          page: r.id.replace(/#.*$/, ''),
        };
      });
  }
}

/** Each index term of a text with the lower-case words it comes from (for snippets, which show words). */
function surfaces(text: string): Map<string, string[]> {
  const out = new Map<string, string[]>();
  for (const token of tokenize(text)) {
    const term = processTerm(token);
    if (term === null) continue;
    const word = token.toLowerCase();
    const known = out.get(term);
    if (!known) out.set(term, [word]);
    else if (!known.includes(word) && known.length < 8) known.push(word);
  }
  return out;
}

/**
 * A query as index terms: the words asked (stemmed, stop and noise words dropped) with weight 1,
 * plus the docs' own words for them (aliases) at `ALIAS_WEIGHT`; `asked` holds the words as
 * written, for the snippet.
 */
function analyse(query: string): { terms: string[]; weights: Map<string, number>; asked: string[] } {
  const weights = new Map<string, number>();
  const asked: string[] = [];
  for (const token of tokenize(spellSignals(query))) {
    const term = processTerm(token);
    if (term === null) continue;
    weights.set(term, 1);
    asked.push(token.toLowerCase());
  }
  for (const term of [...weights.keys()])
    for (const alias of aliasesOf(term)) if (!weights.has(alias)) weights.set(alias, ALIAS_WEIGHT);
  return { terms: [...weights.keys()], weights, asked: [...new Set(asked)] };
}

/** How well a term found in a page stands for a query term: the word itself, a longer word it begins, a near miss. */
const closeness = (docTerm: string, queryTerm: string): number => {
  if (docTerm === queryTerm) return 1;
  if (docTerm.startsWith(queryTerm)) return 0.5;
  // A fuzzy match (MiniSearch allows 20 % edits): same start, about the same length.
  const near =
    docTerm.slice(0, 2) === queryTerm.slice(0, 2) &&
    Math.abs(docTerm.length - queryTerm.length) <= Math.ceil(queryTerm.length * 0.2);
  return near ? 0.25 : 0;
};

/**
 * The stretch of `text` that shows best why the section matched: every occurrence of a matched
 * term starts a candidate window, scored by the query terms it covers (longer query terms and
 * exact words count more than prefixes and near misses); the first best window wins. `lower` is
 * `text` lower-cased (the search keeps each section's).
 *
 * A window looks only at the hits inside it (hits sorted by position), each term's closeness to
 * each query term is worked out once, and a window start shared by several hits is scored once:
 * trying every hit against every other would make this the bulk of a search's CPU (up to 50 hits
 * a term, a dozen terms with prefixes and near misses).
 */
export function snippet(
  text: string,
  docTerms: readonly string[],
  queryTerms: readonly string[],
  lower = text.toLowerCase(),
): string {
  const hits: { at: number; term: number }[] = [];
  for (const [t, term] of docTerms.entries()) {
    for (let i = lower.indexOf(term), k = 0; i !== -1 && k < 50; i = lower.indexOf(term, i + 1), k++)
      hits.push({ at: i, term: t });
  }
  const close = docTerms.map((d) => queryTerms.map((q) => closeness(d, q)));
  const byAt = [...hits].sort((a, b) => a.at - b.at);
  const present = new Uint8Array(docTerms.length);
  const scores = new Map<number, number>();
  const score = (from: number): number => {
    const known = scores.get(from);
    if (known !== undefined) return known;
    const to = from + SNIPPET_WIDTH;
    present.fill(0);
    for (
      let j = partitionPoint(byAt.length, (i) => byAt[i]!.at < from);
      j < byAt.length && byAt[j]!.at <= to;
      j++
    ) {
      const o = byAt[j]!;
      if (o.at + docTerms[o.term]!.length <= to) present[o.term] = 1;
    }
    let sum = 0;
    for (const [q, queryTerm] of queryTerms.entries()) {
      let best = 0;
      for (let t = 0; t < docTerms.length; t++) if (present[t]) best = Math.max(best, close[t]![q]!);
      sum += best * queryTerm.length;
    }
    scores.set(from, sum);
    return sum;
  };
  let start = 0;
  let best = -1;
  for (const h of hits) {
    const from = Math.max(0, h.at - SNIPPET_LEAD);
    const s = score(from);
    if (s > best) {
      best = s;
      start = from;
    }
  }
  // Widen to whole words.
  let end = Math.min(text.length, start + SNIPPET_WIDTH);
  while (start > 0 && /\S/.test(text[start - 1]!)) start--;
  while (end < text.length && /\S/.test(text[end]!)) end++;
  const core = text.slice(start, end).replace(/\s+/g, ' ').trim();
  return `${start > 0 ? '…' : ''}${core}${end < text.length ? '…' : ''}`;
}

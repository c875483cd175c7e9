import MiniSearch from 'minisearch';
import { partitionPoint } from '../../lib/partition-point.ts';
import type { Page } from './pages.ts';
import { type Section, splitSections } from './sections.ts';

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

// Words that carry no meaning in a question about the API; ignored in pages and queries alike.
const STOP_WORDS = new Set(
  `a about above after again all also am an and any are as at be because been before being below between
  both but by can could did do does doing don down during each few for from further get got had has have
  having he her here hers how i if in into is it its itself just me mean means more most my no nor not of
  off on once only or other our out over own same she should so some such than that the their them then
  there these they this those through to too under until up very via was we were what when where which
  while who whom why will with would you your yours`.split(/\s+/),
);

// A run of letters and digits joined by the characters identifiers are made of:
// `forecast_unsupported`, `Idempotency-Key`, `/imp/{code}`, `llms-full.txt`, `tracking:read`.
const RUN = /[/{]*[\p{L}\p{N}]+(?:[_\-./:{}]+[\p{L}\p{N}]+)*[}/]*/gu;
const WORD = /[\p{L}\p{N}]+/gu;
const CAMEL = /\p{Lu}?\p{Ll}+|\p{Lu}+(?!\p{Ll})|\p{N}+/gu;

/**
 * Splits text into search terms. An identifier counts whole and by its parts, so
 * `forecast_unsupported` matches both the query `forecast_unsupported` and `unsupported`, and
 * `coveredCountries` matches `covered countries`.
 */
export function tokenize(text: string): string[] {
  const out: string[] = [];
  for (const [run] of text.matchAll(RUN)) {
    const words = run.match(WORD) ?? [];
    if (words.length > 1 || run !== words[0]) out.push(run);
    for (const w of words) {
      out.push(w);
      const parts = w.match(CAMEL) ?? [];
      if (parts.length > 1) out.push(...parts);
    }
  }
  return out;
}

/** Lower-cases a term and drops stop words and single characters (MiniSearch `processTerm`). */
function processTerm(term: string): string | null {
  const t = term.toLowerCase();
  return t.length < 2 || STOP_WORDS.has(t) ? null : t;
}

/** Markdown to searchable prose: link targets and markup characters removed. */
export function plainText(markdown: string): string {
  return markdown
    .replace(/\]\([^)]*\)/g, ']')
    .replace(/^#{1,6} .*$/gm, '')
    .replace(/[#*`>|[\]]+|(?<![\p{L}\p{N}])_+|_+(?![\p{L}\p{N}])/gu, ' ')
    .replace(/^\s*-{3,}\s*$/gm, '')
    .replace(/[ \t]+/g, ' ')
    .replace(/\n\s*\n+/g, '\n')
    .trim();
}

/** One search result: a section of a page. */
export interface SearchHit {
  /** Address of the section: the page path, plus `#anchor` unless it is the page's introduction. */
  path: string;
  /** Page title and heading path: `Ad-server contract › POST /forecast`. */
  title: string;
  product: string;
  direction: string;
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

/** Field weights: a query word in a heading says far more about a section than one in its prose. */
export const FIELD_BOOSTS = { heading: 3, page: 1.2, text: 1 } as const;

const SNIPPET_WIDTH = 220;
const SNIPPET_LEAD = 50;

/** Full-text search over the h2/h3 sections of the pages (MiniSearch: prefixes, small typos, stop words ignored). */
export class DocsSearch {
  private readonly index: MiniSearch<IndexedSection>;
  private readonly entries = new Map<
    string,
    { page: Page; section: Section; title: string; text: string; lower: string }
  >();

  constructor(pages: readonly Page[], pathOf: (page: Page) => string) {
    this.index = new MiniSearch<IndexedSection>({
      fields: ['page', 'heading', 'text'],
      tokenize,
      processTerm,
      searchOptions: {
        boost: { ...FIELD_BOOSTS },
        prefix: (term) => term.length >= 3,
        fuzzy: (term) => (term.length >= 5 ? 0.2 : false),
        // At most two edits, whatever the term's length: 20 % of an identifier of 13 characters or
        // more allowed three, the costliest walks of the index, for no better scores over the
        // evaluation set (bench/docs-search-eval.json).
        maxFuzzy: 2,
        combineWith: 'OR',
      },
    });
    const docs: IndexedSection[] = [];
    for (const page of pages) {
      for (const section of splitSections(page)) {
        const id = section.anchor ? `${pathOf(page)}#${section.anchor}` : pathOf(page);
        const text = plainText(section.markdown);
        const title = [page.title, ...section.headings].join(' › ');
        this.entries.set(id, { page, section, title, text, lower: text.toLowerCase() });
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

  /** A section by its `path#anchor` address (the introduction by the page path alone). */
  section(address: string): { page: Page; section: Section; title: string } | undefined {
    return this.entries.get(address);
  }

  /** The best sections for a query, at most 10, each with a snippet holding the matched terms. */
  search(query: string): SearchHit[] {
    if (charLength(query) > MAX_QUERY_LENGTH)
      throw new RangeError(`query is longer than ${MAX_QUERY_LENGTH} characters`);
    return this.index
      .search(query)
      .slice(0, MAX_RESULTS)
      .map((r) => {
        const e = this.entries.get(r.id)!;
        return {
          path: r.id,
          title: e.title,
          product: e.page.product,
          direction: e.page.direction,
          snippet: e.text
            ? snippet(e.text, r.terms, r.queryTerms, e.lower)
            : snippet(e.page.summary, r.terms, r.queryTerms),
          page: r.id.replace(/#.*$/, ''),
        };
      });
  }
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

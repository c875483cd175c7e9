import MarkdownIt from 'markdown-it';
import type Token from 'markdown-it/lib/token.mjs';
import type { Page } from './pages.ts';

/** The anchor of a heading text: lower-case words joined by hyphens (`POST /forecast` → `post-forecast`). */
export function slugify(text: string): string {
  return text
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-|-$/g, '');
}

/** The visible text of a heading (inline code keeps its text, markup characters go). */
const headingText = (inline: Token | undefined): string =>
  inline?.children?.map((c) => c.content).join('') ?? inline?.content ?? '';

/**
 * Gives every heading of a parsed page an `id`, unique within the page (a repeated heading gets
 * `-2`, `-3`…). The HTML pages and the search index both use it, so `path#anchor` from a search
 * result is a real anchor of the HTML page.
 */
export function anchorHeadings(tokens: Token[]): void {
  const seen = new Map<string, number>();
  tokens.forEach((t, i) => {
    if (t.type !== 'heading_open') return;
    const base = slugify(headingText(tokens[i + 1]));
    if (!base) return;
    const n = (seen.get(base) ?? 0) + 1;
    seen.set(base, n);
    t.attrSet('id', n === 1 ? base : `${base}-${n}`);
  });
}

/** markdown-it with heading anchors; `html: false` so a page can never carry raw HTML. */
export function markdownWithAnchors(): MarkdownIt {
  const md = new MarkdownIt({ html: false, linkify: false, typographer: false });
  md.core.ruler.push('heading_anchors', (state) => {
    anchorHeadings(state.tokens);
  });
  return md;
}

const md = markdownWithAnchors();

/** One h2/h3 section of a page (or the introduction before the first h2). */
export interface Section {
  /** The heading's anchor; the introduction's is the page title's (`''` on a page without an h1). */
  anchor: string;
  /** True for the introduction: the page title and what comes before the first h2. */
  intro: boolean;
  /** Headings from the page down to this section, without the page title: `['Errors']`, `['MCP endpoint', 'Tools']`. */
  headings: string[];
  /** The section's markdown, its heading line included, up to the next h2/h3. */
  markdown: string;
}

/** Splits a page body into its introduction and one section per h2 and h3 heading. */
export function splitSections(page: Pick<Page, 'body'>): Section[] {
  const lines = page.body.split('\n');
  const tokens = md.parse(page.body, {});
  const starts: { line: number; level: number; text: string; anchor: string }[] = [];
  let titleAnchor = '';
  tokens.forEach((t, i) => {
    if (t.type === 'heading_open' && t.tag === 'h1' && !titleAnchor && !starts.length)
      titleAnchor = t.attrGet('id') ?? '';
    if (t.type !== 'heading_open' || (t.tag !== 'h2' && t.tag !== 'h3') || !t.map) return;
    starts.push({
      line: t.map[0],
      level: t.tag === 'h2' ? 2 : 3,
      text: headingText(tokens[i + 1]),
      anchor: t.attrGet('id') ?? '',
    });
  });
  const out: Section[] = [];
  const intro = lines.slice(0, starts[0]?.line ?? lines.length).join('\n');
  out.push({ anchor: titleAnchor, intro: true, headings: [], markdown: intro.trim() });
  let h2 = '';
  starts.forEach((s, i) => {
    if (s.level === 2) h2 = s.text;
    const end = starts[i + 1]?.line ?? lines.length;
    out.push({
      anchor: s.anchor,
      intro: false,
      headings: s.level === 2 || !h2 ? [s.text] : [h2, s.text],
      markdown: lines.slice(s.line, end).join('\n').trim(),
    });
  });
  return out;
}

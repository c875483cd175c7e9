import sanitizeHtml from 'sanitize-html';
import type { Page } from './pages.ts';
import type { SearchHit } from './search.ts';
import { markdownWithAnchors } from './sections.ts';

// Raw HTML in pages is not rendered (html: false) and the output is sanitised again, so a page
// can never carry script into the docs site. Headings get the anchors the search results use.
const md = markdownWithAnchors();

const SANITIZE: sanitizeHtml.IOptions = {
  allowedTags: [...sanitizeHtml.defaults.allowedTags.filter((t) => t !== 'img'), 'h1', 'h2'],
  allowedAttributes: {
    a: ['href'],
    h1: ['id'],
    h2: ['id'],
    h3: ['id'],
    h4: ['id'],
    code: ['class'],
    th: ['style'],
    td: ['style'],
  },
  allowedStyles: { '*': { 'text-align': [/^(left|right|center)$/] } },
  allowedSchemes: ['http', 'https', 'mailto'],
};

const escapeHtml = (s: string) =>
  s.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!);

/** Markdown body to sanitised HTML. */
export function renderMarkdown(markdown: string): string {
  return sanitizeHtml(md.render(markdown), SANITIZE);
}

const STYLE = `body{font:16px/1.55 system-ui,sans-serif;margin:0;display:flex;color:#1d2430}
nav{width:17rem;padding:1rem 1.25rem;background:#f4f6f9;min-height:100vh;box-sizing:border-box}
nav h2{font-size:.8rem;text-transform:uppercase;color:#5b6576;margin:1.2rem 0 .3rem}
nav ul{list-style:none;padding:0;margin:0}nav li{margin:.25rem 0}nav a{color:#1d2430;text-decoration:none}
nav a[aria-current]{font-weight:600}main{max-width:52rem;padding:1rem 2rem 4rem;overflow-x:auto}
pre{background:#0f1720;color:#e6edf3;padding:.8rem;overflow-x:auto;border-radius:4px}
code{font-size:.9em}table{border-collapse:collapse}td,th{border:1px solid #d5dae1;padding:.3rem .5rem;vertical-align:top}
form input{width:100%;box-sizing:border-box;padding:.4rem}.muted{color:#5b6576;font-size:.9rem}`;

export interface Layout {
  /** Docs base path without trailing slash (`/docs`, or `` at a host root). */
  base: string;
  pages: readonly Page[];
  pathOf: (page: Page) => string;
}

function nav(layout: Layout, current: Page | undefined, query = ''): string {
  const sections = new Map<string, Page[]>();
  for (const p of layout.pages) sections.set(p.section, [...(sections.get(p.section) ?? []), p]);
  const groups = [...sections].map(
    ([name, pages]) =>
      `<h2>${escapeHtml(name)}</h2><ul>${pages
        .map(
          (p) =>
            `<li><a href="${escapeHtml(layout.pathOf(p))}"${p === current ? ' aria-current="page"' : ''}>${escapeHtml(p.title)}</a></li>`,
        )
        .join('')}</ul>`,
  );
  return `<nav><form action="${escapeHtml(layout.base)}/search" method="get" role="search"><input type="search" name="q" placeholder="Search the docs" value="${escapeHtml(query)}" aria-label="Search the docs"></form>${groups.join('')}</nav>`;
}

function shell(title: string, navHtml: string, main: string): string {
  return `<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1"><title>${escapeHtml(title)} · Podium docs</title><style>${STYLE}</style></head><body>${navHtml}<main>${main}</main></body></html>`;
}

/** A whole HTML page: navigation, search box, the rendered markdown and a link to its source. */
export function pageHtml(layout: Layout, page: Page): string {
  const mdHref = `${layout.pathOf(page).replace(/\/$/, '')}.md`;
  const direction = page.direction
    ? ` · ${page.direction === 'you-call-us' ? 'you call Podium' : 'Podium calls you'}`
    : '';
  const main = `<p class="muted">${escapeHtml(page.product)}${direction} · <a href="${escapeHtml(mdHref)}">markdown</a></p>${renderMarkdown(page.body)}`;
  return shell(page.title, nav(layout, page), main);
}

/** The HTML results page of the search box. */
export function searchHtml(layout: Layout, query: string, hits: SearchHit[] | string): string {
  const body =
    typeof hits === 'string'
      ? `<p>${escapeHtml(hits)}</p>`
      : hits.length === 0
        ? '<p>No page matches.</p>'
        : `<ol>${hits.map((h) => `<li><a href="${escapeHtml(h.path)}">${escapeHtml(h.title)}</a><br><span class="muted">${escapeHtml(h.snippet)}</span></li>`).join('')}</ol>`;
  return shell(`Search: ${query}`, nav(layout, undefined, query), `<h1>Search</h1>${body}`);
}

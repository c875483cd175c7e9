import type { Page } from './pages.ts';
import { type Layout, pageHtml, searchHtml } from './render.ts';
import { charLength, DocsSearch, MAX_QUERY_LENGTH, type SearchHit, sliceChars } from './search.ts';

/** What `list_pages` reports for each page. */
export interface PageInfo {
  product: string;
  title: string;
  path: string;
  direction: string;
}

/** One document as a ChatGPT connector's `fetch` returns it. */
export interface FetchedDocument {
  id: string;
  title: string;
  text: string;
  url: string;
  metadata: { product: string; direction: string; page: string; length: number };
}

/** A page as an MCP resource: its markdown at its public `.md` address. */
export interface PageResource {
  uri: string;
  name: string;
  title: string;
  description: string;
  mimeType: 'text/markdown';
}

/**
 * The documentation pages behind every docs surface (HTML, markdown, llms.txt, MCP).
 * Everything is computed once at start: pages are read-only for the life of the process.
 */
export class DocsService {
  readonly layout: Layout;
  private readonly search: DocsSearch;
  private readonly byPath = new Map<string, Page>();
  private readonly html = new Map<Page, string>();

  /**
   * @param base path prefix of the docs (`/docs`; empty when the docs own a host)
   * @param publicUrl absolute origin the docs are reached at, for llms.txt links
   */
  constructor(
    readonly pages: readonly Page[],
    readonly base: string,
    private readonly publicUrl: string,
  ) {
    const pathOf = (p: Page) => (p.route === '/' ? `${base}/` : `${base}${p.route}`);
    this.layout = { base, pages, pathOf };
    for (const p of pages) this.byPath.set(pathOf(p), p);
    this.search = new DocsSearch(pages, pathOf, publicUrl);
  }

  pathOf(page: Page): string {
    return this.layout.pathOf(page);
  }

  /** Address of a page's markdown: the page address with `.md` appended, trailing slash dropped first. */
  markdownPath(page: Page): string {
    const p = this.pathOf(page).replace(/\/$/, '');
    return `${p || '/index'}.md`;
  }

  /** Every page, in navigation order. */
  list(): PageInfo[] {
    return this.pages.map((p) => ({
      product: p.product,
      title: p.title,
      path: this.pathOf(p),
      direction: p.direction,
    }));
  }

  /** Keyword search over sections; throws RangeError for a query over 200 characters (code points). */
  find(query: string): SearchHit[] {
    return this.search.search(query);
  }

  /** A page by the path `list_pages` or `search_docs` gave for it. */
  byAddress(path: string): Page | undefined {
    return this.byPath.get(path);
  }

  /**
   * What `get_page` returns for an address: the whole markdown source for a page path, the
   * section's markdown (under a line naming its page and heading path) for `path#anchor` (the
   * introduction's anchor is the page title's: its text before the first h2, not the page).
   */
  read(address: string): string | undefined {
    const hash = address.indexOf('#');
    if (hash === -1) return this.byPath.get(address)?.source;
    const found = this.search.section(address);
    if (!found) return undefined;
    return `<!-- ${found.title} · ${this.publicUrl}${address} -->\n\n${found.section.markdown}\n`;
  }

  /**
   * A section (`path#anchor`) or a page (`path`) as a connector document: its markdown, title,
   * absolute URL and where it belongs. Undefined for an address no search or page list gives.
   */
  document(id: string): FetchedDocument | undefined {
    const found = id.includes('#') ? this.search.section(id) : undefined;
    const page = found?.page ?? this.byPath.get(id);
    if (!page) return undefined;
    const text = found ? found.section.markdown : page.source;
    return {
      id,
      title: found?.title ?? page.title,
      text,
      url: `${this.publicUrl}${id}`,
      metadata: {
        product: page.product,
        direction: page.direction,
        page: this.pathOf(page),
        length: text.length,
      },
    };
  }

  /** Every page as an MCP resource, in navigation order. */
  resources(): PageResource[] {
    return this.pages.map((p) => ({
      uri: `${this.publicUrl}${this.markdownPath(p)}`,
      name: p.slug,
      title: p.title,
      description: p.summary,
      mimeType: 'text/markdown' as const,
    }));
  }

  /** The markdown of a page by its resource URI, or undefined. */
  resourceText(uri: string): string | undefined {
    if (!uri.startsWith(this.publicUrl)) return undefined;
    return this.byMarkdownPath(uri.slice(this.publicUrl.length))?.source;
  }

  /** Absolute URL of the MCP endpoint. */
  mcpUrl(): string {
    return `${this.publicUrl}${this.base}/mcp`;
  }

  /** A page by its markdown address (`/docs/toplist-api.md`). */
  byMarkdownPath(path: string): Page | undefined {
    return this.pages.find((p) => this.markdownPath(p) === path);
  }

  pageHtml(page: Page): string {
    let out = this.html.get(page);
    if (!out) {
      out = pageHtml(this.layout, page);
      this.html.set(page, out);
    }
    return out;
  }

  searchHtml(query: string): string {
    if (charLength(query) > MAX_QUERY_LENGTH)
      return searchHtml(
        this.layout,
        sliceChars(query, MAX_QUERY_LENGTH),
        `Queries are limited to ${MAX_QUERY_LENGTH} characters.`,
      );
    return searchHtml(this.layout, query, query.trim() ? this.find(query) : []);
  }

  /** The llms.txt index: title, summary, then one section of links per page group. */
  llmsTxt(): string {
    const home = this.pages.find((p) => p.slug === 'index')!;
    const sections = new Map<string, Page[]>();
    for (const p of this.pages) {
      if (p === home) continue;
      sections.set(p.section, [...(sections.get(p.section) ?? []), p]);
    }
    const lines = [`# ${home.title}`, '', `> ${home.summary}`, ''];
    lines.push(
      `Every page is also available as markdown (the links below), all of them in one file at ${this.publicUrl}${this.base}/llms-full.txt, and through the MCP endpoint ${this.publicUrl}${this.base}/mcp.`,
      '',
    );
    for (const [name, pages] of sections) {
      lines.push(`## ${name}`, '');
      for (const p of pages)
        lines.push(`- [${p.title}](${this.publicUrl}${this.markdownPath(p)}): ${p.summary}`);
      lines.push('');
    }
    return lines.join('\n');
  }

  /** Every page in one markdown file, each introduced by its address. */
  llmsFullTxt(): string {
    return this.pages
      .map((p) => `<!-- ${this.publicUrl}${this.markdownPath(p)} -->\n\n${p.source.trimEnd()}\n`)
      .join('\n\n');
  }
}

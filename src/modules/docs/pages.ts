import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { parse as parseYaml } from 'yaml';
import { PACKAGE_ROOT } from '../../lib/package-root.ts';

/** Who starts the HTTP exchange a page describes, from the publisher's point of view. */
export const DIRECTIONS = ['you-call-us', 'we-call-you', ''] as const;
export type Direction = (typeof DIRECTIONS)[number];

/** One documentation page, parsed from `docs/<slug>.md`. */
export interface Page {
  /** File name without `.md`; `index` is the home page. */
  slug: string;
  /** Address of the HTML page relative to the docs base: `/` or `/toplist-api`. */
  route: string;
  product: string;
  title: string;
  direction: Direction;
  /** One sentence for llms.txt and the navigation. */
  summary: string;
  /** llms.txt section the page is listed under. */
  section: string;
  order: number;
  /** Markdown body without the front matter. */
  body: string;
  /** The whole source file, front matter included (what `.md` and `get_page` return). */
  source: string;
  /** Text generated into the page at load (the home page's list of pages), which search leaves out. */
  generated?: string;
}

/** The repository's `docs/` directory. */
export const DOCS_DIR = path.join(PACKAGE_ROOT, 'docs');

const FRONT_MATTER = /^---\n([\s\S]*?)\n---\n/;
const SLUG = /^[a-z0-9]+(?:-[a-z0-9]+)*$/;

function field(meta: Record<string, unknown>, name: string, file: string, fallback?: string): string {
  const value = meta[name] ?? fallback;
  if (typeof value !== 'string') throw new Error(`${file}: front matter "${name}" must be a string`);
  return value;
}

/** Parses one page file; throws naming the file and field when the front matter is wrong. */
export function parsePage(file: string, text: string): Page {
  const slug = path.basename(file, '.md');
  if (!SLUG.test(slug)) throw new Error(`${file}: file names are lowercase words joined by hyphens`);
  const source = text.replace(/\r\n/g, '\n');
  const m = FRONT_MATTER.exec(source);
  if (!m) throw new Error(`${file}: missing front matter`);
  const meta = (parseYaml(m[1]!) ?? {}) as Record<string, unknown>;
  const direction = field(meta, 'direction', file, '') as Direction;
  if (!DIRECTIONS.includes(direction))
    throw new Error(`${file}: direction must be you-call-us, we-call-you or empty`);
  const order = meta.order ?? 100;
  if (typeof order !== 'number') throw new Error(`${file}: order must be a number`);
  return {
    slug,
    route: slug === 'index' ? '/' : `/${slug}`,
    product: field(meta, 'product', file),
    title: field(meta, 'title', file),
    direction,
    summary: field(meta, 'summary', file),
    section: field(meta, 'section', file, 'Reference'),
    order,
    body: source.slice(m[0].length),
    source,
  };
}

/** Where the home page's list of pages goes: the line `<!-- pages -->` in `index.md`. */
export const PAGES_MARKER = '<!-- pages -->';

const DIRECTION_LABEL: Record<Direction, string> = {
  'you-call-us': 'you call us',
  'we-call-you': 'we call you',
  '': '–',
};

/** The home page's table of every other page, from each page's front matter (title, direction, summary). */
export function pagesTable(pages: readonly Page[]): string {
  const cell = (s: string) => s.replace(/\|/g, '\\|');
  const rows = pages
    .filter((p) => p.slug !== 'index')
    .map(
      (p) =>
        `| [${cell(p.title)}](${p.slug}) | ${cell(p.section)} | ${DIRECTION_LABEL[p.direction]} | ${cell(p.summary)} |`,
    );
  return ['| Page | Section | Direction | What it covers |', '|---|---|---|---|', ...rows].join('\n');
}

/** Reads every `*.md` page of a directory, in navigation order (front matter `order`, then title). */
export function loadPages(dir: string = DOCS_DIR): Page[] {
  const files = readdirSync(dir).filter((f) => f.endsWith('.md'));
  const pages = files.map((f) => parsePage(f, readFileSync(path.join(dir, f), 'utf8')));
  const home = pages.find((p) => p.slug === 'index');
  if (!home) throw new Error(`${dir}: an index.md home page is required`);
  pages.sort((a, b) => a.order - b.order || a.title.localeCompare(b.title));
  if (home.body.includes(PAGES_MARKER)) {
    const table = pagesTable(pages);
    home.body = home.body.replace(PAGES_MARKER, table);
    home.source = home.source.replace(PAGES_MARKER, table);
    home.generated = table;
  }
  return pages;
}

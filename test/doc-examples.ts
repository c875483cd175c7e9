import MarkdownIt from 'markdown-it';

/**
 * Executable examples in documentation pages.
 *
 * A request is a fenced block with the info string `http`: a request line `METHOD /path`
 * (an absolute URL's origin is dropped), header lines, a blank line, then the body. The next
 * fenced block on the page is the expected response: info `json status=NNN` (the body must
 * contain the JSON shown: objects may hold more keys, arrays more elements after those shown,
 * and a string ending in `…` matches any string starting with the text before it),
 * `text status=NNN` (the body must contain the text), or `headers status=NNN` (each `name: value`
 * line is a response header with exactly that value). `json status=NNN shape` compares numbers by
 * kind only (an integer matches any integer): for figures the other side computes, such as the
 * impressions an ad server reports. docs-examples.test.ts runs every example of every page.
 */
export interface DocExample {
  /** 1-based line of the request block in the page body, for failure messages. */
  line: number;
  method: string;
  url: string;
  headers: Record<string, string>;
  body: string | undefined;
  expect: { status: number; kind: 'json' | 'text' | 'headers'; body: string; shape: boolean } | undefined;
}

const md = new MarkdownIt();

/** Every `http` example of a markdown body with the response block that follows it. */
export function extractExamples(markdown: string): DocExample[] {
  const fences = md.parse(markdown, {}).filter((t) => t.type === 'fence');
  const out: DocExample[] = [];
  fences.forEach((fence, i) => {
    if (fence.info.trim() !== 'http') return;
    const [head, ...rest] = fence.content.split(/\n\s*\n/);
    const [requestLine = '', ...headerLines] = (head ?? '').split('\n');
    const m = /^([A-Z]+) (\S+)(?: HTTP\/1\.1)?$/.exec(requestLine.trim());
    if (!m)
      throw new Error(`line ${(fence.map?.[0] ?? 0) + 1}: bad request line ${JSON.stringify(requestLine)}`);
    const headers: Record<string, string> = {};
    for (const h of headerLines) {
      const at = h.indexOf(':');
      if (at > 0) headers[h.slice(0, at).trim().toLowerCase()] = h.slice(at + 1).trim();
    }
    const body = rest.join('\n\n').trim() || undefined;
    const next = fences[i + 1];
    const info = /^(json|text|headers) status=(\d{3})( shape)?$/.exec(next?.info.trim() ?? '');
    out.push({
      line: (fence.map?.[0] ?? 0) + 1,
      method: m[1]!,
      url: m[2]!.replace(/^https?:\/\/[^/]+/, ''),
      headers,
      body,
      expect: info
        ? {
            kind: info[1] as 'json' | 'text' | 'headers',
            status: Number(info[2]),
            body: next!.content,
            shape: info[3] !== undefined,
          }
        : undefined,
    });
  });
  return out;
}

/** The `name: value` lines of a `headers` block, names lower-cased. */
export function headerLines(block: string): [string, string][] {
  return block
    .split('\n')
    .filter((l) => l.includes(':'))
    .map((l) => [l.slice(0, l.indexOf(':')).trim().toLowerCase(), l.slice(l.indexOf(':') + 1).trim()]);
}

/** Where `actual` differs from the documented `expected` (empty when it matches), as JSON paths. */
export function mismatches(expected: unknown, actual: unknown, path = '$', shape = false): string[] {
  if (shape && typeof expected === 'number') {
    return Number.isInteger(expected) === Number.isInteger(actual) && typeof actual === 'number'
      ? []
      : [`${path}: expected a number like ${expected}, got ${JSON.stringify(actual)}`];
  }
  if (typeof expected === 'string' && expected.endsWith('…')) {
    return typeof actual === 'string' && actual.startsWith(expected.slice(0, -1))
      ? []
      : [
          `${path}: expected a string starting ${JSON.stringify(expected.slice(0, -1))}, got ${JSON.stringify(actual)}`,
        ];
  }
  if (Array.isArray(expected)) {
    if (!Array.isArray(actual)) return [`${path}: expected an array, got ${JSON.stringify(actual)}`];
    if (actual.length < expected.length)
      return [`${path}: expected at least ${expected.length} elements, got ${actual.length}`];
    return expected.flatMap((e, i) => mismatches(e, actual[i], `${path}[${i}]`, shape));
  }
  if (expected !== null && typeof expected === 'object') {
    if (actual === null || typeof actual !== 'object' || Array.isArray(actual))
      return [`${path}: expected an object, got ${JSON.stringify(actual)}`];
    return Object.entries(expected).flatMap(([k, v]) =>
      k in actual
        ? mismatches(v, (actual as Record<string, unknown>)[k], `${path}.${k}`, shape)
        : [`${path}.${k}: missing`],
    );
  }
  return Object.is(expected, actual)
    ? []
    : [`${path}: expected ${JSON.stringify(expected)}, got ${JSON.stringify(actual)}`];
}

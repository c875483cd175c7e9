/**
 * The documentation server as an AI agent and a person use it: MCP `search_docs` and `get_page`
 * calls (one JSON-RPC POST each) and the search page, measured like every other path (pinned,
 * wrk, bare answering the same bytes), plus the search's own latency in process.
 */
import { loadPages } from '../../src/modules/docs/pages.ts';
import { DocsService } from '../../src/modules/docs/service.ts';
import { type BenchContext, compare, type Scenario } from '../lib/harness.ts';

/** Questions of the kinds agents ask (bench/docs-search-eval.json has the full evaluation set). */
const QUERIES = [
  'how do I page through a geo family',
  'postback duplicate',
  'what does 409 mean on orders',
  'ETag 304',
];

const MCP_HEADERS = { 'content-type': 'application/json', accept: 'application/json, text/event-stream' };

const call = (name: string, args: Record<string, string>) =>
  JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name, arguments: args } });

/** One MCP tool call sent over and over (wrk sends one body; bare answers that call's bytes). */
async function mcp(ctx: BenchContext, name: string, body: string) {
  const fx = await ctx.fixture('demo', 'pglite');
  const res = await fetch(`${fx.podium.url}/docs/mcp`, { method: 'POST', headers: MCP_HEADERS, body });
  const bytes = (await res.arrayBuffer()).byteLength;
  if (res.status !== 200) throw new Error(`docs: ${name} answered ${res.status}`);
  const spec = { paths: ['/docs/mcp'], method: 'POST', headers: MCP_HEADERS, body };
  return { ...(await compare(ctx, name, fx, spec, undefined)), body_bytes_first: bytes };
}

/** In-process `find` latency over the questions above, after a warm-up (no HTTP). */
function searchLatency() {
  const docs = new DocsService(loadPages(), '/docs', 'http://localhost');
  for (let i = 0; i < 200; i++) docs.find(QUERIES[i % QUERIES.length]!);
  const times: number[] = [];
  for (let i = 0; i < 5000; i++) {
    const t0 = performance.now();
    docs.find(QUERIES[i % QUERIES.length]!);
    times.push(performance.now() - t0);
  }
  times.sort((a, b) => a - b);
  const at = (q: number) => Math.round(times[Math.floor(times.length * q)]! * 1000) / 1000;
  return { scenario: 'docs-find', p50_ms: at(0.5), p99_ms: at(0.99), goal_p99_ms: 2 };
}

export const docs: Scenario = {
  name: 'docs',
  about:
    'MCP search_docs and get_page (POST /docs/mcp) and GET /docs/search?q=… against bare, demo on PGlite; in-process search latency',
  async run(ctx) {
    const out: Record<string, unknown>[] = [];
    out.push(await mcp(ctx, 'docs-mcp-search', call('search_docs', { query: QUERIES[0]! })));
    out.push(await mcp(ctx, 'docs-mcp-page', call('get_page', { path: '/docs/toplist-api#errors' })));
    const fx = await ctx.fixture('demo', 'pglite');
    const paths = QUERIES.map((q) => `/docs/search?q=${encodeURIComponent(q)}`);
    out.push(await compare(ctx, 'docs-search-page', fx, { paths }, undefined));
    out.push(searchLatency());
    return out;
  },
};

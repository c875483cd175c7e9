/**
 * Docs server benchmark: `search_docs` over MCP (rate limit off) against a bare node:http server
 * answering the same bytes, in the same process tree, plus in-process search latency.
 * Run: npm run bench docs
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import autocannon from 'autocannon';
import { buildDocsApp } from '../src/app.ts';
import { loadConfig } from '../src/config.ts';
import { loadPages } from '../src/modules/docs/pages.ts';
import { DocsService } from '../src/modules/docs/service.ts';

const DURATION_S = Number(process.env.BENCH_SECONDS ?? 5);
const QUERIES = [
  'how do I page through a geo family',
  'postback duplicate',
  'what does 409 mean on orders',
  'ETag 304',
];
const body = JSON.stringify({
  jsonrpc: '2.0',
  id: 1,
  method: 'tools/call',
  params: { name: 'search_docs', arguments: { query: QUERIES[0] } },
});
const headers = { 'content-type': 'application/json', accept: 'application/json, text/event-stream' };

async function load(url: string) {
  const r = await autocannon({ url, method: 'POST', headers, body, connections: 16, duration: DURATION_S });
  return { rps: Math.round(r.requests.average), p99: r.latency.p99, errors: r.errors + r.non2xx };
}

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
  const at = (q: number) => times[Math.floor(times.length * q)]!.toFixed(3);
  return { p50_ms: at(0.5), p99_ms: at(0.99) };
}

const config = loadConfig({}, { logLevel: 'silent', docsRateLimit: 0 });

/** Runs the docs benchmark and returns its JSON report. */
export async function run(): Promise<Record<string, unknown>> {
  const app = await buildDocsApp({ config, logger: false });
  const docsUrl = `${await app.listen({ host: '127.0.0.1', port: 0 })}/docs/mcp`;
  const sample = await fetch(docsUrl, { method: 'POST', headers, body });
  const sampleBytes = Buffer.from(await sample.arrayBuffer());

  const bare = createServer((req, res) => {
    req.resume();
    req.on('end', () => res.writeHead(200, { 'content-type': 'application/json' }).end(sampleBytes));
  });
  await new Promise<void>((ok) => bare.listen(0, '127.0.0.1', ok));
  const bareUrl = `http://127.0.0.1:${(bare.address() as AddressInfo).port}/`;

  const baseline = await load(bareUrl);
  const mcp = await load(docsUrl);
  const search = searchLatency();
  const report = {
    mcp_search_docs: mcp,
    bare_node_http_echo: baseline,
    rps_ratio: +(mcp.rps / baseline.rps).toFixed(3),
    in_process_search: search,
    search_target_p99_ms: 2,
  };
  await app.close();
  bare.close();
  return report;
}

/**
 * The baseline: a plain node:http server answering, for each path, the exact status, headers and
 * body Podium answered for it (fetched once at start). Nothing is looked up, logged or written:
 * it shows what the runtime itself costs per response on this machine.
 */
import { createServer, type OutgoingHttpHeaders, request } from 'node:http';
import type { AddressInfo } from 'node:net';
// Answers profile-start / profile-stop, as Podium's process does (BENCH_CPU_PROF profiles both).
import './profiler.mjs';

interface Canned {
  status: number;
  headers: OutgoingHttpHeaders;
  body: Buffer;
}

/** Headers node:http writes itself. */
const OWN = new Set(['date', 'connection', 'keep-alive', 'transfer-encoding']);

/**
 * Podium's answer to one request, as it went over the wire: node:http, not fetch, which would ask
 * for gzip unasked and hand back the body decompressed under its `content-encoding` header.
 */
function can(
  podiumUrl: string,
  r: { path: string; method: string; headers: Record<string, string>; body?: string },
): Promise<Canned> {
  return new Promise((resolve, reject) => {
    const req = request(`${podiumUrl}${r.path}`, { method: r.method, headers: r.headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('error', reject);
      res.on('end', () => {
        const body = Buffer.concat(chunks);
        const headers: OutgoingHttpHeaders = {};
        for (const [k, v] of Object.entries(res.headers)) if (!OWN.has(k) && v !== undefined) headers[k] = v;
        headers['content-length'] = body.length;
        resolve({ status: res.statusCode ?? 0, headers, body });
      });
    });
    req.on('error', reject);
    req.end(r.body);
  });
}

async function main() {
  const byUrl = new Map<string, Canned>();
  const byPath = new Map<string, Canned>();
  const server = createServer((req, res) => {
    const url = req.url ?? '/';
    const hit = byUrl.get(url) ?? byPath.get(url.split('?')[0]!);
    req.resume();
    if (!hit) {
      res.writeHead(404, { 'content-length': 0 }).end();
      return;
    }
    res.writeHead(hit.status, hit.headers);
    res.end(hit.body);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  process.on('message', async (m: Record<string, unknown>) => {
    if (m.cmd === 'can') {
      const reqs = m.requests as Parameters<typeof can>[1][];
      for (const r of reqs) {
        const canned = await can(m.podiumUrl as string, r);
        byUrl.set(r.path, canned);
        byPath.set(r.path.split('?')[0]!, canned);
      }
      process.send?.({ canned: reqs.length });
    }
    if (m.cmd === 'stop') server.close(() => process.exit(0));
  });
  process.send?.({
    ready: true,
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    pid: process.pid,
  });
}

main().catch((err) => {
  process.stderr.write(`${(err as Error).stack}\n`);
  process.exit(1);
});

/**
 * The baseline: a plain node:http server answering, for each path, the exact status, headers and
 * body Podium answered for it (fetched once at start). Nothing is looked up, logged or written:
 * it shows what the runtime itself costs per response on this machine.
 */
import { createServer, type OutgoingHttpHeaders } from 'node:http';
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

async function can(
  podiumUrl: string,
  r: { path: string; method: string; headers: Record<string, string>; body?: string },
) {
  const res = await fetch(`${podiumUrl}${r.path}`, {
    method: r.method,
    headers: r.headers,
    body: r.body,
    redirect: 'manual',
  });
  const body = Buffer.from(await res.arrayBuffer());
  const headers: OutgoingHttpHeaders = {};
  res.headers.forEach((v, k) => {
    if (!OWN.has(k)) headers[k] = v;
  });
  headers['content-length'] = body.length;
  return { status: res.status, headers, body };
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

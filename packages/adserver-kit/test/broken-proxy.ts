import { createServer, type Server } from 'node:https';
import type { AddressInfo } from 'node:net';
import { Agent, request } from 'undici';

// A deliberately broken ad server for checker tests: an HTTPS loopback proxy in front of the
// reference server that rewrites requests or answers the way a non-conforming server would.

export interface Exchange {
  method: string;
  path: string;
  headers: Record<string, string>;
  body: string;
}
export interface Answer {
  status: number;
  headers: Record<string, string>;
  body: string;
}
export interface Breakage {
  /** Rewrites the request, or answers it directly without the upstream. */
  request?: (ex: Exchange) => Exchange | Answer;
  /** Rewrites the upstream's answer. */
  response?: (ex: Exchange, res: Answer) => Answer;
}

/** Starts a broken variant in front of `upstream` (a base URL); resolves to its base URL and a closer. */
export async function brokenServer(
  upstream: string,
  tls: { key: string; cert: string },
  breakage: Breakage,
): Promise<{ url: string; close(): Promise<void> }> {
  const up = new URL(upstream);
  const agent = new Agent({ connect: { ca: tls.cert } });
  const server: Server = createServer(tls, (req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', async () => {
      const headers: Record<string, string> = {};
      for (const [k, v] of Object.entries(req.headers))
        if (typeof v === 'string' && k !== 'host' && k !== 'content-length') headers[k] = v;
      let ex: Exchange | Answer = {
        method: req.method ?? 'GET',
        path: req.url ?? '/',
        headers,
        body: Buffer.concat(chunks).toString('utf8'),
      };
      const original = ex as Exchange;
      if (breakage.request) ex = breakage.request(ex as Exchange);
      let answer: Answer;
      if ('status' in ex) answer = ex;
      else {
        const r = await request(`${up.origin}${ex.path}`, {
          method: ex.method as 'GET' | 'POST',
          headers: ex.headers,
          body: ex.method === 'GET' ? undefined : ex.body,
          dispatcher: agent,
        });
        const h: Record<string, string> = {};
        for (const [k, v] of Object.entries(r.headers))
          if (
            typeof v === 'string' &&
            !['content-length', 'connection', 'keep-alive', 'transfer-encoding'].includes(k)
          )
            h[k] = v;
        answer = { status: r.statusCode, headers: h, body: await r.body.text() };
        if (breakage.response) answer = breakage.response(original, answer);
      }
      res.writeHead(answer.status, answer.headers).end(answer.body);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  return {
    url: `https://127.0.0.1:${port}${up.pathname}`,
    async close() {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
      await agent.close();
    },
  };
}

/** Rewrites the JSON body of an answer. */
// biome-ignore lint/suspicious/noExplicitAny: each variant edits arbitrary JSON of its own endpoint
export function editJson(res: Answer, fn: (body: any) => unknown): Answer {
  return { ...res, body: JSON.stringify(fn(JSON.parse(res.body))) };
}

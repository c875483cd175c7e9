import { gunzipSync } from 'node:zlib';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildDocsApp } from '../src/app.ts';
import { loadConfig } from '../src/config.ts';
import { MCP_TOOLS } from '../src/modules/docs/discovery.ts';
import { loadPages } from '../src/modules/docs/pages.ts';
import { splitSections } from '../src/modules/docs/sections.ts';

const MCP_HEADERS = { 'content-type': 'application/json', accept: 'application/json, text/event-stream' };
const rpc = (method: string, params: object = {}, id: number | string = 1) => ({
  jsonrpc: '2.0',
  id,
  method,
  params,
});
const textOf = (result: unknown) => (result as { content: { text: string }[] }).content[0]!.text;

// The docs server needs no database: it is built on its own, as with PODIUM_DOCS_PORT.
describe('documentation server', () => {
  const t = { app: undefined as unknown as FastifyInstance, clock: { now: new Date() } };
  let url: string;
  const pages = loadPages();
  // Walks over every page would trip the per-IP budget: each request comes from its own address.
  let n = 0;
  const walk = (path: string) => t.app.inject({ url: path, remoteAddress: `10.9.${n >> 8}.${n++ & 255}` });

  const post = (payload: unknown, remoteAddress = '198.51.100.1') =>
    t.app.inject({
      method: 'POST',
      url: '/docs/mcp',
      headers: MCP_HEADERS,
      payload: typeof payload === 'string' ? payload : JSON.stringify(payload),
      remoteAddress,
    });

  beforeAll(async () => {
    const config = loadConfig({}, { publicUrl: 'https://podium.test', logLevel: 'silent', docsPort: 3999 });
    t.app = await buildDocsApp({ config, now: () => t.clock.now, logger: false });
    url = await t.app.listen({ host: '127.0.0.1', port: 0 });
  });
  afterAll(() => t.app.close());

  describe('pages', () => {
    it('serves every page as sanitised HTML with navigation and a search box, and as .md', async () => {
      for (const page of pages) {
        const path = page.route === '/' ? '/docs/' : `/docs${page.route}`;
        const html = await walk(path);
        expect(html.statusCode, path).toBe(200);
        expect(html.headers['content-type']).toBe('text/html; charset=utf-8');
        expect(html.headers['content-security-policy']).toContain("default-src 'none'");
        expect(html.body).toContain('<nav>');
        expect(html.body).toContain('name="q"');
        expect(html.body).not.toMatch(/<script/i);
        const mdPath = page.route === '/' ? '/docs.md' : `/docs${page.route}.md`;
        const md = await walk(mdPath);
        expect(md.statusCode, mdPath).toBe(200);
        expect(md.headers['content-type']).toBe('text/markdown; charset=utf-8');
        expect(md.body).toBe(page.source);
      }
    });

    it('every relative link between pages resolves, anchors included', async () => {
      for (const page of pages) {
        const from = new URL(page.route === '/' ? '/docs/' : `/docs${page.route}`, 'https://podium.test');
        for (const [, target] of page.body.matchAll(/\]\(([^)\s]+)\)/g)) {
          if (/^[a-z]+:/.test(target!)) continue;
          const url = new URL(target!, from);
          const res = await walk(url.pathname);
          expect(res.statusCode, `${page.slug}: ${target}`).toBe(200);
          // An anchor is checked on the HTML page, also for a link to the markdown source.
          const html = url.pathname.endsWith('.md') ? await walk(url.pathname.slice(0, -3)) : res;
          if (url.hash) expect(html.body, `${page.slug}: ${target}`).toContain(`id="${url.hash.slice(1)}"`);
        }
      }
    });

    it('every search section is an anchor of its HTML page', async () => {
      for (const page of pages) {
        const html = (await walk(page.route === '/' ? '/docs/' : `/docs${page.route}`)).body;
        for (const s of splitSections(page))
          if (s.anchor) expect(html, `${page.slug}#${s.anchor}`).toContain(`id="${s.anchor}"`);
      }
      const res = await t.app.inject({ url: '/docs/search?q=forecast_unsupported' });
      expect(res.body).toContain('href="/docs/adserver-contract#post-forecast"');
    });

    it('redirects the bare base to the index and 404s unknown pages', async () => {
      const bare = await t.app.inject({ url: '/docs' });
      expect(bare.statusCode).toBe(301);
      expect(bare.headers.location).toBe('/docs/');
      for (const path of ['/docs/nope', '/docs/nope.md', '/docs/index', '/docs/%3Cscript%3E']) {
        const res = await t.app.inject({ url: path });
        expect(res.statusCode, path).toBe(404);
        expect(res.json().code).toBe('not_found');
      }
    });

    it('llms.txt lists every page with links that resolve; llms-full.txt holds every page', async () => {
      const llms = await t.app.inject({ url: '/docs/llms.txt' });
      expect(llms.statusCode).toBe(200);
      expect(llms.body).toMatch(/^# Podium documentation\n\n> /);
      const links = [...llms.body.matchAll(/\]\((https:\/\/podium\.test[^)]+)\)/g)].map((m) => m[1]!);
      expect(links).toHaveLength(pages.length - 1);
      for (const link of links) {
        const res = await walk(link.replace('https://podium.test', ''));
        expect(res.statusCode, link).toBe(200);
      }
      const full = await t.app.inject({ url: '/docs/llms-full.txt' });
      expect(full.statusCode).toBe(200);
      for (const page of pages) expect(full.body).toContain(page.source.trimEnd());
    });

    it('gzips pages, .md and llms*.txt for a client that accepts it, from the first ask', async () => {
      for (const [i, path] of [
        '/docs/llms-full.txt',
        '/docs/toplist-api',
        '/docs/toplist-api.md',
      ].entries()) {
        const plain = await walk(path);
        expect(plain.headers.vary).toBe('Accept-Encoding');
        expect(plain.headers['content-encoding']).toBeUndefined();
        const zipped = await t.app.inject({
          url: path,
          headers: { 'accept-encoding': 'gzip, deflate, br' },
          remoteAddress: `10.8.0.${i}`,
        });
        expect(zipped.headers['content-encoding'], path).toBe('gzip');
        expect(zipped.statusCode, path).toBe(200);
        expect(zipped.headers['content-type']).toBe(plain.headers['content-type']);
        expect(gunzipSync(zipped.rawPayload).toString()).toBe(plain.body);
        expect(zipped.rawPayload.length).toBeLessThan(plain.rawPayload.length / 2);
      }
      // A page reached by another spelling of its path is the same body, compressed once.
      const other = await t.app.inject({
        url: '/docs/toplist-api?x=1',
        headers: { 'accept-encoding': 'gzip' },
      });
      expect(other.headers['content-encoding']).toBe('gzip');
    });

    it('the search box page finds pages and escapes the query', async () => {
      const res = await t.app.inject({ url: '/docs/search?q=%3Cb%3Epagination' });
      expect(res.statusCode).toBe(200);
      expect(res.body).toContain('&lt;b&gt;pagination');
      expect(res.body).not.toContain('<b>pagination');
      expect(res.body).toContain('href="/docs/toplist-api"');
    });
  });

  describe('CORS: public content', () => {
    const origin = { origin: 'https://agent.example' };
    it('GET pages, .md, llms*.txt and the search page carry Access-Control-Allow-Origin: *', async () => {
      for (const url of [
        '/docs/',
        '/docs/toplist-api',
        '/docs/toplist-api.md',
        '/docs/llms.txt',
        '/docs/llms-full.txt',
        '/docs/search?q=etag',
        '/docs/nope',
      ]) {
        const res = await walk(url);
        expect(res.headers['access-control-allow-origin'], url).toBe('*');
      }
    });

    it('answers the MCP preflight and the MCP POST (over HTTP, as a browser would)', async () => {
      const pre = await fetch(`${url}/docs/mcp`, {
        method: 'OPTIONS',
        headers: {
          ...origin,
          'access-control-request-method': 'POST',
          'access-control-request-headers': 'content-type',
        },
      });
      expect(pre.status).toBe(204);
      expect(pre.headers.get('access-control-allow-origin')).toBe('*');
      expect(pre.headers.get('access-control-allow-methods')).toContain('POST');
      expect(pre.headers.get('access-control-allow-headers')).toContain('content-type');
      const res = await fetch(`${url}/docs/mcp`, {
        method: 'POST',
        headers: { ...origin, ...MCP_HEADERS },
        body: JSON.stringify(
          rpc('tools/call', { name: 'search_docs', arguments: { query: 'Idempotency-Key' } }),
        ),
      });
      expect(res.status).toBe(200);
      expect(res.headers.get('access-control-allow-origin')).toBe('*');
      const hits = JSON.parse(
        ((await res.json()) as { result: { content: { text: string }[] } }).result.content[0]!.text,
      ).results;
      expect(hits[0].snippet.toLowerCase()).toContain('idempotency-key');
    });
  });

  describe('MCP endpoint', () => {
    it('the official SDK client connects, lists tools and calls all three', async () => {
      const client = new Client({ name: 'docs-test', version: '1.0.0' });
      await client.connect(new StreamableHTTPClientTransport(new URL(`${url}/docs/mcp`)));
      const tools = await client.listTools();
      expect(tools.tools.map((x) => x.name).sort()).toEqual([...MCP_TOOLS].sort());

      const listed = JSON.parse(textOf(await client.callTool({ name: 'list_pages', arguments: {} }))).pages;
      expect(listed).toHaveLength(pages.length);
      expect(listed).toContainEqual({
        product: 'toplist-api',
        title: 'Toplist API',
        path: '/docs/toplist-api',
        direction: 'you-call-us',
      });

      const found = JSON.parse(
        textOf(await client.callTool({ name: 'search_docs', arguments: { query: 'per_page pagination' } })),
      ).results;
      expect(found.length).toBeGreaterThan(0);
      expect(found.length).toBeLessThanOrEqual(10);
      expect(found[0]).toMatchObject({
        path: expect.stringMatching(/^\/docs\//),
        snippet: expect.any(String),
      });

      // A result names a section; get_page returns that section, and the page path the whole page.
      expect(found[0].path).toMatch(/^\/docs\/[a-z-]+#[a-z0-9-]+$/);
      const section = await client.callTool({ name: 'get_page', arguments: { path: found[0].path } });
      expect(section.isError).toBeFalsy();
      expect(textOf(section)).toMatch(/^<!-- .+ › .+ -->\n\n#{2,3} /);
      const page = await client.callTool({ name: 'get_page', arguments: { path: found[0].page } });
      expect(page.isError).toBeFalsy();
      expect(textOf(page)).toMatch(/^---\n/);

      // The query limit is 200 characters, not 200 UTF-16 units: 150 emoji pass, 201 characters do not.
      const emoji = await client.callTool({ name: 'search_docs', arguments: { query: '🎰'.repeat(150) } });
      expect(emoji.isError).toBeFalsy();
      const over = await client.callTool({
        name: 'search_docs',
        arguments: { query: `${'🎰'.repeat(200)}x` },
      });
      expect(over.isError).toBe(true);
      expect(textOf(over)).toContain('at most 200 characters');

      const missing = await client.callTool({ name: 'get_page', arguments: { path: '/docs/secrets' } });
      expect(missing.isError).toBe(true);
      expect(textOf(missing)).toContain('/docs/secrets');
      await client.close();
    });

    it('the SDK client calls the connector tools search and fetch, and reads every page as a resource', async () => {
      const client = new Client({ name: 'connector-test', version: '1.0.0' });
      await client.connect(new StreamableHTTPClientTransport(new URL(`${url}/docs/mcp`)));
      const found = JSON.parse(
        textOf(await client.callTool({ name: 'search', arguments: { query: 'forecast_unsupported' } })),
      );
      expect(Object.keys(found)).toEqual(['results']);
      expect(found.results[0]).toEqual({
        id: '/docs/adserver-contract#post-forecast',
        title: 'Ad-server contract › POST /forecast',
        url: 'https://podium.test/docs/adserver-contract#post-forecast',
      });
      for (const r of found.results) expect(Object.keys(r)).toEqual(['id', 'title', 'url']);

      const doc = JSON.parse(
        textOf(await client.callTool({ name: 'fetch', arguments: { id: found.results[0].id } })),
      );
      expect(Object.keys(doc)).toEqual(['id', 'title', 'text', 'url', 'metadata']);
      expect(doc).toMatchObject({
        id: '/docs/adserver-contract#post-forecast',
        title: 'Ad-server contract › POST /forecast',
        url: 'https://podium.test/docs/adserver-contract#post-forecast',
        metadata: { product: 'adserver', direction: 'we-call-you', page: '/docs/adserver-contract' },
      });
      expect(doc.text).toMatch(/^## POST \/forecast\n/);
      expect(doc.text).not.toContain('## POST /orders');
      expect(doc.metadata.length).toBe(doc.text.length);
      const whole = JSON.parse(
        textOf(await client.callTool({ name: 'fetch', arguments: { id: '/docs/webhooks' } })),
      );
      expect(whole.text).toMatch(/^---\n/);
      const unknown = await client.callTool({ name: 'fetch', arguments: { id: '/docs/secrets#x' } });
      expect(unknown.isError).toBe(true);

      const { resources } = await client.listResources();
      expect(resources).toHaveLength(pages.length);
      const api = resources.find((r) => r.name === 'toplist-api')!;
      expect(api).toMatchObject({
        uri: 'https://podium.test/docs/toplist-api.md',
        mimeType: 'text/markdown',
        title: 'Toplist API',
      });
      const read = await client.readResource({ uri: api.uri });
      expect(read.contents[0]).toMatchObject({ uri: api.uri, mimeType: 'text/markdown' });
      expect((read.contents[0] as { text: string }).text).toBe(
        pages.find((p) => p.slug === 'toplist-api')!.source,
      );
      await expect(client.readResource({ uri: 'https://podium.test/docs/secrets.md' })).rejects.toThrow();
      await client.close();
    });

    it('serves the MCP server card at /.well-known/mcp, naming the endpoint and the tools', async () => {
      for (const path of ['/.well-known/mcp', '/.well-known/mcp.json']) {
        const res = await fetch(`${url}${path}`);
        expect(res.status).toBe(200);
        expect(res.headers.get('access-control-allow-origin')).toBe('*');
        const card = (await res.json()) as { tools: string[]; resources: unknown[] };
        expect(card).toMatchObject({
          name: 'podium-docs',
          transport: { type: 'streamable-http', endpoint: 'https://podium.test/docs/mcp' },
          authentication: { required: false },
          capabilities: { tools: {}, resources: {} },
        });
        expect(card.tools).toEqual([...MCP_TOOLS]);
        expect(card.resources).toHaveLength(pages.length);
      }
    });

    it('answers ping, and notifications with 202', async () => {
      const ping = await post(rpc('ping'));
      expect(ping.statusCode).toBe(200);
      expect(ping.json()).toEqual({ jsonrpc: '2.0', id: 1, result: {} });
      const note = await post({ jsonrpc: '2.0', method: 'notifications/initialized' });
      expect(note.statusCode).toBe(202);
    });

    it('gives proper JSON-RPC errors', async () => {
      const parse = await post('{"jsonrpc":');
      expect(parse.statusCode).toBe(400);
      expect(parse.json()).toEqual({
        jsonrpc: '2.0',
        id: null,
        error: { code: -32700, message: expect.any(String) },
      });
      const batch = await post([rpc('ping'), rpc('ping', {}, 2)]);
      expect(batch.json().error.code).toBe(-32600);
      for (const bad of [
        { id: 1, method: 'ping' },
        { jsonrpc: '2.0', id: 1, method: 7 },
        { jsonrpc: '2.0', id: {}, method: 'ping' },
        42,
      ]) {
        const res = await post(bad);
        expect(res.json().error.code, JSON.stringify(bad)).toBe(-32600);
      }
      const unknown = await post(rpc('resources/destroy'));
      expect(unknown.json().error.code).toBe(-32601);
      const badParams = await post(rpc('tools/call', { arguments: {} }));
      expect(badParams.json()).toMatchObject({ id: 1, error: { code: -32602 } });
      // Tool-level problems are tool errors (MCP): the model sees them and can correct itself.
      const badArgs = await post(rpc('tools/call', { name: 'get_page', arguments: { path: 5 } }));
      expect(badArgs.json().result).toMatchObject({ isError: true });
      expect(textOf(badArgs.json().result)).toContain('-32602');
      const noTool = await post(rpc('tools/call', { name: 'delete_everything', arguments: {} }));
      expect(textOf(noTool.json().result)).toContain('delete_everything not found');
    });

    it('refuses a 201-character query and accepts 200', async () => {
      const long = await post(
        rpc('tools/call', { name: 'search_docs', arguments: { query: 'a'.repeat(201) } }),
      );
      expect(long.json().result.isError).toBe(true);
      expect(textOf(long.json().result)).toContain('at most 200 character');
      const ok = await post(
        rpc('tools/call', { name: 'search_docs', arguments: { query: `token ${'x'.repeat(194)}` } }),
      );
      expect(ok.json().result.isError).toBeFalsy();
    });

    it('limits the body to 8 KB: 8193 bytes → 413', async () => {
      const base = JSON.stringify(rpc('tools/call', { name: 'search_docs', arguments: { query: 'token' } }));
      const pad = (n: number) => `${base.slice(0, -3)},"pad":"${'x'.repeat(n - base.length - 9)}"}}}`;
      expect(Buffer.byteLength(pad(8192))).toBe(8192);
      expect((await post(pad(8192))).statusCode).toBe(200);
      const over = await post(pad(8193));
      expect(over.statusCode).toBe(413);
      expect(over.json().code).toBe('payload_too_large');
    });

    it('GET → 405 with Allow: POST', async () => {
      const res = await t.app.inject({ method: 'GET', url: '/docs/mcp' });
      expect(res.statusCode).toBe(405);
      expect(res.headers.allow).toBe('POST');
      expect(res.json().code).toBe('method_not_allowed');
    });
  });

  it('rate limit: the 61st request in 10 s → 429 with Retry-After, then blocked for 10 s', async () => {
    const ip = '203.0.113.9';
    const start = t.clock.now;
    const at = (ms: number) => {
      t.clock.now = new Date(start.getTime() + ms);
    };
    const hit = () => t.app.inject({ url: '/docs/llms.txt', remoteAddress: ip });
    try {
      for (let i = 0; i < 60; i++) {
        at(i * 100);
        expect((await hit()).statusCode, `request ${i + 1}`).toBe(200);
      }
      at(6000);
      const blocked = await hit();
      expect(blocked.statusCode).toBe(429);
      expect(blocked.headers['retry-after']).toBe('10');
      expect(blocked.json().code).toBe('rate_limited');
      // A browser script can read the refusal and its Retry-After.
      expect(blocked.headers['access-control-allow-origin']).toBe('*');
      expect(blocked.headers['access-control-expose-headers']).toContain('retry-after');
      // The original window would have ended at 10 s; the block lasts 10 s from the 61st request.
      at(15_999);
      expect((await hit()).statusCode).toBe(429);
      expect((await post(rpc('ping'), ip)).statusCode).toBe(429);
      // Another address is not affected.
      expect((await t.app.inject({ url: '/docs/llms.txt', remoteAddress: '203.0.113.10' })).statusCode).toBe(
        200,
      );
      at(16_000);
      expect((await hit()).statusCode).toBe(200);
    } finally {
      t.clock.now = start;
    }
  });
});

import { connect } from 'node:net';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import type { JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildDocsApp } from '../src/app.ts';
import { loadConfig } from '../src/config.ts';
import { createDocsMcpServer, directToolCall } from '../src/modules/docs/mcp.ts';
import { loadPages } from '../src/modules/docs/pages.ts';
import { DocsService } from '../src/modules/docs/service.ts';

const docs = new DocsService(loadPages(), '/docs', 'https://podium.test');

/** The SDK's own answer to one message: a fresh server, as each POST gets, over an in-memory pair. */
async function sdkAnswer(message: object): Promise<string> {
  const server = createDocsMcpServer(docs, 'test');
  const [client, side] = InMemoryTransport.createLinkedPair();
  const answer = new Promise<JSONRPCMessage>((resolve) => {
    client.onmessage = resolve;
  });
  await server.connect(side);
  await client.send(message as JSONRPCMessage);
  const text = JSON.stringify(await answer);
  await server.close();
  return text;
}

const call = (name: string, args?: unknown, id: string | number = 1) => ({
  jsonrpc: '2.0',
  id,
  method: 'tools/call',
  params: args === undefined ? { name } : { name, arguments: args },
});

describe('MCP tool calls answered without the SDK', () => {
  it('answer plain tool calls byte for byte as the SDK does', async () => {
    const plain = [
      call('search_docs', { query: 'postback duplicate' }),
      call('search_docs', { query: 'ETag 304' }, 'req-7'),
      call('search_docs', { query: 'how do I page through a geo family' }, 0),
      call('search_docs', { query: 'zzzzqqqq' }),
      call('search_docs', { query: '🎰'.repeat(150) }),
      call('search_docs', { query: `token ${'x'.repeat(194)}` }),
      call('get_page', { path: '/docs/toplist-api#errors' }),
      call('get_page', { path: '/docs/toplist-api' }),
      call('get_page', { path: '/docs/secrets' }),
      call('get_page', { path: '"<x>"'.repeat(100) }),
      call('list_pages', {}),
      call('list_pages'),
      call('search', { query: 'postback duplicate' }),
      call('fetch', { id: '/docs/toplist-api#errors' }),
      call('fetch', { id: '/docs/toplist-api' }),
      call('fetch', { id: '/docs/secrets' }),
    ];
    for (const message of plain) {
      const direct = directToolCall(docs, message);
      expect(direct, JSON.stringify(message).slice(0, 120)).toBeDefined();
      expect(JSON.stringify(direct)).toBe(await sdkAnswer(message));
    }
  });

  it('leave every other message to the SDK', () => {
    const others: unknown[] = [
      call('search_docs', { query: '' }),
      call('search_docs', { query: 'a'.repeat(201) }),
      call('search_docs', { query: 7 }),
      call('search_docs', { query: 'etag', limit: 3 }),
      call('search_docs', {}),
      call('get_page', { path: 5 }),
      call('get_page', { path: 'x'.repeat(1001) }),
      call('list_pages', { all: true }),
      call('list_pages', []),
      call('list_pages', null),
      call('delete_everything', {}),
      call('toString', {}),
      call('__proto__', {}),
      {
        jsonrpc: '2.0',
        id: 1,
        method: 'tools/call',
        params: { name: 'list_pages', _meta: { progressToken: 1 } },
      },
      { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'list_pages', task: {} } },
      { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'list_pages' }, extra: 1 },
      { jsonrpc: '2.0', method: 'tools/call', params: { name: 'list_pages' } },
      { jsonrpc: '2.0', id: null, method: 'tools/call', params: { name: 'list_pages' } },
      { jsonrpc: '2.0', id: 2 ** 53, method: 'tools/call', params: { name: 'list_pages' } },
      { jsonrpc: '2.0', id: 1e21, method: 'tools/call', params: { name: 'list_pages' } },
      { jsonrpc: '2.0', id: 1.5, method: 'tools/call', params: { name: 'list_pages' } },
      { jsonrpc: '2.0', id: 1, method: 'tools/list' },
      { jsonrpc: '2.0', id: 1, method: 'ping' },
    ];
    for (const message of others)
      expect(directToolCall(docs, message), JSON.stringify(message)).toBeUndefined();
  });

  describe('over HTTP', () => {
    let app: FastifyInstance;
    beforeAll(async () => {
      const config = loadConfig({}, { publicUrl: 'https://podium.test', logLevel: 'silent', docsPort: 3999 });
      app = await buildDocsApp({ config, logger: false });
    });
    afterAll(() => app.close());
    const post = (headers: Record<string, string>) =>
      app.inject({
        method: 'POST',
        url: '/docs/mcp',
        headers: { 'content-type': 'application/json', ...headers },
        payload: JSON.stringify(call('search_docs', { query: 'etag' })),
      });

    it('answers a plain call with the SDK headers and body', async () => {
      const res = await post({
        accept: 'application/json, text/event-stream',
        'mcp-protocol-version': '2025-06-18',
      });
      expect(res.statusCode).toBe(200);
      expect(res.headers['content-type']).toBe('application/json');
      expect(res.headers['access-control-allow-origin']).toBe('*');
      expect(res.headers['x-ratelimit-limit']).toBeDefined();
      expect(res.body).toBe(await sdkAnswer(call('search_docs', { query: 'etag' })));
    });

    it('keeps the transport checks the SDK makes: Accept (406), protocol version (400)', async () => {
      const json = await post({ accept: 'application/json' });
      expect(json.statusCode).toBe(406);
      expect(json.json().error.code).toBe(-32000);
      const old = await post({
        accept: 'application/json, text/event-stream',
        'mcp-protocol-version': '1999-01-01',
      });
      expect(old.statusCode).toBe(400);
      expect(old.json().error.message).toContain('Unsupported protocol version');
    });

    /** One raw HTTP/1.1 exchange (repeated headers exactly as given): status, content-type, body. */
    async function raw(url: string, headerLines: string[], body: string) {
      const { hostname, port } = new URL(url);
      const text = await new Promise<string>((resolve, reject) => {
        const socket = connect(Number(port), hostname);
        const chunks: Buffer[] = [];
        socket.on('data', (c) => chunks.push(c));
        socket.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
        socket.on('error', reject);
        socket.end(
          [
            'POST /docs/mcp HTTP/1.1',
            `Host: ${hostname}`,
            'Connection: close',
            'Accept: application/json, text/event-stream',
            `Content-Length: ${Buffer.byteLength(body)}`,
            ...headerLines,
            '',
            body,
          ].join('\r\n'),
        );
      });
      const [head = '', rest = ''] = text.split('\r\n\r\n');
      return { status: head.split(' ')[1], type: /content-type: (.*)/i.exec(head)?.[1], body: rest };
    }

    it('answers as the SDK does over HTTP, whatever the Content-Type or id (the SDK answers the same call with _meta)', async () => {
      const url = await app.listen({ host: '127.0.0.1', port: 0 });
      const cases: [string[], string | number][] = [
        [['Content-Type: application/json'], 1],
        [['Content-Type: application/json; charset=utf-8'], 'a'],
        [['Content-Type: Application/JSON'], 2],
        [['Content-Type: application/json; charset=utf-8, text/html'], 3],
        [['Content-Type: application/json;a=,'], 4],
        [['Content-Type: application/json', 'Content-Type: text/plain'], 5],
        [['Content-Type: application/json'], 2 ** 53],
        [['Content-Type: application/json'], 1e21],
      ];
      for (const [headers, id] of cases) {
        const message = call('get_page', { path: '/docs/toplist-api#errors' }, id);
        const viaSdk = { ...message, params: { ...message.params, _meta: {} } };
        const direct = await raw(url, headers, JSON.stringify(message));
        expect(direct, `${headers.join(' | ')} id ${id}`).toEqual(
          await raw(url, headers, JSON.stringify(viaSdk)),
        );
      }
    });
  });
});

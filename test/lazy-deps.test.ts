import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';

const SRC = join(import.meta.dirname, '..', 'src');
const dir = mkdtempSync(join(tmpdir(), 'podium-lazy-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/**
 * Runs `body` in a process of its own (this test runner may well have loaded every package) after
 * starting a server on PGlite without Redis, and returns which of `packages` it loaded, with what
 * `body` returned: ES modules as a resolve hook saw them, CommonJS ones (required) from the cache.
 */
function serverLoads(packages: string[], body: string): { loaded: string[]; out: unknown } {
  const log = join(dir, `loaded-${packages.join('-').replace(/\W/g, '')}.txt`);
  writeFileSync(log, '');
  const hook = `import { appendFileSync } from 'node:fs';
    export async function resolve(specifier, context, next) {
      const found = await next(specifier, context);
      appendFileSync(${JSON.stringify(log)}, found.url + '\\n');
      return found;
    }`;
  const script = `
    import Module, { register } from 'node:module';
    import { appendFileSync } from 'node:fs';
    register('data:text/javascript,' + encodeURIComponent(${JSON.stringify(hook)}));
    const { loadConfig } = await import(${JSON.stringify(join(SRC, 'config.ts'))});
    const { startServer } = await import(${JSON.stringify(join(SRC, 'server.ts'))});
    const config = loadConfig({ PATH: process.env.PATH, HOST: '127.0.0.1', PORT: '0',
      PODIUM_DATA_DIR: ${JSON.stringify(join(dir, 'data'))}, LOG_LEVEL: 'silent' });
    const server = await startServer(config, { log: () => {} });
    const out = await (async () => { ${body} })();
    await server.close();
    appendFileSync(${JSON.stringify(log)}, Object.keys(Module._cache).join('\\n'));
    process.stdout.write(JSON.stringify(out));`;
  const out = execFileSync(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], {
    encoding: 'utf8',
    timeout: 120_000,
  });
  const urls = readFileSync(log, 'utf8');
  return { loaded: packages.filter((p) => urls.includes(`/node_modules/${p}/`)), out: JSON.parse(out) };
}

describe('packages a server does not use', () => {
  it('are not loaded by a server on PGlite without Redis: drivers, the MCP SDK, the outbound HTTP client, the AWS SDK, the OpenID Connect client', () => {
    // node-postgres and ioredis cost ~14 MB of RSS, the MCP SDK ~25 MB, undici ~20 MB.
    // The AWS SDK (creatives' s3 store) is only loaded by a server that stores creatives in S3;
    // openid-client (with jose) by the first single sign-on.
    const packages = [
      'pg',
      'ioredis',
      '@modelcontextprotocol',
      'undici',
      '@aws-sdk',
      'openid-client',
      'oauth4webapi',
    ];
    const served = serverLoads(
      packages,
      `
      const health = (await fetch(server.url + '/healthz')).status;
      const page = (await fetch(server.url + '/docs/')).status;
      return { health, page };`,
    );
    expect(served).toEqual({ loaded: [], out: { health: 200, page: 200 } });
  });

  it('loads the MCP SDK with the first MCP request, which it answers', () => {
    const served = serverLoads(
      ['@modelcontextprotocol'],
      `
      const res = await fetch(server.url + '/docs/mcp', {
        method: 'POST',
        headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
        body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
      });
      const body = await res.json();
      return { status: res.status, tools: body.result.tools.map((t) => t.name).sort() };`,
    );
    expect(served).toEqual({
      loaded: ['@modelcontextprotocol'],
      out: { status: 200, tools: ['fetch', 'get_page', 'list_pages', 'search', 'search_docs'] },
    });
  });
});

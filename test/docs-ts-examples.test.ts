import MarkdownIt from 'markdown-it';
import ts from 'typescript';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import * as client from '../packages/toplist-client/src/index.ts';
import { type DemoTokens, loadDemo } from '../src/modules/catalog/demo.ts';
import { loadPages } from '../src/modules/docs/pages.ts';
import { DB_KIND, type TestApp, testApp } from './helpers.ts';

// The TypeScript examples of the pages run too: each ```ts block is compiled with the
// TypeScript compiler (types stripped), its import of the client package is bound to the real
// package, and it runs against a Podium listening on loopback with the demo dataset. What the
// block leaves to its surroundings (`request`, `render`, `env`…) is given here, and the test
// checks the outcome the page promises.

const blocks = (slug: string): string[] =>
  new MarkdownIt()
    .parse(loadPages().find((p) => p.slug === slug)!.body, {})
    .filter((t) => t.type === 'fence' && t.info.trim() === 'ts')
    .map((t) => t.content);

/** Compiles a block to JavaScript and runs it as the body of an async function of `scope`. */
async function run(code: string, scope: Record<string, unknown>): Promise<unknown> {
  const body = code.replace(/^import .* from 'podium-toplist-client';$/gm, '');
  const js = ts.transpileModule(body, {
    compilerOptions: { target: ts.ScriptTarget.ES2022, module: ts.ModuleKind.ESNext },
  }).outputText;
  const names = Object.keys(scope);
  const fn = new Function(...names, `return (async () => {\n${js}\n})();`);
  return fn(...names.map((n) => scope[n]));
}

describe(`documentation TypeScript examples (${DB_KIND})`, () => {
  let t: TestApp;
  let demo: DemoTokens;
  let baseUrl: string;

  beforeAll(async () => {
    t = await testApp({ docsRateLimit: 0 });
    demo = await loadDemo(t.app.services);
    baseUrl = await t.app.listen({ host: '127.0.0.1', port: 0 });
  }, 180_000);
  afterAll(() => t?.close());

  it('geo-families: the pick function chooses as the page says (Liechtenstein → DACH, Sweden → SE, elsewhere → ROW)', async () => {
    const [code] = blocks('geo-families');
    expect(code).toBeDefined();
    const podium = client.createClient({ baseUrl, token: demo.siteTokens[0]!.token });
    const family = await podium.family(1);
    expect(family).toHaveLength(129);
    const pick = (await run(`${code}\nreturn pick;`, {})) as (
      f: client.Toplist[],
      c: string | undefined,
    ) => client.Toplist | undefined;
    expect(pick(family, 'LI')?.slug).toBe('best-casinos-dach');
    expect(pick(family, 'SE')?.slug).toBe('best-casinos-se');
    expect(pick(family, 'IS')?.slug).toBe('best-casinos-is');
    expect(pick(family, 'ZZ')?.slug).toBe('best-casinos-row');
    expect(pick(family, undefined)?.slug).toBe('best-casinos-row');
  });

  it('toplist-client: the quick start, the cache store and the error handling run as written', async () => {
    // Picked by what they do, not by their place on the page (sections get added between them).
    const all = blocks('toplist-client');
    const quickStart = all[0];
    const cacheStore = all.find((b) => b.includes('env.KV'));
    const errors = all.find((b) => b.includes('podium.bySlug(slug)'));
    expect(cacheStore).toBeDefined();
    expect(errors).toBeDefined();
    const token = demo.siteTokens[0]!.token;
    const rendered: unknown[][] = [];
    await run(quickStart!.replace("'https://podium.example'", JSON.stringify(baseUrl)), {
      ...client,
      process: { env: { PODIUM_TOKEN: token } },
      request: new Request('https://site.example/', { headers: { 'cf-ipcountry': 'IS' } }),
      render: (items: unknown[]) => rendered.push(items),
      console,
    });
    expect(rendered).toHaveLength(1);
    expect(rendered[0]!.length).toBeGreaterThan(0);

    // A Workers-style KV namespace: the block stores ETag + body there and revalidates with it.
    const kv = new Map<string, string>();
    const env = {
      PODIUM_TOKEN: token,
      KV: {
        get: async (key: string, type: 'json') =>
          kv.has(key) && type === 'json' ? JSON.parse(kv.get(key)!) : null,
        put: async (key: string, value: string) => {
          kv.set(key, value);
        },
      },
    };
    const podium = (await run(`${cacheStore}\nreturn podium;`, {
      ...client,
      env,
      baseUrl,
    })) as client.ToplistClient;
    const first = await podium.bySlug('best-casinos-se');
    expect(kv.size).toBe(1);
    const again = await podium.bySlug('best-casinos-se');
    expect(again).toEqual(first);

    const bySlug = (slug: string) =>
      run(errors!, { ...client, podium: client.createClient({ baseUrl, token }), slug });
    expect(await bySlug('no-such-toplist')).toBeNull();
    expect(((await bySlug('best-casinos-se')) as client.Toplist).slug).toBe('best-casinos-se');
  });
});

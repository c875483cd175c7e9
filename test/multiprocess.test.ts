import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type DemoTokens, loadDemo } from '../src/modules/catalog/demo.ts';
import { catalogOn, eventually, schemaOf, type TestDb, testDb } from './helpers.ts';
import { serve } from './serve-process.ts';

interface Body {
  data: { id: number; version: string; token: string };
}
const json = async (r: Response | Promise<Response>) => (await (await r).json()) as Body;

// Several processes need a database server they can share: this runs with DATABASE_URL only.
describe.runIf(process.env.DATABASE_URL)('two podium processes on one PostgreSQL', () => {
  let t: TestDb;
  let demo: DemoTokens;
  let a: Awaited<ReturnType<typeof serve>>;
  let b: Awaited<ReturnType<typeof serve>>;

  beforeAll(async () => {
    t = await testDb();
    demo = await loadDemo(catalogOn(t.db));
    const schema = await schemaOf(t.db);
    const url = new URL(process.env.DATABASE_URL!);
    url.searchParams.set('options', `-c search_path=${schema}`);
    const env = { ...process.env, DATABASE_URL: url.toString(), LOG_LEVEL: 'info' };
    [a, b] = await Promise.all([serve(env), serve(env)]);
  });
  afterAll(async () => {
    for (const p of [a, b]) if (p && p.proc.exitCode === null) p.proc.kill('SIGKILL');
    await t.close();
  });

  const site = () => demo.siteTokens[0]!.token;
  const get = (base: string, path: string, token = site()) =>
    fetch(`${base}${path}`, { headers: { authorization: `Bearer ${token}` } });

  it('a publish through one process reaches the cache of the other', async () => {
    const before = await json(get(b.url, '/api/v1/toplists/by-slug/best-casinos-se'));
    expect(before.data.version).toBe('1');
    const res = await fetch(`${a.url}/api/admin/v1/toplists/${before.data.id}/publish`, {
      method: 'POST',
      headers: { authorization: `Bearer ${demo.adminToken}` },
    });
    expect(res.status).toBe(200);
    const seen = await eventually(
      async () => (await json(get(b.url, '/api/v1/toplists/by-slug/best-casinos-se'))).data.version === '2',
    );
    expect(seen).toBe(true);
  });

  it('a token revoked through one process is refused by the other', async () => {
    const created = await fetch(`${a.url}/api/admin/v1/sites/1/tokens`, {
      method: 'POST',
      headers: { authorization: `Bearer ${demo.adminToken}`, 'content-type': 'application/json' },
      body: '{"name":"fleet"}',
    });
    const token = (await json(created)).data;
    expect((await get(b.url, '/api/v1/toplists?per_page=1', token.token)).status).toBe(200);
    await fetch(`${a.url}/api/admin/v1/sites/1/tokens/${token.id}`, {
      method: 'DELETE',
      headers: { authorization: `Bearer ${demo.adminToken}` },
    });
    expect(
      await eventually(
        async () => (await get(b.url, '/api/v1/toplists?per_page=1', token.token)).status === 401,
      ),
    ).toBe(true);
  });

  it('SIGTERM drains and exits 0', async () => {
    a.proc.kill('SIGTERM');
    b.proc.kill('SIGTERM');
    expect(await a.exit).toBe(0);
    expect(await b.exit).toBe(0);
  });
});

import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { Secret, TOTP } from 'otpauth';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../src/config.ts';
import { OutboundClient } from '../src/lib/outbound.ts';
import { sealerFromConfig } from '../src/lib/seal.ts';
import { type DemoTokens, loadDemo } from '../src/modules/catalog/demo.ts';
import { AggregateRepository } from '../src/modules/reporting/aggregate-repository.ts';
import { OperatorAggregates } from '../src/modules/reporting/aggregates.ts';
import { TrackingService } from '../src/modules/tracking/service.ts';
import { eventually, schemaOf, servicesOn, type TestDb, testDb } from './helpers.ts';
import { serve } from './serve-process.ts';

interface Body {
  data: { id: number; version: string; token: string };
}
const DOCS_BUDGET = 10;
const json = async (r: Response | Promise<Response>) => (await (await r).json()) as Body;
const SECRET_KEYS = `1:${randomBytes(32).toString('base64')}`;

async function clickIds(t: TestDb): Promise<Set<string>> {
  const rows = await t.db.query<{ id: string }>("SELECT id FROM clicks WHERE kind = 'click'");
  return new Set(rows.map((r) => r.id));
}

function childPids(pid: number): string[] {
  const out = execFileSync('ps', ['--ppid', String(pid), '-o', 'pid='], { encoding: 'utf8' });
  return out.split('\n').filter((l) => l.trim());
}

/** A programme whose operator report host is not public: every scheduled pull is a refused, failed pull. */
async function programWithReport(db: TestDb['db']): Promise<void> {
  const config = loadConfig({ PODIUM_SECRET_KEYS: SECRET_KEYS, DATABASE_URL: process.env.DATABASE_URL });
  const tracking = new TrackingService(db, (await servicesOn(db)).catalog, config, () => new Date());
  const program = await tracking.createProgram({ slug: 'fleet-op', name: 'Fleet operator' });
  const http = new OutboundClient();
  const aggregates = new OperatorAggregates(
    new AggregateRepository(db),
    sealerFromConfig(config),
    http,
    config,
    () => new Date(),
  );
  await aggregates.setReport(program.id, {
    url: 'https://fleet-op.example/reports',
    key: 'fleet-report-key-123',
  });
  // Saving refuses loopback names now; a row stored before that rule is still refused at connect time.
  await db.query('UPDATE affiliate_programs SET report_url = $2 WHERE id = $1', [
    program.id,
    'https://localhost/reports',
  ]);
  await http.close();
}

// Several processes need a database server they can share: this runs with DATABASE_URL only.
describe.runIf(process.env.DATABASE_URL)('two podium processes on one PostgreSQL', () => {
  let t: TestDb;
  let demo: DemoTokens;
  let a: Awaited<ReturnType<typeof serve>>;
  let b: Awaited<ReturnType<typeof serve>>;
  let env: NodeJS.ProcessEnv;

  beforeAll(async () => {
    t = await testDb();
    demo = await loadDemo(await servicesOn(t.db));
    await programWithReport(t.db);
    const schema = await schemaOf(t.db);
    const url = new URL(process.env.DATABASE_URL!);
    url.searchParams.set('options', `-c search_path=${schema}`);
    env = {
      ...process.env,
      DATABASE_URL: url.toString(),
      LOG_LEVEL: 'info',
      REDIS_URL: process.env.REDIS_URL ?? 'redis://127.0.0.1:6379',
      PODIUM_REDIS_PREFIX: `podium-test:${schema}:`,
      PODIUM_DOCS_RATE_LIMIT: String(DOCS_BUDGET),
      PODIUM_SECRET_KEYS: SECRET_KEYS,
    };
    [a, b] = await Promise.all([serve(env), serve(env)]);
  });
  afterAll(async () => {
    for (const p of [a, b]) if (p && p.proc.exitCode === null) p.proc.kill('SIGKILL');
    await t.close();
  });

  const site = () => demo.siteTokens[0]!.token;
  /** The `/go/...` paths of a live toplist's items. */
  const trackerPaths = async (base: string) => {
    const body = (await (await get(base, '/api/v1/toplists/by-slug/best-casinos-se')).json()) as {
      data: { items: { offer: { trackers: { trackerLink: string }[] } | null }[] };
    };
    const paths = body.data.items.flatMap((i) =>
      (i.offer?.trackers ?? []).map((tr) => new URL(tr.trackerLink).pathname),
    );
    expect(paths.length).toBeGreaterThan(0);
    return paths;
  };
  const get = (base: string, path: string, token = site()) =>
    fetch(`${base}${path}`, { headers: { authorization: `Bearer ${token}` } });

  it('counts the failed sign-ins of one account across processes, and a suspension ends its session in the other', async () => {
    const people = (await servicesOn(t.db)).people;
    const viewer = (await people.listRoles()).find((r) => r.name === 'viewer')!;
    const service = { kind: 'admin' as const, tokenId: null, userId: null, scopes: ['admin'], siteIds: null };
    const { user, invitation } = await people.invite(service, {
      email: 'fleet@example.com',
      roleId: viewer.id,
    });
    const password = 'one passphrase for every process';
    if (invitation.mailed) throw new Error('no mail server in this test: the link comes back');
    await people.acceptLink(new URL(invitation.url).hash.slice('#/accept/'.length), password);
    const signIn = (base: string, pw: string) =>
      fetch(`${base}/api/admin/v1/session`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ email: 'FLEET@example.com', password: pw }),
      });
    const ok = await signIn(b.url, password);
    expect(ok.status).toBe(201);
    const cookie = ok.headers
      .getSetCookie()
      .find((c) => c.startsWith('podium_session='))!
      .split(';')[0]!;
    const who = () => fetch(`${b.url}/api/admin/v1/session`, { headers: { cookie } });
    expect((await who()).status).toBe(200);
    // The account's budget (5 a minute) is one for the fleet: failures alternate between processes.
    for (let i = 0; i < 5; i++)
      expect((await signIn(i % 2 ? a.url : b.url, `wrong guess ${i}`)).status).toBe(401);
    const over = await signIn(a.url, 'wrong guess 5');
    expect(over.status).toBe(429);
    expect(Number(over.headers.get('retry-after'))).toBeGreaterThan(0);
    expect((await signIn(b.url, password)).status).toBe(429);
    const suspended = await fetch(`${a.url}/api/admin/v1/users/${user.id}/suspend`, {
      method: 'POST',
      headers: { authorization: `Bearer ${demo.adminToken}` },
    });
    expect(suspended.status).toBe(200);
    expect((await who()).status).toBe(401);
  });

  it('a TOTP code taken by one process is refused by the other (no replay across the fleet)', async () => {
    const people = (await servicesOn(t.db)).people;
    const viewer = (await people.listRoles()).find((r) => r.name === 'viewer')!;
    const service = { kind: 'admin' as const, tokenId: null, userId: null, scopes: ['admin'], siteIds: null };
    const { invitation } = await people.invite(service, { email: 'twofa@example.com', roleId: viewer.id });
    if (invitation.mailed) throw new Error('no mail server in this test: the link comes back');
    const password = 'two factors for every process';
    await people.acceptLink(new URL(invitation.url).hash.slice('#/accept/'.length), password);
    const post = (base: string, path: string, body: object, headers: Record<string, string> = {}) =>
      fetch(`${base}/api/admin/v1${path}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...headers },
        body: JSON.stringify(body),
      });
    const first = await post(a.url, '/session', { email: 'twofa@example.com', password });
    const cookie = first.headers
      .getSetCookie()
      .find((c) => c.startsWith('podium_session='))!
      .split(';')[0]!;
    const jar = {
      cookie,
      'x-csrf-token': ((await first.json()) as { data: { csrfToken: string } }).data.csrfToken,
    };
    const started = (await (await post(a.url, '/me/two-factor', {}, jar)).json()) as {
      data: { secret: string };
    };
    const totp = new TOTP({ secret: Secret.fromBase32(started.data.secret) });
    expect((await post(a.url, '/me/two-factor/confirm', { code: totp.generate() }, jar)).status).toBe(201);
    const pending = async (base: string) =>
      (
        (await (await post(base, '/session', { email: 'twofa@example.com', password })).json()) as {
          data: { pendingToken: string };
        }
      ).data.pendingToken;
    const [onA, onB] = [await pending(a.url), await pending(b.url)];
    // The next step's code (accepted within the window): taken through one process, then the other.
    const code = totp.generate({ timestamp: Date.now() + 30_000 });
    expect((await post(a.url, '/session/two-factor', { pendingToken: onA, code })).status).toBe(201);
    const replay = await post(b.url, '/session/two-factor', { pendingToken: onB, code });
    expect(replay.status).toBe(401);
  });

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
      1000,
    );
    expect(seen).toBe(true);
  });

  it('a brand restricted through one process stops being served by the other within a second, no republish', async () => {
    const brandsOf = async () => {
      const body = (await (await get(b.url, '/api/v1/toplists/by-slug/best-casinos-se')).json()) as {
        data: { version: string; items: { brand: { id: number } }[] };
      };
      return { version: body.data.version, ids: body.data.items.map((i) => i.brand.id) };
    };
    const before = await brandsOf();
    const restricted = before.ids[0]!;
    const patch = (names: string[]) =>
      fetch(`${a.url}/api/admin/v1/brands/${restricted}`, {
        method: 'PATCH',
        headers: { authorization: `Bearer ${demo.adminToken}`, 'content-type': 'application/json' },
        body: JSON.stringify({ restrictedCountries: names }),
      });
    expect((await patch(['Sweden'])).status).toBe(200);
    expect(await eventually(async () => !(await brandsOf()).ids.includes(restricted), 1000)).toBe(true);
    expect((await brandsOf()).version).toBe(before.version);
    expect((await patch([])).status).toBe(200);
    expect(await eventually(async () => (await brandsOf()).ids[0] === restricted, 1000)).toBe(true);
  });

  it("a brand restricted through one process leaves the other's global variant for that visitor country", async () => {
    const global = (await json(get(b.url, '/api/v1/toplists/by-slug/best-casinos-row'))) as unknown as {
      data: { template: { id: number } };
    };
    const resolved = async (country: string) => {
      const res = await get(
        b.url,
        `/api/v1/toplists/resolve?template_id=${global.data.template.id}&country=${country}`,
      );
      const body = (await res.json()) as {
        data: { geo: { code: string }; items: { brand: { id: number } }[] };
      };
      return { geo: body.data.geo.code, ids: body.data.items.map((i) => i.brand.id) };
    };
    // The demo has no list for the US: its visitors reach the global row.
    const before = await resolved('US');
    expect(before.geo).toBe('ROW');
    const brand = before.ids[0]!;
    const admin = { authorization: `Bearer ${demo.adminToken}`, 'content-type': 'application/json' };
    const current = (await (
      await fetch(`${a.url}/api/admin/v1/brands/${brand}`, { headers: admin })
    ).json()) as {
      data: { restrictedCountries: string[] };
    };
    const patch = (names: string[]) =>
      fetch(`${a.url}/api/admin/v1/brands/${brand}`, {
        method: 'PATCH',
        headers: admin,
        body: JSON.stringify({ restrictedCountries: names }),
      });
    expect((await patch([...current.data.restrictedCountries, 'United States'])).status).toBe(200);
    expect(await eventually(async () => !(await resolved('US')).ids.includes(brand), 1000)).toBe(true);
    // The list itself, as by-slug serves it, still ranks the brand: only US visitors lose it.
    const row = (await (await get(b.url, '/api/v1/toplists/by-slug/best-casinos-row')).json()) as {
      data: { items: { brand: { id: number } }[] };
    };
    expect(row.data.items.map((i) => i.brand.id)).toContain(brand);
    expect((await patch(current.data.restrictedCountries)).status).toBe(200);
    expect(await eventually(async () => (await resolved('US')).ids[0] === brand, 1000)).toBe(true);
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

  it('runs the scheduled operator pull once per period, not once per process', async () => {
    const runs = () =>
      t.db.query<{ slot: string; status: string }>(
        "SELECT slot::text, status FROM job_runs WHERE job = 'operator-aggregates'",
      );
    const done = await eventually(
      async () => (await runs()).some((r) => r.status === 'succeeded' || r.status === 'failed'),
      60_000,
    );
    expect(done).toBe(true);
    // Both processes tick every second; give the loser time to (wrongly) run the slot too.
    await new Promise((r) => setTimeout(r, 3000));
    const slots = (await runs()).length;
    const perDay = await t.db.query<{ day: string; n: number }>(
      "SELECT day::text, count(*)::int AS n FROM aggregate_pulls WHERE trigger = 'schedule' GROUP BY day",
    );
    expect(perDay.length).toBeGreaterThan(0);
    for (const row of perDay) expect(row.n).toBe(slots);
    const [failed] = await t.db.query<{ reason: string }>('SELECT reason FROM aggregate_pulls LIMIT 1');
    expect(failed!.reason).toMatch(/localhost is not a public address \(loopback\)/);
  });

  it('counts documentation requests to both processes against one budget (Redis)', async () => {
    const statuses: number[] = [];
    for (let i = 0; i < DOCS_BUDGET; i++)
      statuses.push((await fetch(`${(i % 2 ? b : a).url}/docs/llms.txt`)).status);
    expect(statuses).toEqual(Array(DOCS_BUDGET).fill(200));
    const over = await fetch(`${a.url}/docs/llms.txt`);
    expect(over.status).toBe(429);
    expect(Number(over.headers.get('retry-after'))).toBeGreaterThan(0);
    expect((await fetch(`${b.url}/docs/llms.txt`)).status).toBe(429);
  });

  it('records every click sent to either process exactly once', async () => {
    const ids = await clickIds(t);
    const links = await trackerPaths(b.url);
    const statuses = await Promise.all(
      Array.from({ length: 100 }, (_, i) =>
        fetch(`${(i % 2 ? b : a).url}${links[i % links.length]}`, { redirect: 'manual' }).then(
          (r) => r.status,
        ),
      ),
    );
    expect(statuses.filter((s) => s === 302)).toHaveLength(100);
    const after = await clickIds(t);
    expect(after.size - ids.size).toBe(100);
  });

  it('podium serve --workers 2 forks two workers that share the port and drain on SIGTERM', async () => {
    const fleet = await serve(env, ['--workers', '2']);
    try {
      const workers = await eventually(async () => childPids(fleet.proc.pid!).length === 2, 10_000);
      expect(workers).toBe(true);
      const before = await clickIds(t);
      const links = await trackerPaths(fleet.url);
      const statuses = await Promise.all(
        Array.from({ length: 40 }, (_, i) =>
          fetch(`${fleet.url}${links[i % links.length]}`, {
            redirect: 'manual',
            headers: { connection: 'close' },
          }).then((r) => r.status),
        ),
      );
      expect(statuses.filter((s) => s === 302)).toHaveLength(40);
      expect((await clickIds(t)).size - before.size).toBe(40);
      fleet.proc.kill('SIGTERM');
      expect(await fleet.exit).toBe(0);
    } finally {
      if (fleet.proc.exitCode === null) fleet.proc.kill('SIGKILL');
    }
  });

  it('SIGTERM drains and exits 0', async () => {
    a.proc.kill('SIGTERM');
    b.proc.kill('SIGTERM');
    expect(await a.exit).toBe(0);
    expect(await b.exit).toBe(0);
  });
});

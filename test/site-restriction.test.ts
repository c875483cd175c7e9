import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sitePolicyOf } from '../src/modules/access/site-policies.ts';
import { loadDemo } from '../src/modules/catalog/demo.ts';
import { authOf } from '../src/plugins/auth.ts';
import { adminCall, type TestApp, testApp } from './helpers.ts';

/**
 * Site restriction over the whole route table: every admin route × built-in role × (limited to
 * site A / every site), each answering as the role and the restriction say. Requests carry a
 * personal token of each user, so the tokens' restriction is what is tested.
 */
const P = '/api/admin/v1';
type Probe = { role: string; scopes: string[]; limited: string; free: string };
type Answer = { status: number; body: { code?: string; message?: string; data?: unknown } };

let t: TestApp;
let service: string;
const probes: Probe[] = [];
const ids = {
  siteA: 0,
  siteB: 0,
  toplistA: 0,
  toplistB: 0,
  webhookA: '',
  webhookB: '',
  placementA: 0,
  placementB: 0,
  bookingA: '',
  bookingB: '',
};

const call = async (token: string, method: string, url: string, payload?: object): Promise<Answer> => {
  const res = await t.app.inject({
    method: method as 'GET',
    url: `${P}${url}`,
    headers: { authorization: `Bearer ${token}` },
    ...(payload ? { payload } : {}),
  });
  let body = {};
  try {
    body = res.json();
  } catch {
    // CSV and other non-JSON answers carry no code.
  }
  return { status: res.statusCode, body };
};

const holds = (scopes: string[], needed: string) => scopes.includes('admin') || scopes.includes(needed);

beforeAll(async () => {
  t = await testApp();
  await loadDemo(t.app.services);
  service = (await t.app.services.access.createAdminToken('root', ['admin'], null)).token;
  const sites = await t.db.query<{ id: number }>('SELECT id FROM sites ORDER BY id LIMIT 2');
  ids.siteA = sites[0]!.id;
  ids.siteB = sites[1]!.id;
  const toplistOf = async (site: number) =>
    (
      await t.db.query<{ id: number }>('SELECT id FROM toplists WHERE site_id = $1 ORDER BY id LIMIT 1', [
        site,
      ])
    )[0]!.id;
  ids.toplistA = await toplistOf(ids.siteA);
  ids.toplistB = await toplistOf(ids.siteB);
  for (const [key, site] of [
    ['webhookA', ids.siteA],
    ['webhookB', ids.siteB],
  ] as const) {
    const res = await adminCall(t.app, service, 'POST', '/webhooks', {
      url: `https://hooks.example.com/${key}`,
      events: ['toplist.published'],
      siteId: site,
    });
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    ids[key] = res.body.data.id;
  }
  for (const [key, site] of [
    ['placementA', ids.siteA],
    ['placementB', ids.siteB],
  ] as const) {
    const res = await adminCall(t.app, service, 'POST', '/adserver/placements', {
      publisher: 'probe',
      site_id: site,
      name: key,
      sizes: ['300x250'],
    });
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    ids[key] = res.body.data.id;
  }
  // Bookings on site A's placement, on site B's, and on both (which spans sites).
  const conn = 'asc_PROBE000000000000000000000';
  await t.db.query(
    `INSERT INTO adserver_connections (id, publisher, environment, base_url, api_key_sealed)
     VALUES ($1, 'probe', 'sandbox', 'https://ads.example.com', 'unused')`,
    [conn],
  );
  for (const [key, placements] of [
    ['A', [ids.placementA]],
    ['B', [ids.placementB]],
    ['AB', [ids.placementA, ids.placementB]],
  ] as const) {
    const booking = `bkg_PROBE${key.padEnd(21, '0')}`;
    if (key !== 'AB') ids[`booking${key}`] = booking;
    await t.db.query(
      `INSERT INTO adserver_bookings (id, connection_id, external_ref, advertiser_name, campaign_name, currency)
       VALUES ($1, $2, $3, 'Probe', $3, 'EUR')`,
      [booking, conn, `cmp-${key}`],
    );
    for (const [i, placement] of placements.entries())
      await t.db.query(
        `INSERT INTO adserver_booking_lines (booking_id, line_no, connection_id, external_ref, placement_id,
           inventory_id, month, start_date, end_date, goal_impressions, sizes)
         VALUES ($1, $2, $3, $4, $5, 'inv-1', '2026-12', '2026-12-01', '2026-12-31', 1000, '{300x250}')`,
        [booking, i + 1, conn, `line-${key}-${i}`, placement],
      );
  }
  // Conversions of site A, of site B, and one attributed to no site (which spans them).
  const program = await adminCall(t.app, service, 'POST', '/tracking/programs', {
    slug: 'probe',
    name: 'Probe',
  });
  expect(program.status, JSON.stringify(program.body)).toBe(201);
  for (const [key, site] of [
    ['A', ids.siteA],
    ['B', ids.siteB],
    ['none', null],
  ] as const)
    await t.db.query(
      `INSERT INTO conversions (id, program_id, transaction_id, event, attributed, site_id, log_id, received_at)
       VALUES ($1, $2, $3, 'ftd', $4, $5, 1, now())`,
      [`cnv_probe${key}`, program.body.data.id, `tx-${key}`, site !== null, site],
    );
  const roles = (await adminCall(t.app, service, 'GET', '/roles')).body.data as {
    name: string;
    scopes: string[];
    builtIn: boolean;
  }[];
  for (const role of roles.filter((r) => r.builtIn)) {
    const token = async (suffix: string, siteIds: number[] | null) => {
      const email = `${role.name}-${suffix}@probe.example`;
      await t.app.services.people.addDemoUser(email, email, role.name);
      const [u] = await t.db.query<{ id: number }>(
        "UPDATE users SET status = 'active' WHERE email = $1 RETURNING id",
        [email],
      );
      // Only an owner may change an owner, and a service token is none: owners are set in SQL.
      if (role.name === 'owner')
        await t.db.query('UPDATE users SET site_ids = $2 WHERE id = $1', [u!.id, siteIds]);
      else {
        const set = await adminCall(t.app, service, 'PATCH', `/users/${u!.id}`, { siteIds });
        expect(set.status, JSON.stringify(set.body)).toBe(200);
        expect(set.body.data.siteIds).toEqual(siteIds);
      }
      return (await t.app.services.people.createPersonalToken(u!.id, 'probe', role.scopes as never)).token;
    };
    probes.push({
      role: role.name,
      scopes: role.scopes,
      limited: await token('limited', [ids.siteA]),
      free: await token('free', null),
    });
  }
  expect(probes.map((p) => p.role)).toEqual(
    expect.arrayContaining([
      'owner',
      'admin',
      'editor',
      'publisher',
      'affiliate-manager',
      'ad-ops',
      'viewer',
    ]),
  );
});
afterAll(async () => t?.close());

/** Every admin route (not the site API, not sign-in) with the scope it needs. */
const adminRoutes = () =>
  t.app.routeTable.flatMap((r) => {
    const auth = authOf(r.route);
    if (!auth || auth.kind === 'site' || !r.url.startsWith(P)) return [];
    const path = r.url.slice(P.length);
    return [{ method: r.method, path, scope: auth.kind === 'admin' ? auth.scope : null }];
  });

const BODY = ['POST', 'PUT', 'PATCH'];
const FAKE: Record<string, string> = {
  subId: '999999',
  connectionId: 'asc_00000000000000000000000000',
  lineNo: '1',
  tokenId: '999999',
};
const fill = (path: string, id: string) =>
  path.replace(/:([A-Za-z]+)/g, (_m, name: string) => (name === 'id' ? id : (FAKE[name] ?? '999999')));
const idOf = (target: string, side: 'A' | 'B'): string => String(ids[`${target}${side}` as keyof typeof ids]);
const TODAY = new Date().toISOString().slice(0, 10);
const LIST_QUERY: Record<string, string> = {
  '/sites': '?per_page=100',
  '/toplists': '?per_page=100',
  '/webhooks': '?per_page=100',
  '/tracking/stats': '?from=2026-01-01&to=2026-01-31&format=json',
  '/compliance/report': '?format=json',
  '/tracking/conversions': `?from=${TODAY}&to=${TODAY}&format=json`,
};
/** The site of a list row, whatever the list calls it. */
const siteOfRow = (path: string, row: Record<string, unknown>) => {
  if (path === '/sites') return row.id;
  // A booking's sites are its lines': one site, or the list of them when it spans several.
  if (path === '/adserver/bookings') {
    const sites = row.site_ids as number[];
    return sites.length === 1 ? sites[0] : sites;
  }
  return row.siteId ?? row.site_id;
};

describe('site restriction over the route table', () => {
  it('every admin route declares how it touches sites; site data is never left to the role alone', () => {
    const routes = adminRoutes();
    expect(routes.length).toBeGreaterThan(150);
    for (const r of routes) {
      const policy = sitePolicyOf(`${r.method} ${r.path}`);
      expect(policy, `${r.method} ${r.path}`).toBeDefined();
      if (
        /^\/(sites|toplists|webhooks|adserver\/(placements|bookings)|audit|tracking\/(stats|sites|conversions))(\/|$)/.test(
          r.path,
        ) ||
        r.path === '/compliance/report'
      )
        expect(policy!.kind, `${r.method} ${r.path}`).not.toBe('none');
    }
  });

  it('every route × role × restriction answers as the role and the restriction say', async () => {
    let checked = 0;
    for (const r of adminRoutes()) {
      const policy = sitePolicyOf(`${r.method} ${r.path}`)!;
      const payload = BODY.includes(r.method) ? {} : undefined;
      const where = (p: Probe, who: string) => `${r.method} ${r.path} as ${p.role} (${who})`;
      for (const p of probes) {
        const allowed = r.scope === null || holds(p.scopes, r.scope);
        if (policy.kind === 'object') {
          const target = policy.target;
          const otherUrl = fill(r.path, idOf(target, 'B'));
          const limitedOther = await call(p.limited, r.method, otherUrl, payload);
          if (!allowed) {
            expect(limitedOther.status, where(p, 'limited, no scope')).toBe(403);
            expect(limitedOther.body.code).toBe('forbidden');
            continue;
          }
          // Another site's object is absent for the limited person, whatever the body.
          expect(limitedOther.status, where(p, 'limited, site B')).toBe(404);
          expect(limitedOther.body.message).toBe(`${policy.entity} not found`);
          if (r.method === 'GET') {
            const own = await call(p.limited, 'GET', fill(r.path, idOf(target, 'A')));
            expect(own.status, where(p, 'limited, site A')).not.toBe(403);
            expect(own.body.message ?? '', where(p, 'limited, site A')).not.toBe(
              `${policy.entity} not found`,
            );
            const free = await call(p.free, 'GET', otherUrl);
            expect(free.status, where(p, 'every site, site B')).not.toBe(403);
            expect(free.body.message ?? '', where(p, 'every site, site B')).not.toBe(
              `${policy.entity} not found`,
            );
          }
          checked++;
          continue;
        }
        const url = fill(r.path, '999999') + (LIST_QUERY[r.path] ?? '');
        const limited = await call(p.limited, r.method, url, payload);
        const free = await call(p.free, r.method, url, payload);
        if (!allowed) {
          for (const a of [limited, free]) {
            expect(a.status, where(p, 'no scope')).toBe(403);
            expect(a.body.code, where(p, 'no scope')).toBe('forbidden');
          }
          continue;
        }
        expect(free.body.code, where(p, 'every site')).not.toBe('site_restricted');
        if (policy.kind === 'deny') {
          expect(limited.status, where(p, 'limited')).toBe(403);
          expect(limited.body.code, where(p, 'limited')).toBe('site_restricted');
        } else if (policy.kind === 'list' && r.method === 'GET') {
          expect(limited.status, where(p, 'limited')).toBe(200);
          expect(free.status, where(p, 'every site')).toBe(200);
          const rows = (limited.body.data ?? []) as Record<string, unknown>[];
          for (const row of rows) expect(siteOfRow(r.path, row), where(p, 'limited row')).toBe(ids.siteA);
          const freeRows = (free.body.data ?? []) as Record<string, unknown>[];
          const total = (a: Answer) => (a.body as { meta?: { total?: number } }).meta?.total;
          if (!r.path.startsWith('/tracking/stats') && r.path !== '/compliance/report') {
            expect(rows.length, where(p, 'limited rows')).toBeGreaterThan(0);
            // Paged lists: the count shrinks with the rows; others list site B's rows to everyone else.
            if (total(free) !== undefined) expect(total(free)!).toBeGreaterThan(total(limited)!);
            else
              expect(
                freeRows.map((row) => siteOfRow(r.path, row)),
                where(p, 'every site'),
              ).toContain(ids.siteB);
          }
        } else {
          // Site-less routes (and creates, refused by validation first here) answer alike either way.
          expect(limited.status, where(p, 'limited vs every site')).toBe(free.status);
          expect(limited.body.code, where(p, 'limited')).not.toBe('site_restricted');
        }
        checked++;
      }
    }
    expect(checked).toBeGreaterThan(500);
  });
});

describe('lists of rows that carry a site', () => {
  it("a limited person's bookings are those whose every line is on their sites", async () => {
    const p = probes.find((x) => x.role === 'ad-ops')!;
    const refs = async (token: string) =>
      (
        (await call(token, 'GET', '/adserver/bookings')).body.data as {
          external_ref: string;
          site_ids: number[];
        }[]
      )
        .filter((b) => b.external_ref.startsWith('cmp-'))
        .map((b) => `${b.external_ref}:${b.site_ids.join('+')}`)
        .sort();
    expect(await refs(p.limited)).toEqual([`cmp-A:${ids.siteA}`]);
    // One spanning their site and another is not theirs to open either.
    const spanning = await call(p.limited, 'GET', '/adserver/bookings/bkg_PROBEAB0000000000000000000');
    expect(spanning.status).toBe(404);
    expect(spanning.body.message).toBe('Booking not found');
    expect((await call(p.free, 'GET', '/adserver/bookings/bkg_PROBEAB0000000000000000000')).status).toBe(200);
    expect((await call(p.limited, 'GET', `/adserver/bookings/${ids.bookingA}`)).status).toBe(200);
    expect(await refs(p.free)).toEqual(
      [`cmp-A:${ids.siteA}`, `cmp-AB:${ids.siteA}+${ids.siteB}`, `cmp-B:${ids.siteB}`].sort(),
    );
  });

  it("the conversions CSV of a limited person holds their sites' rows only", async () => {
    const p = probes.find((x) => x.role === 'affiliate-manager')!;
    const csv = async (token: string) => {
      const res = await t.app.inject({
        method: 'GET',
        url: `${P}/tracking/conversions?from=${TODAY}&to=${TODAY}&format=csv`,
        headers: { authorization: `Bearer ${token}` },
      });
      expect(res.statusCode, res.body).toBe(200);
      const [head, ...rows] = res.body.trim().split('\n');
      const at = head!.split(',').indexOf('site_id');
      return rows.map((r) => r.split(',')[at]);
    };
    expect(await csv(p.limited)).toEqual([String(ids.siteA)]);
    expect((await csv(p.free)).sort()).toEqual(['', String(ids.siteA), String(ids.siteB)].sort());
  });
});

describe('writes into a site', () => {
  const editor = () => probes.find((p) => p.role === 'editor')!;
  const admin = () => probes.find((p) => p.role === 'admin')!;
  const toplistInput = async (siteId: number) => {
    const [tpl] = await t.db.query<{ template_id: number }>(
      'SELECT template_id FROM toplists WHERE id = $1',
      [ids.toplistA],
    );
    const [owner] = await t.db.query<{ id: number }>('SELECT id FROM owners ORDER BY id LIMIT 1');
    return {
      siteId,
      templateId: tpl!.template_id,
      ownerId: owner!.id,
      name: `Probe ${siteId}`,
      slug: `probe-${siteId}`,
      geo: { type: 'country', code: 'TV' },
    };
  };

  it('a toplist created into another site is a 403 naming siteId; into their own, a 201', async () => {
    const other = await call(editor().limited, 'POST', '/toplists', await toplistInput(ids.siteB));
    expect(other.status, JSON.stringify(other.body)).toBe(403);
    expect(other.body).toMatchObject({ code: 'site_restricted', details: { field: 'siteId' } });
    expect(other.body.message).toMatch(/^siteId: /);
    const before = await t.db.query('SELECT id FROM toplists');
    const own = await call(editor().limited, 'POST', '/toplists', await toplistInput(ids.siteA));
    expect(own.status, JSON.stringify(own.body)).toBe(201);
    expect((await t.db.query('SELECT id FROM toplists')).length).toBe(before.length + 1);
  });

  it('a webhook for every site or another site is a 403; moving one away, too', async () => {
    const base = { url: 'https://hooks.example.com/limited', events: ['toplist.published'] };
    for (const body of [base, { ...base, siteId: null }, { ...base, siteId: ids.siteB }]) {
      const res = await call(admin().limited, 'POST', '/webhooks', body);
      expect(res.status, JSON.stringify(body)).toBe(403);
      expect(res.body).toMatchObject({ code: 'site_restricted', details: { field: 'siteId' } });
    }
    expect((await call(admin().limited, 'POST', '/webhooks', { ...base, siteId: ids.siteA })).status).toBe(
      201,
    );
    for (const siteId of [ids.siteB, null]) {
      const move = await call(admin().limited, 'PATCH', `/webhooks/${ids.webhookA}`, { siteId });
      expect(move.status).toBe(403);
      expect(move.body).toMatchObject({ code: 'site_restricted', details: { field: 'siteId' } });
    }
    const [row] = await t.db.query<{ site_id: number }>(
      'SELECT site_id FROM webhook_endpoints WHERE id = $1',
      [ids.webhookA],
    );
    expect(row!.site_id).toBe(ids.siteA);
  });

  it('a placement on another site is a 403 naming site_id', async () => {
    const res = await call(admin().limited, 'POST', '/adserver/placements', {
      publisher: 'probe',
      site_id: ids.siteB,
      name: 'elsewhere',
      sizes: ['300x250'],
    });
    expect(res.status).toBe(403);
    expect(res.body).toMatchObject({ code: 'site_restricted', details: { field: 'site_id' } });
  });

  it("setting a user's sites takes existing sites, is audited, and holds from the next request", async () => {
    const p = probes.find((x) => x.role === 'viewer')!;
    const [u] = await t.db.query<{ id: number }>(
      "SELECT id FROM users WHERE email = 'viewer-free@probe.example'",
    );
    const bad = await adminCall(t.app, service, 'PATCH', `/users/${u!.id}`, { siteIds: [ids.siteA, 999999] });
    expect(bad.status).toBe(422);
    expect(bad.body).toMatchObject({ code: 'validation_failed', details: { field: 'siteIds' } });
    expect(bad.body.message).toContain('999999');
    expect((await call(p.free, 'GET', `/toplists/${ids.toplistB}`)).status).toBe(200);
    const set = await adminCall(t.app, service, 'PATCH', `/users/${u!.id}`, { siteIds: [ids.siteA] });
    expect(set.status).toBe(200);
    expect((await call(p.free, 'GET', `/toplists/${ids.toplistB}`)).status).toBe(404);
    const audit = await adminCall(t.app, service, 'GET', `/audit?target_type=users&target_id=${u!.id}`);
    expect(audit.status).toBe(200);
    const last = (audit.body.data as { after: { siteIds?: number[] } }[])[0]!;
    expect(last.after.siteIds).toEqual([ids.siteA]);
    await adminCall(t.app, service, 'PATCH', `/users/${u!.id}`, { siteIds: null });
    expect((await call(p.free, 'GET', `/toplists/${ids.toplistB}`)).status).toBe(200);
  });

  it('a service token is never limited', async () => {
    expect((await adminCall(t.app, service, 'GET', `/toplists/${ids.toplistB}`)).status).toBe(200);
    expect((await adminCall(t.app, service, 'GET', '/audit')).status).toBe(200);
  });
});

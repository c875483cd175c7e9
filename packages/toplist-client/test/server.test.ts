import type { AddressInfo } from 'node:net';
import Ajv2020 from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type DemoTokens, loadDemo } from '../../../src/modules/catalog/demo.ts';
import { DB_KIND, type TestApp, testApp } from '../../../test/helpers.ts';
import {
  COUNTRY_CODES,
  createClient,
  DECIMAL_FIELDS,
  formatHundredths,
  PodiumApiError,
  PodiumWalkError,
  pickForVisitor,
  type Toplist,
  toHundredths,
} from '../src/index.ts';

interface Seen {
  url: string;
  status: number;
  ifNoneMatch: string | null;
}

// The real Podium server, listening on loopback, with the demo data: a 129-member casino family on site 1.
describe(`toplist client against the real server (${DB_KIND})`, () => {
  let t: TestApp;
  let demo: DemoTokens;
  let baseUrl: string;
  let token: string;
  let templateId: number;
  let validateToplist: (x: unknown) => boolean;

  /** A client whose fetch is the global one, recording every exchange and running `after` hooks. */
  const recorded = (options: { cache?: false } = {}) => {
    const seen: Seen[] = [];
    const after: { onPage: (url: string) => boolean; run: () => Promise<void> }[] = [];
    const client = createClient({
      baseUrl,
      token,
      ...options,
      fetch: async (input, init) => {
        const res = await fetch(input, init);
        const headers = new Headers(init.headers);
        seen.push({ url: input, status: res.status, ifNoneMatch: headers.get('if-none-match') });
        const hook = after.find((h) => h.onPage(input));
        if (hook) {
          after.splice(after.indexOf(hook), 1);
          await hook.run();
        }
        return res;
      },
    });
    return { client, seen, after };
  };

  const admin = async (method: 'POST' | 'PATCH', url: string, payload?: object) => {
    const res = await t.app.inject({
      method,
      url: `/api/admin/v1${url}`,
      headers: { authorization: `Bearer ${demo.adminToken}` },
      ...(payload ? { payload } : {}),
    });
    expect(res.statusCode).toBe(200);
  };
  const tick = () => {
    t.clock.now = new Date(t.clock.now.getTime() + 60_000);
  };

  beforeAll(async () => {
    t = await testApp();
    demo = await loadDemo(t.app.services);
    token = demo.siteTokens[0]!.token;
    await t.app.listen({ port: 0, host: '127.0.0.1' });
    baseUrl = `http://127.0.0.1:${(t.app.server.address() as AddressInfo).port}`;
    const client = createClient({ baseUrl, token });
    templateId = (await client.bySlug('best-casinos-row')).template.id;
    // Responses are checked against the OpenAPI document the server itself publishes.
    const doc = (await (await fetch(`${baseUrl}/api/v1/openapi.json`)).json()) as {
      components: { schemas: { ToplistSingle: { properties: { data: object } } } };
    };
    const ajv = new Ajv2020({ allErrors: true, strict: false });
    addFormats(ajv);
    // A toplist is the `data` of the single-toplist answer.
    validateToplist = ajv.compile(doc.components.schemas.ToplistSingle.properties.data);
  });
  afterAll(() => t.close());

  it('walks the whole 129-member family, every member once, each valid against the OpenAPI document', async () => {
    const { client, seen } = recorded();
    const family = await client.family(templateId);
    expect(family).toHaveLength(129);
    expect(new Set(family.map((x) => x.id)).size).toBe(129);
    expect(family.every((x) => x.template.id === templateId)).toBe(true);
    for (const x of family) expect(validateToplist(x)).toBe(true);
    expect(seen.map((s) => new URL(s.url).search)).toEqual([
      `?template_id=${templateId}&page=1&per_page=100`,
      `?template_id=${templateId}&page=2&per_page=100`,
    ]);
    // The server's links point at its public URL; the client only ever calls the configured base.
    expect(seen.every((s) => s.url.startsWith(`${baseUrl}/api/v1/toplists?`))).toBe(true);
    expect(seen.some((s) => s.url.includes(token))).toBe(false);

    const small = recorded({ cache: false });
    const same = await small.client.family(templateId, { perPage: 15 });
    expect(small.seen).toHaveLength(9);
    expect(same.map((x) => x.id)).toEqual(family.map((x) => x.id));
  });

  it('picks the visitor variant from the real family', async () => {
    const family = await createClient({ baseUrl, token }).family(templateId);
    const hasCountryRow = (c: string) => family.some((x) => x.geo.geo_type === 'country' && x.geo.code === c);
    expect(pickForVisitor(family, 'SE')).toMatchObject({
      match: 'country',
      toplist: { slug: 'best-casinos-se' },
    });
    // Without its country row, Iceland falls to the one market that covers it.
    const nordics = family.find((x) => x.geo.code === 'NORDICS')!;
    const noIceland = family.filter((x) => !(x.geo.geo_type === 'country' && x.geo.code === 'IS'));
    expect(pickForVisitor(noIceland, 'IS')).toMatchObject({ match: 'market', toplist: { id: nordics.id } });
    const uncovered = ['ZW', 'ZM', 'YE', 'VU'].find((c) => !hasCountryRow(c))!;
    expect(pickForVisitor(family, uncovered)).toMatchObject({
      match: 'global',
      toplist: { slug: 'best-casinos-row' },
    });
    expect(pickForVisitor(family, 'XX')).toMatchObject({
      match: 'global',
      reason: 'unknown_country',
      toplist: { slug: 'best-casinos-row' },
    });
    const withoutGlobal = family.filter((x) => x.geo.geo_type !== 'global');
    expect(pickForVisitor(withoutGlobal, uncovered)).toMatchObject({ match: 'none', reason: 'no_variant' });
  });

  it('resolves on the server exactly as pickForVisitor does, for every country code', async () => {
    const client = createClient({ baseUrl, token });
    const family = await client.family(templateId);
    const codes = [...COUNTRY_CODES, 'XX', 'T1', 'EU'];
    for (const code of codes) {
      const local = pickForVisitor(family, code);
      const remote = await client.resolve(templateId, code.toLowerCase()).then(
        (x) => x.id,
        (e: unknown) => (e instanceof PodiumApiError ? `${e.status} ${e.details?.reason}` : String(e)),
      );
      expect(remote, code).toBe(local.toplist ? local.toplist.id : `404 ${local.reason}`);
    }
    // A missing visitor country is sent as unknown: the global row.
    expect((await client.resolve(templateId, null)).slug).toBe('best-casinos-row');
    expect((await client.resolve(templateId, ' ')).slug).toBe('best-casinos-row');
    const err = await client.resolve(999_999, 'SE').catch((e: unknown) => e);
    expect(err).toBeInstanceOf(PodiumApiError);
    expect((err as PodiumApiError).details).toMatchObject({ reason: 'no_variant' });
    await expect(client.resolve(0, 'SE')).rejects.toThrow(RangeError);
  });

  it('reads single toplists by slug and id, and every decimal field exactly', async () => {
    const client = createClient({ baseUrl, token });
    const bySlug = await client.bySlug('best-casinos-de');
    expect(validateToplist(bySlug)).toBe(true);
    expect(await client.byId(bySlug.id)).toEqual(bySlug);
    const family: Toplist[] = await client.family(templateId);
    let decimals = 0;
    for (const item of family.flatMap((x) => x.items)) {
      for (const field of DECIMAL_FIELDS) {
        const v = item.offer[field];
        if (v === null) continue;
        decimals++;
        expect(formatHundredths(toHundredths(v))).toBe(v);
      }
    }
    expect(decimals).toBeGreaterThan(100);
  });

  it('filters one variant and pages with list()', async () => {
    const client = createClient({ baseUrl, token });
    const nordics = await client.fetchAll({ geo_type: 'market', geo_code: 'NORDICS' });
    expect(nordics.map((x) => x.geo.code)).toEqual(['NORDICS']);
    const page = await client.list({ template_id: templateId, per_page: 5, page: 2 });
    expect(page.meta).toMatchObject({ current_page: 2, per_page: 5, total: 129, last_page: 26 });
    expect(page.data).toHaveLength(5);
  });

  it('throws typed errors with the API code and message, and never the token', async () => {
    const client = createClient({ baseUrl, token });
    const missing = await client.bySlug('no-such-list').catch((e) => e);
    expect(missing).toBeInstanceOf(PodiumApiError);
    expect(missing).toMatchObject({ status: 404, code: 'not_found', message: 'Toplist not found' });
    expect(await client.byId(2_000_000_000).catch((e) => e)).toMatchObject({
      status: 404,
      code: 'not_found',
    });
    // Another site's toplist is simply not found.
    const other = createClient({ baseUrl, token: demo.siteTokens[1]!.token });
    expect(await other.bySlug('best-casinos-de').catch((e) => e)).toMatchObject({ code: 'not_found' });

    const wrongToken = `${token}x`;
    const denied = await createClient({ baseUrl, token: wrongToken })
      .list()
      .catch((e) => e);
    expect(denied).toMatchObject({ status: 401, code: 'unauthorized' });
    const text = `${String(denied)} ${denied.stack} ${JSON.stringify(denied)}`;
    expect(text).not.toContain(wrongToken);
  });

  it('revalidates with If-None-Match: 304 serves the cached copy, a publish brings the new version', async () => {
    const { client, seen } = recorded();
    const first = await client.bySlug('best-casinos-fi');
    const again = await client.bySlug('best-casinos-fi');
    expect(again).toEqual(first);
    expect(seen.map((s) => s.status)).toEqual([200, 304]);
    // fetch asks for gzip: once the toplist is compressed its tag comes weak, and goes back so.
    expect(seen[1]!.ifNoneMatch).toMatch(/^(W\/)?"[^"]+"$/);

    await client.family(templateId);
    await client.family(templateId);
    expect(seen.slice(2).map((s) => s.status)).toEqual([200, 200, 304, 304]);

    tick();
    await admin('POST', `/toplists/${first.id}/publish`);
    const after = await client.bySlug('best-casinos-fi');
    expect(seen.at(-1)!.status).toBe(200);
    expect(after.version).toBe(String(Number(first.version) + 1));
  });

  it('refuses a family that loses a member mid-walk', async () => {
    const member = await createClient({ baseUrl, token }).bySlug('best-casinos-ie');
    const { client, after } = recorded({ cache: false });
    after.push({
      onPage: (url) => url.includes('page=1&'),
      run: () => admin('POST', `/toplists/${member.id}/unpublish`),
    });
    const err = await client.family(templateId).catch((e) => e);
    expect(err).toBeInstanceOf(PodiumWalkError);
    expect(err.code).toBe('family_changed');
    tick();
    await admin('POST', `/toplists/${member.id}/publish`);
    expect(await client.family(templateId)).toHaveLength(129);
  });

  it('refuses a family reordered mid-walk (a publish moves a member from page 2 to page 1)', async () => {
    const client0 = createClient({ baseUrl, token, cache: false });
    const onPage2 = (await client0.list({ template_id: templateId, per_page: 100, page: 2 })).data[0]!;
    const { client, after } = recorded({ cache: false });
    after.push({
      onPage: (url) => url.includes('page=1&'),
      run: async () => {
        tick();
        await admin('POST', `/toplists/${onPage2.id}/publish`);
      },
    });
    const err = await client.family(templateId).catch((e) => e);
    expect(err).toMatchObject({ name: 'PodiumWalkError', code: 'family_changed' });
    expect(await client.family(templateId)).toHaveLength(129);
  });

  it('stops at the page cap before fetching a partial family', async () => {
    const { client, seen } = recorded({ cache: false });
    const err = await client.family(templateId, { perPage: 15, maxPages: 3 }).catch((e) => e);
    expect(err).toMatchObject({ name: 'PodiumWalkError', code: 'page_cap_exceeded' });
    expect(seen).toHaveLength(1);
  });

  it('honours an abort signal', async () => {
    const { client, seen } = recorded();
    const controller = new AbortController();
    controller.abort(new Error('visitor left'));
    await expect(client.family(templateId, { signal: controller.signal })).rejects.toThrow('visitor left');
    expect(seen).toHaveLength(0);
  });
});

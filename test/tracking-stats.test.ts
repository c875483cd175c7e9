import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DB_KIND, type TestApp, testApp } from './helpers.ts';
import { type TrackingFixture, trackingFixture } from './tracking-fixture.ts';

const BROWSER = { 'user-agent': 'Mozilla/5.0 (X11; Linux x86_64; rv:120.0) Gecko/20100101 Firefox/120.0' };

/**
 * A seeded evening: two clicks at 23:30 UTC on 10 March 2026 (already 11 March in Malta,
 * still 10 March in New York), one the next noon, an impression and two conversions. The
 * expected rows below are worked out by hand from those times.
 */
describe(`stats by day and dimension (${DB_KIND})`, () => {
  let t: TestApp;
  let fx: TrackingFixture;
  let programId: number;
  let postbackToken: string;

  const get = async (query: string, headers: Record<string, string> = {}) => {
    const res = await t.app.inject({
      method: 'GET',
      url: `/api/admin/v1/tracking/stats?${query}`,
      headers: { authorization: `Bearer ${fx.adminToken}`, ...headers },
    });
    return res;
  };
  const rows = async (query: string) => {
    const res = await get(query);
    expect(res.statusCode, res.body).toBe(200);
    return res.json().data as Record<string, unknown>[];
  };
  const click = async (slug: string, query = '') => {
    const res = await t.app.inject({ method: 'GET', url: `/go/${slug}${query}`, headers: BROWSER });
    expect(res.statusCode).toBe(302);
    return new URL(res.headers.location as string).searchParams.get('btag') as string;
  };

  beforeAll(async () => {
    t = await testApp();
    fx = await trackingFixture(t.app.services, t.db);
    const auth = { authorization: `Bearer ${fx.adminToken}` };
    const created = await t.app.inject({
      method: 'POST',
      url: '/api/admin/v1/tracking/programs',
      headers: auth,
      payload: {
        slug: 'malta',
        name: 'Malta Partners',
        landingParams: 'btag={click_id}',
        timezone: 'Europe/Malta',
        trackerIds: fx.trackerIds,
      },
    });
    programId = created.json().data.id;
    const token = created.json().data.postbackToken;
    postbackToken = token;
    const site = await t.app.inject({
      method: 'PUT',
      url: `/api/admin/v1/tracking/sites/${fx.siteId}`,
      headers: auth,
      payload: { timezone: 'America/New_York' },
    });
    expect(site.statusCode, site.body).toBe(200);

    t.clock.now = new Date('2026-03-10T23:30:00Z');
    const first = await click(fx.slugs[0] as string);
    await click(fx.slugs[0] as string);
    const imp = await t.app.inject({ method: 'GET', url: `/imp/${fx.slugs[1]}`, headers: BROWSER });
    expect(imp.statusCode).toBe(200);
    for (const event of ['registration', '-cmd']) {
      const pb = await t.app.inject({
        method: 'GET',
        url: `/api/postback/malta/${token}?click_id=${first}&transaction_id=T-${event}&event=${event}`,
      });
      expect(pb.statusCode, pb.body).toBe(200);
    }
    t.clock.now = new Date('2026-03-11T12:00:00Z');
    await click(fx.slugs[0] as string);
  });
  afterAll(async () => {
    await t?.close();
  });

  const range = 'from=2026-03-09&to=2026-03-12';
  const pick = (rs: Record<string, unknown>[], day: string, position: number) =>
    rs.find((r) => r.day === day && r.position === position);

  it('cuts days in each row programme zone by default', async () => {
    const rs = await rows(range);
    expect(rs.map((r) => r.day)).toEqual(['2026-03-11', '2026-03-11']);
    expect(pick(rs, '2026-03-11', 1)).toMatchObject({
      timezone: 'Europe/Malta',
      siteId: fx.siteId,
      toplistId: fx.toplistId,
      brandId: fx.brandId,
      programId,
      clicks: 3,
      impressions: 0,
      registrations: 1,
      ftds: 0,
      conversions: 2,
      events: { registration: 1, '-cmd': 1 },
      conversionRate: '0.3333',
      ftdRate: '0.0000',
    });
    expect(pick(rs, '2026-03-11', 2)).toMatchObject({ clicks: 0, impressions: 1, conversionRate: null });
  });

  it('cuts days in the site zone, in UTC or in a named zone on request', async () => {
    const site = await rows(`${range}&tz=site`);
    expect(pick(site, '2026-03-10', 1)).toMatchObject({
      timezone: 'America/New_York',
      clicks: 2,
      conversions: 2,
    });
    expect(pick(site, '2026-03-11', 1)).toMatchObject({ clicks: 1, conversions: 0 });
    const utc = await rows(`${range}&tz=utc`);
    expect(pick(utc, '2026-03-10', 1)).toMatchObject({ timezone: 'UTC', clicks: 2 });
    expect(pick(utc, '2026-03-11', 1)).toMatchObject({ clicks: 1 });
    const tokyo = await rows(`${range}&tz=Asia/Tokyo`);
    expect(pick(tokyo, '2026-03-11', 1)).toMatchObject({ timezone: 'Asia/Tokyo', clicks: 3 });
    expect(await rows('from=2026-03-11&to=2026-03-11&tz=site')).toHaveLength(1);
  });

  it('filters by programme, site, toplist and brand', async () => {
    expect(await rows(`${range}&toplist_id=${fx.toplistId}&brand_id=${fx.brandId}`)).toHaveLength(2);
    expect(await rows(`${range}&site_id=${fx.siteId}&program_id=${programId}`)).toHaveLength(2);
    expect(await rows(`${range}&toplist_id=999999`)).toEqual([]);
    expect(await rows(`${range}&brand_id=999999`)).toEqual([]);
  });

  it('pages with a total, also past the last page', async () => {
    const p1 = await get(`${range}&tz=utc&per_page=2&page=1`);
    expect(p1.json().meta).toMatchObject({ total: 3, per_page: 2, last_page: 2, tz: 'UTC' });
    expect(p1.json().data).toHaveLength(2);
    const p2 = (await get(`${range}&tz=utc&per_page=2&page=2`)).json();
    expect(p2.data).toHaveLength(1);
    const past = (await get(`${range}&tz=utc&per_page=2&page=9`)).json();
    expect(past).toMatchObject({ data: [], meta: { total: 3, last_page: 2 } });
  });

  it('exports CSV on Accept or format=csv, escaped and safe from formula injection', async () => {
    const byAccept = await get(`${range}&tz=utc`, { accept: 'text/csv' });
    expect(byAccept.statusCode).toBe(200);
    expect(byAccept.headers['content-type']).toBe('text/csv; charset=utf-8');
    expect(byAccept.headers['content-disposition']).toContain('podium-stats-2026-03-09-2026-03-12.csv');
    const lines = byAccept.body.trimEnd().split('\r\n');
    expect(lines).toHaveLength(4);
    expect(lines[1]).toBe(
      `2026-03-10,UTC,${fx.siteId},${fx.toplistId},1,${fx.brandId},${programId},2,0,0,1,0,2,0.5000,0.0000,,,,'-cmd:1 registration:1`,
    );
    const byFormat = await get(`${range}&tz=utc&format=csv`);
    expect(byFormat.body).toBe(byAccept.body);
    const json = await get(`${range}&format=json`, { accept: 'text/csv' });
    expect(json.headers['content-type']).toContain('application/json');
  });

  it('sums money per currency exactly: revenue, commission and EPC, also by sub_id and in CSV', async () => {
    // A later day: 3 clicks on position 1 (two with sub_id news), money on the first one, and an
    // unattributed SEK commission. Expected by hand:
    //   revenue EUR 0.0001 + 12345678.9999 = 12345679.0000 (ftd, deposit)
    //   commission EUR 10 + 0.0002 = 10.0002, USD 12345678.9999 + 0.0001 = 12345679.0000
    //   EPC over 3 clicks: EUR 3.3334 (3.33340), USD 4115226.3333 (4115226.33333…)
    t.clock.now = new Date('2026-03-20T10:00:00Z');
    const first = await click(fx.slugs[0] as string, '?sub_id=news');
    await click(fx.slugs[0] as string, '?sub_id=news');
    await click(fx.slugs[0] as string);
    const pb = async (q: string) => {
      const res = await t.app.inject({ url: `/api/postback/malta/${postbackToken}?${q}` });
      expect(res.statusCode, res.body).toBe(200);
    };
    for (const [n, event, amount, currency] of [
      [1, 'ftd', '0.0001', 'EUR'],
      [2, 'deposit', '12345678.9999', 'EUR'],
      [3, 'cpa', '12345678.9999', 'USD'],
      [4, 'revshare', '0.0001', 'USD'],
      [5, 'cpa', '10', 'EUR'],
      [6, 'commission', '0.0002', 'EUR'],
      [7, 'registration', '', ''],
    ])
      await pb(
        `click_id=${first}&transaction_id=M${n}&event=${event}${amount ? `&amount=${amount}&currency=${currency}` : ''}`,
      );
    await pb('transaction_id=M8&event=cpa&amount=5&currency=SEK');
    const day = 'from=2026-03-20&to=2026-03-20&tz=utc';
    const rs = await rows(day);
    expect(rs).toHaveLength(2);
    expect(rs[0]).toMatchObject({
      siteId: null,
      clicks: 0,
      revenue: {},
      commission: { SEK: '5.0000' },
      epc: { SEK: null },
    });
    expect(rs[1]).toMatchObject({
      position: 1,
      clicks: 3,
      conversions: 7,
      revenue: { EUR: '12345679.0000' },
      commission: { EUR: '10.0002', USD: '12345679.0000' },
      epc: { EUR: '3.3334', USD: '4115226.3333' },
    });
    expect(rs[1]).not.toHaveProperty('subId');

    const subs = await rows(`${day}&by=sub_id`);
    expect(subs.map((r) => [r.position, r.subId, r.clicks])).toEqual([
      [null, null, 0],
      [1, null, 1],
      [1, 'news', 2],
    ]);
    expect(subs[1]).toMatchObject({ revenue: {}, commission: {}, epc: {} });
    expect(subs[2]).toMatchObject({
      revenue: { EUR: '12345679.0000' },
      commission: { EUR: '10.0002', USD: '12345679.0000' },
      epc: { EUR: '5.0001', USD: '6172839.5000' },
    });

    const csv = (await get(`${day}&by=sub_id&format=csv`)).body.trimEnd().split('\r\n');
    expect(csv[0]).toBe(
      'day,timezone,site_id,toplist_id,position,brand_id,program_id,sub_id,clicks,impressions,blocked_clicks,registrations,ftds,conversions,conversion_rate,ftd_rate,revenue,commission,epc,events',
    );
    expect(csv[3]).toContain(
      ',news,2,0,0,1,1,7,0.5000,0.5000,EUR:12345679.0000,EUR:10.0002 USD:12345679.0000,EUR:5.0001 USD:6172839.5000,',
    );
    expect((await get(`${day}&format=csv`)).body).toContain(',SEK:5.0000,SEK:-,');

    const wide = await get('from=2026-03-01&to=2026-04-01&by=sub_id');
    expect(wide.statusCode).toBe(422);
    expect(wide.json().message).toContain('31 days');
    expect((await get(`${day}&by=brand`)).statusCode).toBe(422);
  });

  it('groups rows by one or two dimensions, summing money per currency over the rest', async () => {
    // The same days as above in UTC: March 10 (2 clicks, 1 impression, 2 conversions), March 11
    // (1 click) and March 20 (3 clicks on position 1 with EUR/USD money, and an unattributed SEK row).
    const all = 'from=2026-03-09&to=2026-03-20&tz=utc';
    const byDay = await rows(`${all}&group=day`);
    expect(byDay.map((r) => [r.day, r.timezone, r.position, r.clicks, r.impressions, r.conversions])).toEqual(
      [
        ['2026-03-10', 'UTC', null, 2, 1, 2],
        ['2026-03-11', 'UTC', null, 1, 0, 0],
        ['2026-03-20', 'UTC', null, 3, 0, 8],
      ],
    );
    const total = await rows(`${all}&group=program`);
    // Every conversion came through the one programme, the unattributed SEK one too.
    expect(total).toHaveLength(1);
    expect(total[0]).toMatchObject({
      day: null,
      timezone: null,
      siteId: null,
      position: null,
      programId,
      clicks: 6,
      conversions: 10,
      revenue: { EUR: '12345679.0000' },
      commission: { EUR: '10.0002', SEK: '5.0000', USD: '12345679.0000' },
      epc: { EUR: '1.6667', SEK: '0.8333', USD: '2057613.1667' },
      conversionRate: '0.3333',
    });
    const [sum, ...none] = await rows(`${all}&group=total`);
    expect(none).toEqual([]);
    expect(sum).toMatchObject({ day: null, brandId: null, programId: null, clicks: 6, impressions: 1 });
    expect(sum!.commission).toEqual(total[0]!.commission);
    const two = await rows(`${all}&group=brand,position`);
    expect(two.map((r) => [r.brandId, r.position, r.clicks, r.impressions])).toEqual([
      [fx.brandId, 1, 6, 0],
      [null, null, 0, 0],
      [fx.brandId, 2, 0, 1],
    ]);
    const csv = (await get(`${all}&group=program&format=csv`)).body.split('\r\n');
    expect(csv[1]).toMatch(new RegExp(`^,,,,,,${programId},6,`));
    for (const [group, message] of [
      ['site,site', 'twice'],
      ['day,site,brand', 'at most 2'],
      ['country', '"country" is not a dimension'],
    ] as const) {
      const res = await get(`${all}&group=${group}`);
      expect(res.statusCode, group).toBe(422);
      expect(res.json()).toMatchObject({ details: { field: 'group' } });
      expect(res.json().message).toContain(message);
    }
  });

  it('reads and sets a site zone, refusing bad input', async () => {
    const auth = { authorization: `Bearer ${fx.adminToken}` };
    const got = await t.app.inject({
      method: 'GET',
      url: `/api/admin/v1/tracking/sites/${fx.siteId}`,
      headers: auth,
    });
    expect(got.json().data).toEqual({ siteId: fx.siteId, timezone: 'America/New_York' });
    const put = (id: number, payload: unknown) =>
      t.app.inject({
        method: 'PUT',
        url: `/api/admin/v1/tracking/sites/${id}`,
        headers: auth,
        payload: payload as object,
      });
    for (const payload of [{ timezone: 'Mars/Olympus' }, { timezone: '+02:00' }, { timezone: 5 }, {}]) {
      const res = await put(fx.siteId, payload);
      expect(res.statusCode, JSON.stringify(payload)).toBe(422);
      expect(res.json().details.field).toBe('timezone');
    }
    expect((await put(999999, { timezone: 'UTC' })).statusCode).toBe(404);
  });

  it('refuses bad queries with the field named and needs tracking:read', async () => {
    for (const [q, field] of [
      ['from=2026-03-09', 'to'],
      ['from=2026-02-30&to=2026-03-01', 'from'],
      [`${range}&tz=Nowhere/Special`, 'tz'],
      [`${range}&page=0`, 'page'],
      [`${range}&per_page=5000`, 'per_page'],
      [`${range}&site_id=abc`, 'site_id'],
      [`${range}&format=xml`, 'format'],
    ] as const) {
      const res = await get(q);
      expect(res.statusCode, q).toBe(422);
      expect(JSON.stringify(res.json()), q).toContain(field);
    }
    const reader = await t.app.services.access.createAdminToken('reader', ['catalog:read'], null);
    const res = await t.app.inject({
      method: 'GET',
      url: `/api/admin/v1/tracking/stats?${range}`,
      headers: { authorization: `Bearer ${reader.token}` },
    });
    expect(res.statusCode).toBe(403);
  });
});

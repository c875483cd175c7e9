import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DB_KIND, type TestApp, testApp } from './helpers.ts';
import { redirectedClickIds, storm, type TrackingFixture, trackingFixture } from './tracking-fixture.ts';

const ULID = /^[0-9A-HJKMNP-TV-Z]{26}$/;
/** inject()'s default user agent is recognised as a bot, so counted hits send a browser's. */
const BROWSER = {
  'user-agent': 'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 Chrome/120.0 Safari/537.36',
};

describe(`affiliate tracking (${DB_KIND})`, () => {
  let t: TestApp;
  let fx: TrackingFixture;
  let program: { id: number; slug: string; postbackToken: string; postbackUrl: string };

  const admin = async (method: 'GET' | 'POST' | 'PATCH', url: string, payload?: unknown, token?: string) => {
    const res = await t.app.inject({
      method,
      url: `/api/admin/v1${url}`,
      headers: { authorization: `Bearer ${token ?? fx.adminToken}` },
      ...(payload === undefined ? {} : { payload: payload as object }),
    });
    return { status: res.statusCode, body: res.json(), headers: res.headers };
  };
  const count = async (sql: string, params: unknown[] = []) =>
    ((await t.db.query<{ n: number }>(sql, params))[0] as { n: number }).n;

  beforeAll(async () => {
    t = await testApp();
    fx = await trackingFixture(t.app.services, t.db);
    const res = await admin('POST', '/tracking/programs', {
      slug: 'lucky-partners',
      name: 'Lucky Partners',
      affiliateId: 'aff 42',
      landingParams: 'btag={affiliate_id}_{click_id}&pos={position}&sub={sub_id}',
      paramMap: { click_id: 'btag', transaction_id: 'txid' },
      timezone: 'Europe/Malta',
      currency: 'EUR',
      trackerIds: fx.trackerIds,
    });
    expect(res.status).toBe(201);
    program = res.body.data;
  });
  afterAll(async () => {
    await t?.close();
  });

  describe('programmes admin API', () => {
    it('shows the postback token once and stores only its hash', async () => {
      expect(program.postbackToken).toMatch(/^pdp_[A-Za-z0-9_-]{43}$/);
      expect(program.postbackUrl).toBe(
        `https://podium.test/api/postback/lucky-partners/${program.postbackToken}`,
      );
      const got = await admin('GET', `/tracking/programs/${program.id}`);
      expect(got.status).toBe(200);
      expect(JSON.stringify(got.body)).not.toContain(program.postbackToken);
      expect(got.body.data).toMatchObject({
        slug: 'lucky-partners',
        trackerIds: fx.trackerIds,
        timezone: 'Europe/Malta',
      });
      const list = await admin('GET', '/tracking/programs');
      expect(list.body.meta.total).toBe(1);
    });

    it('rejects bad input with the field named', async () => {
      const base = { slug: 'p2', name: 'P2' };
      const cases: [unknown, string][] = [
        [{ ...base, landingParams: 'a={evil}' }, 'landingParams'],
        [{ ...base, timezone: 'Mars/Olympus' }, 'timezone'],
        [{ ...base, slug: 'Bad Slug' }, 'slug'],
        [{ ...base, paramMap: { nope: 'x' } }, 'paramMap.nope'],
        [{ ...base, trackerIds: [999999] }, 'trackerIds'],
        [{ ...base, slug: 'lucky-partners' }, 'slug'],
        [{ ...base, currency: 'eur' }, 'currency'],
      ];
      for (const [body, field] of cases) {
        const res = await admin('POST', '/tracking/programs', body);
        expect([409, 422], JSON.stringify(res.body)).toContain(res.status);
        expect(res.body.details?.field ?? res.body.message).toContain(field);
      }
    });

    it('needs tracking scopes', async () => {
      const reader = await t.app.services.access.createAdminToken('reader', ['catalog:read'], null);
      expect((await admin('GET', '/tracking/programs', undefined, reader.token)).status).toBe(403);
      const noAuth = await t.app.inject({ method: 'GET', url: '/api/admin/v1/tracking/programs' });
      expect(noAuth.statusCode).toBe(401);
    });
  });

  describe('GET /go/{slug}', () => {
    it('records the click, then redirects with the macros filled and URL-encoded', async () => {
      const res = await t.app.inject({
        method: 'GET',
        url: `/go/${fx.slugs[0]}?sub_id=news-1&utm_source=x`,
        headers: {
          'user-agent': 'Mozilla/5.0 (X11; Linux x86_64) Firefox/120.0',
          'cf-ipcountry': 'de',
          referer: 'https://casinos.example/best',
        },
      });
      expect(res.statusCode).toBe(302);
      expect(res.headers['cache-control']).toBe('no-store');
      const loc = new URL(res.headers.location as string);
      expect(loc.origin + loc.pathname).toBe('https://operator.example/land');
      const clickId = (loc.searchParams.get('btag') as string).split('_')[1] as string;
      expect(loc.searchParams.get('btag')).toBe(`aff 42_${clickId}`);
      expect(clickId).toMatch(ULID);
      expect(loc.searchParams.get('pos')).toBe('1');
      expect(loc.searchParams.get('sub')).toBe('news-1');
      expect(loc.searchParams.get('lang')).toBe('en');
      const [row] = await t.db.query<Record<string, unknown>>('SELECT * FROM clicks WHERE id = $1', [
        clickId,
      ]);
      expect(row).toMatchObject({
        kind: 'click',
        tracker_id: fx.trackerIds[0],
        offer_id: fx.offerId,
        brand_id: fx.brandId,
        site_id: fx.siteId,
        toplist_id: fx.toplistId,
        position: 1,
        program_id: program.id,
        sub_id: 'news-1',
        country: 'DE',
        referrer: 'https://casinos.example/best',
        flag: null,
      });
    });

    it('fills macros inside the landing URL itself', async () => {
      const [link] = await t.db.query<{ slug: string }>(
        'SELECT slug FROM tracking_links WHERE tracker_id = $1 AND position = 1',
        [fx.trackerIds[1]],
      );
      const res = await t.app.inject({ method: 'GET', url: `/go/${link?.slug}` });
      expect(res.statusCode).toBe(302);
      expect(res.headers.location).toMatch(
        new RegExp(`^https://operator\\.example/p/${fx.siteId}\\?x=1&btag=`),
      );
    });

    it('records HEAD, prefetch and bots flagged', async () => {
      const before = await count('SELECT count(*)::int AS n FROM clicks WHERE flag IS NOT NULL');
      const head = await t.app.inject({ method: 'HEAD', url: `/go/${fx.slugs[0]}` });
      expect(head.statusCode).toBe(302);
      await t.app.inject({
        method: 'GET',
        url: `/go/${fx.slugs[0]}`,
        headers: { 'sec-purpose': 'prefetch;prerender' },
      });
      await t.app.inject({
        method: 'GET',
        url: `/go/${fx.slugs[0]}`,
        headers: { 'user-agent': 'Googlebot/2.1 (+http://www.google.com/bot.html)' },
      });
      const flags = await t.db.query<{ flag: string }>(
        'SELECT flag FROM clicks WHERE flag IS NOT NULL ORDER BY id DESC LIMIT 3',
      );
      expect(flags.map((f) => f.flag).sort()).toEqual(['bot', 'head', 'prefetch']);
      expect(await count('SELECT count(*)::int AS n FROM clicks WHERE flag IS NOT NULL')).toBe(before + 3);
    });

    it('never redirects anywhere but the registered landing page', async () => {
      const hostile = [
        `/go/${fx.slugs[0]}?url=//evil.example&redirect=https://evil.example`,
        `/go/${fx.slugs[0]}?next=%0d%0aLocation:%20https://evil.example`,
        `/go/${fx.slugs[0]}?to=javascript:alert(1)`,
      ];
      for (const url of hostile) {
        const res = await t.app.inject({ method: 'GET', url });
        expect(res.statusCode).toBe(302);
        expect(new URL(res.headers.location as string).host).toBe('operator.example');
      }
      const clicksBefore = await count('SELECT count(*)::int AS n FROM clicks');
      for (const url of [
        '/go/%2F%2Fevil.example',
        '/go/%2F%2Fevil.example%2F',
        '/go/..%2F..%2Fadmin',
        '/go/%5Cevil.example',
        '/go/javascript:alert(1)',
        '/go/%0d%0aX:1',
        '/go/ünïcödé',
        `/go/${'a'.repeat(150)}`,
      ]) {
        const res = await t.app.inject({ method: 'GET', url });
        expect([404, 422], url).toContain(res.statusCode);
        expect(res.headers.location).toBeUndefined();
      }
      expect(await count('SELECT count(*)::int AS n FROM clicks')).toBe(clicksBefore);
      const badSub = await t.app.inject({
        method: 'GET',
        url: `/go/${fx.slugs[0]}?sub_id=%0d%0aSet-Cookie:x`,
      });
      expect(badSub.statusCode).toBe(422);
      expect(badSub.json().details.field).toBe('sub_id');
      const huge = await t.app.inject({
        method: 'GET',
        url: `/go/${fx.slugs[0]}?junk=${'x'.repeat(100_000)}`,
      });
      expect(huge.statusCode).toBeLessThan(500);
    });
  });

  describe('GET /imp/{code}', () => {
    it('answers a 1×1 GIF, no-store, after recording the impression', async () => {
      const before = await count("SELECT count(*)::int AS n FROM clicks WHERE kind = 'impression'");
      const res = await t.app.inject({ method: 'GET', url: `/imp/${fx.slugs[1]}`, headers: BROWSER });
      expect(res.statusCode).toBe(200);
      expect(res.headers['content-type']).toBe('image/gif');
      expect(res.headers['cache-control']).toBe('no-store');
      expect(res.rawPayload.subarray(0, 6).toString()).toBe('GIF89a');
      expect(await count("SELECT count(*)::int AS n FROM clicks WHERE kind = 'impression'")).toBe(before + 1);
      expect((await t.app.inject({ method: 'GET', url: '/imp/nope' })).statusCode).toBe(404);
    });
  });

  describe('durable clicks under load', () => {
    it('records every answered 302 exactly once', async () => {
      const n = Number(process.env.TRACKING_STORM ?? 10_000);
      const address = await t.app.listen({ host: '127.0.0.1', port: 0 });
      const before = await count("SELECT count(*)::int AS n FROM clicks WHERE kind = 'click'");
      const results = await storm(address, `/go/${fx.slugs[0]}`, n);
      const ids = redirectedClickIds(results);
      expect(ids.length).toBe(n);
      expect(new Set(ids).size).toBe(n);
      expect(await count("SELECT count(*)::int AS n FROM clicks WHERE kind = 'click'")).toBe(before + n);
      expect(await count('SELECT count(*)::int AS n FROM clicks WHERE id = ANY($1::text[])', [ids])).toBe(n);
    }, 120_000);
  });

  describe('POST /api/postback/{program}/{token}', () => {
    const pb = (
      query: string,
      init: { method?: 'GET' | 'POST'; body?: string; type?: string; token?: string; program?: string } = {},
    ) =>
      t.app.inject({
        method: init.method ?? 'GET',
        url: `/api/postback/${init.program ?? 'lucky-partners'}/${init.token ?? program.postbackToken}${query}`,
        ...(init.body === undefined ? {} : { payload: init.body }),
        headers: init.type ? { 'content-type': init.type } : {},
      });
    /** A refused postback's answer, the status it must have and the field it must name, if any. */
    type Refusal = [res: Awaited<ReturnType<typeof pb>>, status: number, field?: string];
    /** Sends a GET postback per query, each to be refused with a 400 naming the field. */
    const badQueries = async (cases: [query: string, field: string][]): Promise<Refusal[]> => {
      const out: Refusal[] = [];
      for (const [query, field] of cases) out.push([await pb(query), 400, field]);
      return out;
    };
    /** Posts a JSON body per case, each to be refused with a 400 naming the field. */
    const badJson = async (cases: [body: string, field: string][]): Promise<Refusal[]> => {
      const out: Refusal[] = [];
      for (const [body, field] of cases)
        out.push([await pb('', { method: 'POST', type: 'application/json', body }), 400, field]);
      return out;
    };
    /** Each refusal has its status, a snake_case error code and names its field. */
    const expectRefused = (cases: Refusal[]) => {
      for (const [res, status, field] of cases) {
        expect(res.statusCode, res.body).toBe(status);
        expect(res.json().code).toMatch(/^[a-z_]+$/);
        if (field) expect(res.json().details.field).toBe(field);
      }
    };
    let clickId: string;

    beforeAll(async () => {
      const res = await t.app.inject({ method: 'GET', url: `/go/${fx.slugs[1]}`, headers: BROWSER });
      clickId = (new URL(res.headers.location as string).searchParams.get('btag') as string).split(
        '_',
      )[1] as string;
    });

    it('attributes a conversion through the click to site, toplist, position and brand', async () => {
      const res = await pb(`?btag=${clickId}&txid=T-1&event=FTD&amount=25.50&currency=usd&player_id=p-777`);
      expect(res.statusCode).toBe(200);
      const body = res.json();
      expect(body).toMatchObject({ status: 'accepted', duplicate: false, attributed: true });
      expect(body.conversionId).toMatch(ULID);
      const [row] = await t.db.query<Record<string, unknown>>('SELECT * FROM conversions WHERE id = $1', [
        body.conversionId,
      ]);
      expect(row).toMatchObject({
        event: 'ftd',
        currency: 'USD',
        attributed: true,
        site_id: fx.siteId,
        toplist_id: fx.toplistId,
        position: 2,
        brand_id: fx.brandId,
        click_id: clickId,
      });
      expect(String(row?.amount)).toBe('25.5000');
      expect(row?.player_ref).toMatch(/^ref:[0-9a-f]{64}$/);
      const logged = JSON.stringify(await t.db.query('SELECT * FROM postback_log'));
      expect(logged).not.toContain('p-777');
      expect(logged).not.toContain(program.postbackToken);
    });

    it('accepts form and JSON bodies; unknown clicks are stored unattributed', async () => {
      const form = await pb('', {
        method: 'POST',
        type: 'application/x-www-form-urlencoded',
        body: 'txid=F-1&event=registration',
      });
      expect(form.statusCode).toBe(200);
      expect(form.json()).toMatchObject({ duplicate: false, attributed: false });
      const json = await pb('', {
        method: 'POST',
        type: 'application/json; charset=utf-8',
        body: JSON.stringify({
          txid: 'J-1-ünï',
          event: 'cpa',
          amount: 10,
          btag: '01ARZ3NDEKTSV4RRFFQ69G5FAV',
        }),
      });
      expect(json.statusCode).toBe(200);
      expect(json.json()).toMatchObject({ duplicate: false, attributed: false });
    });

    it('50 identical postbacks at once make one conversion; 50 different make 50', async () => {
      const same = await Promise.all(
        Array.from({ length: 50 }, () => pb(`?btag=${clickId}&txid=STORM&event=ftd`)),
      );
      expect(same.every((r) => r.statusCode === 200)).toBe(true);
      const bodies = same.map((r) => r.json());
      expect(bodies.filter((b) => !b.duplicate)).toHaveLength(1);
      expect(new Set(bodies.map((b) => b.conversionId)).size).toBe(1);
      expect(await count("SELECT count(*)::int AS n FROM conversions WHERE transaction_id = 'STORM'")).toBe(
        1,
      );
      const different = await Promise.all(
        Array.from({ length: 50 }, (_, i) => pb(`?txid=D-${i}&event=registration`)),
      );
      expect(different.every((r) => r.statusCode === 200 && r.json().duplicate === false)).toBe(true);
      expect(await count("SELECT count(*)::int AS n FROM conversions WHERE transaction_id LIKE 'D-%'")).toBe(
        50,
      );
    });

    it('rejects clearly and still logs every attempt, without secrets', async () => {
      const logBefore = await count('SELECT count(*)::int AS n FROM postback_log');
      const cases: Refusal[] = [
        [await pb('?txid=X&event=ftd', { token: 'pdp_wrongwrongwrongwrongwrongwrongwrongwrongwro' }), 401],
        [await pb('?txid=X&event=ftd', { program: 'no-such-program' }), 401],
        ...(await badQueries([
          ['?event=ftd', 'txid'],
          ['?txid=X', 'event'],
          ['?txid=X&event=ftd&amount=1e3', 'amount'],
          ['?txid=X&event=ftd&amount=12.345678', 'amount'],
          ['?txid=X&event=ftd&currency=EURO', 'currency'],
          ['?txid=X&txid=Y&event=ftd', 'txid'],
          ['?txid=%00&event=ftd', 'txid'],
          [`?txid=X&event=ftd&junk=${'x'.repeat(600)}`, 'junk'],
        ])),
        ...(await badJson([
          ['{"txid": "X", ', 'body'],
          ['[1,2]', 'body'],
        ])),
        [await pb('', { method: 'POST', type: 'text/xml', body: '<x/>' }), 415],
      ];
      expectRefused(cases);
      expect(await count('SELECT count(*)::int AS n FROM postback_log')).toBe(logBefore + cases.length);
      expect(
        await count(
          'SELECT count(*)::int AS n FROM postback_outcomes o JOIN postback_log l ON l.id = o.log_id WHERE l.id > $1 AND o.status >= 400',
          [0],
        ),
      ).toBeGreaterThanOrEqual(cases.length);
      expect(
        await count("SELECT count(*)::int AS n FROM conversions WHERE transaction_id IN ('X', 'Y')"),
      ).toBe(0);
      expect(JSON.stringify(await t.db.query('SELECT * FROM postback_log'))).not.toMatch(
        /pdp_[A-Za-z0-9_-]{20}/,
      );
    });

    it('answers hostile postbacks with a clear 4xx, logs them and writes no conversion', async () => {
      const conversions = await count('SELECT count(*)::int AS n FROM conversions');
      const logBefore = await count('SELECT count(*)::int AS n FROM postback_log');
      const many = Array.from({ length: 200 }, (_, i) => `p${i}=x`).join('&');
      const cases: Refusal[] = [
        [await pb(`?txid=H&event=ftd&${many}`), 400],
        ...(await badQueries([
          ['?txid=H%0d%0aSet-Cookie:x&event=ftd', 'txid'],
          ['?txid=H&event=ft%E2%9C%93d', 'event'],
          ['?txid=H&event=javascript:alert(1)', 'event'],
          ['?txid=H&event=ftd&currency=%E2%82%AC%E2%82%AC%E2%82%AC', 'currency'],
          ['?txid=H&event=ftd&amount=NaN', 'amount'],
          ['?txid=H&event=ftd&amount=%EF%BC%91%EF%BC%92', 'amount'],
        ])),
        ...(await badJson([
          ['{"txid":{"$ne":1},"event":"ftd"}', 'txid'],
          ['{"txid":"H","event":["ftd"]}', 'event'],
          ['"just a string"', 'body'],
          ['\u0000\uffff', 'body'],
        ])),
        [await pb('', { method: 'POST', type: 'text/plain', body: 'txid=H&event=ftd' }), 415],
        [await pb('', { method: 'POST', type: 'multipart/form-data; boundary=x', body: '--x--' }), 415],
      ];
      expectRefused(cases);
      const huge = await pb('', {
        method: 'POST',
        type: 'application/json',
        body: `{"x":"${'y'.repeat(70_000)}"}`,
      });
      expect(huge.statusCode).toBe(413);
      expect(huge.json().code).toBe('payload_too_large');
      expect(await count('SELECT count(*)::int AS n FROM postback_log')).toBe(logBefore + cases.length);
      expect(await count('SELECT count(*)::int AS n FROM conversions')).toBe(conversions);
      const unicode = await pb('?txid=%E5%8F%96%E5%BC%95-%F0%9F%8E%B0&event=registration');
      expect(unicode.statusCode).toBe(200);
      const [row] = await t.db.query<{ transaction_id: string }>(
        'SELECT transaction_id FROM conversions WHERE id = $1',
        [unicode.json().conversionId],
      );
      expect(row?.transaction_id).toBe('取引-🎰');
    });

    it('keeps the log append-only', async () => {
      await expect(t.db.query("UPDATE postback_log SET method = 'X'")).rejects.toThrow(/append-only/);
      await expect(t.db.query('DELETE FROM postback_outcomes')).rejects.toThrow(/append-only/);
    });

    it('an old token stops working after rotation', async () => {
      const rotated = await admin('POST', `/tracking/programs/${program.id}/token`);
      expect(rotated.status).toBe(200);
      expect((await pb('?txid=R-1&event=ftd')).statusCode).toBe(401);
      expect((await pb('?txid=R-1&event=ftd', { token: rotated.body.data.postbackToken })).statusCode).toBe(
        200,
      );
      program.postbackToken = rotated.body.data.postbackToken;
    });
  });

  describe('stats', () => {
    it('counts clicks, impressions and conversions per day and dimension, as JSON and CSV', async () => {
      const day = new Intl.DateTimeFormat('en-CA', { timeZone: 'Europe/Malta' }).format(t.clock.now);
      const res = await admin('GET', `/tracking/stats?from=${day}&to=${day}&program_id=${program.id}`);
      expect(res.status).toBe(200);
      expect(res.body.meta.tz).toBe('program');
      const pos2 = res.body.data.find(
        (r: { position: number | null; siteId: number | null }) => r.position === 2,
      );
      const counted = await count(
        "SELECT count(*)::int AS n FROM clicks WHERE position = 2 AND kind = 'click' AND flag IS NULL AND program_id = $1",
        [program.id],
      );
      expect(counted).toBe(1);
      expect(pos2).toMatchObject({
        day,
        timezone: 'Europe/Malta',
        siteId: fx.siteId,
        brandId: fx.brandId,
        clicks: 1,
        impressions: 1,
        ftds: 2,
        conversionRate: '0.0000',
      });
      const unattributed = res.body.data.find((r: { siteId: number | null }) => r.siteId === null);
      expect(unattributed.registrations).toBe(52);
      const csv = await t.app.inject({
        method: 'GET',
        url: `/api/admin/v1/tracking/stats?from=${day}&to=${day}&program_id=${program.id}&format=csv`,
        headers: { authorization: `Bearer ${fx.adminToken}` },
      });
      expect(csv.headers['content-type']).toContain('text/csv');
      expect(csv.body.split('\r\n')[0]).toBe(
        'day,timezone,site_id,toplist_id,position,brand_id,program_id,clicks,impressions,blocked_clicks,registrations,ftds,conversions,conversion_rate,ftd_rate,revenue,commission,epc,events',
      );
      for (const q of [
        'from=2026-13-01&to=2026-12-01',
        'from=2026-01-02&to=2026-01-01',
        'from=2020-01-01&to=2026-01-01',
        'from=2026-01-01&to=2026-01-01&tz=Nowhere',
        'from=2026-01-01&to=2026-01-01&tz=%2B02:00',
        'from=2026-02-30&to=2026-03-01',
        'from=2026-01-01&to=2026-01-01&per_page=1001',
      ]) {
        const bad = await admin('GET', `/tracking/stats?${q}`);
        expect(bad.status, q).toBe(422);
      }
    });
  });
});

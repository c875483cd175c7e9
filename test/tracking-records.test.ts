import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ConversionList, PostbackList, ReplayAnswer } from '../src/modules/reporting/ops-schemas.ts';
import { DB_KIND, type TestApp, testApp } from './helpers.ts';
import { expectSchema } from './schema-check.ts';
import { type TrackingFixture, trackingFixture } from './tracking-fixture.ts';

const BROWSER = {
  'user-agent': 'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 Chrome/120.0 Safari/537.36',
};

interface Program {
  id: number;
  slug: string;
  postbackToken: string;
}

/**
 * The affiliate manager's records: the conversions list (filters, paging, CSV), the raw postback
 * log, and replay of a postback rejected for a mapping mistake once the mapping is fixed.
 */
describe(`conversions and the postback log (${DB_KIND})`, () => {
  let t: TestApp;
  let fx: TrackingFixture;
  let partners: Program;
  let clickId: string;

  const at = (iso: string) => {
    t.clock.now = new Date(iso);
  };
  const admin = async (method: 'GET' | 'POST' | 'PATCH', url: string, payload?: unknown) => {
    const res = await t.app.inject({
      method,
      url: `/api/admin/v1${url}`,
      headers: { authorization: `Bearer ${fx.adminToken}` },
      ...(payload === undefined ? {} : { payload: payload as object }),
    });
    return { status: res.statusCode, body: res.json(), headers: res.headers };
  };
  const postback = async (p: Program, query: string, token = p.postbackToken) => {
    const res = await t.app.inject({ method: 'GET', url: `/api/postback/${p.slug}/${token}?${query}` });
    return { status: res.statusCode, body: res.json() };
  };
  const count = async (sql: string, params: unknown[] = []) =>
    ((await t.db.query<{ n: number }>(sql, params))[0] as { n: number }).n;
  const create = async (body: Record<string, unknown>): Promise<Program> => {
    const res = await admin('POST', '/tracking/programs', body);
    expect(res.status).toBe(201);
    return res.body.data;
  };

  let rejectedAnswer: { message: string };

  beforeAll(async () => {
    t = await testApp();
    fx = await trackingFixture(t.app.services, t.db);
    partners = await create({
      slug: 'partners',
      name: 'Partners',
      landingParams: 'btag={click_id}',
      paramMap: { click_id: 'btag' },
      trackerIds: [fx.trackerIds[0]],
    });
    at('2026-10-01T10:00:00Z');
    const go = await t.app.inject({
      method: 'GET',
      url: `/go/${fx.slugs[0]}?sub_id=summer`,
      headers: BROWSER,
    });
    expect(go.statusCode).toBe(302);
    clickId = new URL(go.headers.location as string).searchParams.get('btag') as string;
    at('2026-10-01T12:00:00Z');
    expect((await postback(partners, `btag=${clickId}&event=registration&transaction_id=r1`)).status).toBe(
      200,
    );
    at('2026-10-02T12:00:00Z');
    expect(
      (await postback(partners, `btag=${clickId}&event=ftd&transaction_id=f1&amount=50.00&api_key=k-123456`))
        .status,
    ).toBe(200);
    at('2026-10-03T08:00:00Z');
    expect((await postback(partners, 'event=registration&transaction_id=r2')).status).toBe(200);
    at('2026-10-03T09:00:00Z');
    expect(
      (await postback(partners, `btag=${clickId}&event=registration&transaction_id=r1`)).body,
    ).toMatchObject({
      duplicate: true,
    });
    at('2026-10-03T10:00:00Z');
    const refused = await postback(partners, 'transaction_id=x1');
    expect(refused.status).toBe(400);
    rejectedAnswer = refused.body;
    at('2026-10-05T12:00:00Z');
  });
  afterAll(async () => {
    await t?.close();
  });

  describe('GET /tracking/conversions', () => {
    it('lists conversions newest first with the sub id of their click', async () => {
      const res = await admin('GET', '/tracking/conversions?from=2026-10-01&to=2026-10-03');
      expect(res.status).toBe(200);
      expectSchema(ConversionList, res.body);
      expect(res.body.data.map((c: { transactionId: string }) => c.transactionId)).toEqual([
        'r2',
        'f1',
        'r1',
      ]);
      expect(res.body.data[1]).toMatchObject({
        programId: partners.id,
        event: 'ftd',
        amount: '50.0000',
        currency: 'EUR',
        clickId,
        attributed: true,
        subId: 'summer',
        siteId: fx.siteId,
        toplistId: fx.toplistId,
        position: 1,
        brandId: fx.brandId,
        offerId: fx.offerId,
        trackerId: fx.trackerIds[0],
        receivedAt: '2026-10-02T12:00:00.000Z',
      });
      expect(res.body.data[0]).toMatchObject({ attributed: false, subId: null, clickId: null, amount: null });
      expect(res.body.meta).toEqual({
        current_page: 1,
        per_page: 50,
        total: 3,
        last_page: 1,
        from: 1,
        to: 3,
      });
    });

    it('filters by programme, event, attribution, click, transaction and sub id', async () => {
      const ids = async (q: string) =>
        (await admin('GET', `/tracking/conversions?from=2026-10-01&to=2026-10-03&${q}`)).body.data.map(
          (c: { transactionId: string }) => c.transactionId,
        );
      expect(await ids('event=ftd')).toEqual(['f1']);
      expect(await ids('event=FTD')).toEqual(['f1']);
      expect(await ids('attributed=false')).toEqual(['r2']);
      expect(await ids('attributed=true')).toEqual(['f1', 'r1']);
      expect(await ids(`click_id=${clickId}`)).toEqual(['f1', 'r1']);
      expect(await ids('transaction_id=r1')).toEqual(['r1']);
      expect(await ids('sub_id=summer')).toEqual(['f1', 'r1']);
      expect(await ids('sub_id=winter')).toEqual([]);
      expect(await ids(`program_id=${partners.id}`)).toHaveLength(3);
      expect(await ids(`program_id=${partners.id + 100}`)).toEqual([]);
      // The window is inclusive UTC days on receivedAt.
      const upTo2 = await admin('GET', '/tracking/conversions?from=2026-10-01&to=2026-10-02');
      expect(upTo2.body.data.map((c: { transactionId: string }) => c.transactionId)).toEqual(['f1', 'r1']);
    });

    it('pages with meta and defaults to the last 30 days', async () => {
      const p2 = await admin('GET', '/tracking/conversions?from=2026-10-01&to=2026-10-03&per_page=2&page=2');
      expect(p2.body.data.map((c: { transactionId: string }) => c.transactionId)).toEqual(['r1']);
      expect(p2.body.meta).toEqual({ current_page: 2, per_page: 2, total: 3, last_page: 2, from: 3, to: 3 });
      const past = await admin('GET', '/tracking/conversions?from=2026-10-01&to=2026-10-03&page=9');
      expect(past.body.data).toEqual([]);
      expect(past.body.meta.total).toBe(3);
      expect((await admin('GET', '/tracking/conversions')).body.meta.total).toBe(3);
      at('2026-11-15T00:00:00Z');
      expect((await admin('GET', '/tracking/conversions')).body.meta.total).toBe(0);
      at('2026-10-05T12:00:00Z');
    });

    it('exports CSV by format=csv or Accept: text/csv', async () => {
      const csv = await t.app.inject({
        method: 'GET',
        url: '/api/admin/v1/tracking/conversions?from=2026-10-01&to=2026-10-03&format=csv',
        headers: { authorization: `Bearer ${fx.adminToken}` },
      });
      expect(csv.statusCode).toBe(200);
      expect(csv.headers['content-type']).toBe('text/csv; charset=utf-8');
      expect(csv.headers['content-disposition']).toBe(
        'attachment; filename="podium-conversions-2026-10-01-2026-10-03.csv"',
      );
      const lines = csv.body.trimEnd().split('\r\n');
      expect(lines[0]).toBe(
        'id,received_at,program_id,transaction_id,event,amount,currency,click_id,attributed,sub_id,site_id,toplist_id,position,brand_id,offer_id,tracker_id,log_id',
      );
      expect(lines).toHaveLength(4);
      expect(lines[2]).toContain(`,f1,ftd,50.0000,EUR,${clickId},true,summer,${fx.siteId},`);
      const accept = await t.app.inject({
        method: 'GET',
        url: '/api/admin/v1/tracking/conversions?from=2026-10-01&to=2026-10-03&sub_id=summer',
        headers: { authorization: `Bearer ${fx.adminToken}`, accept: 'text/csv' },
      });
      expect(accept.body.trimEnd().split('\r\n')).toHaveLength(3);
    });

    it('refuses bad filters and windows with the field named', async () => {
      const cases: [string, string][] = [
        ['from=2026-10-05&to=2026-10-01', 'to'],
        ['from=2026-01-01&to=2026-10-01', 'to'],
        ['from=2026-13-01', 'from'],
        ['to=yesterday', 'to'],
        ['attributed=maybe', 'attributed'],
        ['event=%3Cscript%3E', 'event'],
        ['per_page=201', 'per_page'],
        ['program=1', 'program'],
        ['format=xml', 'format'],
      ];
      for (const [q, field] of cases) {
        const res = await admin('GET', `/tracking/conversions?${q}`);
        expect(res.status, q).toBe(422);
        expect(JSON.stringify(res.body), q).toContain(field);
      }
    });
  });

  describe('GET /tracking/postbacks', () => {
    it('lists every postback with its outcomes, secrets redacted', async () => {
      const res = await admin('GET', '/tracking/postbacks?from=2026-10-01&to=2026-10-03');
      expect(res.status).toBe(200);
      expectSchema(PostbackList, res.body);
      expect(res.body.meta.total).toBe(5);
      const [rejected, duplicate, , ftd] = res.body.data;
      expect(rejected).toMatchObject({
        program: 'partners',
        programId: partners.id,
        method: 'GET',
        params: { transaction_id: 'x1' },
        rawBody: null,
        outcomes: [
          {
            status: 400,
            code: 'bad_request',
            conversionId: null,
            duplicate: false,
            replay: false,
            field: 'event',
          },
        ],
        replayable: true,
      });
      // The reason is the very message the operator was answered.
      expect(rejected.outcomes[0].message).toBe(rejectedAnswer.message);
      expect(rejected.outcomes[0].message).toContain('event');
      expect(duplicate.outcomes).toMatchObject([
        { status: 200, code: 'duplicate', duplicate: true, message: null, field: null },
      ]);
      expect(ftd.params).toMatchObject({ transaction_id: 'f1', api_key: '[redacted]' });
      expect(JSON.stringify(res.body)).not.toContain('k-123456');
      expect(JSON.stringify(res.body)).not.toContain(partners.postbackToken);
    });

    it('filters by outcome, code, transaction id and programme', async () => {
      const q = async (s: string) =>
        (await admin('GET', `/tracking/postbacks?from=2026-10-01&to=2026-10-03&${s}`)).body.meta.total;
      expect(await q('outcome=rejected')).toBe(1);
      expect(await q('outcome=duplicate')).toBe(1);
      expect(await q('outcome=accepted')).toBe(3);
      expect(await q('code=bad_request')).toBe(1);
      expect(await q('reason=EVENT')).toBe(1);
      expect(await q('reason=currency')).toBe(0);
      expect(await q('transaction_id=r1')).toBe(2);
      expect(await q(`program_id=${partners.id}`)).toBe(5);
      expect(await q(`program_id=${partners.id + 100}`)).toBe(0);
      expect((await admin('GET', '/tracking/postbacks?outcome=lost')).status).toBe(422);
    });
  });

  describe('POST /tracking/postbacks/{id}/replay', () => {
    let mapless: Program;
    let logId: string;

    beforeAll(async () => {
      mapless = await create({
        slug: 'mapless',
        name: 'Mapless',
        landingParams: 'clickid={click_id}',
        trackerIds: [fx.trackerIds[1]],
      });
      const [link] = await t.db.query<{ slug: string }>(
        'SELECT slug FROM tracking_links WHERE toplist_id = $1 AND position = 1 AND tracker_id = $2',
        [fx.toplistId, fx.trackerIds[1]],
      );
      at('2026-10-04T10:00:00Z');
      const go = await t.app.inject({
        method: 'GET',
        url: `/go/${link?.slug}?sub_id=replayed`,
        headers: BROWSER,
      });
      expect(go.statusCode).toBe(302);
      clickId = new URL(go.headers.location as string).searchParams.get('clickid') as string;
    });

    it('replays a postback rejected for an unknown parameter name once the mapping is fixed', async () => {
      // The operator's own names: clickid, txid. Without a mapping the transaction id is missing.
      at('2026-10-04T11:00:00Z');
      const sent = await postback(mapless, `clickid=${clickId}&txid=T-9&event=ftd&amount=20&player_id=p-77`);
      expect(sent.status).toBe(400);
      expect(sent.body.details).toEqual({ field: 'transaction_id' });
      const logged = await admin('GET', `/tracking/postbacks?program_id=${mapless.id}&outcome=rejected`);
      expect(logged.body.data).toHaveLength(1);
      logId = logged.body.data[0].id;
      expect(logged.body.data[0].params.player_id).toMatch(/^ref:[0-9a-f]{64}$/);
      const logRows = await count('SELECT count(*)::int AS n FROM postback_log');

      at('2026-10-06T09:00:00Z');
      expect(
        (
          await admin('PATCH', `/tracking/programs/${mapless.id}`, {
            paramMap: { click_id: 'clickid', transaction_id: 'txid' },
          })
        ).status,
      ).toBe(200);
      const replayed = await admin('POST', `/tracking/postbacks/${logId}/replay`);
      expect(replayed.status).toBe(200);
      expectSchema(ReplayAnswer, replayed.body);
      expect(replayed.body.data).toMatchObject({
        logId,
        status: 200,
        code: 'accepted',
        duplicate: false,
        message: null,
      });
      const conversionId = replayed.body.data.conversionId;
      expect(conversionId).toMatch(/^[0-9A-Z]{26}$/);

      // Attributed to its click, on the day the operator sent it, never logged again.
      const conv = await admin(
        'GET',
        `/tracking/conversions?transaction_id=T-9&from=2026-10-04&to=2026-10-04`,
      );
      expect(conv.body.data).toHaveLength(1);
      expect(conv.body.data[0]).toMatchObject({
        id: conversionId,
        programId: mapless.id,
        attributed: true,
        clickId,
        subId: 'replayed',
        amount: '20.0000',
        logId,
        receivedAt: '2026-10-04T11:00:00.000Z',
      });
      expect(await count('SELECT count(*)::int AS n FROM postback_log')).toBe(logRows);

      // The player id is pseudonymised once, exactly as a postback sent directly would be.
      at('2026-10-06T09:05:00Z');
      await postback(mapless, 'txid=T-10&event=registration&player_id=p-77');
      const refs = await t.db.query<{ player_ref: string }>(
        "SELECT player_ref FROM conversions WHERE transaction_id IN ('T-9', 'T-10') ORDER BY transaction_id",
      );
      expect(refs[0]?.player_ref).toBe(refs[1]?.player_ref);
    });

    it('replaying twice makes one conversion: the second replay says duplicate', async () => {
      const first = (
        await admin('GET', `/tracking/conversions?transaction_id=T-9&from=2026-10-04&to=2026-10-04`)
      ).body.data[0].id;
      const again = await admin('POST', `/tracking/postbacks/${logId}/replay`);
      expect(again.body.data).toMatchObject({
        status: 200,
        code: 'duplicate',
        duplicate: true,
        conversionId: first,
      });
      expect(await count("SELECT count(*)::int AS n FROM conversions WHERE transaction_id = 'T-9'")).toBe(1);
      const entry = (
        await admin('GET', `/tracking/postbacks?program_id=${mapless.id}&from=2026-10-04&to=2026-10-04`)
      ).body.data[0];
      expect(entry.id).toBe(logId);
      expect(entry.outcomes.map((o: { code: string; replay: boolean }) => [o.code, o.replay])).toEqual([
        ['bad_request', false],
        ['accepted', true],
        ['duplicate', true],
      ]);
      // The current outcome decides the filters now.
      const q = `program_id=${mapless.id}&from=2026-10-04&to=2026-10-04`;
      expect((await admin('GET', `/tracking/postbacks?${q}&outcome=rejected`)).body.data).toEqual([]);
      expect((await admin('GET', `/tracking/postbacks?${q}&outcome=duplicate`)).body.data).toHaveLength(1);
    });

    it('audit-logs each replay with the outcome before and after', async () => {
      const audit = await admin('GET', `/audit?target_type=tracking&target_id=${logId}`);
      expect(audit.status).toBe(200);
      const rows = audit.body.data.filter(
        (r: { action: string }) => r.action === 'POST /api/admin/v1/tracking/postbacks/:id/replay',
      );
      expect(rows).toHaveLength(2);
      expect(rows[1]).toMatchObject({
        before: { status: 400, code: 'bad_request', replay: false },
        after: { logId, code: 'accepted' },
      });
      expect(rows[0]).toMatchObject({
        before: { code: 'accepted', replay: true },
        after: { code: 'duplicate' },
      });
    });

    it('refuses postbacks whose token was never accepted, and unknown ids', async () => {
      at('2026-10-06T10:00:00Z');
      const forged = await postback(mapless, 'txid=T-11&event=ftd', `pdp_${'x'.repeat(43)}`);
      expect(forged.status).toBe(401);
      const entry = (await admin('GET', `/tracking/postbacks?program_id=${mapless.id}&code=unauthorized`))
        .body.data[0];
      expect(entry.replayable).toBe(false);
      const refused = await admin('POST', `/tracking/postbacks/${entry.id}/replay`);
      expect(refused.status).toBe(409);
      expect(refused.body.message).toMatch(/token was never accepted/);
      expect(await count("SELECT count(*)::int AS n FROM conversions WHERE transaction_id = 'T-11'")).toBe(0);
      expect((await admin('POST', '/tracking/postbacks/999999999/replay')).status).toBe(404);
      expect((await admin('POST', '/tracking/postbacks/abc/replay')).status).toBe(422);
    });
  });
});

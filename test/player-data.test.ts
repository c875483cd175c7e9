import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EraseAnswer, ExportAnswer } from '../src/modules/player-data/schemas.ts';
import { DB_KIND, type TestApp, testApp } from './helpers.ts';
import { expectSchema } from './schema-check.ts';
import { type TrackingFixture, trackingFixture } from './tracking-fixture.ts';

const BROWSER = {
  'user-agent': 'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 Chrome/120.0 Safari/537.36',
};
// Distinctive ids, so finding one in a table means that table kept it.
const ALICE = 'alice-7Qx93-erase-me';
const BOB = 'bob-K2m58-keep-me';

interface Program {
  id: number;
  slug: string;
  postbackToken: string;
}

/**
 * Player data requests: postbacks for two players through the real postback route (accepted,
 * duplicate, refused, of an unknown programme, with an unreadable body), then one player's
 * export and erasure. Every column of every table is searched for the clear id and its hash.
 */
describe(`player data requests (${DB_KIND})`, () => {
  let t: TestApp;
  let fx: TrackingFixture;
  let partners: Program;
  let casino: Program;
  let aliceRef: string;
  let bobRef: string;

  const call = async (method: 'GET' | 'POST', url: string, payload?: unknown, token = fx.adminToken) => {
    const res = await t.app.inject({
      method,
      url: `/api/admin/v1${url}`,
      headers: { authorization: `Bearer ${token}` },
      ...(payload === undefined ? {} : { payload: payload as object }),
    });
    return { status: res.statusCode, body: res.json(), headers: res.headers };
  };
  const postback = (slug: string, token: string, query: string) =>
    t.app.inject({ method: 'GET', url: `/api/postback/${slug}/${token}?${query}` });
  const post = (p: Program, contentType: string, payload: string) =>
    t.app.inject({
      method: 'POST',
      url: `/api/postback/${p.slug}/${p.postbackToken}`,
      headers: { 'content-type': contentType },
      payload,
    });

  /**
   * `table: n` for every table with rows holding `needle` in some column: each row is read as
   * text, every column of every type at once. Partitioned tables are read through their parent
   * (information_schema lists the partitions as tables too; each row is counted once).
   */
  const holders = async (needle: string): Promise<Record<string, number>> => {
    const tables = await t.db.query<{ name: string }>(
      `SELECT t.table_name AS name FROM information_schema.tables t
       JOIN pg_class c ON c.relname = t.table_name AND c.relnamespace = current_schema()::regnamespace
       WHERE t.table_schema = current_schema() AND t.table_type = 'BASE TABLE' AND NOT c.relispartition
       ORDER BY 1`,
    );
    expect(tables.length).toBeGreaterThan(30);
    const out: Record<string, number> = {};
    for (const { name } of tables) {
      const [row] = await t.db.query<{ n: number }>(
        `SELECT count(*)::int AS n FROM "${name}" x WHERE strpos(x::text, $1) > 0`,
        [needle],
      );
      if (row && row.n > 0) out[name] = row.n;
    }
    return out;
  };
  const rollups = async () => ({
    quarters: await t.db.query(
      `SELECT bucket, event, currency, site_id, toplist_id, position, brand_id, program_id, n, amount::text
       FROM conversion_rollups ORDER BY 1, 2, 3, 4, 5, 6, 7, 8`,
    ),
    days: await t.db.query(
      `SELECT zone, day, event, currency, program_id, n, amount::text FROM conversion_daily_rollups
       ORDER BY 1, 2, 3, 4, 5`,
    ),
  });
  const stats = async () => {
    const res = await call('GET', '/tracking/stats?from=2026-10-01&to=2026-10-05&tz=UTC&format=json');
    expect(res.status).toBe(200);
    return res.body;
  };

  beforeAll(async () => {
    t = await testApp({ authFailureLimit: 10_000 });
    fx = await trackingFixture(t.app.services, t.db);
    const create = async (body: Record<string, unknown>): Promise<Program> => {
      const res = await call('POST', '/tracking/programs', body);
      expect(res.status).toBe(201);
      return res.body.data;
    };
    partners = await create({
      slug: 'partners',
      name: 'Partners',
      landingParams: 'btag={click_id}',
      paramMap: { click_id: 'btag', player_id: 'uid' },
      trackerIds: [fx.trackerIds[0]],
    });
    casino = await create({ slug: 'casino', name: 'Casino', trackerIds: [fx.trackerIds[1]] });
    aliceRef = await t.app.services.tracking.playerRef(ALICE);
    bobRef = await t.app.services.tracking.playerRef(BOB);

    t.clock.now = new Date('2026-10-01T10:00:00Z');
    const go = await t.app.inject({
      method: 'GET',
      url: `/go/${fx.slugs[0]}?sub_id=summer`,
      headers: BROWSER,
    });
    expect(go.statusCode).toBe(302);
    const clickId = new URL(go.headers.location as string).searchParams.get('btag') as string;

    // Sent one after another, so which of the two a2 postbacks is the duplicate is fixed.
    const toPartners = (q: string) => () => postback('partners', partners.postbackToken, q);
    const toCasino = (q: string) => () => postback('casino', casino.postbackToken, q);
    const json = (body: string) => () => post(partners, 'application/json', body);
    const sent: [() => Promise<{ statusCode: number }>, number][] = [
      // Alice: accepted (attributed), accepted with an amount, a duplicate, a refused one (bad
      // amount), a JSON body, one in the other programme, one to an unknown programme (the id is
      // logged as sent), one with an unreadable body and one with the id repeated (logged as sent).
      [toPartners(`btag=${clickId}&event=registration&transaction_id=a1&uid=${ALICE}`), 200],
      [toPartners(`event=ftd&transaction_id=a2&amount=50.00&uid=${ALICE}`), 200],
      [toPartners(`event=ftd&transaction_id=a2&amount=50.00&uid=${ALICE}`), 200],
      [toPartners(`event=ftd&transaction_id=a3&amount=lots&uid=${ALICE}`), 400],
      [json(JSON.stringify({ event: 'deposit', transaction_id: 'a4', amount: '20.00', uid: ALICE })), 200],
      [toCasino(`event=deposit&transaction_id=c1&amount=10.00&player_id=${ALICE}`), 200],
      [() => postback('nowhere', 'pbk_wrong', `event=ftd&transaction_id=x1&uid=${ALICE}`), 401],
      [json(`{"event":"ftd","uid":"${ALICE}"`), 400],
      [toCasino(`event=ftd&transaction_id=c9&player_id=${ALICE}&player_id=${ALICE}`), 400],
      // Bob: one conversion in each programme.
      [toPartners(`event=ftd&transaction_id=b1&amount=30.00&uid=${BOB}`), 200],
      [toCasino(`event=deposit&transaction_id=c2&amount=15.00&player_id=${BOB}`), 200],
    ];
    for (const [send, status] of sent) expect((await send()).statusCode).toBe(status);
    // Conversions are counted in the rollups of their batch; the stats read those.
    t.clock.now = new Date('2026-10-05T12:00:00Z');
  });

  afterAll(async () => {
    await t?.close();
  });

  it("finds the player's id in the tables before anything is erased (the scan can see it)", async () => {
    expect(await holders(aliceRef)).toEqual({ conversions: 4, postback_log: 6 });
    // Logged as sent: the unknown programme's postback, the unreadable body, the repeated id.
    expect(await holders(ALICE)).toEqual({ postback_log: 3 });
    expect(await holders(bobRef)).toEqual({ conversions: 2, postback_log: 2 });
  });

  it("exports every row of the player and none of another's", async () => {
    const res = await call('POST', '/player-data/export', { player_id: ALICE });
    expect(res.status).toBe(200);
    expect(res.headers['cache-control']).toBe('no-store');
    expectSchema(ExportAnswer, res.body);
    const { data, meta } = res.body;
    expect(meta).toEqual({ page: 1, per_page: 500, conversions_total: 4, postbacks_total: 9, last_page: 1 });
    expect(data.conversions.map((c: { transactionId: string }) => c.transactionId).sort()).toEqual([
      'a1',
      'a2',
      'a4',
      'c1',
    ]);
    expect(new Set(data.conversions.map((c: { playerRef: string }) => c.playerRef))).toEqual(
      new Set([aliceRef]),
    );
    expect(data.conversions.find((c: { transactionId: string }) => c.transactionId === 'a1').attributed).toBe(
      true,
    );
    expect(data.postbacks).toHaveLength(9);
    const codes = data.postbacks.map((p: { outcomes: { code: string }[] }) =>
      p.outcomes.map((o) => o.code).join(),
    );
    expect(codes.sort()).toEqual(
      [
        'accepted',
        'accepted',
        'accepted',
        'accepted',
        'bad_request',
        'bad_request',
        'bad_request',
        'duplicate',
        'unauthorized',
      ].sort(),
    );
    const text = JSON.stringify(res.body);
    expect(text).not.toContain(BOB);
    expect(text).not.toContain(bobRef);

    const casinoOnly = await call('POST', '/player-data/export', { player_id: ALICE, program_id: casino.id });
    expect(casinoOnly.body.meta).toMatchObject({ conversions_total: 1, postbacks_total: 2 });

    const paged = await call('POST', '/player-data/export', { player_id: ALICE, page: 2, per_page: 3 });
    expect(paged.status).toBe(200);
    expect(paged.body.data.conversions).toHaveLength(1);
    expect(paged.body.data.postbacks).toHaveLength(3);
    expect(paged.body.meta).toEqual({
      page: 2,
      per_page: 3,
      conversions_total: 4,
      postbacks_total: 9,
      last_page: 3,
    });
    const beyond = await call('POST', '/player-data/export', { player_id: ALICE, page: 9, per_page: 3 });
    expect(beyond.body.data).toEqual({ conversions: [], postbacks: [] });
    expect(beyond.body.meta.conversions_total).toBe(4);
  });

  it('erases every row carrying the player in one request; aggregates and the other player stay', async () => {
    const rollupsBefore = await rollups();
    const statsBefore = await stats();
    expect(JSON.stringify(statsBefore)).toContain('"ftd"');
    const bobBefore = await call('POST', '/player-data/export', { player_id: BOB });
    expect(bobBefore.body.meta).toMatchObject({ conversions_total: 2, postbacks_total: 2 });

    const res = await call('POST', '/player-data/erase', { player_id: ALICE });
    expect(res.status).toBe(200);
    expectSchema(EraseAnswer, res.body);
    expect(res.body.data).toEqual({ conversions: 4, postbacks: 9, outcomes: 9 });

    expect(await holders(ALICE)).toEqual({});
    expect(await holders(aliceRef)).toEqual({});
    expect(await holders(aliceRef.slice(4))).toEqual({});
    expect(await rollups()).toEqual(rollupsBefore);
    expect(await stats()).toEqual(statsBefore);
    expect((await call('POST', '/player-data/export', { player_id: BOB })).body).toEqual(bobBefore.body);
    expect(await holders(bobRef)).toEqual({ conversions: 2, postback_log: 2 });
    // Outside an erasure the log stays append-only.
    await expect(t.db.query('DELETE FROM postback_log')).rejects.toThrow(/append-only/);
    await expect(t.db.query('DELETE FROM postback_outcomes')).rejects.toThrow(/append-only/);

    // A second erasure, or one of a player never seen, finds nothing and says so.
    const again = await call('POST', '/player-data/erase', { player_id: ALICE });
    expect(again).toMatchObject({
      status: 200,
      body: { data: { conversions: 0, postbacks: 0, outcomes: 0 } },
    });
    const exported = await call('POST', '/player-data/export', { player_id: ALICE });
    expect(exported.body.meta).toMatchObject({ conversions_total: 0, postbacks_total: 0, last_page: 1 });
  });

  it('erases in one programme only when asked, and a resent postback of an erased conversion stays a duplicate', async () => {
    const before = await rollups();
    const res = await call('POST', '/player-data/erase', { player_id: BOB, program_id: casino.id });
    expect(res.body.data).toEqual({ conversions: 1, postbacks: 1, outcomes: 1 });
    expect(await holders(bobRef)).toEqual({ conversions: 1, postback_log: 1 });
    const left = await call('POST', '/player-data/export', { player_id: BOB });
    expect(left.body.data.conversions.map((c: { transactionId: string }) => c.transactionId)).toEqual(['b1']);

    const resent = await postback(
      'casino',
      casino.postbackToken,
      'event=deposit&transaction_id=c2&amount=15.00',
    );
    expect(resent.statusCode).toBe(200);
    expect(resent.json()).toMatchObject({ duplicate: true });
    expect(await rollups()).toEqual(before);
  });

  it('records who asked, for which programme and how many rows, never the player id', async () => {
    const res = await call('GET', '/audit?target_type=player-data');
    expect(res.status).toBe(200);
    const rows = res.body.data as { action: string; targetId: string; fields: string[]; after: unknown }[];
    const erasures = rows.filter((r) => r.action === 'POST /api/admin/v1/player-data/erase');
    expect(erasures.map((r) => [r.targetId, r.after])).toEqual([
      [String(casino.id), { conversions: 1, postbacks: 1, outcomes: 1 }],
      ['all', { conversions: 0, postbacks: 0, outcomes: 0 }],
      ['all', { conversions: 4, postbacks: 9, outcomes: 9 }],
    ]);
    expect(erasures[0]?.fields.sort()).toEqual(['player_id', 'program_id']);
    expect(rows.some((r) => r.action === 'POST /api/admin/v1/player-data/export')).toBe(true);
    expect(JSON.stringify(rows)).not.toContain(BOB);
  });

  it('needs the player-data scope (admin holds it, tracking scopes do not)', async () => {
    const tracking = await t.app.services.access.createAdminToken(
      't',
      ['tracking:read', 'tracking:write'],
      null,
    );
    for (const op of ['export', 'erase']) {
      const denied = await call('POST', `/player-data/${op}`, { player_id: BOB }, tracking.token);
      expect(denied.status).toBe(403);
      expect(denied.body).toMatchObject({ code: 'forbidden', details: { requiredScope: 'player-data' } });
    }
    const own = await t.app.services.access.createAdminToken('dpo', ['player-data'], null);
    expect((await call('POST', '/player-data/export', { player_id: BOB }, own.token)).status).toBe(200);
    expect((await call('POST', '/player-data/export', { player_id: BOB }, 'pda_wrong')).status).toBe(401);
  });

  it('refuses bad input with a 4xx naming the field, erasing nothing', async () => {
    const cases: [unknown, string][] = [
      [{}, 'player_id'],
      [{ player_id: '' }, 'player_id'],
      [{ player_id: '   ' }, 'player_id'],
      [{ player_id: 'x'.repeat(129) }, 'player_id'],
      [{ player_id: 'tab\there' }, 'player_id'],
      [{ player_id: 42 }, 'player_id'],
      [{ player_id: BOB, program_id: 'casino' }, 'program_id'],
      [{ player_id: BOB, program_id: 999_999 }, 'program_id'],
      [{ player_id: BOB, playerId: BOB }, 'playerId'],
    ];
    for (const [body, field] of cases) {
      const res = await call('POST', '/player-data/erase', body);
      expect(res.status, JSON.stringify(body)).toBe(422);
      expect(res.body.details.field, JSON.stringify(body)).toBe(field);
      expect(res.body.message).toContain(field);
    }
    const paging = await call('POST', '/player-data/export', { player_id: BOB, per_page: 5000 });
    expect(paging).toMatchObject({ status: 422, body: { details: { field: 'per_page' } } });
    expect(await holders(bobRef)).toEqual({ conversions: 1, postback_log: 1 });
  });
});

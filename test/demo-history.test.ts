import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ensureDemo } from '../src/modules/catalog/demo.ts';
import type { StatsLine } from '../src/modules/reporting/stats.ts';
import { DB_KIND, type TestApp, testApp } from './helpers.ts';

/** What `npm start` loads on an empty database: the catalog and 30 days of tracking history. */
describe(`demo history (${DB_KIND})`, () => {
  let t: TestApp;
  let admin: string;
  let seconds: number;
  let catalogSeconds = 0;
  const get = async (url: string) => {
    const res = await t.app.inject({
      url: `/api/admin/v1${url}`,
      headers: { authorization: `Bearer ${admin}` },
    });
    expect(res.statusCode, res.body).toBe(200);
    return res.json();
  };

  beforeAll(async () => {
    t = await testApp();
    t.clock.now = new Date('2026-11-23T18:00:00Z');
    const started = performance.now();
    const tokens = await ensureDemo(
      t.app.services,
      (msg) => {
        if (msg.startsWith('demo: sportsbook')) catalogSeconds = (performance.now() - started) / 1000;
      },
      t.clock.now,
    );
    seconds = (performance.now() - started) / 1000;
    admin = tokens!.adminToken;
  }, 240_000);
  afterAll(async () => {
    await t?.close();
  });

  it('charts 30 days of clicks, impressions, conversions and money per programme currency', async () => {
    console.log(
      `demo load: ${seconds.toFixed(1)} s, of which history ${(seconds - catalogSeconds).toFixed(1)} s (${DB_KIND})`,
    );
    const first = await get('/tracking/stats?from=2026-10-25&to=2026-10-25&tz=utc&per_page=1000');
    const last = await get('/tracking/stats?from=2026-11-23&to=2026-11-23&tz=utc&per_page=1000');
    expect(first.data.length).toBeGreaterThan(50);
    expect(last.data.length).toBeGreaterThan(50);
    const stats = await get('/tracking/stats?from=2026-10-25&to=2026-11-23&tz=utc&per_page=1000');
    expect(stats.meta.total).toBeGreaterThan(1000);
    const rows = stats.data as StatsLine[];
    expect(rows.some((r) => r.impressions > 0 && r.conversions > 0)).toBe(true);
    const currencies = new Set(rows.flatMap((r) => Object.keys(r.commission)));
    expect([...currencies].sort()).toEqual(['EUR', 'GBP', 'USD']);
    expect(rows.some((r) => Object.keys(r.revenue).length > 0)).toBe(true);
    const programs = (await get('/tracking/programs')).data.map((p: { slug: string }) => p.slug);
    expect(programs).toEqual(['nordic-partners', 'atlas-affiliates', 'bookie-partners']);
  });

  it('leaves refused postbacks of the common kinds in the log, each with the reason the operator was told', async () => {
    const log = await get('/tracking/postbacks?outcome=rejected&from=2026-11-23&to=2026-11-23');
    const reasons = log.data.map((p: { params: Record<string, string>; outcomes: { field: string }[] }) => [
      Object.keys(p.params).sort().join(','),
      p.outcomes[0]?.field,
    ]);
    expect(reasons.sort()).toEqual([
      ['amount,currency,event,transaction_id', 'currency'],
      ['amount,currency,event,txid', 'transaction_id'],
      ['event', 'transaction_id'],
    ]);
    for (const p of log.data) expect(p.outcomes[0].message).toMatch(/\S/);
    expect((await get('/tracking/postbacks?reason=currency&from=2026-11-23&to=2026-11-23')).meta.total).toBe(
      1,
    );
  });

  it('keeps the rollups equal to the raw rows, and gives the suggested order something to rank', async () => {
    const [raw] = await t.db.query<{ clicks: number; amount: string }>(
      `SELECT (SELECT count(*)::int FROM clicks WHERE flag IS NULL) AS clicks,
              (SELECT coalesce(sum(amount), 0)::text FROM conversions) AS amount`,
    );
    const [rolled] = await t.db.query<{ clicks: number; amount: string }>(
      `SELECT (SELECT sum(n)::int FROM click_rollups) AS clicks,
              (SELECT sum(amount)::text FROM conversion_rollups) AS amount`,
    );
    expect(rolled).toEqual(raw);
    // The programmes' own zones are built with the load, not a minute after the server starts,
    // and their clicks folded into the daily rows up to the last quarter hour that has ended.
    const zones = await t.db.query<{ zone: string; ready: boolean; folded: Date; clicks: number }>(
      `SELECT z.zone, z.ready, z.clicks_folded_to AS folded,
              (SELECT coalesce(sum(n), 0) FROM click_daily_rollups d WHERE d.zone = z.zone)::int +
              (SELECT coalesce(sum(n), 0) FROM click_rollups c WHERE c.bucket >= z.clicks_folded_to)::int AS clicks
         FROM rollup_zones z ORDER BY z.zone`,
    );
    const [all] = await t.db.query<{ n: number }>('SELECT sum(n)::int AS n FROM click_rollups');
    expect(zones).toEqual(
      ['Europe/London', 'Europe/Malta', 'UTC'].map((zone) => ({
        zone,
        ready: true,
        folded: new Date('2026-11-23T17:45:00Z'),
        clicks: all!.n,
      })),
    );
    const [gb] = await t.db.query<{ id: number }>("SELECT id FROM toplists WHERE slug = 'best-casinos-gb'");
    const suggested = (await get(`/toplists/${gb!.id}/suggested-order?days=30`)).data;
    expect(suggested.items).toHaveLength(10);
    expect(suggested.priorEpc).not.toBeNull();
    expect(suggested.items.every((i: { clicks: number }) => i.clicks > 0)).toBe(true);
    expect(suggested.items.map((i: { suggestedPosition: number }) => i.suggestedPosition)).toEqual([
      1, 2, 3, 4, 5, 6, 7, 8, 9, 10,
    ]);
  });
});

import { Value } from '@sinclair/typebox/value';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  ErrorBody,
  ForecastResponse,
  HealthResponse,
  InventoryPage,
  OrderResponse,
  type ReferenceServer,
  ReportResponse,
} from '../src/index.ts';
import { call, testServer } from './helpers.ts';

let s: ReferenceServer;
beforeAll(async () => {
  s = await testServer({ rateLimit: { max: 1000, windowMs: 60_000 } });
});
afterAll(() => s.close());

const api = (method: 'GET' | 'POST', p: string, body?: unknown, headers?: Record<string, string>) =>
  call(s.url, s.apiKey, method, p, body, headers);

function orderBody(key: string, extra: Partial<Record<string, unknown>> = {}) {
  return {
    idempotency_key: key,
    advertiser: { name: 'Acme Casino' },
    order: { name: 'Acme 2026-01', external_ref: `camp-${key}` },
    line_items: [
      {
        external_ref: 'line-1',
        inventory_id: 'slot-home-mpu',
        flight: { start_date: '2026-01-01', end_date: '2026-01-31' },
        goal_impressions: 100000,
        targeting: { geo: ['DE'] },
        sizes: ['300x250'],
        creatives: [
          {
            type: 'third_party_tag',
            width: 300,
            height: 250,
            tag: '<iframe src="https://cdn.example/c?x=1&amp;y=ü"></iframe>',
          },
        ],
      },
    ],
    ...extra,
  };
}
/** A plain line item without creatives. */
const line = (ref: string, slot: string, start: string, end: string, goal: number, size: string) => ({
  external_ref: ref,
  inventory_id: slot,
  flight: { start_date: start, end_date: end },
  goal_impressions: goal,
  sizes: [size],
});
const post = (body: { idempotency_key: string; [k: string]: unknown }) =>
  api('POST', '/orders', body, { 'idempotency-key': body.idempotency_key });

describe('auth and errors', () => {
  it('serves /health with a conforming body', async () => {
    const r = await api('GET', '/health');
    expect(r.status).toBe(200);
    expect(Value.Check(HealthResponse, r.body)).toBe(true);
    expect(r.body).toMatchObject({
      timezone: 'Europe/Malta',
      currency: 'EUR',
      capabilities: { forecast: true, reporting: true, draft_booking: true },
    });
  });

  it('401 without or with a wrong key, never echoing it; 403 without the scope', async () => {
    const none = await call(s.url, undefined, 'GET', '/health');
    expect(none.status).toBe(401);
    expect(none.headers.get('www-authenticate')).toBe('Bearer');
    const wrong = await call(s.url, 'rsk_wrongwrongwrong', 'GET', '/inventory');
    expect(wrong.status).toBe(401);
    expect(JSON.stringify(wrong.body)).not.toContain('wrongwrong');
    expect(Value.Check(ErrorBody, wrong.body)).toBe(true);
    const limited = await s.issueKey({ scopes: ['inventory:read'] });
    expect((await call(s.url, limited.key, 'GET', '/inventory')).status).toBe(200);
    const f = await call(s.url, limited.key, 'POST', '/forecast', {
      inventory_id: 'slot-home-mpu',
      flight: { start_date: '2026-01-01', end_date: '2026-01-02' },
    });
    expect(f.status).toBe(403);
    expect(f.body.code).toBe('forbidden');
  });

  it('401 for an expired key', async () => {
    const k = await s.issueKey({ expiresAt: new Date(Date.now() - 1000) });
    expect((await call(s.url, k.key, 'GET', '/health')).status).toBe(401);
  });

  it('rotates keys without downtime: old and new both work until the old is revoked', async () => {
    const a = await s.issueKey();
    const b = await s.issueKey();
    expect((await call(s.url, a.key, 'GET', '/health')).status).toBe(200);
    expect(await s.revokeKey(a.id)).toBe(true);
    expect((await call(s.url, a.key, 'GET', '/health')).status).toBe(401);
    expect((await call(s.url, b.key, 'GET', '/health')).status).toBe(200);
  });

  it('400 for invalid JSON and wrong types, with the field named', async () => {
    const bad = await api('POST', '/forecast', '{not json');
    expect(bad.status).toBe(400);
    const wrong = await api('POST', '/forecast', {
      inventory_id: 'slot-home-mpu',
      flight: { start_date: 5 },
    });
    expect(wrong.status).toBe(400);
    expect(wrong.body.details.field).toMatch(/flight/);
  });
});

describe('inventory', () => {
  it('walks every slot with cursors, limit 1..200', async () => {
    const seen: string[] = [];
    let cursor: string | null | undefined;
    do {
      const r = await api(
        'GET',
        `/inventory?limit=2${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`,
      );
      expect(r.status).toBe(200);
      expect(Value.Check(InventoryPage, r.body)).toBe(true);
      seen.push(...r.body.data.map((d: { inventory_id: string }) => d.inventory_id));
      cursor = r.body.next_cursor;
    } while (cursor);
    expect(seen).toHaveLength(6);
    expect(new Set(seen).size).toBe(6);
    expect((await api('GET', '/inventory?limit=0')).status).toBe(400);
    expect((await api('GET', '/inventory?limit=201')).status).toBe(400);
    expect((await api('GET', '/inventory?cursor=garbage')).status).toBe(400);
  });
});

describe('forecast', () => {
  const req = (extra: Record<string, unknown> = {}) => ({
    inventory_id: 'slot-article-sidebar',
    flight: { start_date: '2026-03-01', end_date: '2026-03-31' },
    ...extra,
  });

  it('is consistent, available <= forecasted, and geo narrows', async () => {
    const a = await api('POST', '/forecast', req());
    const b = await api('POST', '/forecast', req());
    expect(a.status).toBe(200);
    expect(Value.Check(ForecastResponse, a.body)).toBe(true);
    expect(b.body).toEqual(a.body);
    expect(a.body.available_impressions).toBeLessThanOrEqual(a.body.forecasted_impressions);
    const de = await api('POST', '/forecast', req({ targeting: { geo: ['DE'] } }));
    const deGb = await api('POST', '/forecast', req({ targeting: { geo: ['DE', 'GB', 'ZZ'] } }));
    expect(de.body.forecasted_impressions).toBeLessThan(deGb.body.forecasted_impressions);
    expect(deGb.body.forecasted_impressions).toBeLessThan(a.body.forecasted_impressions);
  });

  it('subtracts booked lines from available only', async () => {
    const before = await api('POST', '/forecast', req());
    const o = await post({
      ...orderBody('fc-1'),
      line_items: [line('l', 'slot-article-sidebar', '2026-03-01', '2026-03-31', 1_000_000, '300x600')],
    });
    expect(o.status).toBe(201);
    const after = await api('POST', '/forecast', req());
    expect(after.body.forecasted_impressions).toBe(before.body.forecasted_impressions);
    expect(before.body.available_impressions - after.body.available_impressions).toBeGreaterThanOrEqual(
      999_999,
    );
  });

  it('a line booked in one country leaves another country available as it was', async () => {
    const april = { flight: { start_date: '2026-04-01', end_date: '2026-04-30' } };
    const de = () => api('POST', '/forecast', req({ ...april, targeting: { geo: ['DE'] } }));
    const se = () => api('POST', '/forecast', req({ ...april, targeting: { geo: ['SE'] } }));
    const [deBefore, seBefore] = [await de(), await se()];
    const booked = line('se', 'slot-article-sidebar', '2026-04-01', '2026-04-30', 20_000, '300x600');
    const o = await post({
      ...orderBody('fc-geo'),
      line_items: [{ ...booked, targeting: { geo: ['SE'] } }],
    });
    expect(o.status).toBe(201);
    expect((await de()).body.available_impressions).toBe(deBefore.body.available_impressions);
    expect(
      seBefore.body.available_impressions - (await se()).body.available_impressions,
    ).toBeGreaterThanOrEqual(19_999);
  });

  it('404 unknown slot, 501 unforecastable slot, 422 bad range', async () => {
    const unknown = await api('POST', '/forecast', req({ inventory_id: 'nope' }));
    expect([unknown.status, unknown.body.code]).toEqual([404, 'inventory_not_found']);
    const skin = await api('POST', '/forecast', req({ inventory_id: 'slot-new-skin' }));
    expect([skin.status, skin.body.code]).toEqual([501, 'forecast_unsupported']);
    const range = await api(
      'POST',
      '/forecast',
      req({ flight: { start_date: '2026-03-31', end_date: '2026-03-01' } }),
    );
    expect([range.status, range.body.code]).toEqual([422, 'invalid_date_range']);
    const feb30 = await api(
      'POST',
      '/forecast',
      req({ flight: { start_date: '2026-02-30', end_date: '2026-03-01' } }),
    );
    expect(feb30.status).toBe(422);
  });
});

describe('orders', () => {
  it('creates a DRAFT, replays the same body (also re-ordered), rejects a changed body with 409', async () => {
    const body = orderBody('k-1');
    const created = await post(body);
    expect(created.status).toBe(201);
    expect(Value.Check(OrderResponse, created.body)).toBe(true);
    const replay = await post(body);
    expect(replay.status).toBe(200);
    expect(replay.headers.get('idempotent-replayed')).toBe('true');
    expect(JSON.stringify(replay.body)).toBe(JSON.stringify(created.body));
    const reordered = JSON.parse(
      JSON.stringify({
        line_items: body.line_items,
        order: body.order,
        advertiser: body.advertiser,
        idempotency_key: body.idempotency_key,
      }),
    );
    expect((await post(reordered)).body).toEqual(created.body);
    const changed = await post({ ...body, order: { ...body.order, name: 'Other' } });
    expect([changed.status, changed.body.code]).toEqual([409, 'idempotency_conflict']);
  });

  it('one order for concurrent requests with one key', async () => {
    const body = orderBody('k-conc');
    const rs = await Promise.all([post(body), post(body), post(body)]);
    const ids = new Set(rs.map((r) => r.body.order_id));
    expect(ids.size).toBe(1);
    expect(rs.map((r) => r.status).sort()).toEqual([200, 200, 201]);
  });

  it('concurrent requests with different keys and one external_ref make one order', async () => {
    const a = orderBody('k-race-a', { order: { name: 'Race', external_ref: 'camp-race' } });
    const b = orderBody('k-race-b', { order: { name: 'Race', external_ref: 'camp-race' } });
    const rs = await Promise.all([post(a), post(b)]);
    expect(rs.map((r) => r.status).sort()).toEqual([200, 201]);
    expect(rs[0]!.body.order_id).toBe(rs[1]!.body.order_id);
  });

  it('updates by external_ref with a new key: same ids, only missing lines added', async () => {
    const first = await post(orderBody('k-up-1'));
    const body2 = orderBody('k-up-2', { order: { name: 'Renamed', external_ref: 'camp-k-up-1' } });
    body2.line_items.push({ ...body2.line_items[0]!, external_ref: 'line-2', creatives: [] });
    const second = await post(body2);
    expect(second.status).toBe(200);
    expect(second.body.order_id).toBe(first.body.order_id);
    expect(second.body.line_items[0].line_item_id).toBe(first.body.line_items[0].line_item_id);
    expect(second.body.line_items[1].line_item_id).not.toBe(first.body.line_items[0].line_item_id);
  });

  it('stores tags byte for byte and never duplicates advertisers', async () => {
    await post(orderBody('k-adv-1'));
    await post(orderBody('k-adv-2'));
    const rows = await s.store.query<{ n: number }>(
      "SELECT count(*)::int AS n FROM advertisers WHERE name = 'Acme Casino'",
    );
    expect(rows[0]!.n).toBe(1);
    const tag = orderBody('x').line_items[0]!.creatives![0]!.tag;
    const stored = await s.store.query<{ creatives: { tag: string }[] }>(
      "SELECT creatives FROM line_items WHERE external_ref = 'line-1' LIMIT 1",
    );
    expect(stored[0]!.creatives[0]!.tag).toBe(tag);
  });

  it('404 unknown slot, 422 misfit size or range, 400 missing/mismatched key header; nothing applied', async () => {
    const bad = orderBody('k-bad');
    const unknown = await post({ ...bad, line_items: [{ ...bad.line_items[0]!, inventory_id: 'nope' }] });
    expect([unknown.status, unknown.body.code]).toEqual([404, 'inventory_not_found']);
    const size = await post({ ...bad, line_items: [{ ...bad.line_items[0]!, sizes: ['728x90'] }] });
    expect(size.status).toBe(422);
    expect(size.body.message).toContain('728x90');
    const range = await post({
      ...bad,
      line_items: [{ ...bad.line_items[0]!, flight: { start_date: '2026-02-01', end_date: '2026-01-01' } }],
    });
    expect(range.status).toBe(422);
    expect((await api('POST', '/orders', bad)).status).toBe(400);
    expect((await api('POST', '/orders', bad, { 'idempotency-key': 'other' })).status).toBe(400);
    // The failed attempts left no claim: the key still creates.
    expect((await post(bad)).status).toBe(201);
  });
});

describe('reports', () => {
  it('total equals the sum of daily, integers, paginated; 404 unknown ids', async () => {
    const body = orderBody('k-rep', {
      line_items: [
        line('a', 'slot-home-mpu', '2025-01-01', '2025-01-10', 50000, '300x250'),
        line('b', 'slot-home-mpu', '2025-01-05', '2025-01-20', 80000, '300x250'),
      ],
    });
    const o = await post(body);
    const ids: string[] = o.body.line_items.map((l: { line_item_id: string }) => l.line_item_id);
    const range = { start_date: '2025-01-01', end_date: '2025-01-31' };
    const draft = await api('POST', '/reports', { line_item_ids: ids, date_range: range });
    expect(draft.body.rows.every((r: { impressions: number }) => r.impressions === 0)).toBe(true);
    expect(await s.activate(o.body.order_id)).toBe(true);
    const total = await api('POST', '/reports', { line_item_ids: ids, date_range: range });
    expect(Value.Check(ReportResponse, total.body)).toBe(true);
    expect(total.body.rows).toHaveLength(2);
    const daily: { line_item_id: string; impressions: number; clicks: number }[] = [];
    let cursor: string | undefined;
    do {
      const r = await api('POST', '/reports', {
        line_item_ids: ids,
        date_range: range,
        granularity: 'daily',
        limit: 7,
        ...(cursor ? { cursor } : {}),
      });
      expect(r.status).toBe(200);
      daily.push(...r.body.rows);
      cursor = r.body.next_cursor ?? undefined;
    } while (cursor);
    expect(daily).toHaveLength(62);
    for (const row of total.body.rows) {
      const mine = daily.filter((d) => d.line_item_id === row.line_item_id);
      expect(row.impressions).toBeGreaterThan(0);
      expect(row.impressions).toBe(mine.reduce((a, d) => a + d.impressions, 0));
      expect(row.clicks).toBe(mine.reduce((a, d) => a + d.clicks, 0));
    }
    const byOrder = await api('POST', '/reports', { order_id: o.body.order_id, date_range: range });
    const byId = (a: { line_item_id: string }, b: { line_item_id: string }) =>
      a.line_item_id.localeCompare(b.line_item_id);
    expect([...byOrder.body.rows].sort(byId)).toEqual([...total.body.rows].sort(byId));
    expect((await api('POST', '/reports', { line_item_ids: ['li_nope'], date_range: range })).status).toBe(
      404,
    );
    expect((await api('POST', '/reports', { order_id: 'ord_nope', date_range: range })).status).toBe(404);
  });
});

describe('rate budget', () => {
  it('429 with Retry-After once the per-key budget is spent', async () => {
    const t = await testServer({ rateLimit: { max: 3, windowMs: 60_000 } });
    try {
      const codes: number[] = [];
      let last: Awaited<ReturnType<typeof call>> | undefined;
      for (let i = 0; i < 4; i++) {
        last = await call(t.url, t.apiKey, 'GET', '/health');
        codes.push(last.status);
      }
      expect(codes).toEqual([200, 200, 200, 429]);
      expect(Number(last!.headers.get('retry-after'))).toBeGreaterThan(0);
      expect(last!.body.code).toBe('rate_limited');
    } finally {
      await t.close();
    }
  });
});

describe('account time zone and hostile input', () => {
  it('cuts report days in the account zone: a day counts once it has ended there', async () => {
    // 23:30 UTC on 10 Jan is already 11 Jan in Malta (UTC+1): the 10th has ended there.
    const t = await testServer({ now: () => new Date('2025-01-10T23:30:00Z') });
    try {
      const body = {
        ...orderBody('tz-1'),
        line_items: [line('l', 'slot-home-mpu', '2025-01-09', '2025-01-12', 4000, '300x250')],
      };
      const o = await call(t.url, t.apiKey, 'POST', '/orders', body, { 'idempotency-key': 'tz-1' });
      await t.activate(o.body.order_id);
      const r = await call(t.url, t.apiKey, 'POST', '/reports', {
        order_id: o.body.order_id,
        date_range: { start_date: '2025-01-09', end_date: '2025-01-12' },
        granularity: 'daily',
      });
      const shown = r.body.rows.map((x: { date: string; impressions: number }) => [
        x.date,
        x.impressions > 0,
      ]);
      expect(shown).toEqual([
        ['2025-01-09', true],
        ['2025-01-10', true],
        ['2025-01-11', false],
        ['2025-01-12', false],
      ]);
    } finally {
      await t.close();
    }
  });

  it('forecast: false answers 501 for every slot', async () => {
    const t = await testServer({ account: { forecast: false } });
    try {
      const h = await call(t.url, t.apiKey, 'GET', '/health');
      expect(h.body.capabilities.forecast).toBe(false);
      const f = await call(t.url, t.apiKey, 'POST', '/forecast', {
        inventory_id: 'slot-home-mpu',
        flight: { start_date: '2026-01-01', end_date: '2026-01-02' },
      });
      expect([f.status, f.body.code]).toEqual([501, 'forecast_unsupported']);
    } finally {
      await t.close();
    }
  });

  it('oversize bodies, injection strings and unicode get clear errors and change nothing', async () => {
    const big = await api('POST', '/forecast', JSON.stringify({ inventory_id: 'x'.repeat(2 * 1024 * 1024) }));
    expect([big.status, big.body.code]).toEqual([413, 'payload_too_large']);
    const sqli = await api('POST', '/forecast', {
      inventory_id: "x' OR '1'='1",
      flight: { start_date: '2026-01-01', end_date: '2026-01-02' },
    });
    expect(sqli.status).toBe(404);
    const uni = orderBody('k-uni', { advertiser: { name: 'Ünïcødé 🎰 Casino' } });
    expect((await post(uni)).status).toBe(201);
    expect(
      (await post({ ...uni, line_items: [{ ...uni.line_items[0], goal_impressions: -5 }] })).status,
    ).toBe(400);
    const extra = await post({ ...orderBody('k-extra'), surprise: true });
    expect([extra.status, extra.body.details.field]).toEqual([400, 'surprise']);
  });
});

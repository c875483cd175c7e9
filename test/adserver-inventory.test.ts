import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { admin, type ReferenceServer, startServers, stopServers } from './adserver-fixture.ts';
import type { TestApp } from './helpers.ts';
import { json, type LoopbackServer } from './hostile-server.ts';

let t: TestApp & { admin: string };
let ref: ReferenceServer;
let hostile: LoopbackServer;
let conn: string;

const HEALTH = {
  account_id: 'h',
  timezone: 'UTC',
  currency: 'EUR',
  capabilities: { forecast: false, reporting: true, draft_booking: true },
};

beforeAll(async () => {
  ({ t, ref, hostile } = await startServers());
  conn = (
    await admin(t, 'POST', '/adserver/connections', {
      publisher: 'acme',
      base_url: ref.url,
      api_key: ref.apiKey,
    })
  ).body.data.id;
});
afterAll(() => stopServers({ t, ref, hostile }));

describe('inventory sync', () => {
  it('walks the reference inventory and stores every slot with its status', async () => {
    const r = await admin(t, 'POST', `/adserver/connections/${conn}/inventory/sync`);
    expect(r.status).toBe(200);
    expect(r.body.data).toMatchObject({ ok: true, pages: 1, slots: 6, added: 6, problems: [] });
    const slots = (await admin(t, 'GET', `/adserver/connections/${conn}/inventory`)).body.data;
    expect(
      slots.map((s: { inventory_id: string; status: string }) => [s.inventory_id, s.status]),
    ).toContainEqual(['slot-old-popunder', 'archived']);
    expect(
      slots.find((s: { inventory_id: string }) => s.inventory_id === 'slot-home-leaderboard').sizes,
    ).toEqual(['728x90', '970x90']);
    const again = await admin(t, 'POST', `/adserver/connections/${conn}/inventory/sync`);
    expect(again.body.data).toMatchObject({ ok: true, slots: 6, added: 0 });
    expect(ref.app).toBeDefined();
  });

  it('asks for pages of 200 and stops a hostile cursor loop, keeping what it saw', async () => {
    hostile.handle((req, res) => {
      const url = new URL(req.url ?? '/', 'http://x');
      if (url.pathname.endsWith('/health')) return json(res, 200, HEALTH);
      const cursor = url.searchParams.get('cursor');
      json(res, 200, {
        data: [{ inventory_id: `s-${cursor ?? 'first'}`, name: 'x', sizes: ['300x250'] }],
        next_cursor: cursor === 'B' ? 'A' : cursor === 'A' ? 'B' : 'A',
      });
    });
    const c = (
      await admin(t, 'POST', '/adserver/connections', {
        publisher: 'loop',
        base_url: `${hostile.origin}/v1`,
        api_key: 'k-123456789',
      })
    ).body.data;
    const before = hostile.hits.length;
    const r = await admin(t, 'POST', `/adserver/connections/${c.id}/inventory/sync`);
    expect(r.body.data.ok).toBe(false);
    expect(r.body.data.problems[0]).toMatch(/cursor loop/);
    expect(r.body.data.slots).toBe(3);
    expect(hostile.hits.slice(before).every((h) => h.url.includes('limit=200'))).toBe(true);
    const [sync] = await t.db.query<{ ok: boolean; pages: number }>(
      'SELECT ok, pages FROM adserver_syncs WHERE connection_id = $1 ORDER BY id DESC LIMIT 1',
      [c.id],
    );
    expect(sync).toEqual({ ok: false, pages: 3 });
  });

  it('unknown connection → 404', async () => {
    const r = await admin(t, 'POST', '/adserver/connections/asc_01ARZ3NDEKTSV4RRFFQ69G5FAV/inventory/sync');
    expect(r.status).toBe(404);
  });
});

describe('placements ↔ inventory_id', () => {
  it('maps a placement to an active slot whose sizes cover it, and refuses the rest with the field named', async () => {
    const p = (
      await admin(t, 'POST', '/adserver/placements', {
        publisher: 'acme',
        name: 'Home top',
        sizes: ['728x90'],
      })
    ).body.data;
    expect(p).toMatchObject({ publisher: 'acme', name: 'Home top', sizes: ['728x90'], slots: {} });
    const ok = await admin(t, 'PUT', `/adserver/placements/${p.id}/slots`, {
      connection_id: conn,
      inventory_id: 'slot-home-leaderboard',
    });
    expect(ok.status).toBe(200);
    expect(ok.body.data.slots).toEqual({ [conn]: 'slot-home-leaderboard' });

    const cases: [string, string][] = [
      ['slot-old-popunder', 'is archived'],
      ['slot-home-mpu', 'does not accept size 728x90'],
      ['slot-never-synced', 'is not in the synced inventory'],
    ];
    for (const [inventory_id, why] of cases) {
      const r = await admin(t, 'PUT', `/adserver/placements/${p.id}/slots`, {
        connection_id: conn,
        inventory_id,
      });
      expect(r.status).toBe(422);
      expect(r.body).toMatchObject({ code: 'validation_failed', details: { field: 'inventory_id' } });
      expect(r.body.message).toContain(why);
    }
    const other = (
      await admin(t, 'POST', '/adserver/placements', { publisher: 'other', name: 'x', sizes: ['728x90'] })
    ).body.data;
    const cross = await admin(t, 'PUT', `/adserver/placements/${other.id}/slots`, {
      connection_id: conn,
      inventory_id: 'slot-home-leaderboard',
    });
    expect(cross.body.details.field).toBe('connection_id');

    expect(
      (
        await admin(t, 'POST', '/adserver/placements', {
          publisher: 'acme',
          name: 'Home top',
          sizes: ['1x1'],
        })
      ).status,
    ).toBe(409);
    expect(
      (await admin(t, 'POST', '/adserver/placements', { publisher: 'acme', name: 'bad', sizes: ['728*90'] }))
        .status,
    ).toBe(422);
    expect((await admin(t, 'GET', '/adserver/placements?publisher=acme')).body.data).toHaveLength(1);
    expect((await admin(t, 'DELETE', `/adserver/placements/${p.id}/slots/${conn}`)).status).toBe(204);
    expect((await admin(t, 'DELETE', `/adserver/placements/${p.id}/slots/${conn}`)).status).toBe(404);
  });
});

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AREAS, auditActions, PHRASES, phraseKey, targetTypeOf } from '../src/modules/audit/phrases.ts';
import { type DemoTokens, loadDemo } from '../src/modules/catalog/demo.ts';
import { DB_KIND, type TestApp, testApp } from './helpers.ts';

describe(`audit log of admin writes (${DB_KIND})`, () => {
  let t: TestApp;
  let demo: DemoTokens;
  let adminId: number;

  const call = async (method: 'GET' | 'POST' | 'DELETE', url: string, token: string, payload?: object) => {
    const res = await t.app.inject({
      method,
      url: `/api/admin/v1${url}`,
      headers: { authorization: `Bearer ${token}` },
      ...(payload ? { payload } : {}),
    });
    return { status: res.statusCode, body: res.json() };
  };
  const auditOf = async (query: string) => (await call('GET', `/audit?${query}`, demo.adminToken)).body;

  beforeAll(async () => {
    t = await testApp();
    demo = await loadDemo(t.app.services);
    const [row] = await t.db.query<{ id: number }>("SELECT id FROM admin_tokens WHERE name = 'demo'");
    adminId = row!.id;
  });
  afterAll(() => t.close());

  it('records who created what, naming the fields sent but never their values', async () => {
    const created = await call('POST', '/owners', demo.adminToken, {
      name: 'Secret Owner Name',
      externalId: 'own-x',
    });
    expect(created.status).toBe(201);
    const { data } = await auditOf('target_type=owners');
    expect(data[0]).toMatchObject({
      adminTokenId: adminId,
      actor: `admin-token:${adminId}`,
      action: 'POST /api/admin/v1/owners',
      targetType: 'owners',
      targetId: String(created.body.data.id),
      status: 201,
      fields: ['name', 'externalId'],
      before: null,
      after: null,
    });
    // The row stores no value sent; the answer names the target by its name as it is now.
    const [stored] = await t.db.query('SELECT * FROM audit_log WHERE id = $1', [data[0].id]);
    expect(JSON.stringify(stored)).not.toContain('Secret Owner Name');
    expect(data[0].targetName).toBe('Secret Owner Name');
  });

  it('keeps before/after of publishes and token changes, without the token itself', async () => {
    await call('POST', '/toplists/1/publish', demo.adminToken);
    const pub = (await auditOf('target_type=toplists&target_id=1')).data[0];
    expect(pub.action).toBe('POST /api/admin/v1/toplists/:id/publish');
    expect(pub.before.liveVersion).toBe('1');
    expect(pub.after.liveVersion).toBe('2');

    const token = (await call('POST', '/sites/1/tokens', demo.adminToken, { name: 'audited' })).body.data;
    await call('DELETE', `/sites/1/tokens/${token.id}`, demo.adminToken);
    const rows = (await auditOf('target_type=sites&target_id=1')).data;
    expect(rows[0].action).toBe('DELETE /api/admin/v1/sites/:id/tokens/:subId');
    expect(rows[0].after.revokedAt).toEqual(expect.any(String));
    expect(rows[1].after).toMatchObject({ tokenId: token.id, name: 'audited' });
    expect(JSON.stringify(rows)).not.toContain(token.token);
  });

  it('records nothing for failed writes, pages newest first and needs the admin scope', async () => {
    const before = (await auditOf('limit=200')).data.length;
    expect((await call('POST', '/owners', demo.adminToken, {})).status).toBe(422);
    expect((await auditOf('limit=200')).data.length).toBe(before);

    const first = await auditOf('limit=2');
    expect(first.data).toHaveLength(2);
    const next = await auditOf(`limit=2&before_id=${first.meta.next_before_id}`);
    expect(next.data[0].id).toBeLessThan(first.data[1].id);

    const reader = (
      await call('POST', '/admin-tokens', demo.adminToken, { name: 'r', scopes: ['catalog:read'] })
    ).body.data;
    expect((await call('GET', '/audit', reader.token)).status).toBe(403);
  });

  it('leaves out the draft compliance check, which the editor asks at every edit and which writes nothing', async () => {
    const newest = (await auditOf('limit=1')).data[0].id;
    const check = await call('POST', '/toplists/1/compliance', demo.adminToken, { items: [] });
    expect(check.status).toBe(200);
    expect((await auditOf('limit=1')).data[0].id).toBe(newest);
  });

  it('is append-only in the database itself', async () => {
    await expect(t.db.query('UPDATE audit_log SET actor = $1', ['someone else'])).rejects.toThrow(
      /append-only/,
    );
    await expect(t.db.query('DELETE FROM audit_log')).rejects.toThrow(/append-only/);
  });

  describe('read by a person', () => {
    const OWNER = { email: 'ana@example.com', password: 'correct horse battery staple' };
    let jar: { cookie: string; 'x-csrf-token': string };
    let ownerId: number;
    const signIn = async () => {
      const res = await t.app.inject({
        method: 'POST',
        url: '/api/admin/v1/session',
        payload: { email: OWNER.email, password: OWNER.password },
      });
      expect(res.statusCode, res.body).toBe(201);
      const sid = res.cookies.find((c) => c.name === 'podium_session')!.value;
      return { cookie: `podium_session=${sid}`, 'x-csrf-token': res.json().data.csrfToken as string };
    };
    const asOwner = async (method: 'PATCH' | 'POST', url: string, payload?: object) => {
      const res = await t.app.inject({
        method,
        url: `/api/admin/v1${url}`,
        headers: jar,
        ...(payload ? { payload } : {}),
      });
      expect(res.statusCode, res.body).toBeLessThan(300);
      return res.json();
    };

    beforeAll(async () => {
      const people = t.app.services.people;
      const first = await people.firstRun(OWNER.email);
      await people.acceptLink(new URL(first!.link.url).hash.slice('#/accept/'.length), OWNER.password);
      ownerId = first!.user.id;
      await t.db.query('UPDATE users SET display_name = $1 WHERE id = $2', ['Ana Novak', ownerId]);
      jar = await signIn();
    });

    it('says each row as a sentence, naming the person, the token and the target in one page', async () => {
      await asOwner('PATCH', '/toplists/1', { name: 'Best casinos SE' });
      await asOwner('POST', '/toplists/1/publish');
      const [brand] = (await call('GET', '/brands?per_page=1', demo.adminToken)).body.data;
      await call('POST', `/brands/${brand.id}/licences`, demo.adminToken, {
        authority: 'Spelinspektionen',
        countries: ['SE'],
      });
      const { data } = await auditOf('limit=10');
      expect(data[0]).toMatchObject({
        actorName: 'demo',
        targetName: brand.name,
        summary: `Admin token “demo” added a licence to brand “${brand.name}”`,
      });
      expect(data[1]).toMatchObject({
        actor: `user:${ownerId}`,
        actorName: 'Ana Novak',
        targetName: 'Best casinos SE',
        summary: 'Ana Novak published toplist “Best casinos SE”',
      });
      expect(data[2]).toMatchObject({
        summary: 'Ana Novak changed toplist “Best casinos SE”',
        before: { name: expect.not.stringMatching(/^Best casinos SE$/) },
        after: { name: 'Best casinos SE' },
      });
      expect(data[3]).toMatchObject({ targetType: 'session', summary: 'Ana Novak signed in to the console' });
    });

    it('names a target that no longer exists by its id, and the CLI and jobs by their part', async () => {
      const audit = t.app.services.audit;
      const row = { adminTokenId: null, status: 200, requestId: null, fields: [], before: null, after: null };
      await audit.record({
        ...row,
        actor: 'system:compliance',
        action: 'compliance.withheld_changed',
        targetType: 'toplists',
        targetId: '999999',
      });
      await audit.record({
        ...row,
        actor: 'cli',
        action: 'podium player-data erase',
        targetType: 'player-data',
        targetId: 'all',
      });
      const { data } = await auditOf('limit=2');
      expect(data.map((r: { summary: string }) => r.summary)).toEqual([
        'The command line erased the player data of programme (every programme)',
        'The compliance guard changed what is withheld from toplist #999999',
      ]);
      expect(data[1].targetName).toBeNull();
    });

    it('reads an action it has no phrase for by its method and path, and an id no table can hold by the id', async () => {
      const audit = t.app.services.audit;
      const row = { adminTokenId: null, status: 200, requestId: null, fields: [], before: null, after: null };
      const entries = [
        { action: 'PATCH /api/admin/v1/gizmos/:id', targetType: 'gizmos', targetId: '7' },
        { action: 'something odd', targetType: 'odd', targetId: null },
        { action: 'POST /api/admin/v1/webhooks', targetType: 'webhooks', targetId: 'no-such-webhook' },
        { action: 'PATCH /api/admin/v1/brands/:id', targetType: 'brands', targetId: '99999999999' },
        { action: 'PATCH /api/admin/v1/sites/:id', targetType: 'sites', targetId: 'abc' },
        { action: 'POST /api/admin/v1/tracking/postbacks/:id/replay', targetType: 'tracking', targetId: '3' },
      ];
      for (const e of entries) await audit.record({ ...row, ...e, actor: 'someone:else' });
      const { data } = await auditOf(`limit=${entries.length}`);
      expect(data.map((r: { summary: string }) => r.summary).reverse()).toEqual([
        'someone:else changed /gizmos/:id',
        'someone:else something odd',
        'someone:else created webhook #no-such-webhook',
        'someone:else changed brand #99999999999',
        'someone:else changed site #abc',
        'someone:else replayed postback #3',
      ]);
      expect(auditActions('nowhere')).toEqual([]);
    });

    it('keeps sign-ins apart from writes, and filters by action and by date range', async () => {
      await signIn();
      const writes = (await auditOf('kind=writes&limit=200')).data as { targetType: string }[];
      expect(writes.length).toBeGreaterThan(3);
      expect(writes.some((r) => r.targetType === 'session')).toBe(false);
      const signIns = (await auditOf('kind=sign-ins')).data as { summary: string }[];
      expect(signIns.map((r) => r.summary)).toEqual([
        'Ana Novak signed in to the console',
        'Ana Novak signed in to the console',
      ]);

      const publish = 'POST /api/admin/v1/toplists/:id/publish';
      const published = (await auditOf(`action=${encodeURIComponent(publish)}`)).data as { action: string }[];
      expect(published.length).toBe(2);
      expect(new Set(published.map((r) => r.action))).toEqual(new Set([publish]));

      const all = (await auditOf('limit=200')).data as { id: number; at: string }[];
      const oldest = all.at(-1)!;
      // `at` is written to the second: the next second is after the row, whatever its fraction.
      const next = new Date(Date.parse(oldest.at) + 1000).toISOString();
      const upTo = (await auditOf(`to=${next}&limit=200`)).data as { id: number }[];
      expect(upTo.map((r) => r.id)).toContain(oldest.id);
      const later = (await auditOf(`from=${next}&limit=200`)).data as { id: number }[];
      expect(later.map((r) => r.id)).not.toContain(oldest.id);
      const day = oldest.at.slice(0, 10);
      expect((await auditOf(`from=${day}&to=${day}&limit=200`)).data.length).toBeGreaterThan(0);
      expect((await auditOf('to=2001-01-01')).data).toEqual([]);
    });

    it('refuses a date it cannot read, and a range that ends before it starts, naming the field', async () => {
      const bad = await call('GET', '/audit?from=yesterday', demo.adminToken);
      expect(bad.status).toBe(422);
      expect(bad.body).toMatchObject({ code: 'validation_failed', details: { field: 'from' } });
      expect(bad.body.message).toContain('RFC 3339');
      const backwards = await call('GET', '/audit?from=2026-12-04&to=2026-12-03T00:00:00Z', demo.adminToken);
      expect(backwards.status).toBe(422);
      expect(backwards.body).toMatchObject({
        details: { field: 'to' },
        message: expect.stringContaining('later'),
      });
      expect((await call('GET', '/audit?kind=everything', demo.adminToken)).status).toBe(422);
    });

    it('has a phrase for every audited admin write route, and an area for each', () => {
      const writes = t.app.routeTable.filter(
        (e) => e.url.startsWith('/api/admin/v1/') && ['POST', 'PUT', 'PATCH', 'DELETE'].includes(e.method),
      );
      expect(writes.length).toBeGreaterThan(90);
      const missing = writes.map((e) => `${e.method} ${e.url}`).filter((a) => !PHRASES[phraseKey(a)]);
      expect(missing).toEqual([]);
      const areas = new Set(AREAS.map(([a]) => a));
      const homeless = auditActions().filter(([a]) => !areas.has(targetTypeOf(a) ?? ''));
      expect(homeless).toEqual([]);
      expect(auditActions('toplists').map(([, phrase]) => phrase)).toContain('published toplist');
    });
  });
});

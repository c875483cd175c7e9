import { afterAll, beforeAll, describe, expect, it } from 'vitest';
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
    expect(JSON.stringify(data)).not.toContain('Secret Owner Name');
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

  it('is append-only in the database itself', async () => {
    await expect(t.db.query('UPDATE audit_log SET actor = $1', ['someone else'])).rejects.toThrow(
      /append-only/,
    );
    await expect(t.db.query('DELETE FROM audit_log')).rejects.toThrow(/append-only/);
  });
});

import { randomBytes } from 'node:crypto';
import { Secret, TOTP } from 'otpauth';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { SealKey } from '../src/config.ts';
import { Sealer } from '../src/lib/seal.ts';
import type { Services } from '../src/services.ts';
import { servicesOn, type TestDb, testDb } from './helpers.ts';

const v1: SealKey = { version: 1, key: randomBytes(32) };
const v2: SealKey = { version: 2, key: randomBytes(32) };
const API_KEY = 'rsk_rotationTestKey_abcdefghijklmnopqrstuvwxyz';
const REPORT_KEY = 'report-key-0123456789';

/** Every sealed column as stored, by record (what a database dump would show). */
async function sealedAtRest(t: TestDb): Promise<Map<string, string>> {
  const rows = await t.db.query<{ record: string; sealed: string }>(
    `SELECT id AS record, api_key_sealed AS sealed FROM adserver_connections
     UNION ALL SELECT 'program ' || id, report_key_sealed FROM affiliate_programs WHERE report_key_sealed IS NOT NULL
     UNION ALL SELECT id, secret_sealed FROM webhook_endpoints
     UNION ALL SELECT id || ' (previous secret)', previous_secret_sealed FROM webhook_endpoints
       WHERE previous_secret_sealed IS NOT NULL
     UNION ALL SELECT 'user ' || id, totp_sealed FROM users WHERE totp_sealed IS NOT NULL`,
  );
  return new Map(rows.map((r) => [r.record, r.sealed]));
}

describe('rotating the key that seals secrets at rest', () => {
  let t: TestDb;
  let old: Services;
  const plain = new Map<string, { aad: string; value: string }>();

  beforeAll(async () => {
    t = await testDb();
    old = await servicesOn(t.db, { secretKeys: [v1] });
    // An unreachable ad server still stores the connection (its probe fails): the key is what counts here.
    const c = await old.adserver.connections.create({
      publisher: 'rotating',
      base_url: 'https://ads.invalid/api/v1',
      api_key: API_KEY,
    });
    plain.set(c.id, { aad: c.id, value: API_KEY });
    const program = await old.tracking.createProgram({ slug: 'rot-op', name: 'Rotating operator' });
    await old.aggregates.setReport(program.id, { url: 'https://reports.example.com/daily', key: REPORT_KEY });
    plain.set(`program ${program.id}`, { aad: String(program.id), value: REPORT_KEY });
    const hook = await old.webhooks.create({
      url: 'https://hooks.example.com/podium',
      events: ['toplist.published'],
    });
    // A rotation with a grace period keeps the first secret sealed beside the new one.
    const rotated = await old.webhooks.rotate(hook.endpoint.id, 3600);
    plain.set(hook.endpoint.id, { aad: hook.endpoint.id, value: rotated.secret });
    plain.set(`${hook.endpoint.id} (previous secret)`, { aad: hook.endpoint.id, value: hook.secret });
    // A user's TOTP secret, enrolled through the service (confirmed with its current code).
    const first = await old.people.firstRun('rotating.owner@example.com');
    await old.people.acceptLink(
      new URL(first!.link.url).hash.replace('#/accept/', ''),
      'a rotating passphrase',
    );
    const enrolment = await old.people.startEnrolment(first!.user.id);
    const code = new TOTP({ secret: Secret.fromBase32(enrolment.secret) }).generate();
    await old.people.confirmEnrolment(first!.user.id, code, '127.0.0.1');
    plain.set(`user ${first!.user.id}`, { aad: `user:${first!.user.id}:totp`, value: enrolment.secret });
  });

  afterAll(async () => {
    await old.close();
    await t.close();
  });

  it('re-seals every kind of secret with the new key, so the old key can be dropped', async () => {
    const before = await sealedAtRest(t);
    expect([...before.keys()].sort()).toEqual([...plain.keys()].sort());
    for (const sealed of before.values()) expect(sealed).toMatch(/^gcm1:1:/);

    const both = await servicesOn(t.db, { secretKeys: [v2, v1] });
    const r = await both.rotateSecretKeys();
    expect(r).toEqual({
      resealed: 5,
      unreadable: [],
      total: 5,
      kinds: {
        adserver_api_keys: { resealed: 1, unreadable: [], total: 1 },
        report_keys: { resealed: 1, unreadable: [], total: 1 },
        webhook_secrets: { resealed: 2, unreadable: [], total: 2 },
        totp_secrets: { resealed: 1, unreadable: [], total: 1 },
      },
    });
    // A second pass finds nothing left to do.
    expect((await both.rotateSecretKeys()).resealed).toBe(0);
    await both.close();

    const onlyNew = new Sealer({ keys: [v2], dataDir: '/nonexistent' });
    const after = await sealedAtRest(t);
    for (const [record, { aad, value }] of plain) {
      expect(after.get(record)).toMatch(/^gcm1:2:/);
      expect(onlyNew.open(after.get(record)!, aad)).toBe(value);
    }
  });

  it('lists a secret no configured key opens and leaves it as it is', async () => {
    const [id] = [...plain.keys()].filter((k) => k.startsWith('asc_'));
    const foreign = new Sealer({ keys: [{ version: 7, key: randomBytes(32) }], dataDir: '/nonexistent' });
    const planted = foreign.seal('someone else’s key', id!);
    await t.db.query('UPDATE adserver_connections SET api_key_sealed = $2 WHERE id = $1', [id, planted]);

    const next = await servicesOn(t.db, { secretKeys: [{ version: 3, key: randomBytes(32) }, v2] });
    const r = await next.rotateSecretKeys();
    await next.close();
    expect(r.unreadable).toEqual([id]);
    expect(r.kinds.adserver_api_keys).toEqual({ resealed: 0, unreadable: [id], total: 1 });
    expect(r.resealed).toBe(4);
    expect((await sealedAtRest(t)).get(id!)).toBe(planted);
  });
});

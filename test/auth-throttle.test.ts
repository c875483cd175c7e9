import type { ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { once } from 'node:events';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openRedis, type Redis } from '../src/lib/redis.ts';
import { DB_KIND, servicesOn, type TestApp, testApp } from './helpers.ts';
import { type ServedDb, serve, servedDb } from './serve-process.ts';

const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
const WRONG = {
  admin: `pda_${'w'.repeat(43)}`,
  site: `pds_${'w'.repeat(43)}`,
  postback: `pdp_${'w'.repeat(43)}`,
};

/**
 * Failed authentications are throttled per client address and credential kind (issue 58,
 * finding 4): after PODIUM_AUTH_FAILURE_LIMIT failures a 429 with Retry-After, never for a client
 * that authenticates correctly; in memory per process, through Redis across processes.
 */
describe(`throttled authentication failures (${DB_KIND})`, () => {
  let t: TestApp;
  let admin: string;
  let site: string;
  let postback: string;

  beforeAll(async () => {
    t = await testApp({ authFailureLimit: 3, authBlockSeconds: 120 });
    admin = (await t.app.services.access.createAdminToken('throttle', ['admin'], null)).token;
    const created = await t.app.services.catalog.sites.create({ domain: 'throttle.example', name: 'T' });
    site = (await t.app.services.access.createSiteToken(created.id)).token;
    postback = (await t.app.services.tracking.createProgram({ slug: 'thr', name: 'Thr' })).postbackToken;
  });
  afterAll(() => t?.close());

  /** One request per credential kind, from `ip`, with the right or a wrong credential. */
  const attempts = {
    admin_token: (ok: boolean, ip: string) =>
      t.app.inject({
        url: '/api/admin/v1/sites',
        remoteAddress: ip,
        headers: { authorization: `Bearer ${ok ? admin : WRONG.admin}` },
      }),
    site_token: (ok: boolean, ip: string) =>
      t.app.inject({
        url: '/api/v1/toplists',
        remoteAddress: ip,
        headers: { authorization: `Bearer ${ok ? site : WRONG.site}` },
      }),
    postback_token: (ok: boolean, ip: string) =>
      t.app.inject({
        url: `/api/postback/thr/${ok ? postback : WRONG.postback}?transaction_id=${randomBytes(4).toString('hex')}&event=ftd`,
        remoteAddress: ip,
      }),
    console_sign_in: (ok: boolean, ip: string) =>
      t.app.inject({
        method: 'POST',
        url: '/api/admin/v1/session',
        remoteAddress: ip,
        payload: { token: ok ? admin : WRONG.admin },
      }),
  };
  const okStatus = { admin_token: 200, site_token: 200, postback_token: 200, console_sign_in: 201 };

  for (const [kind, attempt] of Object.entries(attempts) as [
    keyof typeof attempts,
    typeof attempts.admin_token,
  ][]) {
    it(`${kind}: 401 for the first 3 failures, then 429 with Retry-After; the right credential still passes`, async () => {
      const ip = `198.51.100.${Object.keys(attempts).indexOf(kind) + 1}`;
      const statuses: number[] = [];
      for (let i = 0; i < 3; i++) {
        statuses.push((await attempt(false, ip)).statusCode);
        // Interleaved successes neither count nor reset anything.
        expect((await attempt(true, ip)).statusCode).toBe(okStatus[kind]);
      }
      expect(statuses).toEqual([401, 401, 401]);
      const over = await attempt(false, ip);
      expect(over.statusCode).toBe(429);
      expect(over.json()).toMatchObject({ code: 'rate_limited', details: { retryAfterSeconds: 120 } });
      expect(over.headers['retry-after']).toBe('120');
      expect(over.headers['www-authenticate']).toBeUndefined();
      expect((await attempt(false, ip)).statusCode).toBe(429);
      // Blocked for wrong credentials only: the right one from the same address passes.
      expect((await attempt(true, ip)).statusCode).toBe(okStatus[kind]);
      // Another address, and another credential kind from this one, have budgets of their own.
      expect((await attempt(false, '198.51.100.200')).statusCode).toBe(401);
      const other = kind === 'site_token' ? attempts.admin_token : attempts.site_token;
      expect((await other(false, ip)).statusCode).toBe(401);
    });
  }

  it('lifts the block once its time is up', async () => {
    const ip = '203.0.113.9';
    for (let i = 0; i < 4; i++) await attempts.admin_token(false, ip);
    expect((await attempts.admin_token(false, ip)).statusCode).toBe(429);
    t.clock.now = new Date(t.clock.now.getTime() + 121_000);
    expect((await attempts.admin_token(false, ip)).statusCode).toBe(401);
  });

  it('an unknown programme counts on the postback budget and is answered like a wrong token', async () => {
    const ip = '203.0.113.10';
    for (let i = 0; i < 3; i++)
      expect(
        (await t.app.inject({ url: `/api/postback/nope/${WRONG.postback}`, remoteAddress: ip })).statusCode,
      ).toBe(401);
    const over = await t.app.inject({ url: `/api/postback/thr/${WRONG.postback}`, remoteAddress: ip });
    const unknown = await t.app.inject({ url: `/api/postback/nope/${WRONG.postback}`, remoteAddress: ip });
    expect([over.statusCode, unknown.statusCode]).toEqual([429, 429]);
    expect(unknown.body).toBe(over.body);
  });
});

describe(`throttled authentication failures across two podium processes through Redis (${DB_KIND})`, () => {
  const prefix = `podium-test:${randomBytes(6).toString('hex')}:`;
  const procs: { proc: ChildProcess; exit: Promise<number> }[] = [];
  const dbs: ServedDb[] = [];
  const servers: { url: string; token: string }[] = [];
  let redis: Redis;

  beforeAll(async () => {
    redis = openRedis(REDIS_URL, () => {});
    if (redis.status !== 'ready') await once(redis, 'ready');
    // PostgreSQL: both processes on one database; PGlite: one data directory each (all they share is Redis).
    const shared = DB_KIND === 'postgres' ? await servedDb('podium-throttle') : undefined;
    const targets = shared
      ? [shared, shared]
      : [await servedDb('podium-throttle-a'), await servedDb('podium-throttle-b')];
    dbs.push(...new Set(targets));
    const tokens: string[] = [];
    for (const served of dbs) {
      const services = await servicesOn(served.db);
      for (const target of targets)
        if (target === served)
          tokens.push((await services.access.createAdminToken('throttle', ['admin'], null)).token);
      await services.close();
      if (served.dir) await served.db.close();
    }
    for (const [i, served] of targets.entries()) {
      const env: NodeJS.ProcessEnv = {
        ...served.env,
        REDIS_URL,
        PODIUM_REDIS_PREFIX: prefix,
        PODIUM_AUTH_FAILURE_LIMIT: '4',
        PODIUM_AUTH_BLOCK_SECONDS: '90',
      };
      delete env.PODIUM_SECRET_KEYS;
      const server = await serve(env);
      procs.push(server);
      servers.push({ url: server.url, token: tokens[i]! });
    }
  }, 240_000);
  afterAll(async () => {
    for (const { proc } of procs) proc.kill('SIGKILL');
    await Promise.all(procs.map((p) => p.exit));
    for (const d of dbs) await d.remove();
    const keys = await redis.keys(`${prefix}*`);
    if (keys.length) await redis.del(...keys);
    redis.disconnect();
  });

  const call = (i: number, token: string) =>
    fetch(`${servers[i]!.url}/api/admin/v1/sites`, { headers: { authorization: `Bearer ${token}` } });

  it('counts wrong admin tokens sent to either process on one budget; right tokens pass on both', async () => {
    const statuses: number[] = [];
    for (let i = 0; i < 4; i++) statuses.push((await call(i % 2, WRONG.admin)).status);
    expect(statuses).toEqual([401, 401, 401, 401]);
    const over = await call(1, WRONG.admin);
    expect(over.status).toBe(429);
    const retryAfter = Number(over.headers.get('retry-after'));
    expect(retryAfter).toBeGreaterThan(80);
    expect(retryAfter).toBeLessThanOrEqual(90);
    // The block holds on the other process too, for wrong tokens only.
    expect((await call(0, WRONG.admin)).status).toBe(429);
    expect((await call(0, servers[0]!.token)).status).toBe(200);
    expect((await call(1, servers[1]!.token)).status).toBe(200);
    expect(await redis.pttl(`${prefix}auth-fail:admin_token:127.0.0.1:block`)).toBeGreaterThan(80_000);
  });
});

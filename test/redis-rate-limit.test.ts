import { randomBytes } from 'node:crypto';
import { once } from 'node:events';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildDocsApp } from '../src/app.ts';
import { loadConfig } from '../src/config.ts';
import { openRedis, type Redis } from '../src/lib/redis.ts';

// CI starts Redis on loopback; REDIS_URL points elsewhere when needed.
const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';

describe('docs rate limit shared through Redis', () => {
  const prefix = `podium-test:${randomBytes(6).toString('hex')}:`;
  let redis: Redis;
  let a: FastifyInstance;
  let b: FastifyInstance;

  beforeAll(async () => {
    redis = openRedis(REDIS_URL, () => {});
    if (redis.status !== 'ready') await once(redis, 'ready');
    const config = loadConfig({}, { docsRateLimit: 5, redisPrefix: prefix, logLevel: 'silent' });
    // Two apps stand in for two processes: all they share is Redis.
    a = await buildDocsApp({ config, redis, logger: false });
    b = await buildDocsApp({ config, redis, logger: false });
  });
  afterAll(async () => {
    await a?.close();
    await b?.close();
    const keys = await redis.keys(`${prefix}*`);
    if (keys.length) await redis.del(...keys);
    redis.disconnect();
  });

  it('counts requests to both processes against one budget, then blocks for 10 s', async () => {
    const statuses: number[] = [];
    for (let i = 0; i < 5; i++) statuses.push((await (i % 2 ? b : a).inject('/docs/llms.txt')).statusCode);
    expect(statuses).toEqual([200, 200, 200, 200, 200]);
    const over = await b.inject('/docs/llms.txt');
    expect(over.statusCode).toBe(429);
    expect(over.json()).toMatchObject({ code: 'rate_limited' });
    const retryAfter = Number(over.headers['retry-after']);
    expect(retryAfter).toBeGreaterThanOrEqual(9);
    expect(retryAfter).toBeLessThanOrEqual(10);
    // The block holds on the other process too.
    expect((await a.inject('/docs/llms.txt')).statusCode).toBe(429);
    expect(await redis.pttl(`${prefix}docs-rate:127.0.0.1:block`)).toBeGreaterThan(8000);
  });

  it('serves the docs when Redis is unreachable (fails open) instead of refusing everyone', async () => {
    const down = openRedis('redis://127.0.0.1:1', () => {});
    const config = loadConfig({}, { docsRateLimit: 1, redisPrefix: prefix, logLevel: 'silent' });
    const app = await buildDocsApp({ config, redis: down, logger: false });
    try {
      const statuses = [];
      for (let i = 0; i < 3; i++) statuses.push((await app.inject('/docs/llms.txt')).statusCode);
      expect(statuses).toEqual([200, 200, 200]);
    } finally {
      await app.close();
      down.disconnect();
    }
  });
});

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { WebhookRepository } from '../src/modules/webhooks/repository.ts';
import { DeliveryWorker } from '../src/modules/webhooks/worker.ts';
import { DB_KIND, type TestDb, testDb } from './helpers.ts';

/** The delivery worker's polling on a real database: it backs off while nothing is due. */
describe(`webhook delivery polling (${DB_KIND})`, () => {
  let t: TestDb;
  beforeAll(async () => {
    t = await testDb();
  });
  afterAll(async () => {
    await t?.close();
  });

  it('backs off while nothing is due and stops polling when stopped', async () => {
    const repo = new WebhookRepository(t.db);
    let claims = 0;
    const claim = repo.claim.bind(repo);
    repo.claim = (...args: Parameters<typeof claim>) => {
      claims++;
      return claim(...args);
    };
    const worker = new DeliveryWorker(repo, null as never, null as never, () => new Date(), {
      pollMs: 20,
      sendTimeoutMs: 1000,
      log: () => {},
    });
    worker.start();
    await new Promise((r) => setTimeout(r, 1300));
    // Fixed 20 ms polling would have claimed ~65 times; doubling waits (20, 40, 80, … ms) ~6.
    expect(claims).toBeGreaterThanOrEqual(2);
    expect(claims).toBeLessThanOrEqual(10);
    await worker.stop();
    const stopped = claims;
    await new Promise((r) => setTimeout(r, 300));
    expect(claims).toBe(stopped);
  });
});

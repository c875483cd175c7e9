import parsePrometheus from 'parse-prometheus-text-format';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DB_KIND, type TestApp, testApp } from './helpers.ts';
import { type TrackingFixture, trackingFixture } from './tracking-fixture.ts';

const BROWSER = { 'user-agent': 'Mozilla/5.0 (X11; Linux x86_64; rv:120.0) Gecko/20100101 Firefox/120.0' };
const BOUND = 100;

/** Tracking metrics on /metrics, and the click buffer's bound as seen by /go and /readyz. */
describe(`tracking metrics and click buffer readiness (${DB_KIND})`, () => {
  let t: TestApp;
  let fx: TrackingFixture;
  let token: string;

  /** The type of a family and the value of one series, read from the exposition text. */
  const metric = async (name: string, labels: Record<string, string> = {}) => {
    const text = (await t.app.inject('/metrics')).body;
    const type = parsePrometheus(text).find((f) => f.name === name)?.type;
    const series = type === 'HISTOGRAM' ? `${name}_count` : name;
    const line = text
      .split('\n')
      .find(
        (l) =>
          l.startsWith(series) &&
          /^[^{ ]+(\{[^}]*\})? /
            .exec(l)?.[0]
            .startsWith(`${series}${Object.keys(labels).length ? '{' : ' '}`) &&
          Object.entries(labels).every(([k, v]) => l.includes(`${k}="${v}"`)),
      );
    return { type, value: Number(line?.split(' ').pop() ?? 0) };
  };

  beforeAll(async () => {
    t = await testApp({ clickBufferMax: BOUND });
    fx = await trackingFixture(t.app.services, t.db);
    const created = await t.app.inject({
      method: 'POST',
      url: '/api/admin/v1/tracking/programs',
      headers: { authorization: `Bearer ${fx.adminToken}` },
      payload: { slug: 'metrics', name: 'Metrics', trackerIds: fx.trackerIds },
    });
    token = created.json().data.postbackToken;
  });
  afterAll(async () => {
    await t?.close();
  });

  it('counts batch rows by kind, commit latency, pending hits and postbacks by outcome', async () => {
    for (let i = 0; i < 3; i++) await t.app.inject({ url: `/go/${fx.slugs[0]}`, headers: BROWSER });
    await t.app.inject({ url: `/imp/${fx.slugs[0]}`, headers: BROWSER });
    const pb = (q: string, tok = token) => t.app.inject(`/api/postback/metrics/${tok}${q}`);
    await pb('?transaction_id=M1&event=ftd');
    await pb('?transaction_id=M1&event=ftd');
    await pb('?transaction_id=M2');
    await pb('?transaction_id=M3&event=ftd', 'pdp_wrong');

    const clicks = await metric('podium_tracking_batch_rows', { kind: 'click' });
    expect(clicks.type).toBe('HISTOGRAM');
    expect(clicks.value).toBeGreaterThanOrEqual(1);
    expect((await metric('podium_tracking_batch_rows', { kind: 'impression' })).value).toBeGreaterThanOrEqual(
      1,
    );
    expect(
      (await metric('podium_tracking_batch_commit_seconds', { outcome: 'committed' })).value,
    ).toBeGreaterThanOrEqual(2);
    expect(await metric('podium_tracking_pending_hits')).toEqual({ type: 'GAUGE', value: 0 });
    expect((await metric('podium_postbacks_total', { outcome: 'accepted' })).value).toBe(1);
    expect((await metric('podium_postbacks_total', { outcome: 'duplicate' })).value).toBe(1);
    expect((await metric('podium_postbacks_total', { outcome: 'bad_request' })).value).toBe(1);
    expect((await metric('podium_postbacks_total', { outcome: 'unauthorized' })).value).toBe(1);
  });

  it('answers 503 beyond the buffer bound and /readyz names the click buffer until it drains', async () => {
    let release: () => void = () => {};
    const gate = new Promise<void>((r) => {
      release = r;
    });
    // A lock on the clicks table holds every batch write until released.
    let locked: () => void = () => {};
    const isLocked = new Promise<void>((r) => {
      locked = r;
    });
    const holder = t.db.tx(async (q) => {
      await q.query('LOCK TABLE clicks IN EXCLUSIVE MODE');
      locked();
      await gate;
    });
    await isLocked;
    const answers = Array.from({ length: BOUND + 20 }, () =>
      t.app.inject({ url: `/go/${fx.slugs[0]}`, headers: BROWSER }),
    );
    while (t.app.services.tracking.pendingHits < BOUND) await new Promise((r) => setTimeout(r, 10));
    const ready = await t.app.services.readiness.run();
    expect(ready.checks.click_buffer).toBe(`${BOUND} clicks pending, bound ${BOUND}`);
    expect(ready.ready).toBe(false);
    release();
    await holder;
    const statuses = (await Promise.all(answers)).map((r) => r.statusCode);
    expect(statuses.filter((s) => s === 302)).toHaveLength(BOUND);
    expect(statuses.filter((s) => s === 503)).toHaveLength(20);
    // Every answered click was committed before its 302: nothing is left pending.
    expect(t.app.services.tracking.pendingHits).toBe(0);
    expect((await t.app.services.readiness.run()).checks.click_buffer).toBe('ok');
  });
});

import { randomBytes } from 'node:crypto';
import { Webhook } from 'standardwebhooks';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { buildApp } from '../src/app.ts';
import { ChangeBus } from '../src/db/changes.ts';
import { MAX_ATTEMPTS, RETRY_DELAYS_MS } from '../src/modules/webhooks/schedule.ts';
import {
  DeliveryList,
  DeliveryOne,
  EndpointList,
  EndpointOne,
  EndpointWithSecret,
  EventPayload,
} from '../src/modules/webhooks/schemas.ts';
import type { ToplistChange } from '../src/modules/webhooks/types.ts';
import { casinoTemplate, draftToplist } from './catalog-fixture.ts';
import { DB_KIND, eventually, type TestApp, testApp } from './helpers.ts';
import { json, type LoopbackServer, loopbackServer } from './hostile-server.ts';
import { expectSchema } from './schema-check.ts';

const LOOPBACK = { allowHttp: true, allowAddresses: ['127.0.0.1'] } as const;
const KEYS = [{ version: 1, key: randomBytes(32) }];

type Method = 'GET' | 'POST' | 'PATCH' | 'DELETE';

describe(`change webhooks (${DB_KIND})`, () => {
  let t: TestApp;
  let receiver: LoopbackServer;
  let adminToken: string;
  let siteA: number;
  let siteB: number;

  const call = async (method: Method, url: string, payload?: unknown, token = adminToken) => {
    const res = await t.app.inject({
      method,
      url: `/api/admin/v1${url}`,
      headers: { authorization: `Bearer ${token}` },
      ...(payload === undefined ? {} : { payload: payload as object }),
    });
    return { status: res.statusCode, body: res.body ? res.json() : undefined, headers: res.headers };
  };
  /** Registers an endpoint at `path` of the receiver; answers the created endpoint and its secret. */
  const endpointAt = async (path: string, body: object) =>
    (await call('POST', '/webhooks', { url: `${receiver.origin}${path}`, ...body })).body;

  let versions = 100;
  const change = (over: Partial<ToplistChange> = {}): ToplistChange => ({
    type: 'toplist.published',
    toplistId: 7,
    siteId: siteA,
    slug: 'best-casinos-se',
    templateId: 3,
    geo: { geo_type: 'country', code: 'SE' },
    // A fresh version per call: the same (toplist, version) twice is one event by design.
    version: String(++versions),
    liveFrom: null,
    liveUntil: null,
    occurredAt: t.clock.now,
    ...over,
  });

  const hitsTo = (path: string) => receiver.hits.filter((h) => h.url === path);
  const verify = (secret: string, hit: LoopbackServer['hits'][number]) =>
    new Webhook(secret).verify(hit.body, hit.headers as Record<string, string>);

  beforeAll(async () => {
    t = await testApp({ secretKeys: KEYS }, { outboundTestOnly: LOOPBACK });
    receiver = await loopbackServer();
    const catalog = t.app.services.catalog;
    siteA = (await catalog.sites.create({ domain: 'a.example' })).id;
    siteB = (await catalog.sites.create({ domain: 'b.example' })).id;
    adminToken = (await t.app.services.access.createAdminToken('root', ['admin'], null)).token;
  });
  afterAll(async () => {
    await t.close();
    await receiver.close();
  });
  beforeEach(() => {
    t.clock.now = new Date();
    receiver.handle((_req, res) => json(res, 200, { ok: true }));
  });

  it('creates an endpoint, shows its secret once and stores it sealed', async () => {
    const created = await call('POST', '/webhooks', {
      url: `${receiver.origin}/created`,
      events: ['toplist.published'],
      siteId: siteA,
      description: 'WordPress on a.example',
    });
    expect(created.status).toBe(201);
    expect(created.headers['cache-control']).toBe('no-store');
    expectSchema(EndpointWithSecret, created.body);
    const { data, secret } = created.body;
    expect(secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
    expect(data).toMatchObject({ siteId: siteA, enabled: true, events: ['toplist.published'] });
    expect(data.secretHint).toBe(`${secret.slice(0, 10)}…`);

    const one = await call('GET', `/webhooks/${data.id}`);
    expectSchema(EndpointOne, one.body);
    const list = await call('GET', `/webhooks?site_id=${siteA}`);
    expectSchema(EndpointList, list.body);
    expect(list.body.data.map((e: { id: string }) => e.id)).toContain(data.id);
    expect(JSON.stringify([one.body, list.body])).not.toContain(secret.slice(6));

    const [row] = await t.db.query<{ secret_sealed: string }>(
      'SELECT secret_sealed FROM webhook_endpoints WHERE id = $1',
      [data.id],
    );
    expect(row!.secret_sealed).toMatch(/^gcm1:1:/);
    expect(row!.secret_sealed).not.toContain(secret.slice(6));
    const audit = await t.db.query<{ row: string }>('SELECT row_to_json(a)::text AS row FROM audit_log a');
    expect(audit.map((a) => a.row).join('\n')).not.toContain(secret.slice(6));

    // A PATCH sets what it carries and nothing else; disabling by hand says so.
    t.clock.now = new Date(Date.parse(data.updatedAt) + 60_000);
    const patched = await call('PATCH', `/webhooks/${data.id}`, { description: 'renamed', enabled: false });
    expect(patched.body.data).toMatchObject({
      url: data.url,
      events: data.events,
      siteId: siteA,
      description: 'renamed',
      enabled: false,
      disabledAt: t.clock.now.toISOString(),
      disabledReason: 'disabled by an admin',
      updatedAt: t.clock.now.toISOString(),
    });
    expect((await call('PATCH', `/webhooks/whk_${'0'.repeat(26)}`, { enabled: true })).status).toBe(404);
    expect((await call('DELETE', `/webhooks/${data.id}`)).status).toBe(204);
    expect((await call('GET', `/webhooks/${data.id}`)).status).toBe(404);
  });

  it('refuses bad input naming the field, and needs the webhooks scopes', async () => {
    const bad = async (body: unknown, field: string) => {
      const r = await call('POST', '/webhooks', body);
      expect(r.status).toBe(422);
      expect(r.body.code).toBe('validation_failed');
      expect(r.body.details?.field ?? r.body.message).toContain(field);
    };
    await bad({ url: 'ftp://x.example/hook', events: ['toplist.published'] }, 'url');
    await bad({ url: 'https://10.1.2.3/hook', events: ['toplist.published'] }, 'url');
    await bad({ url: 'https://u:p@x.example/hook', events: ['toplist.published'] }, 'url');
    await bad({ url: 'https://x.example/hook', events: [] }, 'events');
    await bad({ url: 'https://x.example/hook', events: ['toplist.deleted'] }, 'events');
    await bad(
      { url: 'https://x.example/hook', events: ['toplist.published', 'toplist.published'] },
      'events',
    );
    await bad({ url: 'https://x.example/hook', events: ['toplist.published'], siteId: 999_999 }, 'siteId');
    await bad({ url: `https://x.example/${'a'.repeat(2100)}`, events: ['toplist.published'] }, 'url');
    await bad({ url: 'https://x.example/hook', events: ['toplist.published'], secret: 'mine' }, 'secret');
    expect((await call('GET', '/webhooks/whk_nope')).status).toBe(422);
    expect((await call('GET', '/webhooks/whk_01ARZ3NDEKTSV4RRFFQ69G5FAV')).status).toBe(404);

    const reader = await t.app.services.access.createAdminToken('reader', ['webhooks:read'], null);
    expect((await call('GET', '/webhooks', undefined, reader.token)).status).toBe(200);
    const denied = await call(
      'POST',
      '/webhooks',
      { url: 'https://x.example', events: ['toplist.published'] },
      reader.token,
    );
    expect(denied.status).toBe(403);
    expect(denied.body.details).toEqual({ requiredScope: 'webhooks:write' });
  });

  it('delivers an event once, signed per Standard Webhooks, to the site and workspace endpoints that subscribed', async () => {
    const own = await endpointAt('/own', {
      events: ['toplist.published', 'toplist.unpublished'],
      siteId: siteA,
    });
    const wide = await endpointAt('/wide', { events: ['toplist.published'] });
    await endpointAt('/other-site', { events: ['toplist.published'], siteId: siteB });
    await endpointAt('/other-event', { events: ['toplist.unpublished'], siteId: siteA });

    const c = change({ version: '4' });
    await t.app.services.webhooks.recordAll([c, c]); // the same change twice is one event
    await t.app.services.webhooks.worker.kick();

    expect(hitsTo('/own')).toHaveLength(1);
    expect(hitsTo('/wide')).toHaveLength(1);
    expect(hitsTo('/other-site')).toHaveLength(0);
    expect(hitsTo('/other-event')).toHaveLength(0);
    const hit = hitsTo('/own')[0]!;
    expect(hit.method).toBe('POST');
    expect(hit.headers['content-type']).toBe('application/json');
    expect(hit.headers['webhook-id']).toMatch(/^msg_[0-9A-Z]{26}$/);
    expect(hit.headers['webhook-timestamp']).toMatch(/^\d{10}$/);
    const payload = verify(own.secret, hit);
    expectSchema(EventPayload, payload);
    expect(payload).toEqual({
      type: 'toplist.published',
      timestamp: expect.stringMatching(/\+00:00$/),
      data: {
        toplistId: 7,
        siteId: siteA,
        slug: 'best-casinos-se',
        templateId: 3,
        geo: { geo_type: 'country', code: 'SE' },
        version: '4',
        liveFrom: null,
        liveUntil: null,
      },
    });
    expect(verify(wide.secret, hitsTo('/wide')[0]!)).toEqual(payload);
    expect(() => verify(wide.secret, hit)).toThrow(); // each endpoint has its own secret

    const log = await call('GET', `/webhooks/${own.data.id}/deliveries`);
    expectSchema(DeliveryList, log.body);
    expect(log.body.data).toHaveLength(1);
    expect(log.body.data[0]).toMatchObject({
      id: hit.headers['webhook-id'],
      eventType: 'toplist.published',
      status: 'succeeded',
      attempts: 1,
      nextAttemptAt: null,
      log: [{ attempt: 1, succeeded: true, httpStatus: 200, error: null, nextAttemptAt: null }],
    });
    // Nothing left to send: another drain sends nothing more.
    await t.app.services.webhooks.worker.kick();
    expect(hitsTo('/own')).toHaveLength(1);
  });

  it('retries a failing receiver on the schedule, logs every try, then disables the endpoint', async () => {
    receiver.handle((req, res) =>
      req.url === '/failing' ? json(res, 503, { oops: 1 }) : json(res, 200, {}),
    );
    const ep = await endpointAt('/failing', { events: ['toplist.unpublished'], siteId: siteA });
    const webhooks = t.app.services.webhooks;
    await webhooks.recordAll([change({ type: 'toplist.unpublished', version: '4' })]);
    await webhooks.worker.kick();
    expect(hitsTo('/failing')).toHaveLength(1);

    // Not due yet: a drain before the next try's time sends nothing.
    t.clock.now = new Date(t.clock.now.getTime() + RETRY_DELAYS_MS[0]! - 1000);
    await webhooks.worker.kick();
    expect(hitsTo('/failing')).toHaveLength(1);

    for (const delay of RETRY_DELAYS_MS) {
      t.clock.now = new Date(t.clock.now.getTime() + delay + 1000);
      await webhooks.worker.kick();
    }
    const hits = hitsTo('/failing');
    expect(hits).toHaveLength(MAX_ATTEMPTS);
    expect(new Set(hits.map((h) => h.headers['webhook-id'])).size).toBe(1); // one message, retried

    const log = (await call('GET', `/webhooks/${ep.data.id}/deliveries`)).body;
    expectSchema(DeliveryList, log);
    const d = log.data[0];
    expect(d).toMatchObject({ status: 'failed', attempts: MAX_ATTEMPTS, nextAttemptAt: null });
    expect(d.log).toHaveLength(MAX_ATTEMPTS);
    for (const [i, a] of d.log.entries()) {
      expect(a).toMatchObject({ attempt: i + 1, succeeded: false, httpStatus: 503 });
      expect(a.error).toContain('HTTP 503');
      expect(a.latencyMs).toBeGreaterThanOrEqual(0);
      if (i < RETRY_DELAYS_MS.length)
        expect(Date.parse(a.nextAttemptAt) - Date.parse(a.startedAt)).toBeGreaterThanOrEqual(
          RETRY_DELAYS_MS[i]!,
        );
      else expect(a.nextAttemptAt).toBeNull();
    }
    const span = Date.parse(d.log.at(-1).startedAt) - Date.parse(d.log[0].startedAt);
    expect(span).toBeGreaterThan(24 * 3_600_000); // about a day of retries

    const shown = (await call('GET', `/webhooks/${ep.data.id}`)).body.data;
    expect(shown.enabled).toBe(false);
    expect(shown.disabledReason).toMatch(/every try failed/);
    // A disabled endpoint receives nothing new until an admin re-enables it.
    await webhooks.recordAll([change({ type: 'toplist.unpublished', version: '5' })]);
    await webhooks.worker.kick();
    expect(hitsTo('/failing')).toHaveLength(MAX_ATTEMPTS);
    const enabled = await call('PATCH', `/webhooks/${ep.data.id}`, { enabled: true });
    expect(enabled.body.data).toMatchObject({ enabled: true, disabledAt: null, disabledReason: null });
  });

  it('keeps deliveries verifiable across a rotation: both secrets sign during the grace period', async () => {
    const ep = await endpointAt('/rotating', { events: ['toplist.published'] });
    const rotated = await call('POST', `/webhooks/${ep.data.id}/rotate`, { graceSeconds: 3600 });
    expect(rotated.status).toBe(200);
    expect(rotated.headers['cache-control']).toBe('no-store');
    expectSchema(EndpointWithSecret, rotated.body);
    expect(rotated.body.secret).not.toBe(ep.secret);
    expect(Date.parse(rotated.body.data.previousSecretExpiresAt)).toBe(t.clock.now.getTime() + 3_600_000);

    await t.app.services.webhooks.recordAll([change()]);
    await t.app.services.webhooks.worker.kick();
    const during = hitsTo('/rotating')[0]!;
    expect(String(during.headers['webhook-signature']).split(' ')).toHaveLength(2);
    expect(verify(ep.secret, during)).toMatchObject({ type: 'toplist.published' }); // receiver not switched yet
    expect(verify(rotated.body.secret, during)).toMatchObject({ type: 'toplist.published' }); // switched

    // Rotating with no grace: only the newest secret signs.
    const now = await call('POST', `/webhooks/${ep.data.id}/rotate`, { graceSeconds: 0 });
    await t.app.services.webhooks.recordAll([change()]);
    await t.app.services.webhooks.worker.kick();
    const after = hitsTo('/rotating')[1]!;
    expect(String(after.headers['webhook-signature']).split(' ')).toHaveLength(1);
    expect(verify(now.body.secret, after)).toMatchObject({ type: 'toplist.published' });
    expect(() => verify(rotated.body.secret, after)).toThrow(/No matching signature/);
  });

  it('sends a test event on demand and logs it', async () => {
    const ep = await endpointAt('/tested', { events: ['toplist.published'], siteId: siteB });
    const ok = await call('POST', `/webhooks/${ep.data.id}/test`);
    expect(ok.status).toBe(200);
    expectSchema(DeliveryOne, ok.body);
    expect(ok.body.data).toMatchObject({
      eventType: 'webhook.test',
      status: 'succeeded',
      log: [{ attempt: 1, succeeded: true, httpStatus: 200 }],
    });
    expect(verify(ep.secret, hitsTo('/tested')[0]!)).toEqual({
      type: 'webhook.test',
      timestamp: expect.any(String),
      data: { endpointId: ep.data.id, siteId: siteB },
    });

    receiver.handle((_req, res) => res.writeHead(302, { location: 'https://elsewhere.example/' }).end());
    const redirected = await call('POST', `/webhooks/${ep.data.id}/test`);
    expect(redirected.body.data).toMatchObject({ status: 'failed', attempts: 1, nextAttemptAt: null });
    expect(redirected.body.data.log[0]).toMatchObject({ succeeded: false, httpStatus: 302 });
    expect(redirected.body.data.log[0].error).toMatch(/redirect \(not followed\)/);
    expect(hitsTo('/tested')).toHaveLength(2);
    // A failed test neither retries nor disables the endpoint.
    expect((await call('GET', `/webhooks/${ep.data.id}`)).body.data.enabled).toBe(true);
  });

  it('sends each event once when several processes drain the same outbox', async () => {
    const bus2 = new ChangeBus(t.db);
    const other = await buildApp({
      config: t.config,
      db: t.db,
      bus: bus2,
      now: () => t.clock.now,
      logger: false,
      outboundTestOnly: LOOPBACK,
    });
    await other.ready();
    try {
      await endpointAt('/fleet', { events: ['toplist.published'] });
      receiver.handle((_req, res) => setTimeout(() => json(res, 200, {}), 20));
      const changes = Array.from({ length: 12 }, (_, i) => change({ toplistId: 100 + i }));
      await t.app.services.webhooks.recordAll(changes);
      await Promise.all([
        t.app.services.webhooks.worker.kick(),
        other.services.webhooks.worker.kick(),
        other.services.webhooks.worker.kick(),
      ]);
      expect(await eventually(async () => hitsTo('/fleet').length >= 12, 5000)).toBe(true);
      const ids = hitsTo('/fleet').map((h) => h.headers['webhook-id']);
      expect(ids).toHaveLength(12);
      expect(new Set(ids).size).toBe(12);
    } finally {
      await other.close();
    }
  });

  describe('events from the catalog and the job runner', () => {
    let toplistId: number;
    let ep: { data: { id: string }; secret: string };

    beforeAll(async () => {
      const catalog = t.app.services.catalog;
      const { owner, offerType, template } = await casinoTemplate(catalog, 'Best casinos');
      const brand = await catalog.brands.create({
        externalId: 'b-hooks',
        name: 'Hooks Casino',
        slug: 'hooks-casino',
        rating: 8,
        logo: {
          rectangular: 'https://cdn.example/r.png',
          square: 'https://cdn.example/s.png',
          backgroundColor: '#112233',
        },
      });
      const offer = await catalog.offers.create({
        externalId: 'o-hooks',
        brandId: brand.id,
        offerTypeId: offerType.id,
        offerText: '100% up to 100',
        bonusExpiryDate: '2027-01-01',
        trackers: [{ campaignName: 'main', landingUrl: 'https://operator.example/land' }],
      });
      const toplist = await draftToplist(
        catalog,
        { siteId: siteA, owner, template },
        { name: 'Best casinos SE', slug: 'hooks-se', country: 'SE' },
        [{ position: 1, brandId: brand.id, offerId: offer.id }],
      );
      toplistId = toplist.id;
      ep = await endpointAt('/catalog', {
        events: [
          'toplist.published',
          'toplist.unpublished',
          'toplist.window_opened',
          'toplist.window_closed',
        ],
        siteId: siteA,
      });
    });

    it('a publish through the admin API reaches the receiver within 2 s, once, verifiable', async () => {
      const published = await call('POST', `/toplists/${toplistId}/publish`);
      expect(published.status).toBe(200);
      expect(await eventually(async () => hitsTo('/catalog').length >= 1, 2000)).toBe(true);
      await t.app.services.webhooks.worker.kick();
      expect(hitsTo('/catalog')).toHaveLength(1);
      const event = verify(ep.secret, hitsTo('/catalog')[0]!) as {
        type: string;
        data: Record<string, unknown>;
      };
      expect(event).toMatchObject({
        type: 'toplist.published',
        data: {
          toplistId,
          siteId: siteA,
          slug: 'hooks-se',
          geo: { geo_type: 'country', code: 'SE' },
          version: published.body.data.version,
        },
      });
      // The body names the toplist; it never carries it.
      expect(JSON.stringify(event)).not.toContain('Hooks Casino');

      expect((await call('POST', `/toplists/${toplistId}/unpublish`)).status).toBe(200);
      expect((await call('POST', `/toplists/${toplistId}/unpublish`)).status).toBe(200); // already down: no event
      await t.app.services.webhooks.worker.kick();
      const unpublished = hitsTo('/catalog').slice(1);
      expect(unpublished).toHaveLength(1);
      expect(verify(ep.secret, unpublished[0]!)).toMatchObject({
        type: 'toplist.unpublished',
        data: { toplistId, version: published.body.data.version },
      });
    });

    it('the job runner sends window_opened and window_closed when liveFrom and liveUntil pass, once each', async () => {
      const start = t.clock.now.getTime();
      const from = new Date(start + 3_600_000);
      const until = new Date(start + 7_200_000);
      const before = hitsTo('/catalog').length;
      const published = await call('POST', `/toplists/${toplistId}/publish`, {
        liveFrom: from.toISOString(),
        liveUntil: until.toISOString(),
      });
      expect(published.status).toBe(200);
      await t.app.services.webhooks.worker.kick();
      expect(hitsTo('/catalog')).toHaveLength(before + 1); // toplist.published, window not open yet

      const tickAt = async (ms: number) => {
        t.clock.now = new Date(ms);
        await t.app.services.scheduler.tick();
        await t.app.services.webhooks.worker.kick();
      };
      await tickAt(start + 1_800_000);
      expect(hitsTo('/catalog')).toHaveLength(before + 1);
      await tickAt(from.getTime() + 30_000);
      await tickAt(from.getTime() + 90_000); // a later run finds the same boundary: still one event
      const opened = hitsTo('/catalog').slice(before + 1);
      expect(opened).toHaveLength(1);
      // Signatures are checked at the receiver's clock; the library verifies against real time.
      expect(JSON.parse(opened[0]!.body)).toMatchObject({
        type: 'toplist.window_opened',
        timestamp: `${from.toISOString().slice(0, 19)}+00:00`,
        data: {
          toplistId,
          version: published.body.data.version,
          liveFrom: `${from.toISOString().slice(0, 19)}+00:00`,
        },
      });
      await tickAt(until.getTime() + 30_000);
      const closed = hitsTo('/catalog').slice(before + 2);
      expect(closed.map((h) => JSON.parse(h.body).type)).toEqual(['toplist.window_closed']);
      t.clock.now = new Date();
    });
  });
});

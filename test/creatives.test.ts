import { createHash } from 'node:crypto';
import { mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { request } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { S3Client } from '@aws-sdk/client-s3';
import S3rver from 's3rver';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { CreativeStoreKind } from '../src/config.ts';
import { creativeStoreFrom, S3CreativeStore } from '../src/modules/creatives/storage.ts';
import { adserverAppOptions, bookable, type ReferenceServer, referenceServer } from './adserver-fixture.ts';
import { gif, jpeg, png, SVG, webp } from './creative-images.ts';
import { eventually, type TestApp, testApp } from './helpers.ts';

type App = TestApp & { admin: string; dir: string };

/** An app on the reference ad server with `store`, an admin token that uploads and moderates, and a booking already pushed. */
async function setup(ref: ReferenceServer, store: CreativeStoreKind, extra: object = {}) {
  const dir = mkdtempSync(join(tmpdir(), 'podium-creatives-'));
  const [cfg, opts] = adserverAppOptions();
  const base = await testApp({ ...cfg, dataDir: dir, creativeStore: store, ...extra }, opts);
  const { token } = await base.app.services.access.createAdminToken(
    'creatives',
    ['adserver:read', 'adserver:write', 'market:read', 'market:write', 'creatives:moderate'],
    null,
  );
  const t: App = { ...base, admin: token, dir };
  base.clock.now = new Date('2026-11-23T10:00:00Z');
  // A key of this app's own, so a test can revoke it without touching the other apps.
  const key = await ref.issueKey();
  const fx = await bookable(t, { ...ref, apiKey: key.key }, `pub-${store}`);
  const b = await call(t, 'POST', '/adserver/bookings', {
    connection_id: fx.conn,
    currency: 'EUR',
    advertiser: { name: 'Lucky Spin Ltd' },
    campaign: { name: 'Winter', external_ref: `cr-${store}` },
    lines: [
      { placement_id: fx.leaderboard, month: '2026-12', goal_impressions: 100_000, sizes: ['728x90'] },
      { placement_id: fx.mpu, month: '2026-12', goal_impressions: 100_000, sizes: ['300x250'] },
    ],
  });
  expect(b.status).toBe(201);
  // Pushed before any creative: the lines are drafts without one (contract rule 5).
  expect((await call(t, 'POST', `/adserver/bookings/${b.body.data.id}/push`)).status).toBe(200);
  return { t, booking: b.body.data.id as string, conn: fx.conn, keyId: key.id };
}

async function call(
  t: App,
  method: 'GET' | 'POST' | 'PATCH',
  url: string,
  payload?: unknown,
  token = t.admin,
  // biome-ignore lint/suspicious/noExplicitAny: response bodies are checked by the assertions
): Promise<{ status: number; body: any }> {
  const res = await t.app.inject({
    method,
    url: `/api/admin/v1${url}`,
    headers: { authorization: `Bearer ${token}` },
    ...(payload === undefined ? {} : { payload: payload as object }),
  });
  return { status: res.statusCode, body: res.body ? JSON.parse(res.body) : undefined };
}

/** Uploads `bytes` for a line (raw body; the Content-Type given is only a claim). */
async function upload(
  t: App,
  booking: string,
  line: number,
  bytes: Buffer,
  contentType = 'image/png',
  landing = 'https://advertiser.test/winter',
) {
  const q = new URLSearchParams({ booking_id: booking, line_no: String(line), landing_url: landing });
  const res = await t.app.inject({
    method: 'POST',
    url: `/api/admin/v1/creatives?${q}`,
    headers: { authorization: `Bearer ${t.admin}`, 'content-type': contentType },
    payload: bytes,
  });
  // biome-ignore lint/suspicious/noExplicitAny: response bodies are checked by the assertions
  return { status: res.statusCode, body: res.json() as any };
}

/** Files stored under the creative directory (temp files included), and the rows that exist. */
async function stored(t: App) {
  const root = join(t.dir, 'creatives');
  const files: string[] = [];
  const walk = (d: string) => {
    let entries: string[];
    try {
      entries = readdirSync(d, { withFileTypes: true }).map((e) => (e.isDirectory() ? `${e.name}/` : e.name));
    } catch {
      return;
    }
    for (const e of entries)
      e.endsWith('/') ? walk(join(d, e)) : files.push(join(d, e).slice(root.length + 1));
  };
  walk(root);
  const [{ n: rows }] = (await t.db.query('SELECT count(*)::int AS n FROM creatives')) as [{ n: number }];
  const [{ n: blobs }] = (await t.db.query('SELECT count(*)::int AS n FROM creative_blobs')) as [
    { n: number },
  ];
  return { files, rows, blobs };
}

const sha = (b: Buffer) => createHash('sha256').update(b).digest('hex');

let ref: ReferenceServer;
beforeAll(async () => {
  ref = await referenceServer();
});
afterAll(() => ref?.close());

describe.each(['files', 'database'] as const)('uploads with the %s store', (store) => {
  let t: App;
  let booking: string;
  beforeAll(async () => {
    ({ t, booking } = await setup(ref, store));
  });
  afterAll(async () => {
    await t?.close();
    rmSync(t.dir, { recursive: true, force: true });
  });

  it('refuses each broken rule with a 422 naming it and the field, storing nothing', async () => {
    const cases: [string, Buffer, string, number, string][] = [
      ['svg called a png', SVG, 'image/png', 2, 'type'],
      ['text called a gif', Buffer.from('GIF? no, just text'), 'image/gif', 2, 'type'],
      [
        'a png carrying a script',
        png(728, 90, { text: '<script>alert(1)</script>' }),
        'image/png',
        1,
        'type',
      ],
      ['a heavy png', png(728, 90, { noise: true }), 'image/png', 1, 'weight'],
      ['a png of width 0', png(0, 90), 'image/png', 1, 'dimensions'],
      ['a png cut short', png(728, 90).subarray(0, 14), 'image/png', 1, 'dimensions'],
      ['a gif of another size', gif(300, 250), 'image/gif', 1, 'size'],
      ['a jpeg of another size', jpeg(728, 90), 'image/jpeg', 2, 'size'],
    ];
    for (const [what, bytes, type, line, rule] of cases) {
      const r = await upload(t, booking, line, bytes, type);
      expect(r.status, what).toBe(422);
      expect(r.body.code, what).toBe('validation_failed');
      expect(r.body.details, what).toMatchObject({ field: 'body', rule });
      expect(r.body.message, what).toMatch(/^body: /);
    }
    const heavy = await upload(t, booking, 1, png(728, 90, { noise: true }));
    expect(heavy.body.message).toMatch(/150 KB/);
    expect(await stored(t)).toEqual({ files: [], rows: 0, blobs: 0 });
  });

  it('names the query field it refuses, and refuses a body far over every limit unread (413)', async () => {
    const ok = png(728, 90);
    expect((await upload(t, booking, 1, ok, 'image/png', 'javascript:alert(1)')).body.details.field).toBe(
      'landing_url',
    );
    expect((await upload(t, booking, 7, ok)).body.details.field).toBe('line_no');
    expect((await upload(t, 'bkg_01JZZZZZZZZZZZZZZZZZZZZZZZ', 1, ok)).body.details.field).toBe('booking_id');
    expect((await upload(t, booking, 1, Buffer.alloc(0))).body.details).toMatchObject({ rule: 'type' });
    // Hostile query values: each refused naming its field, nothing stored.
    const raw = async (query: string, token = t.admin) =>
      t.app.inject({
        method: 'POST',
        url: `/api/admin/v1/creatives?${query}`,
        headers: { authorization: `Bearer ${token}`, 'content-type': 'image/png' },
        payload: ok,
      });
    const base = `booking_id=${booking}&line_no=1&landing_url=https://a.test/`;
    for (const [query, field] of [
      [`booking_id=bkg_x'%3B DROP TABLE creatives--&line_no=1&landing_url=https://a.test/`, 'booking_id'],
      [`booking_id=${booking}&line_no=99999999999&landing_url=https://a.test/`, 'line_no'],
      [`booking_id=${booking}&line_no=1&landing_url=${'x'.repeat(3000)}`, 'landing_url'],
      [`${base}&name=%20%20`, 'name'],
      [`${base}&extra=1`, 'extra'],
    ] as const) {
      const r = await raw(query);
      expect(r.statusCode, query).toBe(422);
      expect(r.json().details.field, query).toBe(field);
    }
    const named = await raw(`${base}&name=${encodeURIComponent('Zürich 🎰 <b>"x"</b>')}`);
    expect(named.statusCode).toBe(201);
    expect(named.json().data.name).toBe('Zürich 🎰 <b>"x"</b>');
    await t.db.query('DELETE FROM creatives');
    await t.db.query('DELETE FROM creative_blobs');
    rmSync(join(t.dir, 'creatives'), { recursive: true, force: true });
    // No token: refused before the body is read.
    expect((await raw(base, 'pda_nope')).statusCode).toBe(401);
    const huge = await upload(t, booking, 1, Buffer.concat([ok, Buffer.alloc(700 * 1024)]));
    expect(huge.status).toBe(413);
    expect(huge.body.code).toBe('payload_too_large');
    expect(await stored(t)).toEqual({ files: [], rows: 0, blobs: 0 });
  });

  it('accepts PNG, JPEG, GIF and WebP of a line size, whatever the Content-Type claims', async () => {
    for (const [bytes, format] of [
      [jpeg(300, 250), 'jpeg'],
      [gif(300, 250), 'gif'],
      [webp(300, 250), 'webp'],
    ] as const) {
      const r = await upload(t, booking, 2, bytes, 'application/octet-stream');
      expect(r.status, format).toBe(201);
      expect(r.body.data).toMatchObject({
        format,
        width: 300,
        height: 250,
        status: 'pending',
        bytes: bytes.length,
      });
    }
  });

  it('stores the same image once: a repeat answers the same creative, another line shares the bytes', async () => {
    const before = await stored(t);
    const img = png(728, 90, { rgb: [1, 2, 3] });
    const first = await upload(t, booking, 1, img);
    expect(first.status).toBe(201);
    expect(first.body.data.sha256).toBe(sha(img));
    expect(first.body.data.url).toBe(`https://podium.test/creatives/${sha(img)}.png`);
    const again = await upload(t, booking, 1, img);
    expect(again.status).toBe(200);
    expect(again.body.data.id).toBe(first.body.data.id);
    // Same bytes, another landing page: a creative of its own, the bytes still stored once.
    const other = await upload(t, booking, 1, img, 'image/png', 'https://advertiser.test/other');
    expect(other.status).toBe(201);
    const after = await stored(t);
    expect(after.rows).toBe(before.rows + 2);
    if (store === 'files') {
      expect(after.files.filter((f) => f.endsWith(sha(img)))).toEqual([
        `${sha(img).slice(0, 2)}/${sha(img)}`,
      ]);
      expect(after.blobs).toBe(0);
    } else {
      expect(after.blobs).toBe(before.blobs + 1);
      expect(after.files).toEqual([]);
    }
  });

  it('serves creatives immutable, nosniff, with an ETag and 304', async () => {
    const img = png(728, 90, { rgb: [9, 9, 9] });
    const up = await upload(t, booking, 1, img);
    const url = `/creatives/${sha(img)}.png`;
    const r = await t.app.inject({ method: 'GET', url });
    expect(r.statusCode).toBe(200);
    expect(r.headers['cache-control']).toBe('public, max-age=31536000, immutable');
    expect(r.headers['x-content-type-options']).toBe('nosniff');
    expect(r.headers['content-type']).toBe('image/png');
    expect(r.headers.etag).toBe(`"${sha(img)}"`);
    expect(r.rawPayload.equals(img)).toBe(true);
    const cached = await t.app.inject({ method: 'GET', url, headers: { 'if-none-match': `"${sha(img)}"` } });
    expect(cached.statusCode).toBe(304);
    expect(cached.headers['cache-control']).toBe('public, max-age=31536000, immutable');
    expect(cached.rawPayload.length).toBe(0);
    const other = await t.app.inject({ method: 'GET', url, headers: { 'if-none-match': '"nope"' } });
    expect(other.statusCode).toBe(200);
    for (const wrong of [
      `/creatives/${sha(img)}.gif`,
      `/creatives/${'0'.repeat(64)}.png`,
      '/creatives/x.png',
    ])
      expect((await t.app.inject({ method: 'GET', url: wrong })).statusCode, wrong).toBe(404);
    // A rejected creative's bytes are no longer served.
    const rej = await call(t, 'POST', `/creatives/${up.body.data.id}/reject`, {
      reason: 'Brand colours wrong',
    });
    expect(rej.status).toBe(200);
    expect((await t.app.inject({ method: 'GET', url })).statusCode).toBe(404);
  });

  it('an interrupted upload leaves nothing behind', async () => {
    const before = await stored(t);
    await t.app.listen({ port: 0, host: '127.0.0.1' });
    const { port } = t.app.server.address() as AddressInfo;
    const img = png(728, 90, { rgb: [4, 5, 6] });
    const q = new URLSearchParams({
      booking_id: booking,
      line_no: '1',
      landing_url: 'https://advertiser.test/x',
    });
    await new Promise<void>((resolve) => {
      const req = request({
        host: '127.0.0.1',
        port,
        method: 'POST',
        path: `/api/admin/v1/creatives?${q}`,
        headers: {
          authorization: `Bearer ${t.admin}`,
          'content-type': 'image/png',
          'content-length': String(img.length),
        },
      });
      req.on('error', () => resolve());
      req.on('close', () => resolve());
      // Half the image, then the connection drops.
      req.write(img.subarray(0, img.length >> 1), () => setImmediate(() => req.destroy()));
    });
    expect(await eventually(async () => (await stored(t)).rows === before.rows)).toBe(true);
    expect(await stored(t)).toEqual(before);
    expect((await t.app.inject({ method: 'GET', url: `/creatives/${sha(img)}.png` })).statusCode).toBe(404);
  });

  it('holds at most 20 creatives of a line awaiting moderation', async () => {
    const pending = async () =>
      (await call(t, 'GET', `/creatives?status=pending&booking_id=${booking}`)).body.data.filter(
        (c: { line_no: number }) => c.line_no === 2,
      ).length;
    for (let i = await pending(); i < 20; i++)
      expect((await upload(t, booking, 2, png(300, 250, { rgb: [i, 200, 7] }))).status).toBe(201);
    const over = await upload(t, booking, 2, png(300, 250, { rgb: [250, 250, 250] }));
    expect(over.status).toBe(409);
    expect(over.body.message).toMatch(/20 creatives awaiting moderation/);
    expect(await pending()).toBe(20);
  });

  it.runIf(store === 'files')('a store that fails mid-upload rolls the creative back', async () => {
    const before = await stored(t);
    // The temp folder taken by a file: the write fails after the row was inserted in the transaction.
    writeFileSync(join(t.dir, 'creatives', 'tmp-blocker'), '');
    rmSync(join(t.dir, 'creatives', 'tmp'), { recursive: true, force: true });
    writeFileSync(join(t.dir, 'creatives', 'tmp'), 'not a folder');
    const r = await upload(t, booking, 1, png(728, 90, { rgb: [7, 7, 7] }));
    expect(r.status).toBe(500);
    rmSync(join(t.dir, 'creatives', 'tmp'));
    rmSync(join(t.dir, 'creatives', 'tmp-blocker'));
    expect(await stored(t)).toEqual({ ...before, files: before.files });
  });
});

describe('moderation and the line', () => {
  let t: App;
  let booking: string;
  let conn: string;
  let keyId: string;
  beforeAll(async () => {
    ({ t, booking, conn, keyId } = await setup(ref, 'files'));
  });
  afterAll(async () => {
    await t?.close();
    rmSync(t.dir, { recursive: true, force: true });
  });

  const line1 = async () => (await call(t, 'GET', `/adserver/bookings/${booking}`)).body.data.lines[0];
  const pushes = async () =>
    (await call(t, 'GET', `/adserver/bookings/${booking}/pushes`)).body.data as {
      status: string;
      body: string;
    }[];
  const frame = async (code: string) => (await t.app.inject({ method: 'GET', url: `/ad/${code}` })).body;

  it('needs the creatives:moderate scope and a reason to reject; only pending creatives are decided', async () => {
    const up = await upload(t, booking, 1, png(728, 90, { rgb: [50, 50, 50] }));
    const { token } = await t.app.services.access.createAdminToken(
      'uploader',
      ['market:read', 'market:write'],
      null,
    );
    expect((await call(t, 'POST', `/creatives/${up.body.data.id}/approve`, undefined, token)).status).toBe(
      403,
    );
    const noReason = await call(t, 'POST', `/creatives/${up.body.data.id}/reject`, {});
    expect(noReason.status).toBe(422);
    expect(noReason.body.details.field).toBe('reason');
    const rej = await call(t, 'POST', `/creatives/${up.body.data.id}/reject`, { reason: 'Too dark' });
    expect(rej.body.data).toMatchObject({ status: 'rejected', reason: 'Too dark' });
    expect((await call(t, 'POST', `/creatives/${up.body.data.id}/approve`)).status).toBe(409);
    const queue = await call(t, 'GET', '/creatives?status=rejected');
    expect(queue.body.data.map((c: { id: string }) => c.id)).toEqual([up.body.data.id]);
  });

  it('approval puts it in the line and pushes the follow-up; a replacement keeps the code and tag', async () => {
    const pushed = (await pushes()).length;
    const first = png(728, 90, { rgb: [255, 0, 0] });
    const a = await upload(t, booking, 1, first);
    expect((await call(t, 'GET', '/creatives?status=pending')).body.data[0].id).toBe(a.body.data.id);
    const ok = await call(t, 'POST', `/creatives/${a.body.data.id}/approve`);
    expect(ok.status).toBe(200);
    expect(ok.body.data.status).toBe('approved');
    const l1 = await line1();
    expect(l1.approved_creatives).toEqual([
      { image_url: a.body.data.url, landing_url: 'https://advertiser.test/winter', width: 728, height: 90 },
    ]);
    const code = l1.click_codes[0];
    const tag = l1.creatives[0].tag;
    expect(tag).toContain(`/ad/${code}`);
    expect(await frame(code)).toContain(`src="${a.body.data.url}"`);
    const framed = await t.app.inject({ method: 'GET', url: `/ad/${code}` });
    expect(framed.headers['cache-control']).toBe('no-store');
    expect(framed.headers['x-content-type-options']).toBe('nosniff');
    // The follow-up push is queued and sent with the tag (contract rule 4: same external_refs).
    expect(await eventually(async () => !(await t.app.services.creatives.followupOf(booking)))).toBe(true);
    expect(await pushes()).toHaveLength(pushed + 1);
    const p1 = (await pushes()).at(-1)!;
    expect(p1.status).toBe('succeeded');
    expect(JSON.parse(p1.body).line_items[0].creatives[0].tag).toBe(tag);
    const [stored1] = await ref.store.query<{ creatives: { tag: string }[] }>(
      'SELECT creatives FROM line_items WHERE id = $1',
      [l1.line_item_id],
    );
    expect(stored1!.creatives[0]!.tag).toBe(tag);

    const second = png(728, 90, { rgb: [0, 0, 255] });
    const b = await upload(t, booking, 1, second);
    expect((await call(t, 'POST', `/creatives/${b.body.data.id}/approve`)).body.data.status).toBe('approved');
    expect((await call(t, 'GET', `/creatives/${a.body.data.id}`)).body.data.status).toBe('replaced');
    const l2 = await line1();
    expect(l2.click_codes).toEqual([code]);
    expect(l2.creatives[0].tag).toBe(tag);
    expect(l2.approved_creatives[0].image_url).toBe(b.body.data.url);
    expect(await frame(code)).toContain(`src="${b.body.data.url}"`);
    expect(await frame(code)).not.toContain(a.body.data.url);
    const sent = async () => {
      const all = await pushes();
      return all.length === pushed + 2 && all.at(-1)?.status === 'succeeded';
    };
    expect(await eventually(sent)).toBe(true);
    // Both decisions are in the audit log, with the state before and after.
    const audit = await t.db.query<{ action: string; before: { status: string }; after: { status: string } }>(
      "SELECT action, before, after FROM audit_log WHERE target_type = 'creatives' AND action LIKE '%approve' ORDER BY id",
    );
    expect(audit.map((r) => [r.before.status, r.after.status])).toEqual([
      ['pending', 'approved'],
      ['pending', 'approved'],
    ]);
  });

  it('a failed follow-up stays queued with its error, and the job sends it later', async () => {
    const c = await upload(t, booking, 2, gif(300, 250));
    await ref.revokeKey(keyId);
    expect((await call(t, 'POST', `/creatives/${c.body.data.id}/approve`)).status).toBe(200);
    expect(
      await eventually(
        async () => (await t.app.services.creatives.followupOf(booking))?.attempts === 1,
        30_000,
      ),
    ).toBe(true);
    const queued = (await call(t, 'GET', '/creatives/followups')).body.data;
    expect(queued).toMatchObject([{ booking_id: booking, attempts: 1 }]);
    expect(queued[0].last_error).toBeTruthy();
    const fresh = await ref.issueKey();
    expect((await call(t, 'PATCH', `/adserver/connections/${conn}`, { api_key: fresh.key })).status).toBe(
      200,
    );
    await call(t, 'POST', `/adserver/connections/${conn}/verify`);
    expect(await t.app.services.creatives.drainFollowups()).toBe(1);
    expect((await call(t, 'GET', '/creatives/followups')).body.data).toEqual([]);
    const last = (await pushes()).at(-1)!;
    expect(last.status).toBe('succeeded');
    expect(JSON.parse(last.body).line_items[1].creatives[0]).toMatchObject({ width: 300, height: 250 });
  }, 60_000);

  it('two approvals of one line at once never leave the line showing another creative than the approved one', async () => {
    const [x, y] = [png(728, 90, { rgb: [1, 100, 1] }), png(728, 90, { rgb: [100, 1, 1] })];
    const ids = [
      (await upload(t, booking, 1, x)).body.data.id,
      (await upload(t, booking, 1, y)).body.data.id,
    ];
    const answers = await Promise.all(ids.map((id) => call(t, 'POST', `/creatives/${id}/approve`)));
    expect(answers.map((a) => a.status).sort()).toSatisfy(
      (s: number[]) => (s[0] === 200 && s[1] === 409) || (s[0] === 200 && s[1] === 200),
    );
    const states = await Promise.all(
      ids.map(async (id) => (await call(t, 'GET', `/creatives/${id}`)).body.data),
    );
    const approved = states.filter((c) => c.status === 'approved');
    expect(approved).toHaveLength(1);
    expect((await line1()).approved_creatives[0].image_url).toBe(approved[0].url);
    for (const c of states.filter((c) => c.status !== 'approved'))
      expect(['pending', 'replaced']).toContain(c.status);
  });
});

describe('creatives of a reservation line before approval', () => {
  let t: App;
  let conn: string;
  let advertiser: string;
  let product: string;
  let mpuProduct: string;
  beforeAll(async () => {
    const dir = mkdtempSync(join(tmpdir(), 'podium-creatives-'));
    const [cfg, opts] = adserverAppOptions();
    const base = await testApp({ ...cfg, dataDir: dir, creativeStore: 'files' }, opts);
    const { token } = await base.app.services.access.createAdminToken(
      'creatives',
      ['adserver:read', 'adserver:write', 'market:read', 'market:write', 'creatives:moderate'],
      null,
    );
    t = { ...base, admin: token, dir };
    t.clock.now = new Date('2026-11-23T10:00:00Z');
    const key = await ref.issueKey();
    const fx = await bookable(t, { ...ref, apiKey: key.key }, 'pub-rsv');
    conn = fx.conn;
    advertiser = (
      await call(t, 'POST', '/market/advertisers', { publisher: 'pub-rsv', name: 'Lucky Spin Ltd' })
    ).body.data.id;
    const offer = async (placement: number, name: string) =>
      (
        await call(t, 'POST', '/market/products', {
          connection_id: conn,
          placement_id: placement,
          name,
          geos: ['MT'],
          first_month: '2026-12',
          last_month: '2027-01',
          pricing: 'cpm',
          price: '10.00',
        })
      ).body.data.id as string;
    product = await offer(fx.leaderboard, 'Leaderboard');
    mpuProduct = await offer(fx.mpu, 'MPU');
  });
  afterAll(async () => {
    await t?.close();
    rmSync(t.dir, { recursive: true, force: true });
  });

  const reserve = async (campaign: string) => {
    const r = await call(t, 'POST', '/market/reservations', {
      advertiser_id: advertiser,
      campaign_name: campaign,
      lines: [
        { product_id: product, geo: 'MT', month: '2026-12', impressions: 1_000 },
        { product_id: mpuProduct, geo: 'MT', month: '2026-12', impressions: 1_000 },
      ],
    });
    expect(r.status).toBe(201);
    return r.body.data.id as string;
  };
  const uploadTo = async (reservation: string, line: number, bytes: Buffer) => {
    const q = new URLSearchParams({
      reservation_id: reservation,
      line_no: String(line),
      landing_url: 'https://advertiser.test/rsv',
    });
    const res = await t.app.inject({
      method: 'POST',
      url: `/api/admin/v1/creatives?${q}`,
      headers: { authorization: `Bearer ${t.admin}`, 'content-type': 'image/png' },
      payload: bytes,
    });
    // biome-ignore lint/suspicious/noExplicitAny: response bodies are checked by the assertions
    return { status: res.statusCode, body: res.json() as any };
  };

  it('refuses what an upload to a booking line refuses, and names the reservation field', async () => {
    const rsv = await reserve('refusals');
    const before = await stored(t);
    const wrong = await uploadTo(rsv, 1, png(300, 250));
    expect(wrong.status).toBe(422);
    expect(wrong.body.details).toMatchObject({ field: 'body', rule: 'size' });
    const noLine = await uploadTo(rsv, 7, png(728, 90));
    expect(noLine.status).toBe(422);
    expect(noLine.body.details.field).toBe('line_no');
    const none = await uploadTo('rsv_00000000000000000000000000', 1, png(728, 90));
    expect(none.body.details.field).toBe('reservation_id');
    const both = await t.app.inject({
      method: 'POST',
      url: `/api/admin/v1/creatives?reservation_id=${rsv}&booking_id=bkg_00000000000000000000000000&line_no=1&landing_url=https://a.test/`,
      headers: { authorization: `Bearer ${t.admin}`, 'content-type': 'image/png' },
      payload: png(728, 90),
    });
    expect(both.statusCode).toBe(422);
    expect(both.json().message).toContain('exactly one of booking_id and reservation_id');
    expect((await call(t, 'POST', `/market/reservations/${rsv}/reject`, { reason: 'no' })).status).toBe(200);
    const closed = await uploadTo(rsv, 1, png(728, 90));
    expect(closed.status).toBe(422);
    expect(closed.body.message).toContain('is rejected');
    expect((await stored(t)).rows).toBe(before.rows);
  });

  it('is moderated while held; the approval carries the approved creatives to the booking the pushed order shows', async () => {
    const rsv = await reserve('carried');
    const first = await uploadTo(rsv, 1, png(728, 90, { rgb: [9, 9, 200] }));
    expect(first.status).toBe(201);
    expect(first.body.data).toMatchObject({
      booking_id: null,
      line_no: null,
      reservation_id: rsv,
      reservation_line_no: 1,
      status: 'pending',
    });
    expect((await uploadTo(rsv, 1, png(728, 90, { rgb: [9, 9, 200] }))).status).toBe(200);
    const second = await uploadTo(rsv, 1, png(728, 90, { rgb: [200, 9, 9] }));
    const rejected = await uploadTo(rsv, 2, png(300, 250));
    expect(
      (await call(t, 'POST', `/creatives/${rejected.body.data.id}/reject`, { reason: 'blurry' })).status,
    ).toBe(200);
    expect((await call(t, 'POST', `/creatives/${first.body.data.id}/approve`)).body.data.status).toBe(
      'approved',
    );
    // A second approval of the size replaces the first, as on a booking line.
    expect((await call(t, 'POST', `/creatives/${second.body.data.id}/approve`)).body.data.status).toBe(
      'approved',
    );
    expect((await call(t, 'GET', `/creatives/${first.body.data.id}`)).body.data.status).toBe('replaced');
    const pending = await uploadTo(rsv, 1, png(728, 90, { rgb: [9, 200, 9] }));
    const listed = (await call(t, 'GET', `/creatives?reservation_id=${rsv}`)).body.data;
    expect(listed.map((c: { id: string }) => c.id).sort()).toEqual(
      [first, second, rejected, pending].map((c) => c.body.data.id).sort(),
    );

    const booked = await call(t, 'POST', `/market/reservations/${rsv}/approve`);
    expect(booked.body.data.status).toBe('booked');
    const bookingId = booked.body.data.booking_id as string;
    const booking = (await call(t, 'GET', `/adserver/bookings/${bookingId}`)).body.data;
    expect(booking.lines[0].approved_creatives).toEqual([
      { image_url: second.body.data.url, landing_url: 'https://advertiser.test/rsv', width: 728, height: 90 },
    ]);
    expect(booking.lines[1].approved_creatives).toEqual([]);
    // The same rows, now on the booking's lines: the pending one is moderated there from now on.
    const moved = await call(t, 'GET', `/creatives/${pending.body.data.id}`);
    expect(moved.body.data).toMatchObject({ booking_id: bookingId, line_no: 1, reservation_id: rsv });
    expect((await call(t, 'GET', `/creatives/${second.body.data.id}`)).body.data.booking_id).toBe(bookingId);
    // The order the ad server holds carries the approved creative's tag, which shows its image.
    const [li] = await ref.store.query<{ creatives: { tag: string }[] }>(
      'SELECT creatives FROM line_items WHERE id = $1',
      [booking.lines[0].line_item_id],
    );
    expect(li!.creatives).toHaveLength(1);
    expect(li!.creatives[0]!.tag).toBe(booking.lines[0].creatives[0].tag);
    const code = booking.lines[0].click_codes[0];
    expect((await t.app.inject({ method: 'GET', url: `/ad/${code}` })).body).toContain(
      `src="${second.body.data.url}"`,
    );
    // An upload through the reservation now lands on the booking line.
    const after = await uploadTo(rsv, 2, png(300, 250, { rgb: [1, 2, 3] }));
    expect(after.body.data).toMatchObject({ booking_id: bookingId, line_no: 2, reservation_line_no: 2 });
    expect((await call(t, 'POST', `/creatives/${after.body.data.id}/approve`)).body.data.status).toBe(
      'approved',
    );
    expect(
      (await call(t, 'GET', `/adserver/bookings/${bookingId}`)).body.data.lines[1].approved_creatives,
    ).toEqual([expect.objectContaining({ image_url: after.body.data.url })]);
  });

  it('refuses a creative approval while its reservation is being approved', async () => {
    const rsv = await reserve('in-flight');
    const c = await uploadTo(rsv, 1, png(728, 90, { rgb: [70, 70, 70] }));
    await t.db.query(
      `UPDATE market_reservations SET status = 'approving', approving_since = now() WHERE id = $1`,
      [rsv],
    );
    const refused = await call(t, 'POST', `/creatives/${c.body.data.id}/approve`);
    expect(refused.status).toBe(409);
    expect(refused.body.message).toContain('try again once it is booked');
    expect((await call(t, 'GET', `/creatives/${c.body.data.id}`)).body.data.status).toBe('pending');
  });
});

describe('the S3 store (s3rver on loopback, through the AWS SDK)', () => {
  let server: S3rver;
  let endpoint: string;
  let dir: string;
  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'podium-s3-'));
    server = new S3rver({
      port: 0,
      address: '127.0.0.1',
      silent: true,
      directory: dir,
      configureBuckets: [{ name: 'creatives-test', configs: [] }],
    });
    const { port } = await server.run();
    endpoint = `http://127.0.0.1:${port}`;
  });
  afterAll(async () => {
    await server?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('puts once, reads back, answers nothing for a missing key', async () => {
    const client = new S3Client({
      endpoint,
      region: 'us-east-1',
      forcePathStyle: true,
      credentials: { accessKeyId: 'S3RVER', secretAccessKey: 'S3RVER' },
    });
    const s3 = creativeStoreFrom(
      {
        creativeStore: 's3',
        dataDir: dir,
        creativeS3Bucket: 'creatives-test',
        creativeS3Region: 'us-east-1',
        creativeS3Endpoint: endpoint,
        creativeS3Prefix: 'c/',
      },
      undefined as never,
      client,
    );
    expect(s3).toBeInstanceOf(S3CreativeStore);
    const img = png(728, 90);
    await s3.put(sha(img), img, 'image/png', undefined as never);
    await s3.put(sha(img), img, 'image/png', undefined as never);
    expect((await s3.get(sha(img)))?.equals(img)).toBe(true);
    expect(await s3.get('0'.repeat(64))).toBeUndefined();
  });

  it('is what PODIUM_CREATIVE_STORE=s3 selects: an upload lands in the bucket and is served from it', async () => {
    // The SDK's default credential chain, as in production (s3rver takes any signature of its key).
    process.env.AWS_ACCESS_KEY_ID = 'S3RVER';
    process.env.AWS_SECRET_ACCESS_KEY = 'S3RVER';
    const { t, booking } = await setup(ref, 's3', {
      creativeS3Bucket: 'creatives-test',
      creativeS3Endpoint: endpoint,
      creativeS3Prefix: 'app/',
    });
    try {
      const img = png(728, 90, { rgb: [3, 3, 3] });
      expect((await upload(t, booking, 1, img)).status).toBe(201);
      expect(await stored(t)).toMatchObject({ files: [], blobs: 0, rows: 1 });
      const r = await t.app.inject({ method: 'GET', url: `/creatives/${sha(img)}.png` });
      expect(r.statusCode).toBe(200);
      expect(r.rawPayload.equals(img)).toBe(true);
    } finally {
      await t.close();
      rmSync(t.dir, { recursive: true, force: true });
      delete process.env.AWS_ACCESS_KEY_ID;
      delete process.env.AWS_SECRET_ACCESS_KEY;
    }
  });
});

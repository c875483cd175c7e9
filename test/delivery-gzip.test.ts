import { gunzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type DemoTokens, loadDemo } from '../src/modules/catalog/demo.ts';
import { httpRequest, type TestApp, testApp } from './helpers.ts';

// Gzip answers over real HTTP (lengths on the wire): a page of GET /toplists, the resolve route,
// pages of brands, each compressed once on the first ask that accepts gzip, and what stays plain.
describe('toplist API: gzip for clients that accept it', () => {
  let t: TestApp;
  let demo: DemoTokens;
  let base: string;
  let auth: Record<string, string>;
  const gz = () => ({ ...auth, 'accept-encoding': 'deflate;q=1.0, compress;q=0.5, gzip;q=0.5' });

  beforeAll(async () => {
    t = await testApp();
    demo = await loadDemo(t.app.services);
    base = await t.app.listen({ host: '127.0.0.1', port: 0 });
    auth = { authorization: `Bearer ${demo.siteTokens[0]!.token}` };
  }, 120_000);

  afterAll(() => t?.close());

  it('gzips a page of toplists on the first ask, the same bytes as the plain page', async () => {
    for (const path of ['/api/v1/toplists?per_page=15', '/api/v1/toplists?per_page=2&page=2']) {
      // A conditional ask before any gzip was made: 304 with the weak tag a gzip answer carries.
      const plain = await httpRequest(base, path, auth);
      expect(plain.status).toBe(200);
      expect(plain.headers['content-encoding']).toBeUndefined();
      expect(plain.headers.vary).toBe('Authorization, Accept-Encoding');
      const early = await httpRequest(base, path, { ...gz(), 'if-none-match': plain.headers.etag as string });
      expect(early.status).toBe(304);
      expect(early.headers.etag).toBe(`W/${plain.headers.etag}`);
      const zipped = await httpRequest(base, path, gz());
      expect(zipped.headers['content-encoding']).toBe('gzip');
      expect(zipped.status).toBe(200);
      expect(gunzipSync(zipped.body).equals(plain.body)).toBe(true);
      expect(Number(zipped.headers['content-length'])).toBe(zipped.body.length);
      expect(zipped.body.length).toBeLessThan(plain.body.length / 3);
      expect(zipped.headers.etag).toBe(`W/${plain.headers.etag}`);
      const again = await httpRequest(base, path, {
        ...gz(),
        'if-none-match': zipped.headers.etag as string,
      });
      expect(again.status).toBe(304);
      expect(again.body.length).toBe(0);
    }
  });

  it('gzips the variant resolve picks', async () => {
    // The family of the demo's Swedish casino toplist (16 KB; a family whose pick is under 1 KB stays plain).
    const [row] = await t.db.query<{ template_id: number }>(
      `SELECT template_id FROM toplists WHERE site_id = $1 AND slug = 'best-casinos-se'`,
      [demo.siteTokens[0]!.siteId],
    );
    const path = `/api/v1/toplists/resolve?template_id=${row!.template_id}&country=SE`;
    const plain = await httpRequest(base, path, auth);
    expect(plain.status).toBe(200);
    const zipped = await httpRequest(base, path, gz());
    expect(zipped.headers['content-encoding']).toBe('gzip');
    expect(gunzipSync(zipped.body).equals(plain.body)).toBe(true);
    // The same bytes again: compressed once, kept beside the stored document.
    expect((await httpRequest(base, path, gz())).body.equals(zipped.body)).toBe(true);
  });

  it('gzips a page of brands, compressed once for its content', async () => {
    const path = '/api/v1/brands?per_page=50';
    const plain = await httpRequest(base, path, auth);
    expect(plain.status).toBe(200);
    expect(plain.headers.vary).toBe('Authorization, Accept-Encoding');
    const zipped = await httpRequest(base, path, gz());
    expect(zipped.headers['content-encoding']).toBe('gzip');
    expect(gunzipSync(zipped.body).equals(plain.body)).toBe(true);
    expect(zipped.headers.etag).toBe(`W/${plain.headers.etag}`);
  });

  it('answers plain what is not worth it: an empty page, an error', async () => {
    const empty = await httpRequest(base, '/api/v1/toplists?page=99', gz());
    expect(empty.status).toBe(200);
    expect(empty.headers['content-encoding']).toBeUndefined();
    expect(empty.headers.etag).not.toMatch(/^W\//);
    const missing = await httpRequest(base, '/api/v1/toplists/by-slug/no-such-toplist', gz());
    expect(missing.status).toBe(404);
    expect(missing.headers['content-encoding']).toBeUndefined();
  });
});

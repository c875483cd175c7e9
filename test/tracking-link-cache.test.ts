import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DB_KIND, eventually, type TestApp, testApp } from './helpers.ts';
import { type TrackingFixture, trackingFixture } from './tracking-fixture.ts';

const BROWSER = {
  'user-agent': 'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 Chrome/120.0 Safari/537.36',
};

/** The cache of links behind /go: one read per link however many clicks wait, and never a click held by a refresh. */
describe(`tracking links cache (${DB_KIND})`, () => {
  let t: TestApp;
  let fx: TrackingFixture;
  /** Reads of a link by slug since the counter was last reset. */
  let linkReads = 0;
  /** When set, the next link read waits for it (a connection that stopped answering). */
  let stallNextRead: Promise<void> | undefined;

  const click = async (slug: string) => {
    const res = await t.app.inject({ method: 'GET', url: `/go/${slug}`, headers: BROWSER });
    return { status: res.statusCode, location: res.headers.location as string | undefined };
  };
  const landingOf = (location: string | undefined) => {
    const u = new URL(location as string);
    return u.origin + u.pathname;
  };
  /** What another process (or an edit of the tracker) changes under a cached link. */
  const setLanding = (url: string) =>
    t.db.query('UPDATE trackers SET landing_url = $1 WHERE id = $2', [url, fx.trackerIds[0]]);
  const later = (ms: number) => {
    t.clock.now = new Date(t.clock.now.getTime() + ms);
  };

  beforeAll(async () => {
    t = await testApp();
    fx = await trackingFixture(t.app.services, t.db);
    const query = t.db.query.bind(t.db);
    t.db.query = async (sql, params, name) => {
      if (name === 'resolve_tracking_link') {
        linkReads++;
        const stall = stallNextRead;
        stallNextRead = undefined;
        await stall;
      }
      return query(sql, params, name);
    };
  });
  afterAll(async () => {
    await t?.close();
  });

  it('reads a link once for every click that meets it uncached at the same time', async () => {
    linkReads = 0;
    const answers = await Promise.all(Array.from({ length: 20 }, () => click(fx.slugs[0] as string)));
    expect(answers.map((a) => a.status)).toEqual(Array(20).fill(302));
    expect(linkReads).toBe(1);
    await click(fx.slugs[0] as string);
    expect(linkReads).toBe(1);
  });

  it('answers from an expired entry while one read refreshes it, then from the fresh one', async () => {
    const slug = fx.slugs[0] as string;
    expect(landingOf((await click(slug)).location)).toBe('https://operator.example/land');
    await setLanding('https://operator.example/moved');
    later(7_000);
    linkReads = 0;
    const [a, b] = await Promise.all([click(slug), click(slug)]);
    // Both answered from the entry they found; one read went out for both.
    expect(landingOf(a.location)).toBe('https://operator.example/land');
    expect(landingOf(b.location)).toBe('https://operator.example/land');
    expect(linkReads).toBe(1);
    expect(
      await eventually(
        async () => landingOf((await click(slug)).location) === 'https://operator.example/moved',
      ),
    ).toBe(true);
    expect(linkReads).toBe(1);
  });

  it('does not keep later clicks waiting on a read that hangs', async () => {
    const slug = fx.slugs[1] as string;
    let release = () => {};
    stallNextRead = new Promise<void>((r) => {
      release = r;
    });
    later(120_000);
    let first: { status: number } | undefined;
    const hung = click(slug).then((a) => {
      first = a;
    });
    await new Promise((r) => setTimeout(r, 50));
    expect(first).toBeUndefined();
    later(4_000);
    expect((await click(slug)).status).toBe(302);
    expect(first).toBeUndefined();
    release();
    await hung;
    expect(first?.status).toBe(302);
  });

  it('waits for the read when the entry is long past its time, and drops a link that is gone', async () => {
    const slug = fx.slugs[0] as string;
    await setLanding('https://operator.example/again');
    later(120_000);
    expect(landingOf((await click(slug)).location)).toBe('https://operator.example/again');

    const [link] = await t.db.query<{ id: number }>('SELECT id FROM tracking_links WHERE slug = $1', [slug]);
    await t.db.query('DELETE FROM tracking_links WHERE id = $1', [link?.id]);
    // Just past its time: answered once more from the entry, then gone once the refresh has read it.
    later(7_000);
    expect((await click(slug)).status).toBe(302);
    expect(await eventually(async () => (await click(slug)).status === 404)).toBe(true);
  });
});

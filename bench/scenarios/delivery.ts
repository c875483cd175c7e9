/** The toplist read path: by slug, by id and list pages, on the demo dataset and on 190 KB toplists. */

import { request } from 'node:http';
import type { Dataset } from '../lib/fixture.ts';
import { type BenchContext, compare, type Scenario } from '../lib/harness.ts';

/** Datasets the read scenarios run on (BENCH_DATASETS=demo skips the slow-to-build big one). */
const DATASETS = (process.env.BENCH_DATASETS ?? 'demo,big').split(',') as Dataset[];

/** Goals of issue 19: ratio of bare req/s per dataset. */
const GOALS: Record<Dataset, number> = { demo: 0.5, big: 0.85 };

/** Asks for each path with gzip until it comes gzipped (each toplist is deflated on first ask). */
async function primeGzip(url: string, paths: string[], headers: Record<string, string>): Promise<void> {
  for (const path of paths) {
    for (let i = 0; i < 200; i++) {
      const res = await fetch(`${url}${path}`, { headers });
      await res.arrayBuffer();
      if (res.headers.get('content-encoding') === 'gzip') break;
      await new Promise((r) => setTimeout(r, 10));
    }
  }
}

async function single(
  ctx: BenchContext,
  name: string,
  dataset: Dataset,
  path: (fx: { slugs: string[]; ids: number[] }, i: number) => string,
  gzip: boolean,
) {
  const fx = await ctx.fixture(dataset, 'pglite');
  const paths = fx.info.slugs.map((_, i) => path(fx.info, i));
  const headers: Record<string, string> = { authorization: `Bearer ${fx.info.siteToken}` };
  if (gzip) {
    headers['accept-encoding'] = 'gzip';
    await primeGzip(fx.podium.url, paths, headers);
  }
  // node:http's length on the wire (fetch would decompress).
  const first = await new Promise<number>((resolve, reject) =>
    request(`${fx.podium.url}${paths[0]}`, { headers }, (res) => {
      let n = 0;
      res.on('data', (c: Buffer) => {
        n += c.length;
      });
      res.on('end', () => resolve(n));
    })
      .on('error', reject)
      .end(),
  );
  const line = await compare(ctx, name, fx, { paths, headers }, gzip ? undefined : GOALS[dataset]);
  return { ...line, body_bytes_first: first, paths: paths.length };
}

/** A scenario that requests `path` of every live toplist of each dataset in turn. */
function everyToplist(
  name: string,
  about: string,
  path: (fx: { slugs: string[]; ids: number[] }, i: number) => string,
  gzip = false,
): Scenario {
  return {
    name,
    about,
    async run(ctx) {
      const out = [];
      for (const d of DATASETS) out.push(await single(ctx, name, d, path, gzip));
      return out;
    },
  };
}

/** `GET /api/v1/toplists/by-slug/{slug}`, every live toplist of the site in turn. */
export const bySlug = everyToplist(
  'by-slug',
  'GET /api/v1/toplists/by-slug/{slug} on the demo site and on 190 KB toplists',
  (f, i) => `/api/v1/toplists/by-slug/${f.slugs[i]}`,
);

/** By slug for a client that accepts gzip (WordPress, browsers, curl --compressed); bare sends the same gzip bytes. */
export const bySlugGzip = everyToplist(
  'by-slug-gzip',
  'GET /api/v1/toplists/by-slug/{slug} with Accept-Encoding: gzip, on the demo site and on 190 KB toplists',
  (f, i) => `/api/v1/toplists/by-slug/${f.slugs[i]}`,
  true,
);

/** `GET /api/v1/toplists/{id}`. */
export const byId = everyToplist(
  'by-id',
  'GET /api/v1/toplists/{id} on the demo site and on 190 KB toplists',
  (f, i) => `/api/v1/toplists/${f.ids[i]}`,
);

/** `GET /api/v1/toplists?per_page=N&page=P`, every page of the demo site in turn (gzipped with `gzip`). */
function pages(name: string, about: string, gzip: boolean): Scenario {
  return {
    name,
    about,
    async run(ctx) {
      const fx = await ctx.fixture('demo', 'pglite');
      const headers: Record<string, string> = { authorization: `Bearer ${fx.info.siteToken}` };
      if (gzip) headers['accept-encoding'] = 'gzip';
      const out = [];
      for (const perPage of [15, 100]) {
        const count = Math.ceil(fx.info.slugs.length / perPage);
        const paths = Array.from(
          { length: count },
          (_, p) => `/api/v1/toplists?per_page=${perPage}&page=${p + 1}`,
        );
        if (gzip) await primeGzip(fx.podium.url, paths, headers);
        const line = await compare(ctx, `${name}-${perPage}`, fx, { paths, headers }, undefined);
        out.push({ ...line, paths: paths.length });
      }
      return out;
    },
  };
}

export const list = pages('list', 'GET /api/v1/toplists pages of 15 and of 100 on the demo site', false);

/** The pages for a client that accepts gzip: joined from the toplists' deflated documents. */
export const listGzip = pages(
  'list-gzip',
  'GET /api/v1/toplists pages of 15 and of 100 on the demo site, with Accept-Encoding: gzip',
  true,
);

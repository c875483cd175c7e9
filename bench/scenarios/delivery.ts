/** The toplist read path: by slug, by id and list pages, on the demo dataset and on 190 KB toplists. */

import type { Dataset } from '../lib/fixture.ts';
import { type BenchContext, compare, type Scenario } from '../lib/harness.ts';

/** Datasets the read scenarios run on (BENCH_DATASETS=demo skips the slow-to-build big one). */
const DATASETS = (process.env.BENCH_DATASETS ?? 'demo,big').split(',') as Dataset[];

/** Goals of issue 19: ratio of bare req/s per dataset. */
const GOALS: Record<Dataset, number> = { demo: 0.5, big: 0.85 };

async function single(
  ctx: BenchContext,
  name: string,
  dataset: Dataset,
  path: (fx: { slugs: string[]; ids: number[] }, i: number) => string,
) {
  const fx = await ctx.fixture(dataset, 'pglite');
  const paths = fx.info.slugs.map((_, i) => path(fx.info, i));
  const first = await fetch(`${fx.podium.url}${paths[0]}`, {
    headers: { authorization: `Bearer ${fx.info.siteToken}` },
  });
  const bytes = (await first.arrayBuffer()).byteLength;
  const line = await compare(
    ctx,
    name,
    fx,
    { paths, headers: { authorization: `Bearer ${fx.info.siteToken}` } },
    GOALS[dataset],
  );
  return { ...line, body_bytes_first: bytes, paths: paths.length };
}

/** A scenario that requests `path` of every live toplist of each dataset in turn. */
function everyToplist(
  name: string,
  about: string,
  path: (fx: { slugs: string[]; ids: number[] }, i: number) => string,
): Scenario {
  return {
    name,
    about,
    async run(ctx) {
      const out = [];
      for (const d of DATASETS) out.push(await single(ctx, name, d, path));
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

/** `GET /api/v1/toplists/{id}`. */
export const byId = everyToplist(
  'by-id',
  'GET /api/v1/toplists/{id} on the demo site and on 190 KB toplists',
  (f, i) => `/api/v1/toplists/${f.ids[i]}`,
);

/** `GET /api/v1/toplists?per_page=N&page=P`, every page of the demo site in turn. */
export const list: Scenario = {
  name: 'list',
  about: 'GET /api/v1/toplists pages of 15 and of 100 on the demo site',
  async run(ctx) {
    const fx = await ctx.fixture('demo', 'pglite');
    const out = [];
    for (const perPage of [15, 100]) {
      const pages = Math.ceil(fx.info.slugs.length / perPage);
      const paths = Array.from(
        { length: pages },
        (_, p) => `/api/v1/toplists?per_page=${perPage}&page=${p + 1}`,
      );
      const line = await compare(
        ctx,
        `list-${perPage}`,
        fx,
        { paths, headers: { authorization: `Bearer ${fx.info.siteToken}` } },
        undefined,
      );
      out.push({ ...line, paths: paths.length });
    }
    return out;
  },
};

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

/** A toplist's fields `resolvePaths` reads. */
interface FamilyRow {
  template: { id: number };
  geo: { code: string; coveredCountries: string[] | null };
}

/**
 * `/toplists/resolve` paths a visitor of the demo's geo families asks, each answered 200: per
 * family, every country with a row of its own, every country a market covers, and `US` and `ZZ`
 * (no country: the global row).
 */
export async function resolvePaths(
  url: string,
  ids: number[],
  headers: Record<string, string>,
): Promise<string[]> {
  const candidates = new Set<string>();
  for (const id of ids) {
    const { data } = (await (await fetch(`${url}/api/v1/toplists/${id}`, { headers })).json()) as {
      data: FamilyRow;
    };
    const countries = [data.geo.code, ...(data.geo.coveredCountries ?? []), 'US', 'ZZ'];
    for (const c of countries)
      candidates.add(`/api/v1/toplists/resolve?template_id=${data.template.id}&country=${c.toLowerCase()}`);
  }
  const paths: string[] = [];
  for (const path of candidates) {
    const res = await fetch(`${url}${path}`, { headers });
    await res.arrayBuffer();
    if (res.status === 200) paths.push(path);
  }
  return paths;
}

/**
 * `GET /api/v1/toplists/resolve?template_id=…&country=…`, the one request per page view of a site
 * that serves geo families by the visitor's country (docs/toplist-client.md), over the demo
 * site's families and countries.
 */
export const resolve: Scenario = {
  name: 'resolve',
  about:
    'GET /api/v1/toplists/resolve?template_id=…&country=… over the demo geo families and visitor countries',
  async run(ctx) {
    const fx = await ctx.fixture('demo', 'pglite');
    const headers: Record<string, string> = { authorization: `Bearer ${fx.info.siteToken}` };
    const paths = await resolvePaths(fx.podium.url, fx.info.ids, headers);
    if (paths.length === 0) throw new Error('resolve: no visitor country of the demo families answers 200');
    const line = await compare(ctx, 'resolve', fx, { paths, headers }, GOALS.demo);
    return [{ ...line, paths: paths.length }];
  },
};

/**
 * Every page of a listing at `perPage` a page, as paths; with `Accept-Encoding: gzip` in
 * `headers`, each primed until it comes gzipped.
 */
export async function pagePaths(
  url: string,
  resource: 'toplists' | 'brands',
  perPage: number,
  headers: Record<string, string>,
): Promise<string[]> {
  const first = await fetch(`${url}/api/v1/${resource}?per_page=${perPage}`, { headers });
  const { meta } = (await first.json()) as { meta: { last_page: number } };
  const paths = Array.from(
    { length: meta.last_page },
    (_, p) => `/api/v1/${resource}?per_page=${perPage}&page=${p + 1}`,
  );
  if (headers['accept-encoding'] === 'gzip') await primeGzip(url, paths, headers);
  return paths;
}

/**
 * `GET /api/v1/{resource}?per_page=N&page=P`, every page of the demo site in turn (gzipped with
 * `gzip`), at pages of 15 and of 100.
 */
function pages(name: string, about: string, resource: 'toplists' | 'brands', gzip: boolean): Scenario {
  return {
    name,
    about,
    async run(ctx) {
      const fx = await ctx.fixture('demo', 'pglite');
      const headers: Record<string, string> = { authorization: `Bearer ${fx.info.siteToken}` };
      if (gzip) headers['accept-encoding'] = 'gzip';
      const out = [];
      for (const perPage of [15, 100]) {
        const paths = await pagePaths(fx.podium.url, resource, perPage, headers);
        const line = await compare(ctx, `${name}-${perPage}`, fx, { paths, headers }, undefined);
        out.push({ ...line, paths: paths.length });
      }
      return out;
    },
  };
}

export const list = pages(
  'list',
  'GET /api/v1/toplists pages of 15 and of 100 on the demo site',
  'toplists',
  false,
);

/** The pages for a client that accepts gzip: joined from the toplists' deflated documents. */
export const listGzip = pages(
  'list-gzip',
  'GET /api/v1/toplists pages of 15 and of 100 on the demo site, with Accept-Encoding: gzip',
  'toplists',
  true,
);

/** The brands a sync client walks beside the toplists, gzipped as WordPress's HTTP API asks. */
export const brands = pages(
  'brands',
  'GET /api/v1/brands pages of 15 and of 100 on the demo site, with Accept-Encoding: gzip',
  'brands',
  true,
);

/**
 * The write paths: `/go` (302 only once the click row is committed), `/imp`, and postbacks with
 * distinct transaction ids (each sent twice), on PGlite and on PostgreSQL when DATABASE_URL is set.
 * Each line carries its nothing-lost check.
 */
import { compare, type Scenario } from '../lib/harness.ts';

/** The user agent of every `/go` and `/imp` request the bench sends (also bench:ab's). */
export const UA = 'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 Chrome/120.0 Safari/537.36';
const headers = { 'user-agent': UA };

function hits(name: 'go' | 'imp', column: 'clicks' | 'impressions'): Scenario {
  return {
    name,
    about: `GET /${name}/{slug}: durable before the answer; rows recorded vs answers counted`,
    async run(ctx) {
      const out = [];
      for (const db of ctx.writeDbs) {
        const fx = await ctx.fixture('demo', db);
        const paths = fx.info.goSlugs.map((s) => `/${name}/${s}`);
        const before = await fx.count();
        const line = await compare(ctx, name, fx, { paths, headers }, name === 'go' ? 0.3 : undefined);
        const after = await fx.count();
        // wrk may drop answers in flight when a run ends: recorded ≥ answered is the check.
        const recorded = after[column]! - before[column]! - paths.length; // minus the canning requests
        const answered = line.podium_answered as number;
        out.push({ ...line, recorded, answered, lost: Math.max(0, answered - recorded) });
      }
      return out;
    },
  };
}

export const go = hits('go', 'clicks');
export const imp = hits('imp', 'impressions');

/**
 * A publisher's site as it runs: toplists read (by slug, measured) while visitors click (`/go`,
 * 20 connections in the background on both servers; its req/s and p99 are in the line).
 */
export const readsWithClicks: Scenario = {
  name: 'reads-with-clicks',
  about: 'GET by-slug on the demo toplists while /go clicks are sent at the same time',
  async run(ctx) {
    const out = [];
    for (const db of ctx.writeDbs) {
      const fx = await ctx.fixture('demo', db);
      const reads = {
        paths: fx.info.slugs.map((s) => `/api/v1/toplists/by-slug/${s}`),
        headers: { authorization: `Bearer ${fx.info.siteToken}` },
      };
      const clicks = { paths: fx.info.goSlugs.map((s) => `/go/${s}`), headers };
      out.push(await compare(ctx, 'reads-with-clicks', fx, reads, undefined, clicks));
    }
    return out;
  },
};

/** `GET /api/postback/{program}/{token}?transaction_id=…`: every id twice, exactly one conversion each. */
export const postbacks: Scenario = {
  name: 'postbacks',
  about: 'GET postbacks with distinct transaction ids (each sent twice); exactly-once check',
  async run(ctx) {
    const out = [];
    for (const db of ctx.writeDbs) {
      const fx = await ctx.fixture('demo', db);
      const spec = {
        paths: [`${fx.info.postbackPath}?event=ftd&amount=10.00&currency=EUR`],
        headers,
        transactionIds: { prefix: `B${Date.now().toString(36)}x` },
      };
      const line = await compare(ctx, 'postbacks', fx, spec, undefined);
      const c = await fx.count();
      out.push({
        ...line,
        conversions: c.conversions,
        accepted_transaction_ids: c.accepted_ids,
        undecided_log_rows: c.undecided,
        exactly_once: c.conversions === c.accepted_ids && c.undecided === 0,
        goal_per_s: db === 'postgres' ? 3000 : null,
      });
    }
    return out;
  },
};

/**
 * Click redirect benchmark: Podium's durable `/go` (a 302 only after the click row is committed)
 * against a bare node:http server answering the same 302, in the same run, on PGlite and — when
 * DATABASE_URL is set — on PostgreSQL. Every run sends a fixed number of requests so the clicks
 * recorded can be checked against the 302s answered. Then postbacks: each transaction id is sent
 * twice, concurrently, and exactly one conversion per id must exist afterwards.
 * Run: npm run bench go   (BENCH_GO_CLICKS, BENCH_GO_POSTBACKS, BENCH_GO_CONNECTIONS tune it)
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import autocannon from 'autocannon';
import { child as fork, reply, stop } from './children.ts';

const SERVER = join(import.meta.dirname, 'go-server.ts');
const CLICKS = Number(process.env.BENCH_GO_CLICKS ?? 20_000);
const POSTBACKS = Number(process.env.BENCH_GO_POSTBACKS ?? 10_000);
const CONNECTIONS = Number(process.env.BENCH_GO_CONNECTIONS ?? 50);
const UA = 'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 Chrome/120.0 Safari/537.36';
const TARGET_RATIO = 0.5;
const TARGET_POSTBACKS_PER_S = 2000;

interface Measured {
  requests: number;
  rps: number;
  p50_ms: number;
  p99_ms: number;
  by_status: Record<string, number>;
  errors: number;
}

async function load(opts: autocannon.Options): Promise<Measured> {
  const r = await autocannon({ connections: CONNECTIONS, headers: { 'user-agent': UA }, ...opts });
  const byStatus = Object.fromEntries(
    Object.entries(r.statusCodeStats ?? {}).map(([code, s]) => [code, s.count ?? 0]),
  );
  const answered = Object.values(byStatus).reduce((a, b) => a + b, 0);
  return {
    requests: answered,
    rps: Math.round(answered / Math.max(0.001, r.duration)),
    p50_ms: r.latency.p50,
    p99_ms: r.latency.p99,
    by_status: byStatus,
    errors: r.errors + r.timeouts,
  };
}

/** One database kind: seeds, measures bare vs Podium redirects, then postbacks. */
async function measure(env: NodeJS.ProcessEnv, log: (m: string) => void) {
  const child = (mode: string) => fork(SERVER, mode, env);
  const built = await reply<{ slug: string; postbackPath: string }>(child('build'), 'built');
  const podium = child('podium');
  const podiumUrl = (await reply<{ url: string }>(podium, 'ready')).url;
  const bare = child('bare');
  const bareUrl = (await reply<{ url: string }>(bare, 'ready')).url;
  const go = `/go/${built.slug}`;
  try {
    await load({ url: `${podiumUrl}${go}`, amount: 2000 }); // warm-up: JIT, link cache, pool
    await load({ url: `${bareUrl}${go}`, amount: 2000 });
    const before = await reply<{ clicks: number }>(podium, 'counted', { cmd: 'count' });
    const b = await load({ url: `${bareUrl}${go}`, amount: CLICKS });
    const p = await load({ url: `${podiumUrl}${go}`, amount: CLICKS });
    const after = await reply<{ clicks: number; conversions: number }>(podium, 'counted', { cmd: 'count' });
    const recorded = after.clicks - before.clicks;
    const answered302 = p.by_status['302'] ?? 0;
    const ratio = Math.round((p.rps / Math.max(1, b.rps)) * 100) / 100;
    log(`bench go: podium ${p.rps} rps (p99 ${p.p99_ms} ms) vs bare ${b.rps} rps, ratio ${ratio}`);

    let seq = 0;
    const pb = await load({
      url: podiumUrl,
      amount: POSTBACKS,
      requests: [
        {
          method: 'GET',
          // Each transaction id twice in a row: the pair is in flight at once on different connections.
          setupRequest: (req) => {
            const tx = Math.floor(seq++ / 2);
            return { ...req, path: `${built.postbackPath}?transaction_id=B-${tx}&event=ftd&amount=10.00` };
          },
        },
      ],
    });
    const counted = await reply<{ conversions: number }>(podium, 'counted', { cmd: 'count' });
    const distinct = Math.ceil(POSTBACKS / 2);
    log(`bench go: postbacks ${pb.rps}/s, ${counted.conversions} conversions for ${distinct} ids`);
    return {
      redirect: {
        podium: p,
        bare: b,
        ratio_rps: ratio,
        target_ratio: TARGET_RATIO,
        meets_target: ratio >= TARGET_RATIO,
        clicks_recorded: recorded,
        redirects_answered: answered302,
        clicks_recorded_equal_302s: recorded === answered302,
      },
      postbacks: {
        ...pb,
        accepted: pb.by_status['200'] ?? 0,
        distinct_transaction_ids: distinct,
        conversions: counted.conversions,
        exactly_once: counted.conversions === distinct && (pb.by_status['200'] ?? 0) === POSTBACKS,
        target_per_s: TARGET_POSTBACKS_PER_S,
        meets_target: pb.rps >= TARGET_POSTBACKS_PER_S,
      },
    };
  } finally {
    await stop(bare);
    await stop(podium);
  }
}

/** Runs the /go and postback benchmark on PGlite, and on PostgreSQL when DATABASE_URL is set. */
export async function run(log: (m: string) => void = () => {}): Promise<Record<string, unknown>> {
  const dir = mkdtempSync(join(tmpdir(), 'podium-bench-go-'));
  const { DATABASE_URL, ...rest } = process.env;
  try {
    const out: Record<string, unknown> = {
      benchmark: 'go',
      connections: CONNECTIONS,
      clicks_per_run: CLICKS,
      postbacks_per_run: POSTBACKS,
    };
    log('bench go: PGlite');
    out.pglite = await measure({ ...rest, BENCH_DATA_DIR: join(dir, 'db') }, log);
    if (DATABASE_URL) {
      log('bench go: PostgreSQL');
      out.postgres = await measure({ ...rest, DATABASE_URL }, log);
    } else {
      out.postgres = 'skipped: set DATABASE_URL to measure on PostgreSQL';
    }
    return out;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

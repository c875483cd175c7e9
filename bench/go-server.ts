/**
 * Child processes of `bench/go.ts`: `build` seeds a fresh database with one published toplist,
 * a programme and its tracking links; `podium` serves /go and postbacks from it and counts the
 * rows written; `bare` is a plain node:http server answering the same 302 (a fresh ULID in the
 * same Location) with nothing recorded.
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { ulid } from 'ulid';
import { trackingFixture } from '../test/tracking-fixture.ts';
import { closeBench, freshBench, openBench } from './bench-db.ts';

const SCHEMA = 'bench_go';
const send = (m: Record<string, unknown>) => process.send?.(m);

/** Mode `build`: the dataset; answers the click slug and the postback path. */
async function build() {
  const opened = await freshBench(SCHEMA);
  const { db, app } = opened;
  const fx = await trackingFixture(app.services, db);
  const program = await app.services.tracking.createProgram({
    slug: 'bench',
    name: 'Bench Partners',
    affiliateId: 'aff42',
    landingParams: 'btag={affiliate_id}_{click_id}',
    trackerIds: fx.trackerIds,
  });
  await closeBench(opened, SCHEMA, false);
  send({ built: true, slug: fx.slugs[0], postbackPath: `/api/postback/bench/${program.postbackToken}` });
}

/** Mode `podium`: serves the app; on `count` answers the clicks and conversions written. */
async function podium() {
  const opened = await openBench(SCHEMA);
  const { db, app } = opened;
  await app.listen({ host: '127.0.0.1', port: 0 });
  send({ ready: true, url: `http://127.0.0.1:${(app.server.address() as AddressInfo).port}` });
  process.on('message', async (m: { cmd: string }) => {
    if (m.cmd === 'count') {
      const [r] = await db.query<{ clicks: number; conversions: number }>(
        `SELECT (SELECT count(*)::int FROM clicks WHERE kind = 'click') AS clicks,
                (SELECT count(*)::int FROM conversions) AS conversions`,
      );
      send({ counted: true, ...r });
    }
    if (m.cmd === 'stop') {
      await closeBench(opened, SCHEMA, true);
      process.exit(0);
    }
  });
}

/** Mode `bare`: the same redirect with the same headers, nothing written anywhere. */
async function bare() {
  const server = createServer((_req, res) => {
    res.writeHead(302, {
      location: `https://operator.example/land?lang=en&btag=aff42_${ulid()}`,
      'cache-control': 'no-store',
      'referrer-policy': 'no-referrer-when-downgrade',
      'content-length': 0,
    });
    res.end();
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  send({ ready: true, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}` });
  process.on('message', (m: { cmd: string }) => {
    if (m.cmd === 'stop') process.exit(0);
  });
}

const modes: Record<string, () => Promise<void>> = { build, podium, bare };
const mode = modes[process.argv[2] ?? ''];
if (!mode) throw new Error(`unknown mode ${process.argv[2]}`);
mode().catch((err) => {
  process.stderr.write(`${(err as Error).stack}\n`);
  process.exit(1);
});

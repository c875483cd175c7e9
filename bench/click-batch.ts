/**
 * The click batch's statement alone, on PGlite in a data directory on disk (as `podium start` runs
 * it): `TrackingRepository.insertClicks` at several batch sizes, in a child pinned to the server
 * core, with no HTTP around it. Prints the CPU per click at each size and a straight-line fit of
 * the CPU per statement, `fixed_us_per_statement + us_per_row × rows`: what a batch costs whatever
 * its size (protocol, commit, flush) and what each click adds (JSON, heap, indexes, rollups).
 * `/go` through HTTP moves ±10 % between runs on this machine; this moves ~±3 %, so it can tell a
 * change to the statement worth 2–3 µs a click (bench/README.md, session 19).
 *
 * Run: npm run bench -- click-batch   (BENCH_CLICK_BATCH_ROWS: clicks per size and pass, default 20 000)
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { openDb } from '../src/db/index.ts';
import { migrate } from '../src/db/migrate.ts';
import { ulid } from '../src/lib/ids.ts';
import { TrackingRepository } from '../src/modules/tracking/repository.ts';
import { RollupZoneRepository } from '../src/modules/tracking/rollup-zone-repository.ts';
import { RollupZones } from '../src/modules/tracking/rollup-zones.ts';
import type { ClickRow } from '../src/modules/tracking/types.ts';
import { pinnedChild, reply, stop } from './lib/children.ts';

const SIZES = [1, 10, 50, 200];
/** The `/go` scenario's links: 20, so a batch of 50 holds 20 rollup keys. */
const LINKS = 20;
const WARM_STATEMENTS = 20;

/** One batch size's figures, summed over both passes. */
export interface SizeFigures {
  rows: number;
  statements: number;
  cpu_us_per_row: number;
  wall_us_per_row: number;
}

/** Runs the measurement in a pinned child and returns its JSON line. */
export async function run(dir: string, log: (m: string) => void): Promise<Record<string, unknown>> {
  const child = pinnedChild(
    fileURLToPath(import.meta.url),
    ['child'],
    process.env,
    join(dir, 'click-batch.log'),
  );
  try {
    log('click-batch: measuring insertClicks on PGlite (a few minutes)');
    const { result } = await reply<{ result: Record<string, unknown> }>(child, 'result', { cmd: 'run' });
    return result;
  } finally {
    await stop(child);
  }
}

let seq = 0;
/** A batch like the `/go` scenario's: the links in turn, each with its own brand and position. */
function batch(size: number): ClickRow[] {
  const at = new Date();
  return Array.from({ length: size }, () => {
    const link = (seq++ % LINKS) + 1;
    return {
      id: ulid(),
      kind: 'click',
      at,
      linkId: link,
      trackerId: link,
      offerId: link,
      brandId: link,
      siteId: 1,
      toplistId: 1,
      position: ((link - 1) % 10) + 1,
      programId: ((link - 1) % 5) + 1,
      subId: null,
      referrer: 'https://casinoguide.example/best-casinos/',
      userAgent:
        'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0 Safari/537.36',
      country: 'GB',
      flag: null,
    };
  });
}

/** Least-squares line through (rows, CPU µs per statement). */
export function lineThrough(sizes: readonly SizeFigures[]): { fixed: number; perRow: number } {
  const xs = sizes.map((s) => s.rows);
  const ys = sizes.map((s) => s.cpu_us_per_row * s.rows);
  const mx = xs.reduce((a, b) => a + b, 0) / xs.length;
  const my = ys.reduce((a, b) => a + b, 0) / ys.length;
  let num = 0;
  let den = 0;
  for (let i = 0; i < xs.length; i++) {
    num += (xs[i]! - mx) * (ys[i]! - my);
    den += (xs[i]! - mx) ** 2;
  }
  const perRow = num / den;
  return { fixed: my - perRow * mx, perRow };
}

async function measure(): Promise<Record<string, unknown>> {
  const rowsPerSize = Number(process.env.BENCH_CLICK_BATCH_ROWS ?? 20_000);
  const dataDir = mkdtempSync(join(tmpdir(), 'podium-click-batch-'));
  const db = await openDb({ dataDir });
  try {
    await migrate(db);
    // The state a running server keeps: the zones built and folded to the last quarter hour, so a
    // batch adds to the 15-minute rollups only (late clicks aside).
    await new RollupZones(new RollupZoneRepository(db)).sync();
    const repo = new TrackingRepository(db);
    const totals = new Map(SIZES.map((rows) => [rows, { statements: 0, cpu: 0, wall: 0 }]));
    // Sizes forward, then backward: the table grows as it is measured, and each size sees both ends.
    for (const order of [SIZES, [...SIZES].reverse()]) {
      for (const rows of order) {
        for (let i = 0; i < WARM_STATEMENTS; i++) await repo.insertClicks(batch(rows));
        const statements = Math.ceil(rowsPerSize / rows);
        const cpu = process.cpuUsage();
        const wall = performance.now();
        for (let i = 0; i < statements; i++) await repo.insertClicks(batch(rows));
        const used = process.cpuUsage(cpu);
        const t = totals.get(rows)!;
        t.statements += statements;
        t.cpu += used.user + used.system;
        t.wall += (performance.now() - wall) * 1000;
      }
    }
    const sizes: SizeFigures[] = SIZES.map((rows) => {
      const t = totals.get(rows)!;
      const n = t.statements * rows;
      return {
        rows,
        statements: t.statements,
        cpu_us_per_row: Math.round((t.cpu / n) * 10) / 10,
        wall_us_per_row: Math.round((t.wall / n) * 10) / 10,
      };
    });
    const line = lineThrough(sizes);
    return {
      scenario: 'click-batch',
      db: 'pglite',
      links: LINKS,
      sizes,
      fixed_us_per_statement: Math.round(line.fixed),
      us_per_row: Math.round(line.perRow * 10) / 10,
    };
  } finally {
    await db.close();
    rmSync(dataDir, { recursive: true, force: true });
  }
}

if (process.argv[2] === 'child') {
  process.on('message', (m: { cmd?: string }) => {
    if (m.cmd === 'run')
      measure().then(
        (result) => process.send?.({ result }),
        (err) => {
          process.stderr.write(`${(err as Error).stack}\n`);
          process.exit(1);
        },
      );
    if (m.cmd === 'stop') process.exit(0);
  });
}

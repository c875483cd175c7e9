/**
 * The click batch's statement alone, on PGlite in a data directory on disk (as `podium start` runs
 * it): `TrackingRepository.insertClicks` at several batch sizes, in a child pinned to the server
 * core, with no HTTP around it. Every batch holds the `/go` scenario's 20 links, so every size
 * upserts the same 20 rollup keys (`BENCH_CLICK_BATCH_LINKS=1`: one key; the difference is what
 * each key's upsert costs) and the line through the CPU per statement,
 * `fixed_us_per_statement + us_per_row × rows`, splits what a batch costs whatever its size
 * (protocol, commit, flush, the 20 upserts) from what each click adds (JSON, heap row, indexes,
 * log). A single click's statement is measured beside it (`one_click_us`), and a 50-click statement
 * taken apart (`parts_at_50`, see `measureParts`). Run it alone (other
 * scenarios' servers would share the core) and alternate builds, several runs each
 * (bench/README.md, session 19).
 *
 * Run: npm run bench -- click-batch   (BENCH_CLICK_BATCH_ROWS: clicks per size and pass, default 20 000)
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { type Db, openDb } from '../src/db/index.ts';
import { migrate } from '../src/db/migrate.ts';
import { ulid } from '../src/lib/ids.ts';
import { RollupZoneRepository } from '../src/modules/reporting/rollup-zone-repository.ts';
import { RollupZones } from '../src/modules/reporting/rollup-zones.ts';
import { clickRows, clickRowsParam, TrackingRepository } from '../src/modules/tracking/repository.ts';
import type { ClickRow } from '../src/modules/tracking/types.ts';
import { pinnedChild, reply, stop } from './lib/children.ts';

/**
 * Links a batch's clicks go to in turn, each its own rollup key: the `/go` scenario's 20 by
 * default, so each batch of the sizes below holds all of them (`BENCH_CLICK_BATCH_LINKS`, at most
 * 20: 1 measures the statement with a single key).
 */
const LINKS = Math.min(20, Math.max(1, Number(process.env.BENCH_CLICK_BATCH_LINKS ?? 20) || 20));
const SIZES = [20, 50, 100, 200];
const ONE_CLICK_STATEMENTS = 2_000;
const WARM_STATEMENTS = 20;
const PART_ROWS = 50;
const PART_ROUNDS = 60;
const PART_STATEMENTS = 20;

/** One batch size's figures, summed over both passes. */
export interface SizeFigures {
  rows: number;
  statements: number;
  /** CPU µs of all statements of this size (both passes), unrounded: what the line is fit to. */
  cpuUs: number;
  wallUs: number;
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
  const ys = sizes.map((s) => s.cpuUs / s.statements);
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

const round1 = (x: number) => Math.round(x * 10) / 10;

/** A statement run on one batch of clicks. */
type Step = (rows: ClickRow[]) => Promise<unknown>;

/** CPU and wall µs of `statements` runs of `step` on `rows` clicks each, the batches built beforehand. */
async function timed(step: Step, rows: number, statements: number) {
  const batches = Array.from({ length: statements }, () => batch(rows));
  const cpu = process.cpuUsage();
  const wall = performance.now();
  for (const b of batches) await step(b);
  const used = process.cpuUsage(cpu);
  return { cpu: used.user + used.system, wall: (performance.now() - wall) * 1000 };
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
    const insert: Step = (rows) => repo.insertClicks(rows);
    const totals = new Map(SIZES.map((rows) => [rows, { rows, statements: 0, cpuUs: 0, wallUs: 0 }]));
    // Sizes forward, then backward: the table grows as it is measured, and each size sees both ends.
    for (const order of [SIZES, [...SIZES].reverse()]) {
      for (const rows of order) {
        await timed(insert, rows, WARM_STATEMENTS);
        const statements = Math.ceil(rowsPerSize / rows);
        const t = await timed(insert, rows, statements);
        const sum = totals.get(rows)!;
        sum.statements += statements;
        sum.cpuUs += t.cpu;
        sum.wallUs += t.wall;
      }
    }
    await timed(insert, 1, WARM_STATEMENTS);
    const one = await timed(insert, 1, ONE_CLICK_STATEMENTS);
    const parts = await measureParts(db, insert);
    const sizes = [...totals.values()];
    const line = lineThrough(sizes);
    const perStatement = (s: SizeFigures) => s.cpuUs / s.statements;
    return {
      scenario: 'click-batch',
      db: 'pglite',
      links: LINKS,
      sizes: sizes.map((s) => ({
        rows: s.rows,
        statements: s.statements,
        cpu_us_per_row: round1(s.cpuUs / (s.statements * s.rows)),
        wall_us_per_row: round1(s.wallUs / (s.statements * s.rows)),
        // How far this size's statement is from the line (a bend means the split is not linear).
        residual_us: Math.round(perStatement(s) - (line.fixed + line.perRow * s.rows)),
      })),
      fixed_us_per_statement: Math.round(line.fixed),
      us_per_row: round1(line.perRow),
      one_click_us: Math.round(one.cpu / ONE_CLICK_STATEMENTS),
      parts_at_50: parts,
    };
  } finally {
    await db.close();
    rmSync(dataDir, { recursive: true, force: true });
  }
}

/**
 * A 50-click statement taken apart: CPU µs a statement of five statements that each do a little
 * more — a round trip (`SELECT 1`), a one-row insert and its commit, the batch's rows written from
 * its JSON parameter (built in JavaScript, bound, parsed, stored, logged) into a table with the
 * clicks' columns and checks but no partitions or indexes, the same into `clicks` (partition,
 * primary key, BRIN), and the whole batch statement — and what each step adds. The five run in
 * turn, 20 statements at a time over 60 rounds, so a slow phase of the machine weighs on each alike.
 */
async function measureParts(db: Db, insert: Step): Promise<Record<string, unknown>> {
  await db.exec(
    'CREATE TABLE bench_one (a int); CREATE TABLE bench_rows (LIKE clicks INCLUDING CONSTRAINTS)',
  );
  // clickRows yields the clicks columns in table order, which bench_rows copies.
  const into = (table: string) => `INSERT INTO ${table} ${clickRows(1)}`;
  const steps: [string, Step][] = [
    ['round_trip', () => db.query('SELECT 1', [], 'bench_round_trip')],
    ['one_row_commit', () => db.query('INSERT INTO bench_one VALUES (1)', [], 'bench_one_row')],
    ['rows_unindexed', (rows) => db.query(into('bench_rows'), [clickRowsParam(rows)], 'bench_rows')],
    ['clicks', (rows) => db.query(into('clicks'), [clickRowsParam(rows)], 'bench_clicks')],
    ['whole_batch', insert],
  ];
  const cpu = new Map(steps.map(([name]) => [name, 0]));
  for (const [, step] of steps) await timed(step, PART_ROWS, WARM_STATEMENTS);
  for (let round = 0; round < PART_ROUNDS; round++) {
    for (const [name, step] of round % 2 ? steps : [...steps].reverse()) {
      const t = await timed(step, PART_ROWS, PART_STATEMENTS);
      cpu.set(name, cpu.get(name)! + t.cpu);
    }
  }
  const us = (name: string) => Math.round(cpu.get(name)! / (PART_ROUNDS * PART_STATEMENTS));
  return {
    rows: PART_ROWS,
    us_per_statement: Object.fromEntries(steps.map(([name]) => [name, us(name)])),
    // What each step adds (a step's CPU less the one before it): the rows and the clicks table a
    // click, the rest a statement.
    commit_us: us('one_row_commit') - us('round_trip'),
    rows_us_per_click: round1((us('rows_unindexed') - us('one_row_commit')) / PART_ROWS),
    clicks_table_us_per_click: round1((us('clicks') - us('rows_unindexed')) / PART_ROWS),
    rollups_us: us('whole_batch') - us('clicks'),
  };
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

import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openDb } from '../src/db/index.ts';
import { OutboundClient } from '../src/lib/outbound.ts';
import { sealerFromConfig } from '../src/lib/seal.ts';
import { AggregateRepository } from '../src/modules/reporting/aggregate-repository.ts';
import { OperatorAggregates } from '../src/modules/reporting/aggregates.ts';
import { podium } from './podium-cli.ts';

/**
 * `podium pull-aggregates` on a private embedded database: the programme's report URL points at
 * a loopback address, which the real outbound client refuses, so every day is a failed pull
 * with its reason, reported line by line.
 */
describe('podium pull-aggregates', { timeout: 180_000 }, () => {
  let dir: string;
  let dataDir: string;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'podium-cli-agg-'));
    dataDir = join(dir, 'db');
    const created = await podium(dataDir, 'program', 'create', '--slug', 'op', '--name', 'Operator');
    expect(created.code, created.stderr).toBe(0);
    const db = await openDb({ dataDir });
    // Stored through a client that lets loopback through; the CLI's own client will not.
    const http = new OutboundClient({ testOnly: { allowAddresses: ['127.0.0.1'] } });
    const sealer = sealerFromConfig({ secretKeys: undefined, databaseUrl: undefined, dataDir });
    const aggregates = new OperatorAggregates(
      new AggregateRepository(db),
      sealer,
      http,
      {
        aggregateWindowDays: 7,
        reconcileThresholdPercent: 5,
      },
      () => new Date(),
    );
    await aggregates.setReport(1, { url: 'https://127.0.0.1:9/reports', key: 'cli-report-key-123' });
    await http.close();
    await db.close();
  }, 240_000);
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  /** `podium pull-aggregates` for a programme and a day range. */
  const pull = (program: string, from: string, to: string) =>
    podium(dataDir, 'pull-aggregates', '--program', program, '--from', from, '--to', to);

  it('pulls day by day with a progress line each, and exits 1 when days failed', async () => {
    const r = await pull('op', '2026-11-01', '2026-11-03');
    expect(r.code).toBe(1);
    const lines = r.stderr
      .trim()
      .split('\n')
      .filter((l) => l.startsWith('['));
    expect(lines).toHaveLength(3);
    expect(lines[0]).toMatch(
      /^\[#{7}-{13}\] 1\/3 2026-11-01 failed: report URL host 127\.0\.0\.1 is not a public address/,
    );
    expect(lines[2]).toMatch(/^\[#{20}\] 3\/3 2026-11-03 failed: /);
    expect(JSON.parse(r.stdout)).toEqual({ days: 3, ok: 0, failed: 3 });
    expect(r.stderr + r.stdout).not.toContain('cli-report-key-123');
  });

  it('names what is wrong with its arguments', async () => {
    const unknown = await pull('nope', '2026-11-01', '2026-11-01');
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toMatch(/Program not found/);
    const bad = await pull('op', '2026-13-01', '2026-11-01');
    expect(bad.code).toBe(1);
    expect(bad.stderr).toMatch(/from: must be a date/);
    const missing = await podium(dataDir, 'pull-aggregates', '--program', 'op');
    expect(missing.code).toBe(1);
    expect(missing.stderr).toMatch(/--from/);
  });
});

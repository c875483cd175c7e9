import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openDb } from '../src/db/index.ts';
import { servicesOn } from './helpers.ts';
import { podium, podiumWithInput } from './podium-cli.ts';

const ALICE = 'alice-cli-5Rt81';
const BOB = 'bob-cli-9Wq27';

/**
 * `podium player-data export|erase` on a private embedded database: the player id comes on
 * standard input, the answer is JSON, and each run leaves an audit row without the id.
 */
describe('podium player-data', { timeout: 180_000 }, () => {
  let dir: string;
  let dataDir: string;

  /** Rows of `sql` in the data directory, read while no command holds it. */
  const rows = async (sql: string, params: unknown[] = []) => {
    const db = await openDb({ dataDir });
    try {
      return await db.query<Record<string, unknown>>(sql, params);
    } finally {
      await db.close();
    }
  };

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'podium-cli-player-'));
    dataDir = join(dir, 'db');
    const created = await podium(dataDir, 'program', 'create', '--slug', 'casino', '--name', 'Casino');
    expect(created.code, created.stderr).toBe(0);
    const { postbackToken } = JSON.parse(created.stdout) as { postbackToken: string };
    const db = await openDb({ dataDir });
    const services = await servicesOn(db);
    for (const [player, tx] of [
      [ALICE, 'a1'],
      [BOB, 'b1'],
    ] as const)
      await services.tracking.postback({
        program: 'casino',
        token: postbackToken,
        method: 'GET',
        contentType: undefined,
        query: { event: 'ftd', transaction_id: tx, amount: '25.00', player_id: player },
        body: '',
        remoteIp: '127.0.0.1',
      });
    await services.close();
    await db.close();
  }, 240_000);
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('exports and erases the player read from standard input, and audits both without the id', async () => {
    const exported = await podiumWithInput(dataDir, `${ALICE}\n`, 'player-data', 'export');
    expect(exported.code, exported.stderr).toBe(0);
    const page = JSON.parse(exported.stdout);
    expect(page.meta).toMatchObject({ conversions_total: 1, postbacks_total: 1 });
    expect(page.data.conversions[0]).toMatchObject({ transactionId: 'a1', amount: '25.0000' });

    const erased = await podiumWithInput(dataDir, `${ALICE}\n`, 'player-data', 'erase', '--program', '1');
    expect(erased.code, erased.stderr).toBe(0);
    expect(JSON.parse(erased.stdout)).toEqual({ conversions: 1, postbacks: 1, outcomes: 1 });
    expect(erased.stderr).toContain('erased 1 conversion(s), 1 postback log row(s), 1 outcome(s)');

    const left = await rows(
      `SELECT (SELECT count(*)::int FROM conversions) AS conversions,
              (SELECT count(*)::int FROM postback_log) AS logs,
              (SELECT sum(n)::int FROM conversion_rollups) AS counted`,
    );
    expect(left).toEqual([{ conversions: 1, logs: 1, counted: 2 }]);
    const audit = await rows(
      "SELECT actor, action, target_id, fields, after FROM audit_log WHERE target_type = 'player-data' ORDER BY id",
    );
    expect(audit).toEqual([
      {
        actor: 'cli',
        action: 'podium player-data export',
        target_id: 'all',
        fields: ['player_id'],
        after: { page: 1, conversionsTotal: 1, postbacksTotal: 1 },
      },
      {
        actor: 'cli',
        action: 'podium player-data erase',
        target_id: '1',
        fields: ['player_id', 'program_id'],
        after: { conversions: 1, postbacks: 1, outcomes: 1 },
      },
    ]);
    expect(JSON.stringify(audit)).not.toContain(ALICE);
  });

  it('refuses a missing or malformed player id, naming it', async () => {
    const none = await podiumWithInput(dataDir, '', 'player-data', 'erase');
    expect(none.code).toBe(1);
    expect(none.stderr).toContain('standard input');
    const long = await podiumWithInput(dataDir, `${'x'.repeat(129)}\n`, 'player-data', 'erase');
    expect(long.code).toBe(1);
    expect(long.stderr).toContain('player_id: must be 1 to 128 printable characters');
    const perPage = await podiumWithInput(dataDir, `${BOB}\n`, 'player-data', 'export', '--per-page', '5000');
    expect(perPage.code).toBe(1);
    expect(perPage.stderr).toContain('per_page');
    expect(await rows('SELECT count(*)::int AS n FROM conversions')).toEqual([{ n: 1 }]);
  });
});

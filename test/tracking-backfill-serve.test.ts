import { afterAll, describe, expect, it } from 'vitest';
import { openDb } from '../src/db/index.ts';
import { DB_KIND, eventually, servicesOn } from './helpers.ts';
import { type ServedDb, serve, servedDb } from './serve-process.ts';

/**
 * A backfill requested over HTTP from a running `podium serve` (which holds the embedded database,
 * or shares PostgreSQL) is run by that server's own job runner: no second process opens the
 * database. The report URL names a loopback address, which the server's outbound client refuses,
 * so each day is a failed pull with its reason.
 */
describe(`a backfill requested from a running podium serve (${DB_KIND})`, { timeout: 120_000 }, () => {
  let served: ServedDb | undefined;
  let server: Awaited<ReturnType<typeof serve>> | undefined;
  afterAll(async () => {
    if (server && server.proc.exitCode === null) server.proc.kill('SIGKILL');
    await served?.remove();
  });

  it('completes, with its progress at GET …/report/backfills', async () => {
    served = await servedDb('podium-backfill');
    const { db, env, dir } = served;
    delete env.PODIUM_SECRET_KEYS;
    const services = await servicesOn(db);
    const admin = await services.access.createAdminToken('backfill-test', ['admin'], null);
    const program = await services.tracking.createProgram({ slug: 'op', name: 'Operator' });
    // Written directly: the admin API (rightly) refuses a loopback report URL.
    await db.query('UPDATE affiliate_programs SET report_url = $2 WHERE id = $1', [
      program.id,
      'https://127.0.0.1:9/reports',
    ]);
    await services.close();
    if (dir) await db.close();

    server = await serve(env);
    const base = `${server.url}/api/admin/v1/tracking/programs/${program.id}/report`;
    const headers = { authorization: `Bearer ${admin.token}`, 'content-type': 'application/json' };
    const queued = await fetch(`${base}/pull`, {
      method: 'POST',
      headers,
      body: JSON.stringify({ from: '2026-11-01', to: '2026-11-02' }),
    });
    expect(queued.status).toBe(202);
    const { data } = (await queued.json()) as { data: { id: number; status: string } };
    let last: Record<string, unknown> | undefined;
    const ended = await eventually(async () => {
      const list = (await (await fetch(`${base}/backfills`, { headers })).json()) as {
        data: Record<string, unknown>[];
      };
      last = list.data.find((b) => b.id === data.id);
      return last?.status === 'done' || last?.status === 'failed';
    }, 60_000);
    expect(ended, JSON.stringify(last)).toBe(true);
    expect(last).toMatchObject({ status: 'failed', daysTotal: 2, daysDone: 2, daysFailed: 2 });
    expect(last?.error).toMatch(
      /^2 of 2 days failed; last 2026-11-02: report URL host 127\.0\.0\.1 is not a public address/,
    );

    server.proc.kill('SIGTERM');
    expect(await server.exit).toBe(0);
    const after = dir ? await openDb({ dataDir: dir }) : db;
    // The server's scheduled pull of the trailing days may run meanwhile; its rows are not the backfill's.
    try {
      const pulls = await after.query<{ day: string; trigger: string; status: string }>(
        `SELECT to_char(day, 'YYYY-MM-DD') AS day, trigger, status FROM aggregate_pulls
         WHERE program_id = $1 AND trigger = 'backfill' ORDER BY day`,
        [program.id],
      );
      expect(pulls).toEqual([
        { day: '2026-11-01', trigger: 'backfill', status: 'failed' },
        { day: '2026-11-02', trigger: 'backfill', status: 'failed' },
      ]);
    } finally {
      if (dir) await after.close();
    }
  });
});

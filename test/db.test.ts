import { once } from 'node:events';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ChangeBus } from '../src/db/changes.ts';
import { JsonParam } from '../src/db/index.ts';
import { listMigrations, migrate, pendingMigrations } from '../src/db/migrate.ts';
import { DB_KIND, type TestDb, testDb } from './helpers.ts';

describe(`database (${DB_KIND})`, () => {
  let t: TestDb;
  beforeAll(async () => {
    t = await testDb();
  });
  afterAll(() => t.close());

  it('applies every migration once and is idempotent', async () => {
    expect(await pendingMigrations(t.db)).toEqual([]);
    expect(await migrate(t.db)).toEqual([]);
    const rows = await t.db.query<{ version: string }>(
      'SELECT version FROM schema_migrations ORDER BY version',
    );
    expect(rows.map((r) => r.version)).toEqual(listMigrations().map((m) => m.version));
  });

  it('rolls a failed transaction back completely', async () => {
    await expect(
      t.db.tx(async (q) => {
        await q.query("INSERT INTO owners (name) VALUES ('half-written')");
        throw new Error('boom');
      }),
    ).rejects.toThrow('boom');
    const rows = await t.db.query("SELECT 1 FROM owners WHERE name = 'half-written'");
    expect(rows).toHaveLength(0);
  });

  it('returns numerics as exact strings and counts as numbers', async () => {
    const [row] = await t.db.query<{ n: string; c: number }>(
      'SELECT 1234567890.10::numeric(14,2) AS n, count(*) AS c FROM owners',
    );
    expect(row).toEqual({ n: '1234567890.10', c: 0 });
  });

  it('runs a named statement like a plain one, again and again, and recovers from its errors', async () => {
    const sql = 'SELECT $1::int + n AS total, $2::text[] AS tags FROM unnest($3::int[]) AS n ORDER BY n';
    const params = [10, ['a', 'b'], [1, 2]];
    const plain = await t.db.query(sql, params);
    expect(plain).toEqual([
      { total: 11, tags: ['a', 'b'] },
      { total: 12, tags: ['a', 'b'] },
    ]);
    for (let i = 0; i < 3; i++) expect(await t.db.query(sql, params, 'test_named_sum')).toEqual(plain);
    // A failing run leaves the statement and the connection usable.
    await expect(t.db.query(sql, ['x', [], []], 'test_named_sum')).rejects.toThrow(/integer/);
    expect(await t.db.query(sql, [1, null, [5]], 'test_named_sum')).toEqual([{ total: 6, tags: null }]);
    // Inside a transaction it is part of that transaction: rolled back with it.
    await expect(
      t.db.tx(async (q) => {
        await q.query('INSERT INTO owners (name) VALUES ($1)', ['named-in-tx'], 'test_named_owner');
        throw new Error('undo');
      }),
    ).rejects.toThrow('undo');
    expect(await t.db.query("SELECT 1 FROM owners WHERE name = 'named-in-tx'")).toEqual([]);
    await t.db.query('INSERT INTO owners (name) VALUES ($1)', ['named-outside'], 'test_named_owner');
    expect(await t.db.query("SELECT name FROM owners WHERE name = 'named-outside'")).toEqual([
      { name: 'named-outside' },
    ]);
    await t.db.query("DELETE FROM owners WHERE name = 'named-outside'");
  });

  it('sends a JSON parameter as JSON text, checked for unstorable text before it is serialised', async () => {
    const rows = [
      ['a"b\\c', 1, null, new Date('2026-11-25T10:00:00.123Z')],
      ['é ✓', 2, 'x', null],
    ];
    const sql = `SELECT e->>0 AS s, (e->>1)::int AS n, e->>2 AS t, (e->>3)::timestamptz AS at
                 FROM jsonb_array_elements($1::jsonb) AS e`;
    for (const name of [undefined, 'test_json_param'])
      expect(await t.db.query(sql, [new JsonParam(rows)], name)).toEqual([
        { s: 'a"b\\c', n: 1, t: null, at: new Date('2026-11-25T10:00:00.123Z') },
        { s: 'é ✓', n: 2, t: 'x', at: null },
      ]);
    // JSON would escape these into text the database refuses as a 500; the gate answers 422 first.
    for (const bad of ['nul\u0000', 'lone \ud800'])
      await expect(t.db.query(sql, [new JsonParam([[bad, 1, null, null]])])).rejects.toMatchObject({
        code: 'validation_failed',
      });
  });

  it('answers HTTP requests between the statements of a long chain, in a transaction too', async () => {
    // PGlite runs statements on this thread: a chain that never yielded held every request
    // that arrived meanwhile until its last statement (a minute's jobs: 30 ms turns under load).
    const server = http.createServer((_req, res) => res.end('ok'));
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/`;
    try {
      for (const inTx of [false, true]) {
        let done = false;
        const statements = async (q: Pick<typeof t.db, 'query'>) => {
          for (let i = 0; i < 400; i++) await q.query('SELECT $1::int AS i', [i]);
        };
        const chain = (inTx ? t.db.tx(statements) : statements(t.db)).then(() => {
          done = true;
        });
        const res = await fetch(url);
        expect(await res.text()).toBe('ok');
        const answeredDuringChain = !done;
        await chain;
        expect(answeredDuringChain).toBe(true);
      }
    } finally {
      server.close();
    }
  });

  it('delivers change notifications to this process at once and through NOTIFY', async () => {
    const bus = new ChangeBus(t.db);
    await bus.start();
    // On PostgreSQL the channel is shared by every test file, whose changes name sites 1, 2, …:
    // this one names a site no other file has, and only its own notifications are counted.
    const siteId = 2_000_000_000 + Math.floor(Math.random() * 100_000_000);
    const seen: unknown[] = [];
    bus.subscribe((c) => {
      if (c.kind === 'site' && c.siteId === siteId) seen.push(c);
    });
    const published = bus.publish({ kind: 'site', siteId });
    expect(seen).toEqual([{ kind: 'site', siteId }]);
    await published;
    // The NOTIFY round trip brings it back a second time (other processes see it this way).
    await expect
      .poll(() => seen, { timeout: 5000 })
      .toEqual([
        { kind: 'site', siteId },
        { kind: 'site', siteId },
      ]);
    await bus.stop();
  });
});

import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CopyMismatchError, copyToPostgres } from '../src/db/copy.ts';
import { openDb } from '../src/db/index.ts';
import { migrate } from '../src/db/migrate.ts';
import { httpRequest } from './helpers.ts';
import { serve } from './serve-process.ts';

const run = promisify(execFile);
const BIN = join(import.meta.dirname, '..', 'bin', 'podium-dev.js');
// The copy always lands on a real server: the one CI's PostgreSQL pass uses, or the local default.
const SERVER = process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
const PUBLIC_URL = 'https://podium.example';
const HOST = 'podium.example';

/** The environment of every process here: no shared database, no configured keys, one public address. */
function baseEnv(extra: NodeJS.ProcessEnv = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    LOG_LEVEL: 'silent',
    PODIUM_PUBLIC_URL: PUBLIC_URL,
    ...extra,
  };
  if (!extra.DATABASE_URL) delete env.DATABASE_URL;
  delete env.PODIUM_SECRET_KEYS;
  return env;
}

/** Runs the real `podium` command; resolves with its exit code and output. */
async function podium(args: string[], env: NodeJS.ProcessEnv) {
  try {
    const r = await run(process.execPath, [BIN, ...args], { env, timeout: 220_000 });
    return { code: 0, stdout: r.stdout, stderr: r.stderr };
  } catch (e) {
    const x = e as { code: number; stdout: string; stderr: string };
    return { code: x.code, stdout: x.stdout, stderr: x.stderr };
  }
}

function databaseUrl(name: string): string {
  const url = new URL(SERVER);
  url.pathname = `/${name}`;
  url.search = '';
  return url.toString();
}

async function onServer<T>(url: string, fn: (c: pg.Client) => Promise<T>): Promise<T> {
  const c = new pg.Client({ connectionString: url });
  await c.connect();
  try {
    return await fn(c);
  } finally {
    await c.end();
  }
}

/** One recorded answer of the toplist API. */
interface Answer {
  status: number;
  etag: string | undefined;
  body: string;
}

/** Every toplist page, every toplist by slug and every brand page of each site, as served. */
async function snapshot(base: string, tokens: string[]): Promise<Map<string, Answer>> {
  const answers = new Map<string, Answer>();
  const get = async (token: string, path: string) => {
    const r = await httpRequest(base, path, { authorization: `Bearer ${token}`, host: HOST });
    const a = {
      status: r.status,
      etag: r.headers.etag as string | undefined,
      body: r.body.toString('latin1'),
    };
    answers.set(`${token.slice(0, 12)} ${path}`, a);
    return JSON.parse(r.body.toString('utf8')) as { data: { slug: string }[]; meta: { last_page: number } };
  };
  for (const token of tokens) {
    const slugs: string[] = [];
    for (let page = 1, last = 1; page <= last; page++) {
      const doc = await get(token, `/api/v1/toplists?per_page=100&page=${page}`);
      last = doc.meta.last_page;
      slugs.push(...doc.data.map((t) => t.slug));
    }
    for (const slug of slugs) await get(token, `/api/v1/toplists/by-slug/${encodeURIComponent(slug)}`);
    for (let page = 1, last = 1; page <= last; page++) {
      last = (await get(token, `/api/v1/brands?per_page=25&page=${page}`)).meta.last_page;
    }
  }
  return answers;
}

describe('podium copy-to-postgres', { timeout: 300_000 }, () => {
  let dir: string;
  let dataDir: string;
  let tokens: string[];
  let before: Map<string, Answer>;
  let lockedRun: Awaited<ReturnType<typeof podium>>;
  const databases: string[] = [];
  const stamp = `${process.pid}_${Date.now()}`;

  async function createDatabase(suffix: string): Promise<string> {
    const name = `podium_copy_${stamp}_${suffix}`;
    await onServer(SERVER, (c) => c.query(`CREATE DATABASE ${name}`));
    databases.push(name);
    return databaseUrl(name);
  }

  const copy = (url: string, ...args: string[]) =>
    podium(['copy-to-postgres', '--data-dir', dataDir, '--database-url', url, ...args], baseEnv());

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'podium-copy-'));
    dataDir = join(dir, 'data');
    const demo = await podium(['demo', '--json', '--data-dir', dataDir], baseEnv());
    expect(demo.code, demo.stderr).toBe(0);
    tokens = (JSON.parse(demo.stdout) as { siteTokens: { token: string }[] }).siteTokens.map((s) => s.token);
    const server = await serve(baseEnv({ LOG_LEVEL: 'info', PODIUM_DATA_DIR: dataDir }));
    try {
      before = await snapshot(server.url, tokens);
      // While the server holds the data directory, the copy is refused.
      lockedRun = await copy(databaseUrl('postgres'));
    } finally {
      server.proc.kill('SIGTERM');
      await server.exit;
    }
  }, 300_000);

  afterAll(async () => {
    rmSync(dir, { recursive: true, force: true });
    await onServer(SERVER, async (c) => {
      for (const name of databases) await c.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
    });
  });

  it('refuses a data directory a running server holds', () => {
    expect(lockedRun.code).toBe(1);
    expect(lockedRun.stderr).toContain(`${dataDir} is in use by another process: stop the server`);
  });

  it('refuses a directory without an embedded database, and a missing target', async () => {
    const empty = await podium(
      ['copy-to-postgres', '--data-dir', join(dir, 'nothing'), '--database-url', databaseUrl('postgres')],
      baseEnv(),
    );
    expect(empty.code).toBe(1);
    expect(empty.stderr).toContain('holds no embedded database');
    const noTarget = await podium(['copy-to-postgres', '--data-dir', dataDir], baseEnv());
    expect(noTarget.code).toBe(1);
    expect(noTarget.stderr).toContain('give the target as DATABASE_URL or --database-url');
  });

  describe('the demo moved to a new database', () => {
    let url: string;
    let copied: Awaited<ReturnType<typeof podium>>;

    beforeAll(async () => {
      url = await createDatabase('main');
      // Small batches: every table of more than 100 rows is walked over several keyset pages.
      copied = await copy(url, '--batch-rows', '100');
    }, 300_000);

    it('copies every table with progress and a verified summary', async () => {
      expect(copied.code, copied.stderr).toBe(0);
      const summary = JSON.parse(copied.stdout) as { tables: number; rows: number; verified: boolean };
      expect(summary.verified).toBe(true);
      // About one line per tenth of a table: 100 rows first, then every 10 %, then the total.
      const clicks = [...copied.stderr.matchAll(/copy: \[[#-]{20}\] (\d+)\/(\d+) clicks\n/g)];
      expect(clicks.length).toBeGreaterThanOrEqual(10);
      expect(clicks.length).toBeLessThanOrEqual(12);
      expect(clicks[0]![1]).toBe('100');
      expect(clicks.at(-1)![1]).toBe(clicks.at(-1)![2]);
      expect(copied.stderr).toContain('copy: verifying every table on both databases');
      // Row counts of the partitioned and the key-less tables as the embedded database holds them.
      const counts = await onServer(url, async (c) => {
        const r = await c.query<{ clicks: string; rollups: string; parts: string }>(
          `SELECT (SELECT count(*) FROM clicks) AS clicks, (SELECT count(*) FROM click_rollups_base) AS rollups,
                  (SELECT count(*) FROM pg_inherits WHERE inhparent = 'clicks'::regclass) AS parts`,
        );
        return r.rows[0]!;
      });
      expect(Number(counts.clicks)).toBeGreaterThan(1000);
      expect(Number(counts.rollups)).toBeGreaterThan(1000);
      expect(summary.rows).toBeGreaterThan(Number(counts.clicks) + Number(counts.rollups));
    });

    it('refuses to copy again into the database that now holds data, and leaves it unchanged', async () => {
      const notes: string[] = [];
      const reporter = { note: (m: string) => notes.push(m), progress: () => {} };
      await expect(copyToPostgres({ dataDir, url }, reporter)).rejects.toThrow(
        /^the target already holds data, in admin_tokens \(1 row\), affiliate_programs \(3 rows\), .*: copy only into an empty database$/,
      );
      const verified = await copyToPostgres({ dataDir, url, verifyOnly: true }, reporter);
      expect(notes).toContain(`verifying ${verified.tables.length} tables on both databases`);
      expect(verified.tables.find((t) => t.name === 'clicks')!.rows).toBeGreaterThan(1000);
      expect(verified.rows).toBe(JSON.parse(copied.stdout).rows);
    });

    // From here on a server has run on the target and written rows of its own (job runs): the two
    // databases no longer match in every table, only in those the tests below look at.
    it('serves every toplist, list page and brand page with the same bytes and ETags', async () => {
      const server = await serve(baseEnv({ LOG_LEVEL: 'info', DATABASE_URL: url }));
      try {
        const after = await snapshot(server.url, tokens);
        expect([...after.keys()]).toEqual([...before.keys()]);
        expect(before.size).toBeGreaterThan(100);
        for (const [key, answer] of before) {
          expect(answer.status, key).toBe(200);
          expect(after.get(key), key).toEqual(answer);
        }
      } finally {
        server.proc.kill('SIGTERM');
        await server.exit;
      }
    });

    it('leaves the sequences past the copied rows: a new token gets the next id', async () => {
      const maxId = await onServer(url, async (c) => {
        const r = await c.query<{ max: number }>('SELECT max(id) AS max FROM site_tokens');
        return r.rows[0]!.max;
      });
      const env = baseEnv({ DATABASE_URL: url });
      const created = await podium(['token', 'create', '--site', '1'], env);
      expect(created.code, created.stderr).toBe(0);
      expect(created.stderr).toContain(`token id ${maxId + 1} created`);
      await onServer(url, (c) => c.query('DELETE FROM site_tokens WHERE id = $1', [maxId + 1]));
    });

    it('--verify-only fails on a row changed on the target, naming the table', async () => {
      await onServer(url, (c) => c.query("UPDATE brands SET name = name || ' (edited)' WHERE id = 3"));
      const r = await copy(url, '--verify-only');
      expect(r.code).toBe(1);
      expect(r.stderr).toContain('copy-to-postgres: verify failed:');
      expect(r.stderr).toContain('brands: 42 rows on both, but their content differs');
      expect(r.stdout).toBe('');
    });
  });

  it('commits nothing when the check finds a difference, in an empty migrated database', async () => {
    const url = await createDatabase('failing');
    const quiet = { note: () => {}, progress: () => {} };
    await expect(copyToPostgres({ dataDir, url, verifyOnly: true }, quiet)).rejects.toThrow(
      /^the target lacks \d+ of this release's migrations \(from 0001_catalog\): it holds no copy/,
    );
    const db = await openDb({ url });
    try {
      await migrate(db);
      // The target changes each brand as it is written: every table is copied, then the check fails.
      await db.exec(`
        CREATE FUNCTION edit_brand() RETURNS trigger LANGUAGE plpgsql AS $$
        BEGIN NEW.name := NEW.name || ' (edited)'; RETURN NEW; END $$;
        CREATE TRIGGER edit_brand BEFORE INSERT ON brands FOR EACH ROW EXECUTE FUNCTION edit_brand();`);
      const progress: string[] = [];
      const failed = await copyToPostgres(
        { dataDir, url, batchRows: 500 },
        { note: () => {}, progress: (t, done, total) => progress.push(`${t} ${done}/${total}`) },
      ).catch((e: unknown) => e);
      expect(failed).toBeInstanceOf(CopyMismatchError);
      expect((failed as CopyMismatchError).differences).toEqual([
        'brands: 42 rows on both, but their content differs',
      ]);
      expect(progress).toContain('brands 42/42');
      const [rows] = await db.query<{ programs: number; brands: number; zones: number; clicks: number }>(
        `SELECT (SELECT count(*) FROM affiliate_programs)::int AS programs, (SELECT count(*) FROM brands)::int AS brands,
                (SELECT count(*) FROM rollup_zones)::int AS zones, (SELECT count(*) FROM clicks)::int AS clicks`,
      );
      // Only the migration's own UTC zone row, as before the copy.
      expect(rows).toEqual({ programs: 0, brands: 0, zones: 1, clicks: 0 });
    } finally {
      await db.close();
    }
  });
});

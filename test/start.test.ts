import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { suiteLogStream } from './log-capture.ts';

const BIN = join(import.meta.dirname, '..', 'bin', 'podium-dev.js');

// What a new user sees after `npm start`: always the embedded database, whatever this run uses.
describe('podium start on an empty data directory', { timeout: 240_000 }, () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'podium-start-'));
  let proc: ChildProcess | undefined;

  afterAll(() => {
    if (proc && proc.exitCode === null) proc.kill('SIGKILL');
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('loads the demo, prints working URLs and tokens, and stops cleanly on SIGTERM', async () => {
    const env: NodeJS.ProcessEnv = { ...process.env, PORT: '0', PODIUM_DATA_DIR: dataDir, LOG_LEVEL: 'warn' };
    delete env.DATABASE_URL;
    const child = spawn(process.execPath, [BIN, 'start'], { env, stdio: ['ignore', 'pipe', 'pipe'] });
    proc = child;
    child.stderr!.pipe(suiteLogStream(), { end: false });
    let out = '';
    const banner = await new Promise<string>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`no banner: ${out}`)), 200_000);
      child.stdout!.on('data', (chunk: Buffer) => {
        out += chunk;
        if (/Tokens are shown only now/.test(out)) {
          clearTimeout(timer);
          resolve(out);
        }
      });
      child.once('exit', (code) => reject(new Error(`start exited ${code}: ${out}`)));
    });
    const url = /Podium is running at (http:\/\/\S+)/.exec(banner)?.[1];
    const adminToken = /Admin token:\s+(pda_\S+)/.exec(banner)?.[1];
    const siteToken = /Site token:\s+(pds_\S+)/.exec(banner)?.[1];
    const docs = /Docs\s+(http:\/\/\S+)/.exec(banner)?.[1];
    expect(url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    expect(banner).toContain(`${url}/console/`);
    expect(docs).toBe(`${url}/docs/`);

    const list = await fetch(`${url}/api/v1/toplists?per_page=5`, {
      headers: { authorization: `Bearer ${siteToken}` },
    });
    expect(list.status).toBe(200);
    const body = (await list.json()) as { data: unknown[]; meta: { total: number } };
    expect(body.data).toHaveLength(5);
    expect(body.meta.total).toBeGreaterThan(100);
    const admin = await fetch(`${url}/api/admin/v1/sites`, {
      headers: { authorization: `Bearer ${adminToken}` },
    });
    expect(admin.status).toBe(200);
    // A request the database refuses (a unique violation) is answered 409, and the database on
    // disk goes on serving: PGlite's way back from an ERROR was once taken for PostgreSQL stopping.
    const [site] = ((await admin.json()) as { data: { domain: string }[] }).data;
    const duplicate = await fetch(`${url}/api/admin/v1/sites`, {
      method: 'POST',
      headers: { authorization: `Bearer ${adminToken}`, 'content-type': 'application/json' },
      body: JSON.stringify({ domain: site!.domain }),
    });
    expect(duplicate.status).toBe(409);
    expect(((await duplicate.json()) as { code: string }).code).toBe('conflict');
    // The demo loads in a process of its own; its tokens are the ones shown, and no others exist.
    const tokensOf = async (path: string) =>
      (
        (await (
          await fetch(`${url}/api/admin/v1${path}`, { headers: { authorization: `Bearer ${adminToken}` } })
        ).json()) as {
          data: { revokedAt: string | null }[];
        }
      ).data.filter((t) => t.revokedAt === null);
    expect(await tokensOf('/admin-tokens')).toHaveLength(1);
    expect(await tokensOf('/sites/1/tokens')).toHaveLength(1);
    expect((await fetch(`${docs}llms.txt`)).status).toBe(200);
    expect((await fetch(`${url}/readyz`)).status).toBe(200);

    child.kill('SIGTERM');
    const [code] = await new Promise<[number | null]>((resolve) => child.once('exit', (c) => resolve([c])));
    expect(code).toBe(0);
  });
});

describe('podium start stopped while it loads the demo', { timeout: 240_000 }, () => {
  const root = mkdtempSync(join(tmpdir(), 'podium-start-stop-'));
  afterAll(() => rmSync(root, { recursive: true, force: true }));

  it('leaves no data directory and no partial load behind', async () => {
    const dataDir = join(root, 'data');
    const env: NodeJS.ProcessEnv = { ...process.env, PORT: '0', PODIUM_DATA_DIR: dataDir, LOG_LEVEL: 'warn' };
    delete env.DATABASE_URL;
    const child = spawn(process.execPath, [BIN, 'start'], { env, stdio: ['ignore', 'pipe', 'pipe'] });
    let err = '';
    child.stderr!.setEncoding('utf8').on('data', (chunk: string) => {
      err += chunk;
      // Stopped half-way: the catalog is being written, the history not yet.
      if (chunk.includes('brands with offers')) child.kill('SIGINT');
    });
    const code = await new Promise((resolve) => child.once('exit', resolve));
    expect(err).toContain('brands with offers');
    expect(code).toBe(1);
    expect(err).toContain(`loading the demo was stopped (SIGINT); nothing was written to ${dataDir}`);
    expect(existsSync(dataDir)).toBe(false);
    expect(readdirSync(root)).toEqual([]);
  });
});

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
    rmSync(`${dataDir}-adserver-reference`, { recursive: true, force: true });
  });

  it('loads the demo, prints working URLs and tokens, and stops cleanly on SIGTERM', async () => {
    const env: NodeJS.ProcessEnv = { ...process.env, PORT: '0', PODIUM_DATA_DIR: dataDir, LOG_LEVEL: 'warn' };
    delete env.DATABASE_URL;
    const child = spawn(process.execPath, [BIN, 'start'], { env, stdio: ['ignore', 'pipe', 'pipe'] });
    proc = child;
    child.stderr!.pipe(suiteLogStream(), { end: false });
    let errs = '';
    child.stderr!.on('data', (chunk: Buffer) => {
      errs += chunk;
    });
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

    // The marketplace half: the reference ad server beside it on loopback, connected through the
    // local-only allowance, with products, a reservation awaiting approval and a stated campaign.
    const adServer = /Ad server\s+(http:\/\/127\.0\.0\.1:\d+\/api\/v1)/.exec(banner)?.[1];
    expect(adServer).toBeDefined();
    expect((await fetch(`${adServer}/health`)).status).toBe(401);
    const get = async (path: string) => {
      const res = await fetch(`${url}/api/admin/v1${path}`, {
        headers: { authorization: `Bearer ${adminToken}` },
      });
      expect(res.status, path).toBe(200);
      // biome-ignore lint/suspicious/noExplicitAny: checked field by field below
      return ((await res.json()) as { data: any }).data;
    };
    const [conn] = await get('/adserver/connections');
    expect(conn).toMatchObject({ base_url: adServer, status: 'connected', currency: 'EUR' });
    const verified = await fetch(`${url}/api/admin/v1/adserver/connections/${conn.id}/verify`, {
      method: 'POST',
      headers: { authorization: `Bearer ${adminToken}` },
    });
    expect(((await verified.json()) as { data: { status: string } }).data.status).toBe('connected');
    const products = await get('/market/products');
    expect(products.map((p: { pricing: string }) => p.pricing).sort()).toEqual(['cpm', 'cpm', 'flat']);
    const held = await get('/market/reservations?status=held');
    expect(held.map((r: { campaign_name: string }) => r.campaign_name)).toEqual(['Spring free spins']);
    const booked = await get('/market/reservations?status=booked');
    expect(booked).toHaveLength(2);
    const delivered = booked.find(
      (r: { campaign_name: string }) => r.campaign_name === 'Autumn welcome bonus',
    );
    const [statement] = await get(`/market/reservations/${delivered.id}/statements`);
    expect(Number(statement.total)).toBeGreaterThan(0);
    expect(errs).toContain('outbound: local-only allowance PODIUM_OUTBOUND_LOOPBACK_ALLOW=127.0.0.1:');

    child.kill('SIGTERM');
    const [code] = await new Promise<[number | null]>((resolve) => child.once('exit', (c) => resolve([c])));
    expect(code).toBe(0);
    // The ad server drained and stopped with Podium.
    await expect(fetch(`${adServer}/health`)).rejects.toThrow();
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

describe('podium start with the loopback allowance under NODE_ENV=production', { timeout: 120_000 }, () => {
  const root = mkdtempSync(join(tmpdir(), 'podium-start-prod-'));
  afterAll(() => rmSync(root, { recursive: true, force: true }));

  it('fails at once with a message naming the setting, and writes nothing', async () => {
    const dataDir = join(root, 'data');
    const env: NodeJS.ProcessEnv = {
      ...process.env,
      PORT: '0',
      PODIUM_DATA_DIR: dataDir,
      NODE_ENV: 'production',
      PODIUM_OUTBOUND_LOOPBACK_ALLOW: '127.0.0.1:3201',
    };
    delete env.DATABASE_URL;
    const child = spawn(process.execPath, [BIN, 'start'], { env, stdio: ['ignore', 'pipe', 'pipe'] });
    let errs = '';
    child.stderr!.on('data', (chunk: Buffer) => {
      errs += chunk;
    });
    const [code] = await new Promise<[number | null]>((resolve) => child.once('exit', (c) => resolve([c])));
    expect(code).not.toBe(0);
    expect(errs).toContain('PODIUM_OUTBOUND_LOOPBACK_ALLOW: refused when NODE_ENV=production');
    expect(readdirSync(root)).toEqual([]);
  });
});

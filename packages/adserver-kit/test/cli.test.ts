import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { existsSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { startReferenceServer } from '../src/index.ts';
import { call } from './helpers.ts';

// The console commands work on the same store the server uses (PGlite in a directory here:
// the CLI reads PostgreSQL only from ADSERVER_DATABASE_URL, which this test leaves unset).
const bin = path.resolve(import.meta.dirname, '../bin/adserver-reference.js');
const cli = (dataDir: string, ...args: string[]) => {
  const env = { ...process.env };
  delete env.ADSERVER_DATABASE_URL;
  return promisify(execFile)(process.execPath, [bin, '--data-dir', dataDir, ...args], { env });
};

/** A one-line draft order (idempotency key = `ref`) on the reference server. */
const draftOrder = (url: string, key: string, ref: string) =>
  call(
    url,
    key,
    'POST',
    '/orders',
    {
      idempotency_key: ref,
      advertiser: { name: 'CLI' },
      order: { name: `order ${ref}`, external_ref: ref },
      line_items: [
        {
          external_ref: 'l1',
          inventory_id: 'slot-home-mpu',
          flight: { start_date: '2025-02-01', end_date: '2025-02-03' },
          goal_impressions: 3000,
          sizes: ['300x250'],
        },
      ],
    },
    { 'idempotency-key': ref },
  );

describe('adserver-reference console commands', () => {
  it('issues a scoped key and activates an order on a persistent store', async () => {
    const dataDir = mkdtempSync(path.join(tmpdir(), 'adk-cli-'));
    let server = await startReferenceServer({ store: { dataDir } });
    const order = await draftOrder(server.url, server.apiKey, 'cli-1');
    expect(order.status).toBe(201);
    await server.close();

    const created = await cli(dataDir, 'keys', 'create', '--scopes', 'reports', '--label', 'reporting only');
    const key = created.stdout.trim().split('\n')[1]!;
    expect(key).toMatch(/^rsk_/);
    expect((await cli(dataDir, 'activate', order.body.order_id)).stdout).toContain('is live');
    const listed = await cli(dataDir, 'keys', 'list');
    expect(listed.stdout).toContain('reporting only');
    expect(listed.stdout).not.toContain(key);

    server = await startReferenceServer({ store: { dataDir } });
    try {
      const range = { start_date: '2025-02-01', end_date: '2025-02-03' };
      const rep = await call(server.url, key, 'POST', '/reports', {
        order_id: order.body.order_id,
        date_range: range,
      });
      expect(rep.status).toBe(200);
      expect(rep.body.rows[0].impressions).toBeGreaterThan(0);
      expect((await call(server.url, key, 'GET', '/inventory')).status).toBe(403);
    } finally {
      await server.close();
    }
  }, 240_000); // four PGlite boots on disk and three CLI processes: slow on a loaded two-core machine
});

/** `adserver-reference serve` as a child process on a PGlite directory; resolves once it printed its key. */
async function serve(
  dataDir: string,
): Promise<{ url: string; key: string; proc: ChildProcess; stop(): Promise<void> }> {
  const env = { ...process.env };
  delete env.ADSERVER_DATABASE_URL;
  const proc = spawn(process.execPath, [bin, '--data-dir', dataDir, 'serve', '--port', '0'], { env });
  let out = '';
  const printed = await new Promise<string>((resolve, reject) => {
    proc.stdout!.on('data', (c: Buffer) => {
      out += c.toString();
      if (/API key: +\S+\n/.test(out)) resolve(out);
    });
    proc.once('exit', (code) => reject(new Error(`serve exited ${code}: ${out}`)));
  });
  const exited = new Promise((resolve) => proc.once('exit', resolve));
  return {
    url: /base URL: (\S+)/.exec(printed)![1]!,
    key: /API key: +(\S+)/.exec(printed)![1]!,
    proc,
    async stop() {
      proc.kill('SIGTERM');
      await exited;
    },
  };
}

describe('adserver-reference console commands while serve runs', () => {
  it('keys create|list|revoke and activate go through the running server; a created key works and survives a restart', async () => {
    const dataDir = mkdtempSync(path.join(tmpdir(), 'adk-live-'));
    let server = await serve(dataDir);
    try {
      expect(existsSync(path.join(dataDir, 'admin.json'))).toBe(true);
      const created = await cli(dataDir, 'keys', 'create', '--label', 'made while serving');
      const key = created.stdout.trim().split('\n')[1]!;
      expect(key).toMatch(/^rsk_/);
      expect((await call(server.url, key, 'GET', '/health')).status).toBe(200);
      const doomed = (await cli(dataDir, 'keys', 'create', '--scopes', 'reports')).stdout.trim().split('\n');
      const doomedId = doomed[0]!.split('\t')[0]!;
      expect((await call(server.url, doomed[1], 'GET', '/inventory')).status).toBe(403);
      expect((await cli(dataDir, 'keys', 'revoke', doomedId)).stdout).toContain(`revoked ${doomedId}`);
      expect((await call(server.url, doomed[1], 'GET', '/inventory')).status).toBe(401);
      const listed = (await cli(dataDir, 'keys', 'list')).stdout;
      expect(listed).toContain('made while serving');
      expect(listed).toMatch(new RegExp(`${doomedId}\t.*\trevoked\t`));
      expect(listed).not.toContain(key);

      const order = await draftOrder(server.url, key, 'live-1');
      expect(order.status).toBe(201);
      expect((await cli(dataDir, 'activate', order.body.order_id)).stdout).toContain('is live');
      const range = { start_date: '2025-02-01', end_date: '2025-02-03' };
      const rep = await call(server.url, key, 'POST', '/reports', {
        order_id: order.body.order_id,
        date_range: range,
      });
      expect(rep.body.rows[0].impressions).toBeGreaterThan(0);
      await expect(cli(dataDir, 'activate', 'ord_nope')).rejects.toMatchObject({
        stderr: expect.stringContaining('no order ord_nope'),
      });

      await server.stop();
      expect(existsSync(path.join(dataDir, 'admin.json'))).toBe(false);
      server = await serve(dataDir);
      expect((await call(server.url, key, 'GET', '/health')).status).toBe(200);
      expect((await call(server.url, doomed[1], 'GET', '/health')).status).toBe(401);
    } finally {
      await server.stop();
    }
  }, 240_000);
});

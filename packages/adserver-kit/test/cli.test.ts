import { execFile } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
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

describe('adserver-reference console commands', () => {
  it('issues a scoped key and activates an order on a persistent store', async () => {
    const dataDir = mkdtempSync(path.join(tmpdir(), 'adk-cli-'));
    let server = await startReferenceServer({ store: { dataDir } });
    const order = await call(
      server.url,
      server.apiKey,
      'POST',
      '/orders',
      {
        idempotency_key: 'cli-1',
        advertiser: { name: 'CLI' },
        order: { name: 'CLI order', external_ref: 'cli-order' },
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
      { 'idempotency-key': 'cli-1' },
    );
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

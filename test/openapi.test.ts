import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type TestApp, testApp } from './helpers.ts';

const run = promisify(execFile);
const REDOCLY = new URL('../node_modules/.bin/redocly', import.meta.url).pathname;
const CONFIG = new URL('../redocly.yaml', import.meta.url).pathname;

let t: TestApp;
let dir: string;
beforeAll(async () => {
  t = await testApp();
  dir = mkdtempSync(join(tmpdir(), 'podium-openapi-'));
});
afterAll(async () => {
  rmSync(dir, { recursive: true, force: true });
  await t?.close();
});

const DOCS = [
  ['public', '/api/v1/openapi.json', '/api/v1'],
  ['admin', '/api/admin/v1/openapi.json', '/api/admin/v1'],
] as const;

describe.each(DOCS)('the %s OpenAPI document', (name, url, prefix) => {
  let doc: {
    openapi: string;
    info: { license?: { identifier?: string } };
    paths: Record<string, Record<string, { summary?: string; security?: unknown[] }>>;
  };
  beforeAll(async () => {
    const res = await t.app.inject({ method: 'GET', url });
    expect(res.statusCode).toBe(200);
    doc = res.json();
  });

  it('is OpenAPI 3.1 under the Apache-2.0 licence', () => {
    expect(doc.openapi).toBe('3.1.0');
    expect(doc.info.license?.identifier).toBe('Apache-2.0');
  });

  it('documents every route under its prefix, each with a summary', () => {
    const routes = t.app.routeTable.filter((r) => r.url.startsWith(`${prefix}/`));
    expect(routes.length).toBeGreaterThan(3);
    for (const r of routes) {
      const path = r.url.slice(prefix.length).replace(/:([A-Za-z_]+)/g, '{$1}');
      const op = doc.paths[path]?.[r.method.toLowerCase()];
      expect(op, `${r.method} ${r.url}`).toBeDefined();
      expect(op!.summary?.length).toBeGreaterThan(3);
    }
  });

  it("lints clean with Redocly's CLI (recommended-strict)", async () => {
    const file = join(dir, `${name}.json`);
    writeFileSync(file, JSON.stringify(doc));
    const out = await run(REDOCLY, ['lint', file, '--config', CONFIG, '--format', 'json'], {
      env: { ...process.env, REDOCLY_TELEMETRY: 'off', REDOCLY_SUPPRESS_UPDATE_NOTICE: 'true' },
      timeout: 120_000,
    }).catch((err: { stdout?: string; message: string }) => ({ stdout: err.stdout ?? err.message }));
    const report = JSON.parse(out.stdout) as {
      totals: { errors: number; warnings: number };
      problems: unknown[];
    };
    expect(report.problems, JSON.stringify(report.problems.slice(0, 5), null, 2)).toEqual([]);
    expect(report.totals).toMatchObject({ errors: 0, warnings: 0 });
  }, 180_000);
});

it('an admin route without an admin token is marked as needing one; the public ones as needing a site token', async () => {
  const admin = (await t.app.inject({ method: 'GET', url: '/api/admin/v1/openapi.json' })).json();
  expect(admin.paths['/owners'].post.security).toEqual([{ adminToken: [] }, { consoleSession: [] }]);
  expect(admin.paths['/session'].post.security).toEqual([]);
  const site = (await t.app.inject({ method: 'GET', url: '/api/v1/openapi.json' })).json();
  expect(site.paths['/toplists'].get.security).toEqual([{ siteToken: [] }]);
  expect(site.paths['/toplists'].get.responses['200'].content['application/json'].schema).toEqual({
    $ref: '#/components/schemas/ToplistList',
  });
});

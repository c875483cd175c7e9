import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { podium } from './podium-cli.ts';

describe('podium CLI', { timeout: 180_000 }, () => {
  let dir: string;
  let first: { adminToken: string; siteTokens: { siteId: number; domain: string; token: string }[] };

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'podium-cli-'));
    const r = await podium(join(dir, 'db'), 'demo', '--json');
    expect(r.stderr).toContain('demo: published');
    expect(r.code).toBe(0);
    first = JSON.parse(r.stdout);
  }, 240_000);
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('demo --json prints the admin token and one token per demo site', () => {
    expect(first.adminToken).toMatch(/^pda_[A-Za-z0-9_-]{43}$/);
    expect(first.siteTokens.map((s) => [s.siteId, s.domain])).toEqual([
      [1, 'casinoguide.example'],
      [2, 'sportsbet-review.example'],
      [3, 'pokerpro.example'],
    ]);
    for (const s of first.siteTokens) expect(s.token).toMatch(/^pds_[A-Za-z0-9_-]{43}$/);
  });

  it('demo on a loaded database mints fresh tokens and loads nothing twice', async () => {
    const r = await podium(join(dir, 'db'), 'demo', '--json');
    expect(r.code).toBe(0);
    expect(r.stderr).not.toContain('loading the demo dataset');
    const again = JSON.parse(r.stdout);
    expect(again.siteTokens.map((s: { siteId: number }) => s.siteId)).toEqual([1, 2, 3]);
    expect(again.adminToken).not.toBe(first.adminToken);
  });

  it('import is idempotent on external ids and reports progress', async () => {
    const file = join(import.meta.dirname, 'fixtures', 'import-small.json');
    const a = await podium(join(dir, 'db'), 'import', file);
    expect(a.code).toBe(0);
    expect(a.stderr).toContain('import: 4/4 rows');
    expect(JSON.parse(a.stdout)).toEqual({
      owners: { created: 1, updated: 0 },
      templates: { created: 1, updated: 0 },
      brands: { created: 1, updated: 0 },
      offers: { created: 1, updated: 0 },
    });
    const b = await podium(join(dir, 'db'), 'import', file);
    expect(JSON.parse(b.stdout).offers).toEqual({ created: 0, updated: 1 });
  });

  it('import refuses a bad file naming the field, and a missing file naming the file', async () => {
    const bad = join(dir, 'bad.json');
    writeFileSync(bad, JSON.stringify({ brands: [{ externalId: 'x' }] }));
    const r = await podium(join(dir, 'db'), 'import', bad);
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/brands\.0\.\w+/);
    const missing = await podium(join(dir, 'db'), 'import', join(dir, 'nope.json'));
    expect(missing.code).toBe(1);
    expect(missing.stderr).toContain('nope.json: no such file');
  });

  it('token create prints a working token once; revoke and publish report what they did', async () => {
    const created = await podium(join(dir, 'db'), 'token', 'create', '--site', '2', '--name', 'ci');
    expect(created.code).toBe(0);
    expect(created.stdout.trim()).toMatch(/^pds_[A-Za-z0-9_-]{43}$/);
    const id = /token id (\d+)/.exec(created.stderr)?.[1];
    expect(id).toBeDefined();
    const revoked = await podium(join(dir, 'db'), 'token', 'revoke', '--site', '2', '--id', id!);
    expect(revoked.stdout).toContain(`token ${id} revoked`);
    const both = await podium(join(dir, 'db'), 'token', 'create', '--site', '1', '--admin');
    expect(both.code).toBe(1);
    expect(both.stderr).toContain('exactly one of --site');
    const pub = await podium(join(dir, 'db'), 'publish', '1');
    expect(pub.stdout).toMatch(/toplist 1 \(best-casinos-\w+\) published as version 2/);
    const missing = await podium(join(dir, 'db'), 'publish', '99999');
    expect(missing.code).toBe(1);
    expect(missing.stderr).toContain('Toplist not found');
  });
});

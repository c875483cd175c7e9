import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, describe, expect, it } from 'vitest';

const run = promisify(execFile);
const BIN = join(import.meta.dirname, '..', 'bin', 'podium-dev.js');
const KEY = 'rsk_cliTestKey_abcdefghijklmnopqrstuvwxyz012345';
const CONNECT = ['adserver', 'connect', '--publisher', 'acme', '--base-url', 'https://ads.invalid/api/v1'];

async function podium(dataDir: string, env: NodeJS.ProcessEnv, ...args: string[]) {
  const e: NodeJS.ProcessEnv = { ...process.env, LOG_LEVEL: 'silent' };
  delete e.DATABASE_URL;
  delete e.PODIUM_SECRET_KEYS;
  Object.assign(e, env);
  try {
    const r = await run(process.execPath, [BIN, ...args, '--data-dir', dataDir], {
      env: e,
      timeout: 120_000,
    });
    return { code: 0, stdout: r.stdout, stderr: r.stderr };
  } catch (err) {
    const x = err as { code: number; stdout: string; stderr: string };
    return { code: x.code, stdout: x.stdout, stderr: x.stderr };
  }
}

describe('podium adserver CLI', { timeout: 240_000 }, () => {
  const dir = mkdtempSync(join(tmpdir(), 'podium-adserver-cli-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));
  const db = join(dir, 'db');

  it('connect reads the key from the environment only, stores the connection and reports the probe', async () => {
    const missing = await podium(db, {}, ...CONNECT);
    expect(missing.code).toBe(1);
    expect(missing.stderr).toContain('ADSERVER_API_KEY');

    const r = await podium(db, { ADSERVER_API_KEY: KEY }, ...CONNECT);
    expect(r.code).toBe(1);
    const c = JSON.parse(r.stdout);
    expect(c).toMatchObject({ publisher: 'acme', status: 'error', state: 'unreachable' });
    expect(r.stdout + r.stderr).not.toContain(KEY);
    // No PODIUM_SECRET_KEYS on the embedded database: a key is generated once, private to the owner.
    expect(statSync(join(db, 'secret-keys')).mode & 0o777).toBe(0o600);

    const v = await podium(db, {}, 'adserver', 'verify', c.id);
    expect(v.code).toBe(1);
    expect(JSON.parse(v.stdout).id).toBe(c.id);

    const rot = await podium(db, {}, 'adserver', 'rotate-keys');
    expect(rot.code).toBe(0);
    expect(JSON.parse(rot.stdout)).toMatchObject({
      resealed: 0,
      unreadable: [],
      total: 1,
      kinds: { adserver_api_keys: { resealed: 0, unreadable: [], total: 1 } },
    });
  });

  it('a malformed PODIUM_SECRET_KEYS is refused, named and never echoed', async () => {
    const r = await podium(
      db,
      { ADSERVER_API_KEY: KEY, PODIUM_SECRET_KEYS: 'garbage' },
      'adserver',
      'rotate-keys',
    );
    expect(r.code).toBe(1);
    expect(r.stderr).toContain('PODIUM_SECRET_KEYS');
    expect(r.stderr).not.toContain('garbage');
  });
});

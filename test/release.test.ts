import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DB_KIND } from './helpers.ts';
import { suiteLogStream } from './log-capture.ts';

const run = promisify(execFile);
const ROOT = join(import.meta.dirname, '..');
/** Lines npm prints because of this machine's global npmrc (`nodedir`), not because of the package. */
/** Packing and `npm install` on a busy two-core machine: far beyond the suite's 300 s hook budget. */
const INSTALL_MS = 900_000;
const MACHINE_NPMRC = /Unknown user config "nodedir"/;

/** Records every module URL the process resolves (ESM loader hook, preloaded with --import). */
const RECORDER = `
import { register } from 'node:module';
register('data:text/javascript,' + encodeURIComponent(\`
  import { appendFileSync } from 'node:fs';
  export async function resolve(spec, ctx, next) {
    const r = await next(spec, ctx);
    appendFileSync(process.env.MODULE_LOG, r.url + '\\\\n');
    return r;
  }\`));
`;

/** Waits until the child's output matches `re`; rejects when it exits first or after `ms`. */
function waitFor(child: ChildProcess, re: RegExp, ms = 200_000): Promise<string> {
  let out = '';
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`timed out waiting for ${re}: ${out}`)), ms);
    const onData = (chunk: Buffer) => {
      out += chunk;
      if (re.test(out)) {
        clearTimeout(timer);
        resolve(out);
      }
    };
    child.stdout!.on('data', onData);
    child.stderr!.on('data', onData);
    child.once('exit', (code) => reject(new Error(`exited ${code}: ${out}`)));
  });
}

async function stop(child: ChildProcess): Promise<number | null> {
  if (child.exitCode !== null) return child.exitCode;
  const exited = new Promise<number | null>((resolve) => child.once('exit', (c) => resolve(c)));
  child.kill('SIGTERM');
  return exited;
}

// The release as an operator gets it: `npm run release`, the tarball unpacked into an empty directory,
// `npm install --omit=dev`, then the compiled `podium` on this run's database (PGlite, or PostgreSQL
// when DATABASE_URL is set, so CI's two passes prove both).
describe('the release artifact', { timeout: 600_000 }, () => {
  const work = mkdtempSync(join(tmpdir(), 'podium-release-test-'));
  const app = join(work, 'podium');
  const moduleLog = join(work, 'modules.log');
  const children: ChildProcess[] = [];
  let env: NodeJS.ProcessEnv;
  let schema: string | undefined;
  let installOutput = '';

  beforeAll(async () => {
    const released = await run(process.execPath, [join(ROOT, 'scripts/release.js')], {
      cwd: ROOT,
      maxBuffer: 16 << 20,
    });
    const tarball = released.stdout.trim().split('\n').pop()!;
    expect(tarball).toMatch(/release\/podium-\d+\.\d+\.\d+\.tgz$/);
    mkdirSync(app);
    await run('tar', ['xzf', tarball, '-C', app, '--strip-components=1']);
    const npmEnv = Object.fromEntries(Object.entries(process.env).filter(([k]) => !/^npm_/i.test(k)));
    const installed = await run(
      'npm',
      ['install', '--omit=dev', '--no-audit', '--no-fund', '--prefer-offline'],
      {
        cwd: app,
        env: npmEnv,
        maxBuffer: 16 << 20,
      },
    );
    installOutput = `${installed.stdout}${installed.stderr}`;
    writeFileSync(join(work, 'record.mjs'), RECORDER);

    env = { ...process.env, LOG_LEVEL: 'warn', PORT: '0', MODULE_LOG: moduleLog };
    delete env.PODIUM_SECRET_KEYS;
    if (DB_KIND === 'postgres') {
      // An empty schema of its own, so `podium migrate` has the whole history to apply.
      schema = `rel_${randomBytes(6).toString('hex')}`;
      const client = new pg.Client({ connectionString: process.env.DATABASE_URL });
      await client.connect();
      await client.query(`CREATE SCHEMA "${schema}"`);
      await client.end();
      const url = new URL(process.env.DATABASE_URL!);
      url.searchParams.set('options', `-c search_path=${schema}`);
      env.DATABASE_URL = url.toString();
    } else {
      delete env.DATABASE_URL;
      env.PODIUM_DATA_DIR = join(work, 'data');
    }
  }, INSTALL_MS);

  afterAll(async () => {
    for (const c of children) if (c.exitCode === null) c.kill('SIGKILL');
    if (schema) {
      const client = new pg.Client({ connectionString: process.env.DATABASE_URL });
      await client.connect();
      await client.query(`DROP SCHEMA "${schema}" CASCADE`);
      await client.end();
    }
    rmSync(work, { recursive: true, force: true });
  });

  const podium = (args: string[], extra: NodeJS.ProcessEnv = {}) => {
    const child = spawn(process.execPath, ['--import', join(work, 'record.mjs'), 'bin/podium.js', ...args], {
      cwd: app,
      env: { ...env, ...extra },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    child.stderr!.pipe(suiteLogStream(), { end: false });
    children.push(child);
    return child;
  };

  it('holds compiled code only and installs without dev dependencies or warnings', () => {
    const pkg = JSON.parse(readFileSync(join(app, 'package.json'), 'utf8'));
    expect(pkg.license).toBe('Apache-2.0');
    expect(existsSync(join(app, 'LICENSE'))).toBe(true);
    expect(existsSync(join(app, 'src'))).toBe(false);
    expect(existsSync(join(app, 'dist/src/cli/main.js'))).toBe(true);
    expect(existsSync(join(app, 'dist/console/index.html'))).toBe(true);
    for (const dev of ['tsx', 'esbuild', 'typescript', 'vite', 'vitest'])
      expect(existsSync(join(app, 'node_modules', dev)), dev).toBe(false);
    const warnings = installOutput
      .split('\n')
      .filter((l) => /warn|deprecated/i.test(l) && !MACHINE_NPMRC.test(l));
    expect(warnings).toEqual([]);
  });

  it(`migrates, starts and serves on ${DB_KIND}: /readyz, a toplist and /console/, no tsx loaded`, async () => {
    const migrate = podium(['migrate']);
    expect(await new Promise((resolve) => migrate.once('exit', resolve))).toBe(0);

    const start = podium(['start']);
    const banner = await waitFor(start, /Tokens are shown only now/);
    const url = /Podium is running at (http:\/\/\S+)/.exec(banner)![1]!;
    const siteToken = /Site token:\s+(pds_\S+)/.exec(banner)![1]!;
    expect((await fetch(`${url}/readyz`)).status).toBe(200);
    expect(await stop(start)).toBe(0);

    const serve = podium(['serve'], { LOG_LEVEL: 'info' });
    const listening = await waitFor(serve, /Server listening at http:\/\/127\.0\.0\.1:\d+/);
    const base = /Server listening at (http:\/\/127\.0\.0\.1:\d+)/.exec(listening)![1]!;
    const ready = await fetch(`${base}/readyz`);
    expect(ready.status).toBe(200);
    expect(await ready.json()).toMatchObject({ status: 'ready' });
    const list = await fetch(`${base}/api/v1/toplists/by-slug/best-casinos-se`, {
      headers: { authorization: `Bearer ${siteToken}` },
    });
    expect(list.status).toBe(200);
    expect(((await list.json()) as { data: { items: unknown[] } }).data.items.length).toBeGreaterThan(0);
    const page = await fetch(`${base}/console/`);
    expect(page.status).toBe(200);
    expect(await page.text()).toContain('<div id="root">');
    expect(await stop(serve)).toBe(0);

    const loaded = readFileSync(moduleLog, 'utf8').split('\n').filter(Boolean);
    expect(loaded.some((u) => u.includes('/dist/src/cli/main.js'))).toBe(true);
    expect(loaded.filter((u) => /\/(tsx|esbuild)\/|\.ts$/.test(u))).toEqual([]);
  });

  // The first start of a new embedded demo runs the compiled reference ad server beside it, on
  // the release's own dependencies, and connects it (PGlite pass only: never with DATABASE_URL).
  it.skipIf(DB_KIND === 'postgres')(
    'a first start on a new demo database connects its reference ad server',
    async () => {
      const start = podium(['start'], { PODIUM_DATA_DIR: join(work, 'demo') });
      const banner = await waitFor(start, /Tokens are shown only now/);
      const url = /Podium is running at (http:\/\/\S+)/.exec(banner)![1]!;
      const adminToken = /Admin token:\s+(pda_\S+)/.exec(banner)![1]!;
      expect(banner).toMatch(/Ad server\s+http:\/\/127\.0\.0\.1:\d+\/api\/v1/);
      expect(banner).toContain('demo: marketplace seeded on the reference ad server');
      const conns = await fetch(`${url}/api/admin/v1/adserver/connections`, {
        headers: { authorization: `Bearer ${adminToken}` },
      });
      expect(((await conns.json()) as { data: { status: string }[] }).data).toMatchObject([
        { status: 'connected' },
      ]);
      expect(await stop(start)).toBe(0);
    },
  );
});

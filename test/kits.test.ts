import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { selfSignedCert } from '../packages/adserver-kit/test/helpers.ts';

const run = promisify(execFile);
const ROOT = join(import.meta.dirname, '..');
/** Packing and `npm install` on a busy two-core machine: far beyond the suite's 300 s hook budget. */
const INSTALL_MS = 900_000;
const MB = 1024 * 1024;
const npmEnv = () => Object.fromEntries(Object.entries(process.env).filter(([k]) => !/^npm_/i.test(k)));

/** Bytes under `dir`, as installed on disk. */
function size(dir: string): number {
  return readdirSync(dir, { withFileTypes: true, recursive: true })
    .filter((e) => e.isFile())
    .reduce((n, e) => n + statSync(join(e.parentPath, e.name)).size, 0);
}

/** `npm pack` of a workspace package (its prepack builds it); resolves with the tarball path. */
async function pack(dir: string, dest: string): Promise<string> {
  const r = await run('npm', ['pack', '--silent', '--pack-destination', dest], {
    cwd: join(ROOT, 'packages', dir),
    env: npmEnv(),
    maxBuffer: 16 << 20,
  });
  return join(dest, r.stdout.trim().split('\n').pop()!);
}

/**
 * Installs tarballs into a new empty project with production dependencies only (the package.json pins
 * npm's prefix to this directory; without one npm would climb to the nearest ancestor project).
 */
async function install(dir: string, ...tarballs: string[]): Promise<string> {
  mkdirSync(dir);
  writeFileSync(join(dir, 'package.json'), '{ "private": true }\n');
  await run('npm', ['install', '--omit=dev', '--no-audit', '--no-fund', '--prefer-offline', ...tarballs], {
    cwd: dir,
    env: npmEnv(),
    maxBuffer: 16 << 20,
  });
  return dir;
}

// What a publisher gets from the registry: each package's packed tarball installed on its own into an
// empty directory, then its bins run the way the README says.
describe('the publishable packages', { timeout: 600_000 }, () => {
  const work = mkdtempSync(join(tmpdir(), 'podium-kits-'));
  let checker: string;
  let reference: string;
  let ref: ChildProcess | undefined;

  beforeAll(async () => {
    const dest = join(work, 'tarballs');
    mkdirSync(dest);
    const [c, r, t] = await Promise.all(
      ['adserver-check', 'adserver-reference', 'toplist-client'].map((d) => pack(d, dest)),
    );
    checker = await install(join(work, 'checker'), c!);
    reference = await install(join(work, 'reference'), r!, t!);
  }, INSTALL_MS);

  afterAll(() => {
    if (ref && ref.exitCode === null) ref.kill('SIGKILL');
    rmSync(work, { recursive: true, force: true });
  });

  const bin = (dir: string, name: string) => join(dir, 'node_modules', '.bin', name);

  it('the checker installs with nothing else, under 15 MB, and answers --version and --help', async () => {
    expect(readdirSync(join(checker, 'node_modules')).sort()).toEqual([
      '.bin',
      '.package-lock.json',
      'podium-adserver-check',
    ]);
    expect(size(join(checker, 'node_modules'))).toBeLessThan(15 * MB);
    const version = await run(bin(checker, 'podium-adserver-check'), ['--version']);
    expect(version.stdout.trim()).toBe('0.2.0');
    const help = await run(bin(checker, 'podium-adserver-check'), ['--help']);
    expect(help.stdout).toContain('Examples:');
    expect(help.stdout).toContain('npx podium-adserver-check https://');
  });

  it('the installed checker passes the installed reference server over TLS on loopback', async () => {
    const v = await run(bin(reference, 'podium-adserver-reference'), ['--version']);
    expect(v.stdout.trim()).toBe('0.2.0');
    const tls = selfSignedCert();
    writeFileSync(join(work, 'key.pem'), tls.key);
    writeFileSync(join(work, 'cert.pem'), tls.cert);
    const args = ['--data-dir', join(work, 'ref-data'), 'serve', '--port', '0'];
    ref = spawn(bin(reference, 'podium-adserver-reference'), [
      ...args,
      '--tls-key',
      join(work, 'key.pem'),
      '--tls-cert',
      join(work, 'cert.pem'),
    ]);
    let out = '';
    const banner = await new Promise<string>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`reference server did not start: ${out}`)), 120_000);
      ref!.stdout!.on('data', (chunk: Buffer) => {
        out += chunk;
        if (/API key:\s+\S+/.test(out)) {
          clearTimeout(timer);
          resolve(out);
        }
      });
      ref!.stderr!.on('data', (chunk: Buffer) => {
        out += chunk;
      });
      ref!.once('exit', (code) => reject(new Error(`reference server exited ${code}: ${out}`)));
    });
    const url = /base URL: (https:\/\/\S+)/.exec(banner)![1]!;
    const key = /API key:\s+(\S+)/.exec(banner)![1]!;
    const checked = await run(
      bin(checker, 'podium-adserver-check'),
      [url, '--json', '--ca', join(work, 'cert.pem')],
      {
        env: { ...process.env, ADSERVER_API_KEY: key },
      },
    );
    const report = JSON.parse(checked.stdout) as { ok: boolean; counts: { pass: number; fail: number } };
    expect(report.ok).toBe(true);
    expect(report.counts.fail).toBe(0);
    expect(report.counts.pass).toBeGreaterThan(10);
    expect(checked.stdout).not.toContain(key);
  });

  it('the reference server and the toplist client load as plain JavaScript with their types', async () => {
    const script = `
      const ref = await import('podium-adserver-reference');
      const schemas = await import('podium-adserver-reference/schemas');
      const client = await import('podium-toplist-client');
      console.log(JSON.stringify({
        ref: [typeof ref.startReferenceServer, typeof ref.runChecks],
        scopes: schemas.SCOPES,
        sum: client.sumDecimals(['0.10', '0.20']),
      }));`;
    const r = await run(process.execPath, ['--input-type=module', '-e', script], { cwd: reference });
    expect(JSON.parse(r.stdout)).toEqual({
      ref: ['function', 'function'],
      scopes: ['inventory:read', 'forecast', 'orders:draft', 'reports'],
      sum: '0.30',
    });
    for (const types of [
      'podium-adserver-reference/dist/index.d.ts',
      'podium-toplist-client/dist/index.d.ts',
    ])
      expect(statSync(join(reference, 'node_modules', types)).size).toBeGreaterThan(0);
  });
});

import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { DirLockedError, lockDir } from './dir-lock.ts';

const STALE_MS = 2000;
const root = mkdtempSync(join(tmpdir(), 'dir-lock-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));
let seq = 0;
const freshDir = () => {
  const dir = join(root, `d${++seq}`);
  rmSync(dir, { recursive: true, force: true });
  return mkdtempSync(dir);
};

const children: ChildProcess[] = [];
afterEach(() => {
  for (const c of children.splice(0)) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL');
});

/** Another process holding the lock on `dir`: resolves once it has it. `then` runs after. */
async function holder(dir: string, then = 'setInterval(() => {}, 1000);'): Promise<ChildProcess> {
  const script = `
    import { lockDir } from ${JSON.stringify(join(import.meta.dirname, 'dir-lock.ts'))};
    await lockDir(${JSON.stringify(dir)}, ${STALE_MS});
    process.stdout.write('locked\\n');
    ${then}`;
  const child = spawn(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  children.push(child);
  await new Promise<void>((resolve, reject) => {
    child.stdout!.on('data', (d: Buffer) => d.toString().includes('locked') && resolve());
    child.once('exit', (code) => reject(new Error(`holder exited (${code}) before locking`)));
  });
  return child;
}
const exited = (c: ChildProcess) =>
  c.exitCode !== null || c.signalCode !== null ? Promise.resolve() : new Promise((r) => c.once('exit', r));

describe('lockDir', () => {
  it('refuses a directory another live process holds, with an error saying what to do', async () => {
    const dir = freshDir();
    await holder(dir);
    const refused = lockDir(dir, STALE_MS);
    await expect(refused).rejects.toThrow(DirLockedError);
    await expect(refused).rejects.toThrow(/in use by another process; stop that process first/);
  }, 30_000);

  it('takes over the lock of a process that was killed (SIGKILL: no chance to release it)', async () => {
    const dir = freshDir();
    const crashed = await holder(dir);
    crashed.kill('SIGKILL');
    await exited(crashed);
    expect(existsSync(join(dir, 'podium.lock'))).toBe(true);
    const release = await lockDir(dir, STALE_MS);
    release();
    expect(existsSync(join(dir, 'podium.lock'))).toBe(false);
  }, 30_000);

  it('is free at once after its holder exits, also without releasing it', async () => {
    const dir = freshDir();
    const done = await holder(dir, 'process.exit(0);');
    await exited(done);
    expect(existsSync(join(dir, 'podium.lock'))).toBe(false);
    const release = await lockDir(dir, STALE_MS);
    // Held by this process now: a second taker in this process is refused too.
    await expect(lockDir(dir, STALE_MS)).rejects.toThrow(DirLockedError);
    release();
    (await lockDir(dir, STALE_MS))();
  }, 30_000);
});

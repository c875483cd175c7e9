import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { DirLockedError, lockDir, processStart } from './dir-lock.ts';

describe('lockDir', () => {
  const dirs: string[] = [];
  const fresh = () => {
    const d = mkdtempSync(join(tmpdir(), 'podium-lock-'));
    dirs.push(d);
    return d;
  };
  afterEach(() => {
    for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
  });
  const owner = (dir: string) => JSON.parse(readFileSync(join(dir, 'podium.pid'), 'utf8'));

  it('records the pid with its start time and boot id, and frees the directory on release', () => {
    const dir = fresh();
    const release = lockDir(dir);
    expect(owner(dir)).toMatchObject({ pid: process.pid, start: processStart(process.pid) });
    expect(owner(dir).boot).toMatch(/^[0-9a-f-]{36}$/);
    release();
    lockDir(dir)();
  });

  it('refuses a directory held by another live process and takes it once that process is gone', async () => {
    const dir = fresh();
    const child = spawn(process.execPath, ['-e', 'setTimeout(() => {}, 30000)']);
    await new Promise((r) => child.once('spawn', r));
    const pid = child.pid!;
    try {
      writeFileSync(join(dir, 'podium.pid'), JSON.stringify({ pid, start: processStart(pid) }));
      expect(() => lockDir(dir)).toThrow(DirLockedError);
      expect(() => lockDir(dir)).toThrow(`in use by process ${pid}`);
      // A lock file of an older version (the bare PID) still holds while the process runs.
      writeFileSync(join(dir, 'podium.pid'), String(pid));
      expect(() => lockDir(dir)).toThrow(DirLockedError);
    } finally {
      child.kill();
    }
    await new Promise((r) => child.once('exit', r));
    const release = lockDir(dir);
    expect(owner(dir).pid).toBe(process.pid);
    release();
  });

  it('takes over a lock whose PID now belongs to another process (PID reuse)', async () => {
    const dir = fresh();
    const child = spawn(process.execPath, ['-e', 'setTimeout(() => {}, 30000)']);
    await new Promise((r) => child.once('spawn', r));
    try {
      // The PID is alive, but the process behind it started at another time than the owner did.
      writeFileSync(join(dir, 'podium.pid'), JSON.stringify({ pid: child.pid, start: '1' }));
      const release = lockDir(dir);
      expect(owner(dir).pid).toBe(process.pid);
      release();
      // Or the lock was written before the last reboot.
      writeFileSync(
        join(dir, 'podium.pid'),
        JSON.stringify({
          pid: child.pid,
          start: processStart(child.pid!),
          boot: '00000000-0000-0000-0000-000000000000',
        }),
      );
      lockDir(dir)();
    } finally {
      child.kill();
    }
  });

  it('takes over a lock left by a dead process', () => {
    const dir = fresh();
    writeFileSync(join(dir, 'podium.pid'), '999999999');
    const release = lockDir(dir);
    expect(owner(dir).pid).toBe(process.pid);
    release();
  });
});

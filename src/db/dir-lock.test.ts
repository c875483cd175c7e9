import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { DirLockedError, lockDir } from './dir-lock.ts';

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

  it('refuses a directory held by another live process and frees it on release', async () => {
    const dir = fresh();
    const child = spawn(process.execPath, ['-e', 'setTimeout(() => {}, 30000)']);
    try {
      writeFileSync(join(dir, 'podium.pid'), String(child.pid));
      expect(() => lockDir(dir)).toThrow(DirLockedError);
      expect(() => lockDir(dir)).toThrow(`in use by process ${child.pid}`);
    } finally {
      child.kill();
    }
    await new Promise((r) => child.once('exit', r));
    const release = lockDir(dir);
    expect(readFileSync(join(dir, 'podium.pid'), 'utf8')).toBe(String(process.pid));
    release();
    const again = lockDir(dir);
    again();
  });

  it('takes over a lock left by a dead process', () => {
    const dir = fresh();
    writeFileSync(join(dir, 'podium.pid'), '999999999');
    const release = lockDir(dir);
    expect(readFileSync(join(dir, 'podium.pid'), 'utf8')).toBe(String(process.pid));
    release();
  });
});

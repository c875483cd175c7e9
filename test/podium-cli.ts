import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);
const BIN = join(import.meta.dirname, '..', 'bin', 'podium-dev.js');

/**
 * Runs the real `podium` command on a private embedded database (never the shared server, never
 * the environment's secret keys); resolves with its exit code and output. The time limit leaves
 * room for `demo` (30 days of tracking history) on a busy two-core machine; callers' hooks allow 240 s.
 */
export function podium(dataDir: string, ...args: string[]) {
  return podiumWithInput(dataDir, undefined, ...args);
}

/** `podium` as above, with `input` written to its standard input (closed after it). */
export async function podiumWithInput(dataDir: string, input: string | undefined, ...args: string[]) {
  const env: NodeJS.ProcessEnv = { ...process.env, LOG_LEVEL: 'silent' };
  delete env.DATABASE_URL;
  delete env.PODIUM_SECRET_KEYS;
  try {
    const running = run(process.execPath, [BIN, ...args, '--data-dir', dataDir], { env, timeout: 220_000 });
    running.child.stdin?.end(input ?? '');
    const r = await running;
    return { code: 0, stdout: r.stdout, stderr: r.stderr };
  } catch (e) {
    const x = e as { code: number; stdout: string; stderr: string };
    return { code: x.code, stdout: x.stdout, stderr: x.stderr };
  }
}

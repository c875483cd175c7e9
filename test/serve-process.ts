import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import { join } from 'node:path';
import { suiteLogStream } from './log-capture.ts';

const BIN = join(import.meta.dirname, '..', 'bin', 'podium-dev.js');

/** Starts `podium serve` on a free port; resolves with its base URL once it listens. */
export async function serve(
  env: NodeJS.ProcessEnv,
  args: string[] = [],
): Promise<{ proc: ChildProcess; url: string; exit: Promise<number> }> {
  const proc = spawn(process.execPath, [BIN, 'serve', '--port', '0', ...args], {
    env,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const exit = once(proc, 'exit').then(([code]) => code as number);
  let out = '';
  const url = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`serve did not start: ${out}`)), 60_000);
    const onData = (chunk: Buffer) => {
      out += chunk;
      const m = /Server listening at (http:\/\/127\.0\.0\.1:\d+)/.exec(out);
      if (m) {
        clearTimeout(timer);
        resolve(m[1]!);
      }
    };
    proc.stdout!.on('data', onData);
    proc.stderr!.on('data', onData);
    proc.stdout!.pipe(suiteLogStream(), { end: false });
    proc.stderr!.pipe(suiteLogStream(), { end: false });
    proc.once('exit', () => reject(new Error(`serve exited: ${out}`)));
  });
  return { proc, url, exit };
}

/** Server processes of the benchmark: started pinned to the server core, driven over IPC. */
import { type ChildProcess, spawn } from 'node:child_process';
import { openSync } from 'node:fs';
import { SERVER_CPU } from './wrk.ts';

/**
 * Starts `node [--import tsx] script ...args` pinned to the server core with an IPC channel
 * (TypeScript scripts get the tsx loader; `.mjs` ones run on plain node).
 * Its stdout (the per-request log lines) goes to `logFile`, as a real deployment's would go to a
 * file or a pipe; stderr is inherited.
 */
export function pinnedChild(
  script: string,
  args: string[],
  env: NodeJS.ProcessEnv,
  logFile: string,
  nodeFlags: string[] = [],
): ChildProcess {
  const out = openSync(logFile, 'a');
  // taskset execs node in place, so the pid is the server's and the IPC descriptor is inherited.
  return spawn(
    'taskset',
    [
      '-c',
      SERVER_CPU,
      process.execPath,
      ...nodeFlags,
      ...(script.endsWith('.ts') ? ['--import', 'tsx'] : []),
      script,
      ...args,
    ],
    {
      env,
      stdio: ['ignore', out, 'inherit', 'ipc'],
    },
  );
}

/** Waits for the first message of `proc` holding `key`, after optionally sending `msg`. */
export function reply<T>(proc: ChildProcess, key: string, msg?: object): Promise<T> {
  return new Promise((resolve, reject) => {
    const onExit = (code: number | null) => reject(new Error(`bench child exited with ${code}`));
    const on = (m: Record<string, unknown>) => {
      if (!(key in m)) return;
      proc.off('message', on);
      proc.off('exit', onExit);
      resolve(m as T);
    };
    proc.on('message', on);
    proc.once('exit', onExit);
    if (msg) proc.send(msg);
  });
}

/** Asks a child to stop and waits for it to exit (killed after 10 s). */
export async function stop(proc: ChildProcess): Promise<void> {
  if (proc.exitCode !== null || proc.signalCode !== null) return;
  const exited = new Promise((r) => proc.once('exit', r));
  proc.send({ cmd: 'stop' });
  const timer = setTimeout(() => proc.kill('SIGKILL'), 10_000);
  await exited;
  clearTimeout(timer);
}

/** Child-process plumbing shared by the benchmarks: fork a server script, talk to it over IPC. */
import { type ChildProcess, fork } from 'node:child_process';

/** Forks `script` in `mode` with TypeScript support and an IPC channel. */
export function child(script: string, mode: string, env: NodeJS.ProcessEnv): ChildProcess {
  return fork(script, [mode], {
    execArgv: ['--import', 'tsx'],
    env,
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
}

/** Waits for the first message of `proc` holding `key`, after optionally sending `msg`. */
export function reply<T>(proc: ChildProcess, key: string, msg?: object): Promise<T> {
  return new Promise((resolve, reject) => {
    const on = (m: Record<string, unknown>) => {
      if (!(key in m)) return;
      proc.off('message', on);
      resolve(m as T);
    };
    proc.on('message', on);
    proc.once('exit', (code) => reject(new Error(`bench child exited with ${code}`)));
    if (msg) proc.send(msg);
  });
}

/** Asks a child to stop and waits for it to exit. */
export async function stop(proc: ChildProcess): Promise<void> {
  if (proc.exitCode !== null) return;
  const exited = new Promise((r) => proc.once('exit', r));
  proc.send({ cmd: 'stop' });
  await exited;
}

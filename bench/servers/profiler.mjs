/**
 * The in-process V8 profiler of a bench server, driven over IPC (`profile-start`,
 * `profile-stop` with a `file`): profiles only the measured runs, not start-up or idle time.
 * Shared by Podium (serve.mjs) and the bare server, so both sides of a run can be compared.
 */
import { writeFileSync } from 'node:fs';
import { Session } from 'node:inspector';

const session = new Session();
session.connect();
const post = (method) =>
  new Promise((resolve, reject) =>
    session.post(method, (err, result) => (err ? reject(err) : resolve(result))),
  );

process.on('message', async (m) => {
  if (m.cmd === 'profile-start') {
    await post('Profiler.enable');
    await post('Profiler.start');
    process.send?.({ profiling: true });
  }
  if (m.cmd === 'profile-stop') {
    const { profile } = await post('Profiler.stop');
    writeFileSync(m.file, JSON.stringify(profile));
    process.send?.({ profiled: true });
  }
});

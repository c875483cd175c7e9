import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { closeSync, constants, mkdtempSync, openSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';

const LOGGER = JSON.stringify(join(import.meta.dirname, 'logger.ts'));
const dir = mkdtempSync(join(tmpdir(), 'log-destination-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
let seq = 0;
const file = () => join(dir, `f${++seq}`);

/** A process logging through logDestination (standard output on `stdout`) with pino. */
const writer = (body: string, stdout: number, opts = '{}') =>
  spawn(
    process.execPath,
    [
      '--import',
      'tsx',
      '--input-type=module',
      '-e',
      `import pino from 'pino';
       import { logDestination } from ${LOGGER};
       const log = pino(logDestination(${opts}).stream);
       ${body}`,
    ],
    { stdio: ['ignore', stdout, 'inherit'] },
  );

/** The child's exit code (or signal), also when it has already exited. */
const exited = (p: ChildProcess) =>
  new Promise((r) =>
    p.exitCode !== null || p.signalCode !== null
      ? r(p.exitCode ?? p.signalCode)
      : p.once('exit', (code, signal) => r(code ?? signal)),
  );

describe('logDestination', () => {
  it('writes the lines still buffered when the process exits at once (a fatal error)', async () => {
    const out = file();
    const fd = openSync(out, 'w');
    const child = writer(`log.info('first'); log.fatal('last words'); process.exit(3);`, fd);
    closeSync(fd);
    expect(await exited(child)).toBe(3);
    const lines = readFileSync(out, 'utf8').split('\n').filter(Boolean);
    expect(lines.map((l) => JSON.parse(l).msg)).toEqual(['first', 'last words']);
  });

  it('keeps every line whole and in order when several processes share one full pipe (cluster workers)', async () => {
    const out = file();
    const fifo = file();
    execFileSync('mkfifo', [fifo]);
    // The reader waits half a second first, so the pipe fills and the writers' chunks queue.
    const reader = spawn('sh', ['-c', `exec 3<'${fifo}'; sleep 0.5; cat <&3 > '${out}'`], {
      stdio: 'ignore',
    });
    let fd: number | undefined;
    for (let i = 0; i < 200 && fd === undefined; i++) {
      try {
        // Non-blocking, as Node leaves a piped standard output; ENXIO until the reader has it open.
        fd = openSync(fifo, constants.O_WRONLY | constants.O_NONBLOCK);
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code !== 'ENXIO') throw err;
        await new Promise((r) => setTimeout(r, 10));
      }
    }
    const lines = 2000;
    // Lines of 60–460 bytes, so 4 KiB chunks end at every offset.
    const children = [0, 1, 2].map((w) =>
      writer(
        `for (let i = 0; i < ${lines}; i++) log.info({ w: ${w}, i, pad: 'p'.repeat((i * 37) % 400) });
         log.flush(() => process.exit(0));`,
        fd as number,
        '{ shared: true }',
      ),
    );
    expect(await Promise.all(children.map(exited))).toEqual([0, 0, 0]);
    closeSync(fd as number);
    await exited(reader);
    const next = [0, 0, 0];
    for (const text of readFileSync(out, 'utf8').split('\n').slice(0, -1)) {
      const { w, i } = JSON.parse(text) as { w: number; i: number };
      expect(i).toBe(next[w]);
      next[w]! += 1;
    }
    expect(next).toEqual([lines, lines, lines]);
  }, 30_000);
});

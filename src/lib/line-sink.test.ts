import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { closeSync, constants, mkdtempSync, openSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { LineSink } from './line-sink.ts';

const dir = mkdtempSync(join(tmpdir(), 'line-sink-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
let seq = 0;
const file = () => join(dir, `f${++seq}`);

/** A named pipe whose reader (a shell) waits `delay` seconds, then copies it to `out` (or exits). */
function slowReader(delay: number, out: string | null): { fifo: string; reader: ChildProcess } {
  const fifo = file();
  execFileSync('mkfifo', [fifo]);
  const then = out === null ? 'exit 0' : `cat <&3 > '${out}'`;
  const reader = spawn('sh', ['-c', `exec 3<'${fifo}'; sleep ${delay} 3<&-; ${then}`], { stdio: 'ignore' });
  return { fifo, reader };
}

/** Opens the pipe's write end non-blocking, as Node leaves a piped standard output. */
async function openNonBlocking(fifo: string): Promise<number> {
  for (let i = 0; i < 200; i++) {
    try {
      return openSync(fifo, constants.O_WRONLY | constants.O_NONBLOCK);
    } catch (err) {
      // ENXIO until the reader has the pipe open.
      if ((err as NodeJS.ErrnoException).code !== 'ENXIO') throw err;
      await new Promise((r) => setTimeout(r, 10));
    }
  }
  throw new Error('the reader never opened the pipe');
}

/** The child's exit code (or signal), also when it has already exited. */
const exited = (p: ChildProcess) =>
  new Promise((r) =>
    p.exitCode !== null || p.signalCode !== null
      ? r(p.exitCode ?? p.signalCode)
      : p.once('exit', (code, signal) => r(code ?? signal)),
  );

describe('LineSink', () => {
  it('holds lines until a chunk is full, then writes them in order with their exact UTF-8 bytes', () => {
    const path = file();
    const fd = openSync(path, 'w');
    const sink = new LineSink({ fd });
    const lines = ['{"a":"é"}\n', '{"b":"😀 \ud800 lone"}\n', '{"c":"plain"}\n'];
    for (const l of lines) sink.write(l);
    expect(readFileSync(path).length).toBe(0);
    const filler = `{"fill":"${'x'.repeat(100)}"}\n`;
    const all = [...lines];
    while (readFileSync(path).length === 0) {
      sink.write(filler);
      all.push(filler);
      expect(all.length).toBeLessThan(100);
    }
    // Everything buffered before the chunk filled is out, in order, byte for byte, in at most
    // 4 096 bytes (one atomic pipe write): the line that would have passed that waits for the next.
    const written = readFileSync(path);
    expect(written.length).toBeLessThanOrEqual(4096);
    expect(written).toEqual(Buffer.from(all.slice(0, -1).join(''), 'utf8'));
    sink.write('{"last":1}\n');
    sink.end();
    expect(readFileSync(path)).toEqual(Buffer.from(`${all.join('')}{"last":1}\n`, 'utf8'));
    sink.write('{"after":1}\n');
    expect(readFileSync(path, 'utf8').endsWith('{"after":1}\n')).toBe(true);
    closeSync(fd);
  });

  it('writes a line larger than its buffer whole, after the lines before it', () => {
    const path = file();
    const fd = openSync(path, 'w');
    const sink = new LineSink({ fd });
    const big = `{"big":"${'ü'.repeat(40_000)}"}\n`;
    sink.write('{"first":1}\n');
    sink.write(big);
    sink.write('{"then":1}\n');
    sink.flush();
    expect(readFileSync(path, 'utf8')).toBe(`{"first":1}\n${big}{"then":1}\n`);
    sink.end();
    closeSync(fd);
  });

  it("writes a quiet server's lines after flushMs, and calls flush's callback once they are out", async () => {
    const path = file();
    const fd = openSync(path, 'w');
    const sink = new LineSink({ fd, flushMs: 20 });
    sink.write('{"quiet":1}\n');
    expect(readFileSync(path, 'utf8')).toBe('');
    await new Promise((r) => setTimeout(r, 80));
    expect(readFileSync(path, 'utf8')).toBe('{"quiet":1}\n');
    sink.write('{"more":1}\n');
    let seen = '';
    sink.flush(() => {
      seen = readFileSync(path, 'utf8');
    });
    expect(seen).toBe('{"quiet":1}\n{"more":1}\n');
    sink.end();
    closeSync(fd);
  });

  it('writes what is buffered when the process exits', () => {
    const path = file();
    const script = `
      import { openSync } from 'node:fs';
      import { LineSink } from ${JSON.stringify(join(import.meta.dirname, 'line-sink.ts'))};
      const sink = new LineSink({ fd: openSync(${JSON.stringify(path)}, 'w') });
      sink.write('{"bye":1}\\n');
      process.exit(3);`;
    let code = 0;
    try {
      execFileSync(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script]);
    } catch (err) {
      code = (err as { status: number }).status;
    }
    expect(code).toBe(3);
    expect(readFileSync(path, 'utf8')).toBe('{"bye":1}\n');
  });

  it('waits out a full pipe (EAGAIN) and delivers every byte', async () => {
    const out = file();
    const { fifo, reader } = slowReader(0.4, out);
    const fd = await openNonBlocking(fifo);
    const sink = new LineSink({ fd });
    const line = `{"line":"${'z'.repeat(990)}"}\n`;
    const started = Date.now();
    // 2 MB: far more than a pipe holds while nobody reads it.
    for (let i = 0; i < 2000; i++) sink.write(line);
    sink.end();
    const waited = Date.now() - started;
    closeSync(fd);
    await exited(reader);
    expect(sink.droppedBytes).toBe(0);
    expect(waited).toBeGreaterThan(200);
    expect(readFileSync(out, 'utf8')).toBe(line.repeat(2000));
  });

  it('keeps every line whole when several processes write to one full pipe (cluster workers share standard output)', async () => {
    const out = file();
    const { fifo, reader } = slowReader(0.5, out);
    // The test holds a write end until every writer is done: otherwise a writer that finishes
    // before a slower one has started leaves the pipe without writers, the reader takes that for
    // the end and exits, and the late writer waits for a reader for ever.
    const held = await openNonBlocking(fifo);
    const writers = 3;
    const lines = 3000;
    // Lines of 40–440 bytes, so chunks end at every offset; each process opens the pipe as Node
    // leaves a piped standard output (non-blocking) once the reader has it open.
    const script = (w: number) => `
      import { constants, openSync } from 'node:fs';
      import { LineSink } from ${JSON.stringify(join(import.meta.dirname, 'line-sink.ts'))};
      let fd;
      for (;;) {
        try { fd = openSync(${JSON.stringify(fifo)}, constants.O_WRONLY | constants.O_NONBLOCK); break; }
        catch (err) { if (err.code !== 'ENXIO') throw err; await new Promise((r) => setTimeout(r, 10)); }
      }
      const sink = new LineSink({ fd });
      for (let i = 0; i < ${lines}; i++) sink.write(JSON.stringify({ w: ${w}, i, pad: 'p'.repeat((i * 37) % 400) }) + '\\n');
      sink.end();
      if (sink.droppedBytes) process.exit(2);`;
    const children = Array.from({ length: writers }, (_, w) =>
      spawn(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script(w)], {
        stdio: ['ignore', 'ignore', 'inherit'],
      }),
    );
    expect(await Promise.all(children.map(exited))).toEqual(children.map(() => 0));
    closeSync(held);
    await exited(reader);
    const next = Array.from({ length: writers }, () => 0);
    for (const text of readFileSync(out, 'utf8').split('\n').slice(0, -1)) {
      const { w, i } = JSON.parse(text) as { w: number; i: number };
      expect(i).toBe(next[w]);
      next[w]! += 1;
    }
    expect(next).toEqual(children.map(() => lines));
  }, 30_000);

  it('ends a line a drop cut short before the next, so no two lines ever run together', async () => {
    const out = file();
    const { fifo, reader } = slowReader(1, out);
    const fd = await openNonBlocking(fifo);
    const sink = new LineSink({ fd, blockedLimitMs: 100 });
    // Odd sizes, so a partial write into the full pipe ends inside a line.
    const line = (i: number) => `{"i":${i},"pad":"${'p'.repeat(700 + (i % 13))}"}\n`;
    let i = 0;
    const started = Date.now();
    while (Date.now() - started < 400 && i < 20_000) sink.write(line(i++));
    expect(sink.droppedBytes).toBeGreaterThan(0);
    await new Promise((r) => setTimeout(r, 1000));
    const last = Array.from({ length: 20 }, () => line(i++));
    for (const l of last) sink.write(l);
    sink.end();
    closeSync(fd);
    await exited(reader);
    const text = readFileSync(out, 'utf8');
    expect(text.endsWith(last.join(''))).toBe(true);
    for (const part of text.slice(0, -1).split('\n')) {
      // Whole lines parse; a cut one is the start of one line only, never two lines joined.
      const whole = (() => {
        try {
          return JSON.parse(part) as unknown;
        } catch {
          return undefined;
        }
      })();
      if (whole === undefined) expect(part.lastIndexOf('{')).toBe(0);
    }
  });

  it('gives up on a pipe full for longer than blockedLimitMs, and on a closed one, without throwing', async () => {
    const stuck = slowReader(3, null);
    const fd = await openNonBlocking(stuck.fifo);
    const sink = new LineSink({ fd, blockedLimitMs: 150 });
    const line = `{"line":"${'z'.repeat(990)}"}\n`;
    const started = Date.now();
    // Once it has waited blockedLimitMs, it drops at once while the pipe stays full.
    for (let i = 0; i < 500; i++) sink.write(line);
    sink.flush();
    expect(Date.now() - started).toBeLessThan(2000);
    expect(sink.droppedBytes).toBeGreaterThan(0);
    expect((sink.lastError as NodeJS.ErrnoException).code).toBe('EAGAIN');
    stuck.reader.kill();
    await exited(stuck.reader);
    const dropped = sink.droppedBytes;
    sink.write(line.repeat(10));
    sink.flush();
    expect((sink.lastError as NodeJS.ErrnoException).code).toBe('EPIPE');
    // All ten lines, and the newline ending a line an earlier drop cut short, if one was.
    expect(sink.droppedBytes - dropped - line.length * 10).toBeGreaterThanOrEqual(0);
    expect(sink.droppedBytes - dropped - line.length * 10).toBeLessThanOrEqual(1);
    sink.end();
    closeSync(fd);
  });
});

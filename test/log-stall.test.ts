import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { closeSync, constants, mkdtempSync, openSync, readSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { suiteLogStream } from './log-capture.ts';

const BIN = join(import.meta.dirname, '..', 'bin', 'podium-dev.js');
const METRICS_TOKEN = 'log-stall-metrics-token-0123456789';

/** Reads what the pipe holds now (non-blocking descriptor), as text. */
function drain(fd: number): string {
  const buf = Buffer.alloc(1 << 16);
  let text = '';
  for (;;) {
    try {
      const n = readSync(fd, buf, 0, buf.length, null);
      if (n === 0) return text;
      text += buf.toString('utf8', 0, n);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'EAGAIN') return text;
      throw err;
    }
  }
}

// A real server whose standard output is a pipe nobody reads: it must keep answering, give the
// log lines up after its wait, count them, and write whole lines again once the pipe drains.
describe('a server whose log reader stalls', { timeout: 120_000 }, () => {
  const dir = mkdtempSync(join(tmpdir(), 'podium-log-stall-'));
  const fifo = join(dir, 'stdout');
  let proc: ChildProcess | undefined;
  let reader: number | undefined;
  afterAll(() => {
    if (proc && proc.exitCode === null) proc.kill('SIGKILL');
    if (reader !== undefined) closeSync(reader);
    rmSync(dir, { recursive: true, force: true });
  });

  it('answers, counts the bytes it dropped in /metrics, and writes whole lines after the pipe drains', async () => {
    execFileSync('mkfifo', [fifo]);
    reader = openSync(fifo, constants.O_RDONLY | constants.O_NONBLOCK);
    const writer = openSync(fifo, 'w');
    const env: NodeJS.ProcessEnv = {
      ...process.env,
      PORT: '0',
      HOST: '127.0.0.1',
      PODIUM_DATA_DIR: join(dir, 'data'),
      PODIUM_METRICS_TOKEN: METRICS_TOKEN,
      LOG_LEVEL: 'info',
    };
    delete env.DATABASE_URL;
    delete env.REDIS_URL;
    proc = spawn(process.execPath, [BIN, 'serve'], { env, stdio: ['ignore', writer, 'pipe'] });
    closeSync(writer);
    proc.stderr!.pipe(suiteLogStream(), { end: false });
    let logged = '';
    let url: string | undefined;
    for (let i = 0; i < 1200 && !url; i++) {
      logged += drain(reader);
      url = /Server listening at (http:\/\/127\.0\.0\.1:\d+)/.exec(logged)?.[1];
      if (!url) await new Promise((r) => setTimeout(r, 50));
    }
    expect(url, logged).toBeDefined();

    // ~200 bytes a request line: requests until the pipe (64 KiB) and the destination's 1 MiB
    // are full and lines are given up (~6 000 requests).
    const droppedBytes = async () => {
      const scrape = await fetch(`${url}/metrics`, { headers: { authorization: `Bearer ${METRICS_TOKEN}` } });
      expect(scrape.status).toBe(200);
      return Number(/^podium_log_dropped_bytes_total (\d+)$/m.exec(await scrape.text())?.[1]);
    };
    let dropped = 0;
    for (let batch = 0; batch < 40 && dropped <= 100_000; batch++) {
      for (let i = 0; i < 500; i++) {
        const res = await fetch(`${url}/api/v1/toplists`);
        expect(res.status).toBe(401);
        await res.arrayBuffer();
      }
      dropped = await droppedBytes();
    }
    expect(dropped).toBeGreaterThan(100_000);

    // The reader catches up and keeps reading: what it gets is whole JSON lines (lines are dropped
    // whole), every one of the new requests among them (another route, told apart from the backlog).
    let text = drain(reader);
    const reading = setInterval(() => {
      text += drain(reader as number);
    }, 5);
    // The backlog (up to 1 MiB) flows first: lines logged while it is still buffered are dropped too.
    for (let quiet = 0, seen = -1, i = 0; quiet < 10 && i < 400; i++) {
      quiet = text.length === seen ? quiet + 1 : 0;
      seen = text.length;
      await new Promise((r) => setTimeout(r, 50));
    }
    for (let i = 0; i < 30; i++) await (await fetch(`${url}/api/v1/brands`)).arrayBuffer();
    proc.kill('SIGTERM');
    const code = await new Promise((r) => proc!.once('exit', r));
    clearInterval(reading);
    expect(code).toBe(0);
    const lines = (text + drain(reader)).split('\n').filter(Boolean);
    for (const line of lines) expect(() => JSON.parse(line), line).not.toThrow();
    const after = lines.filter((l) => l.includes('"route":"/api/v1/brands"')).map((l) => JSON.parse(l));
    expect(after).toHaveLength(30);
    expect(after.every((l) => l.msg === 'request' && l.status === 401)).toBe(true);
  });
});

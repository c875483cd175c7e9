/**
 * What filled each long event-loop turn of a measured run, one JSON line per gap to the file named
 * by BENCH_STALL_LOG (loaded by serve.mjs only then). A 1 ms timer marks the turns; a gap over
 * BENCH_STALL_MS (15) is written with the process's CPU over it, the PGlite calls inside it (by
 * prepared statement name, or the opening of the SQL text; never a bound value), the longest of
 * them, the collections, and the responses ended. Records only between `stalls-reset` and `stalls`,
 * the measured rounds. This is how the tracking links' re-reads were found (bench/README.md,
 * session 18): gaps full of one unprepared statement.
 */
import { openSync, writeSync } from 'node:fs';
import http from 'node:http';
import { PerformanceObserver, performance } from 'node:perf_hooks';
import { PGlite } from '@electric-sql/pglite';

const out = openSync(process.env.BENCH_STALL_LOG, 'a');
const threshold = Number(process.env.BENCH_STALL_MS ?? 15);
const TICK_MS = 1;

let recording = false;
let gap = fresh();
function fresh() {
  return { statements: {}, statementMs: 0, longest: { what: '', ms: 0 }, gcMs: 0, responses: 0 };
}

/** A protocol message as a statement's name: Bind by its prepared name, Parse and Query by their SQL's opening. */
function statementOf(message) {
  const type = String.fromCharCode(message[0]);
  const text = (from, to) => Buffer.from(message.subarray(from, to)).toString('latin1').split('\0');
  if (type === 'B') return `bind ${text(5, 200)[1] || '(unnamed)'}`;
  if (type === 'P') return `parse ${text(5, 120)[1].replace(/\s+/g, ' ').slice(0, 80)}`;
  if (type === 'Q') return `query ${text(5, 120)[0].replace(/\s+/g, ' ').slice(0, 80)}`;
  return MESSAGE[type] ?? type;
}
const MESSAGE = { D: 'describe', E: 'execute', S: 'sync', C: 'close', H: 'flush' };

const run = PGlite.prototype.execProtocolRawSync;
PGlite.prototype.execProtocolRawSync = function (message) {
  const started = performance.now();
  try {
    return run.call(this, message);
  } finally {
    if (recording) {
      const ms = performance.now() - started;
      const what = statementOf(message);
      gap.statements[what] = (gap.statements[what] ?? 0) + 1;
      gap.statementMs += ms;
      if (ms > gap.longest.ms) gap.longest = { what, ms: Math.round(ms * 10) / 10 };
    }
  }
};

const end = http.ServerResponse.prototype.end;
http.ServerResponse.prototype.end = function (...args) {
  if (recording) gap.responses++;
  return end.apply(this, args);
};

new PerformanceObserver((list) => {
  if (recording) for (const e of list.getEntries()) gap.gcMs += e.duration;
}).observe({ entryTypes: ['gc'] });

let last = 0;
let lastCpu = process.cpuUsage();
/** One tick: writes the gap since the last one when it was long, then starts the next gap. */
function tick() {
  const now = performance.now();
  const cpu = process.cpuUsage(lastCpu);
  const gapMs = now - last - TICK_MS;
  if (gapMs > threshold) {
    const line = {
      gap_ms: Math.round(gapMs * 10) / 10,
      user_ms: Math.round(cpu.user / 100) / 10,
      system_ms: Math.round(cpu.system / 100) / 10,
      statement_ms: Math.round(gap.statementMs * 10) / 10,
      longest: gap.longest,
      gc_ms: Math.round(gap.gcMs * 10) / 10,
      responses: gap.responses,
      statements: gap.statements,
    };
    writeSync(out, `${JSON.stringify(line)}\n`);
  }
  gap = fresh();
  last = now;
  lastCpu = process.cpuUsage();
}

// The timer runs only while a round is measured (as stalls.mjs's): between rounds the server is
// not woken every millisecond.
let timer;
process.on('message', (m) => {
  if (m.cmd === 'stalls-reset') {
    writeSync(out, `${JSON.stringify({ run: m.label ?? null })}\n`);
    recording = true;
    gap = fresh();
    last = performance.now();
    lastCpu = process.cpuUsage();
    timer = setInterval(tick, TICK_MS).unref();
  }
  if (m.cmd === 'stalls') {
    recording = false;
    clearInterval(timer);
  }
});

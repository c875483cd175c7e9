/**
 * The load generator: Debian's `wrk` (C, one thread), pinned with `taskset` to its own core so it
 * never takes CPU from the server under test. Requests come from a generated Lua script; its
 * `done` hook prints the summary as one JSON line.
 */
import { execFileSync, spawn } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';

/** The core wrk runs on; the servers run on `SERVER_CPU`. */
export const WRK_CPU = process.env.BENCH_WRK_CPU ?? '1';
export const SERVER_CPU = process.env.BENCH_SERVER_CPU ?? '0';

/** What one wrk run sends. */
export interface LoadSpec {
  /** Paths sent in turn (each connection takes the next one). */
  paths: string[];
  method?: string;
  headers?: Record<string, string>;
  body?: string;
  /**
   * Postback mode: each request carries `transaction_id=<prefix>-<n>` appended to the path's query,
   * every id sent twice in a row (the pair is in flight at once on two connections).
   */
  transactionIds?: { prefix: string };
}

/** wrk's summary of one run. */
export interface WrkResult {
  requests: number;
  duration_s: number;
  rps: number;
  p50_ms: number;
  p99_ms: number;
  /** Socket errors and timeouts. */
  errors: number;
  /** Responses with a status outside 2xx and 3xx. */
  non_2xx_3xx: number;
}

/** Installs wrk from Debian when it is missing (root on the bench machines). */
export function ensureWrk(log: (m: string) => void): void {
  try {
    execFileSync('wrk', ['-v'], { stdio: 'ignore' });
    return;
  } catch (err) {
    // `wrk -v` exits 1 after printing its version: only a missing binary is a problem.
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') return;
  }
  log('bench: wrk not found, installing the Debian package');
  const apt = (args: string[]) =>
    execFileSync('apt-get', args, {
      stdio: 'inherit',
      env: { ...process.env, DEBIAN_FRONTEND: 'noninteractive' },
    });
  apt(['update']);
  apt(['install', '-y', 'wrk']);
}

const lua = (s: string) => JSON.stringify(s); // a JSON string is a valid Lua string literal here

function script(spec: LoadSpec): string {
  const headers = Object.entries(spec.headers ?? {})
    .map(([k, v]) => `[${lua(k)}] = ${lua(v)}`)
    .join(', ');
  const common = `
local method = ${lua(spec.method ?? 'GET')}
local headers = { ${headers} }
local body = ${spec.body === undefined ? 'nil' : lua(spec.body)}
local paths = { ${spec.paths.map(lua).join(', ')} }
`;
  const make = spec.transactionIds
    ? `
local n = 0
request = function()
  local p = paths[(math.floor(n / 2) % #paths) + 1]
  local sep = string.find(p, "?", 1, true) and "&" or "?"
  local r = wrk.format(method, p .. sep .. "transaction_id=" .. ${lua(spec.transactionIds.prefix)} .. "-" .. math.floor(n / 2), headers, body)
  n = n + 1
  return r
end
`
    : `
local reqs = {}
local i = 0
init = function(args)
  for k, p in ipairs(paths) do reqs[k] = wrk.format(method, p, headers, body) end
end
request = function()
  i = i % #reqs + 1
  return reqs[i]
end
`;
  const done = `
done = function(summary, latency, requests)
  local e = summary.errors
  io.write(string.format('WRK_JSON {"requests":%d,"duration_us":%d,"errors":%d,"non_2xx_3xx":%d,"p50_us":%d,"p99_us":%d}\\n',
    summary.requests, summary.duration, e.connect + e.read + e.write + e.timeout, e.status,
    latency:percentile(50), latency:percentile(99)))
end
`;
  return common + make + done;
}

/** Runs wrk against `baseUrl` for `seconds` with `connections` connections and returns its summary. */
export function runWrk(
  baseUrl: string,
  spec: LoadSpec,
  opts: { seconds: number; connections: number; dir: string },
): Promise<WrkResult> {
  const file = join(opts.dir, `wrk-${process.pid}-${Date.now()}-${Math.random().toString(36).slice(2)}.lua`);
  writeFileSync(file, script(spec));
  const args = [
    '-c',
    WRK_CPU,
    'wrk',
    '-t1',
    `-c${opts.connections}`,
    `-d${opts.seconds}s`,
    '--timeout',
    '5s',
  ];
  return new Promise((resolve, reject) => {
    const proc = spawn('taskset', [...args, '-s', file, baseUrl], { stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    proc.stdout.on('data', (d) => {
      out += d;
    });
    proc.stderr.on('data', (d) => {
      err += d;
    });
    proc.on('error', reject);
    proc.on('exit', (code) => {
      const line = /WRK_JSON (.*)/.exec(out)?.[1];
      if (code !== 0 || !line) {
        reject(new Error(`wrk exited ${code}: ${err || out}`));
        return;
      }
      const r = JSON.parse(line) as Record<string, number>;
      const duration = r.duration_us! / 1e6;
      resolve({
        requests: r.requests!,
        duration_s: Math.round(duration * 100) / 100,
        rps: Math.round(r.requests! / duration),
        p50_ms: r.p50_us! / 1000,
        p99_ms: r.p99_us! / 1000,
        errors: r.errors!,
        non_2xx_3xx: r.non_2xx_3xx!,
      });
    });
  });
}

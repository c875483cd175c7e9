/**
 * `npm run bench:top -- <file.cpuprofile> [n]`: the functions with the most self time in a V8 CPU
 * profile (as written by `BENCH_CPU_PROF=<dir> npm run bench -- <scenario>`), each with its main
 * caller, then self time per package or source file, so a hot spot can be read without a profiler UI.
 */
import { readFileSync } from 'node:fs';

interface Node {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  hitCount?: number;
  children?: number[];
}

const [file, n = '30'] = process.argv.slice(2);
if (!file) {
  process.stderr.write('usage: npm run bench:top -- <file.cpuprofile> [n]\n');
  process.exit(2);
}
const profile = JSON.parse(readFileSync(file, 'utf8')) as { nodes: Node[] };
const byId = new Map(profile.nodes.map((node) => [node.id, node]));
const parent = new Map<number, number>();
for (const node of profile.nodes) for (const c of node.children ?? []) parent.set(c, node.id);
// Shares are of busy time: samples where the process was idle (waiting in epoll) are left out.
const isIdle = (node: Node) => node.callFrame.functionName === '(idle)';
const total = profile.nodes.reduce((s, node) => s + (isIdle(node) ? 0 : (node.hitCount ?? 0)), 0);
const where = (node: Node) => {
  const f = node.callFrame;
  const url = f.url.replace(/^file:\/\//, '').replace(process.cwd(), '.');
  return `${f.functionName || '(anonymous)'} ${url ? `${url.split('node_modules/').at(-1)}:${f.lineNumber + 1}` : ''}`.trim();
};
const self = new Map<string, number>();
const callers = new Map<string, Map<string, number>>();
for (const node of profile.nodes) {
  const hits = node.hitCount ?? 0;
  if (!hits || isIdle(node)) continue;
  const key = where(node);
  self.set(key, (self.get(key) ?? 0) + hits);
  const p = parent.get(node.id);
  const caller = p === undefined ? '(root)' : where(byId.get(p)!);
  const m = callers.get(key) ?? new Map<string, number>();
  m.set(caller, (m.get(caller) ?? 0) + hits);
  callers.set(key, m);
}
const pct = (x: number) => `${((x / total) * 100).toFixed(1)}%`;
process.stdout.write(`${total} busy samples\n`);
for (const [key, hits] of [...self].sort((a, b) => b[1] - a[1]).slice(0, Number(n))) {
  const top = [...callers.get(key)!].sort((a, b) => b[1] - a[1])[0]!;
  process.stdout.write(`${pct(hits).padStart(6)}  ${key}\n        ← ${top[0]}\n`);
}

const byFile = new Map<string, number>();
for (const [key, hits] of self) {
  const file = key.split(' ')[1]?.replace(/:\d+$/, '') ?? '(native)';
  const pkg =
    file.startsWith('./') || file.startsWith('node:')
      ? file
      : file
          .split('/')
          .slice(0, file.startsWith('@') ? 2 : 1)
          .join('/');
  byFile.set(pkg || '(native)', (byFile.get(pkg || '(native)') ?? 0) + hits);
}
process.stdout.write('\nby package or file (self time)\n');
for (const [file, hits] of [...byFile].sort((a, b) => b[1] - a[1]).slice(0, 25))
  process.stdout.write(`${pct(hits).padStart(6)}  ${file}\n`);

#!/usr/bin/env node
// Prints the coverage of each module (src/modules/<area>, src/lib, src/db, src/cli, the rest of
// src, packages/<name>) from the json-summary report `vitest run --coverage` writes.
import { readFileSync } from 'node:fs';
import { relative, resolve } from 'node:path';

const root = resolve(import.meta.dirname, '..');
const summary = JSON.parse(readFileSync(resolve(root, 'coverage/coverage-summary.json'), 'utf8'));
const KINDS = ['lines', 'statements', 'branches', 'functions'];

/** The module a file belongs to. */
function moduleOf(file) {
  const parts = relative(root, file).split('/');
  if (parts[0] === 'src' && parts[1] === 'modules') return parts.slice(0, 3).join('/');
  if (parts[0] === 'src') return parts.length > 2 ? parts.slice(0, 2).join('/') : 'src (root)';
  return parts.slice(0, 2).join('/');
}

const modules = new Map();
for (const [file, totals] of Object.entries(summary)) {
  if (file === 'total') continue;
  const name = moduleOf(file);
  const m = modules.get(name) ?? Object.fromEntries(KINDS.map((k) => [k, { covered: 0, total: 0 }]));
  for (const k of KINDS) {
    m[k].covered += totals[k].covered;
    m[k].total += totals[k].total;
  }
  modules.set(name, m);
}
modules.set('total', summary.total);

const pct = (c) => (c.total ? ((100 * c.covered) / c.total).toFixed(1) : '100.0');
const width = Math.max(...[...modules.keys()].map((n) => n.length));
console.log(`${'module'.padEnd(width)}  ${KINDS.map((k) => k.padStart(10)).join('')}`);
for (const [name, m] of [...modules].sort(([a], [b]) =>
  a === 'total' ? 1 : b === 'total' ? -1 : a.localeCompare(b),
))
  console.log(`${name.padEnd(width)}  ${KINDS.map((k) => `${pct(m[k])} %`.padStart(10)).join('')}`);

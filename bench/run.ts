/**
 * `npm run bench [name...]`: runs the named benchmarks (default: all) one after another and
 * prints one JSON document. Progress goes to stderr, results to stdout.
 */
import * as delivery from './delivery.ts';
import * as docs from './docs.ts';
import * as docsSearch from './docs-search.ts';
import * as go from './go.ts';
import * as scale from './scale.ts';

const BENCHES: Record<string, { run(log: (m: string) => void): Promise<Record<string, unknown>> }> = {
  delivery,
  docs,
  'docs-search': docsSearch,
  go,
  scale,
};

const log = (m: string) => process.stderr.write(`${m}\n`);
const wanted = process.argv.slice(2);
const unknown = wanted.filter((w) => !(w in BENCHES));
if (unknown.length) {
  log(`unknown benchmark(s): ${unknown.join(', ')}; known: ${Object.keys(BENCHES).join(', ')}`);
  process.exit(2);
}
const out: Record<string, unknown> = { node: process.version, started_at: new Date().toISOString() };
// `scale` fills a database with millions of rows: it runs only when named.
for (const name of wanted.length ? wanted : Object.keys(BENCHES).filter((n) => n !== 'scale')) {
  out[name] = await BENCHES[name]!.run(log);
}
process.stdout.write(`${JSON.stringify(out, null, 2)}\n`);

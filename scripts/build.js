// `npm run build [server|console|packages] [--out DIR]`: the production build, by default in dist/ —
// server and CLI compiled by tsc (type checking is `npm run typecheck`'s job, so this only emits), SQL
// migrations beside the compiled migrator, the operator console built by Vite into dist/console, then
// each workspace package's own build. `--out` builds the server and console elsewhere (the release
// builds into a staging directory, so a test rebuilding dist/ at the same time cannot race it).
import { execFileSync } from 'node:child_process';
import { cpSync, readdirSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';

const root = join(import.meta.dirname, '..');
const require = createRequire(import.meta.url);
const { values, positionals } = parseArgs({ options: { out: { type: 'string' } }, allowPositionals: true });
const out = resolve(values.out ?? join(root, 'dist'));
const only = positionals[0];
const run = (args) => execFileSync(process.execPath, args, { cwd: root, stdio: 'inherit' });
const step = (msg) => process.stderr.write(`build: ${msg}\n`);

if (!only || only === 'server') {
  step(`server and CLI → ${join(out, 'src')}`);
  rmSync(join(out, 'src'), { recursive: true, force: true });
  rmSync(join(out, 'packages'), { recursive: true, force: true });
  run([require.resolve('typescript/bin/tsc'), '-p', 'tsconfig.build.json', '--noCheck', '--outDir', out]);
  cpSync(join(root, 'src/db/migrations'), join(out, 'src/db/migrations'), { recursive: true });
  // The reference ad server `podium start` runs beside the demo reads its own migrations.
  const kit = 'packages/adserver-kit/src/migrations';
  cpSync(join(root, kit), join(out, kit), { recursive: true });
}
if (!only || only === 'console') {
  step(`operator console → ${join(out, 'console')}`);
  const vite = join(root, 'node_modules/vite/bin/vite.js');
  run([vite, 'build', 'console', '--logLevel', 'warn', '--outDir', join(out, 'console'), '--emptyOutDir']);
}
if ((!only && !values.out) || only === 'packages') {
  for (const dir of readdirSync(join(root, 'packages'))) {
    const pkg = require(join(root, 'packages', dir, 'package.json'));
    if (!pkg.scripts?.build) continue;
    step(`${pkg.name} → packages/${dir}/dist`);
    execFileSync('npm', ['run', 'build', '--silent'], { cwd: join(root, 'packages', dir), stdio: 'inherit' });
  }
}

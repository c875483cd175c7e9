// `npm run build`: the production build in dist/ — server and CLI compiled by tsc (type checking is
// `npm run typecheck`'s job, so this emits only), SQL migrations beside the compiled migrator, the
// operator console built by Vite into dist/console, then each workspace package's own build.
import { execFileSync } from 'node:child_process';
import { cpSync, readdirSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';

const root = join(import.meta.dirname, '..');
const require = createRequire(import.meta.url);
const run = (args, cwd = root) => execFileSync(process.execPath, args, { cwd, stdio: 'inherit' });
const step = (msg) => process.stderr.write(`build: ${msg}\n`);
const only = process.argv[2];

if (!only || only === 'server') {
  step('server and CLI → dist/src');
  rmSync(join(root, 'dist', 'src'), { recursive: true, force: true });
  rmSync(join(root, 'dist', 'packages'), { recursive: true, force: true });
  run([require.resolve('typescript/bin/tsc'), '-p', 'tsconfig.build.json', '--noCheck']);
  cpSync(join(root, 'src/db/migrations'), join(root, 'dist/src/db/migrations'), { recursive: true });
}
if (!only || only === 'console') {
  step('operator console → dist/console');
  run([join(root, 'node_modules/vite/bin/vite.js'), 'build', 'console', '--logLevel', 'warn']);
}
if (!only || only === 'packages') {
  for (const dir of readdirSync(join(root, 'packages'))) {
    const pkg = require(join(root, 'packages', dir, 'package.json'));
    if (!pkg.scripts?.build) continue;
    step(`${pkg.name} → packages/${dir}/dist`);
    execFileSync('npm', ['run', 'build', '--silent'], { cwd: join(root, 'packages', dir), stdio: 'inherit' });
  }
}

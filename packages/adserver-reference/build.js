// Builds the published reference server from the sources in packages/adserver-kit/src: tsc emits
// JavaScript and declarations into dist/ (same layout; the root `npm run typecheck` checks the types),
// and the SQL migrations are copied beside db.js.
import { execFileSync } from 'node:child_process';
import { copyFileSync, cpSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';

const here = import.meta.dirname;
const src = join(here, '../adserver-kit/src');
rmSync(join(here, 'dist'), { recursive: true, force: true });
const tsc = createRequire(import.meta.url).resolve('typescript/bin/tsc');
execFileSync(process.execPath, [tsc, '-p', join(here, 'tsconfig.build.json'), '--noCheck'], {
  stdio: 'inherit',
});
cpSync(join(src, 'migrations'), join(here, 'dist/migrations'), { recursive: true });
copyFileSync(join(here, '../../LICENSE'), join(here, 'LICENSE'));

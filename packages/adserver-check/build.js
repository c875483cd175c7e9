// Builds the published checker: packages/adserver-kit/src/check/cli.ts and everything it imports
// (undici, ajv, TypeBox, commander, canonicalize) bundled by esbuild into one ESM file, so the package
// has no dependencies to install. The sources stay in packages/adserver-kit (one copy of the checker).
import { copyFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { build } from 'esbuild';

const here = import.meta.dirname;
rmSync(join(here, 'dist'), { recursive: true, force: true });
await build({
  entryPoints: [join(here, '../adserver-kit/src/check/cli.ts')],
  outfile: join(here, 'dist/cli.js'),
  bundle: true,
  platform: 'node',
  format: 'esm',
  target: 'node20.19',
  legalComments: 'linked',
  logLevel: 'warning',
  // Bundled CommonJS dependencies call require() for Node built-ins; give the ESM bundle one.
  banner: {
    js: "#!/usr/bin/env node\nimport { createRequire as __cr } from 'node:module';\nconst require = __cr(import.meta.url);",
  },
});
copyFileSync(join(here, '../../LICENSE'), join(here, 'LICENSE'));

#!/usr/bin/env node
// Entry of the `podium` command: runs the compiled CLI (`npm run build` writes dist/; no TypeScript
// loader at run time). In a checkout, `npm run dev` or bin/podium-dev.js run the sources instead.
import { existsSync } from 'node:fs';

const main = new URL('../dist/src/cli/main.js', import.meta.url);
if (!existsSync(main)) {
  process.stderr.write(
    'podium: no build in dist/ — run `npm run build` first (or `npm start`, which builds)\n',
  );
  process.exit(1);
}
await import(main.href);

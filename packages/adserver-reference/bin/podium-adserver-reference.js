#!/usr/bin/env node
// Entry of `podium-adserver-reference`: the compiled CLI (`npm run build` in this package writes dist/).
await import('../dist/reference/cli.js');

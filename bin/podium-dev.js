#!/usr/bin/env node
// Development entry of `podium`: runs the TypeScript sources through tsx (a dev dependency), so the
// test suite and `npm run podium` see source edits without a build. Not part of the release.
import { register } from 'tsx/esm/api';

register();
await import('../src/cli/main.ts');

#!/usr/bin/env node
// Entry of `adserver-check`: runs the TypeScript CLI through tsx (no build step).
import { register } from 'tsx/esm/api';

register();
await import('../src/check/cli.ts');

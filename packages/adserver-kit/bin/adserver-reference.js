#!/usr/bin/env node
// Entry of `adserver-reference`: runs the TypeScript CLI through tsx (no build step).
import { register } from 'tsx/esm/api';

register();
await import('../src/reference/cli.ts');

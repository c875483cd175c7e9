import { readFileSync } from 'node:fs';

/**
 * The kit's version, from the package.json one level above this module: packages/adserver-kit/ for the
 * sources, the published package's root for its compiled dist/ (both bins print it on --version).
 */
export const VERSION = (
  JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as { version: string }
).version;

import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';

const pkgDir = new URL('..', import.meta.url).pathname;
const tsc = createRequire(import.meta.url).resolve('typescript/bin/tsc');
const out = mkdtempSync(join(tmpdir(), 'toplist-client-'));

// The published artefact: compiled with only the DOM and ES libraries (no Node types), then loaded by
// plain Node without any TypeScript loader.
describe('the publishable build', () => {
  afterAll(() => rmSync(out, { recursive: true, force: true }));

  it('compiles against web APIs only and runs as plain JavaScript', () => {
    execFileSync(process.execPath, [tsc, '-p', join(pkgDir, 'tsconfig.build.json'), '--outDir', out], {
      stdio: 'pipe',
    });
    const index = readFileSync(join(out, 'index.js'), 'utf8');
    expect(index).toContain('from "./cache.js"');
    expect(readFileSync(join(out, 'index.d.ts'), 'utf8')).toContain('createClient');
    const script = `
      const m = await import(${JSON.stringify(join(out, 'index.js'))});
      const row = { template: { id: 1 }, geo: { geo_type: 'global', code: 'ROW', coveredCountries: null } };
      const client = m.createClient({ baseUrl: 'https://podium.example', token: 'pds_x' });
      console.log(JSON.stringify({
        sum: m.sumDecimals(['0.10', '0.20']),
        pick: m.pickForVisitor([row], 'XX').match,
        methods: Object.keys(client).sort(),
        verify: typeof m.verifyWebhook,
      }));`;
    const result = execFileSync(process.execPath, ['--input-type=module', '-e', script], {
      encoding: 'utf8',
    });
    expect(JSON.parse(result)).toEqual({
      sum: '0.30',
      pick: 'global',
      methods: ['byId', 'bySlug', 'family', 'fetchAll', 'list', 'resolve'],
      verify: 'function',
    });
  });

  it('publishes only the build and the README', () => {
    const pkg = JSON.parse(readFileSync(join(pkgDir, 'package.json'), 'utf8'));
    expect(pkg.files).toEqual(['dist', 'README.md', 'LICENSE']);
    expect(pkg.exports['.']).toEqual({ types: './dist/index.d.ts', import: './dist/index.js' });
  });
});

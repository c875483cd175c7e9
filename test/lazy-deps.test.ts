import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';

const SRC = join(import.meta.dirname, '..', 'src');
const dir = mkdtempSync(join(tmpdir(), 'podium-lazy-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('drivers a server does not use', () => {
  it('are not loaded by a server on PGlite without Redis (node-postgres and ioredis cost ~14 MB of RSS)', () => {
    // A process of its own: this test runner may well have loaded both.
    const script = `
      import Module from 'node:module';
      const { loadConfig } = await import(${JSON.stringify(join(SRC, 'config.ts'))});
      const { startServer } = await import(${JSON.stringify(join(SRC, 'server.ts'))});
      const config = loadConfig({ PATH: process.env.PATH, HOST: '127.0.0.1', PORT: '0',
        PODIUM_DATA_DIR: ${JSON.stringify(dir)}, LOG_LEVEL: 'silent' });
      const server = await startServer(config, { log: () => {} });
      const ok = (await fetch(server.url + '/healthz')).status;
      const loaded = Object.keys(Module._cache).filter((k) => /node_modules\\/(pg|ioredis)\\//.test(k));
      await server.close();
      process.stdout.write(JSON.stringify({ ok, pg: loaded.some((k) => k.includes('/pg/')),
        ioredis: loaded.some((k) => k.includes('/ioredis/')) }));`;
    const out = execFileSync(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], {
      encoding: 'utf8',
      timeout: 120_000,
    });
    expect(JSON.parse(out)).toEqual({ ok: 200, pg: false, ioredis: false });
  });
});

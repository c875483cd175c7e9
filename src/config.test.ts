import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig, SETTINGS } from './config.ts';
import { configReference } from './config-doc.ts';

describe('loadConfig', () => {
  it('applies defaults and freezes the result', () => {
    const c = loadConfig({});
    expect(c.port).toBe(3000);
    expect(c.publicUrl).toBe('http://127.0.0.1:3000');
    expect(c.databaseUrl).toBeUndefined();
    expect(Object.isFrozen(c)).toBe(true);
  });

  it('derives the public URL from host and port, and strips a trailing slash from an explicit one', () => {
    expect(loadConfig({ PORT: '8080' }).publicUrl).toBe('http://127.0.0.1:8080');
    expect(loadConfig({ PODIUM_PUBLIC_URL: 'https://toplists.example.com/' }).publicUrl).toBe(
      'https://toplists.example.com',
    );
  });

  it('lists every invalid key at once and never echoes a secret', () => {
    try {
      loadConfig({ PORT: 'eighty', LOG_LEVEL: 'loud', DATABASE_URL: 'mysql://user:hunter2@db/x' });
      expect.unreachable();
    } catch (err) {
      expect(err).toBeInstanceOf(ConfigError);
      const problems = (err as ConfigError).problems;
      expect(problems).toHaveLength(3);
      expect(problems.join()).toContain('PORT');
      expect(problems.join()).toContain('LOG_LEVEL');
      expect(problems.join()).not.toContain('hunter2');
    }
  });

  it('lets typed overrides win over the environment', () => {
    expect(loadConfig({ PORT: '1' }, { port: 4000 }).port).toBe(4000);
  });
});

describe('configuration reference', () => {
  it('docs/configuration.md is the page generated from SETTINGS (run `npm run docs:config`)', () => {
    const page = readFileSync(join(import.meta.dirname, '..', 'docs', 'configuration.md'), 'utf8');
    expect(page).toBe(configReference());
    for (const s of SETTINGS) expect(page).toContain(`\`${s.env}\``);
  });

  it('reads a secret from NAME_FILE and names the variable when the file is missing', () => {
    const dir = mkdtempSync(join(tmpdir(), 'podium-cfg-'));
    const file = join(dir, 'metrics-token');
    writeFileSync(file, 'token-from-a-file-0123\n');
    expect(loadConfig({ PODIUM_METRICS_TOKEN_FILE: file }).metricsToken).toBe('token-from-a-file-0123');
    expect(() => loadConfig({ PODIUM_METRICS_TOKEN_FILE: join(dir, 'nope') })).toThrow(
      /PODIUM_METRICS_TOKEN_FILE/,
    );
    rmSync(dir, { recursive: true, force: true });
  });
});

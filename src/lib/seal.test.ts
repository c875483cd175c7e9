import { randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadConfig, parseSecretKeys } from '../config.ts';
import { AppError } from './errors.ts';
import { GENERATED_KEY_FILE, Sealer, sealerFromConfig } from './seal.ts';

const key = (version: number) => ({ version, key: randomBytes(32) });
const tmp = () => mkdtempSync(path.join(tmpdir(), 'podium-seal-'));

describe('Sealer', () => {
  it('round-trips, and a sealed value holds neither the plaintext nor a reused IV', () => {
    const sealer = new Sealer({ keys: [key(1)], dataDir: tmp() });
    const a = sealer.seal('rsk_the_api_key', 'conn_1');
    const b = sealer.seal('rsk_the_api_key', 'conn_1');
    expect(a).toMatch(/^gcm1:1:/);
    expect(a).not.toContain('rsk_the_api_key');
    expect(a).not.toBe(b);
    expect(sealer.open(a, 'conn_1')).toBe('rsk_the_api_key');
  });

  it('refuses another record id, a tampered value and an unknown key version', () => {
    const sealer = new Sealer({ keys: [key(1)], dataDir: tmp() });
    const sealed = sealer.seal('secret-value', 'conn_1');
    expect(() => sealer.open(sealed, 'conn_2')).toThrow(/authentication failed/);
    const parts = sealed.split(':');
    const ct = Buffer.from(parts[4]!, 'base64url');
    ct[0]! ^= 1;
    parts[4] = ct.toString('base64url');
    expect(() => sealer.open(parts.join(':'), 'conn_1')).toThrow(/authentication failed/);
    const other = new Sealer({ keys: [key(2)], dataDir: tmp() });
    expect(() => other.open(sealed, 'conn_1')).toThrow(/key version 1 is not configured/);
    expect(() => sealer.open('plain text', 'conn_1')).toThrow(/not a sealed value/);
    try {
      sealer.open(sealed, 'conn_2');
    } catch (err) {
      expect((err as AppError).code).toBe('secret_unreadable');
    }
  });

  it('opens values of an older key and says they need rotation; re-sealing uses the current key', () => {
    const v1 = key(1);
    const old = new Sealer({ keys: [v1], dataDir: tmp() });
    const sealed = old.seal('k', 'rec');
    const rotated = new Sealer({ keys: [key(2), v1], dataDir: tmp() });
    expect(rotated.needsRotation(sealed)).toBe(true);
    const resealed = rotated.seal(rotated.open(sealed, 'rec'), 'rec');
    expect(resealed).toMatch(/^gcm1:2:/);
    expect(rotated.needsRotation(resealed)).toBe(false);
    expect(rotated.open(resealed, 'rec')).toBe('k');
  });

  it('on the embedded database generates one key file (mode 0600), warns once, and reuses it', () => {
    const dir = tmp();
    const warnings: string[] = [];
    const first = new Sealer({ dataDir: dir }, (m) => warnings.push(m));
    const sealed = first.seal('abc', 'r');
    first.seal('def', 'r');
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toContain('PODIUM_SECRET_KEYS');
    const file = path.join(dir, GENERATED_KEY_FILE);
    expect(statSync(file).mode & 0o777).toBe(0o600);
    expect(readFileSync(file, 'utf8')).toMatch(/^1:[A-Za-z0-9+/]+=*\n$/);
    expect(new Sealer({ dataDir: dir }).open(sealed, 'r')).toBe('abc');
  });

  it('with DATABASE_URL and no key, sealing fails naming the variable to set', () => {
    const dir = tmp();
    const sealer = new Sealer({ databaseUrl: 'postgres://db/podium', dataDir: dir });
    let caught: unknown;
    try {
      sealer.seal('x', 'r');
    } catch (err) {
      caught = err;
    }
    expect(caught).toBeInstanceOf(AppError);
    expect((caught as AppError).code).toBe('secret_key_missing');
    expect((caught as AppError).message).toContain('PODIUM_SECRET_KEYS');
    expect(() => statSync(path.join(dir, GENERATED_KEY_FILE))).toThrow();
  });

  it('reads the key ring from PODIUM_SECRET_KEYS, current first, and rejects malformed rings', () => {
    const k1 = randomBytes(32).toString('base64');
    const k2 = randomBytes(32).toString('base64');
    const config = loadConfig({ PODIUM_SECRET_KEYS: `2:${k2}, 1:${k1}` });
    const sealer = sealerFromConfig(config);
    expect(sealer.currentVersion()).toBe(2);
    expect(() => parseSecretKeys('1:c2hvcnQ=')).toThrow(/32 bytes/);
    expect(() => parseSecretKeys(`1:${k1},1:${k2}`)).toThrow(/unique/);
    expect(() => parseSecretKeys('nope')).toThrow(/version:base64key/);
    expect(() => loadConfig({ PODIUM_SECRET_KEYS: `0:${k1}` })).toThrow(/PODIUM_SECRET_KEYS/);
  });
});

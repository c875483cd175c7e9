import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { type Config, parseSecretKeys, type SealKey } from '../config.ts';
import { AppError } from './errors.ts';

/**
 * Secrets at rest (ad-server API keys, operator report keys, webhook signing secrets, TOTP secrets) sealed with AES-256-GCM: a 96-bit random IV per seal, a
 * 128-bit tag, the key version in clear beside the ciphertext, and the caller's associated data
 * (the record id) bound in, so a sealed value copied onto another record does not open.
 *
 * Sealed form: `gcm1:<version>:<iv>:<tag>:<ciphertext>` (base64url parts).
 */

const PREFIX = 'gcm1';
/** File of the generated key on the embedded database (data directory, mode 0600). */
export const GENERATED_KEY_FILE = 'secret-keys';

export interface SealerSource {
  keys?: readonly SealKey[] | undefined;
  /** Set on server deployments: a missing key is then an operator error, never generated. */
  databaseUrl?: string | undefined;
  dataDir: string;
}

/** One sealed secret as stored: the record it names, the associated data bound in, the sealed value. */
export interface StoredSecret {
  record: string;
  aad: string;
  sealed: string;
}

/** What one re-seal pass did: values re-sealed, records no configured key opens, values looked at. */
export interface ResealReport {
  resealed: number;
  unreadable: string[];
  total: number;
}

/** Seals and opens secrets with the configured key ring (current key first). */
export class Sealer {
  private ring: readonly SealKey[] | undefined;

  constructor(
    private readonly source: SealerSource,
    private readonly warn: (msg: string) => void = () => {},
  ) {}

  /** Encrypts `plaintext` bound to `aad` (the record id) with the current key. */
  seal(plaintext: string, aad: string): string {
    const current = this.keys()[0]!;
    const iv = randomBytes(12);
    const cipher = createCipheriv('aes-256-gcm', current.key, iv, { authTagLength: 16 });
    cipher.setAAD(aadFor(current.version, aad));
    const ct = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final()]);
    return [PREFIX, current.version, b64(iv), b64(cipher.getAuthTag()), b64(ct)].join(':');
  }

  /** Decrypts a sealed value; throws `secret_unreadable` on a wrong record, unknown key or tampering. */
  open(sealed: string, aad: string): string {
    const parts = parse(sealed);
    const entry = this.keys().find((k) => k.version === parts.version);
    if (!entry) throw unreadable(`key version ${parts.version} is not configured`);
    try {
      const decipher = createDecipheriv('aes-256-gcm', entry.key, parts.iv, { authTagLength: 16 });
      decipher.setAAD(aadFor(parts.version, aad));
      decipher.setAuthTag(parts.tag);
      return Buffer.concat([decipher.update(parts.ct), decipher.final()]).toString('utf8');
    } catch {
      throw unreadable('authentication failed (wrong record or tampered value)');
    }
  }

  /** True when `sealed` was made with a key other than the current one (re-seal it). */
  needsRotation(sealed: string): boolean {
    return parse(sealed).version !== this.keys()[0]!.version;
  }

  /**
   * Re-seals every value not sealed with the current key. `store` writes one only if the stored
   * value is still the one read (false when it changed meanwhile: whoever changed it sealed it
   * with the current key). Values no configured key opens are listed by record, never touched.
   */
  async reseal<S extends StoredSecret>(
    secrets: readonly S[],
    store: (secret: S, resealed: string) => Promise<boolean>,
  ): Promise<ResealReport> {
    let resealed = 0;
    const unreadable: string[] = [];
    for (const s of secrets) {
      let plain: string;
      try {
        if (!this.needsRotation(s.sealed)) continue;
        plain = this.open(s.sealed, s.aad);
      } catch {
        unreadable.push(s.record);
        continue;
      }
      if (await store(s, this.seal(plain, s.aad))) resealed++;
    }
    return { resealed, unreadable, total: secrets.length };
  }

  /** Version of the key new seals use. */
  currentVersion(): number {
    return this.keys()[0]!.version;
  }

  /** The key ring, resolved on first use (so processes that never seal need no key). */
  private keys(): readonly SealKey[] {
    this.ring ??= this.resolve();
    return this.ring;
  }

  private resolve(): readonly SealKey[] {
    if (this.source.keys?.length) return this.source.keys;
    if (this.source.databaseUrl) {
      throw new AppError(
        'secret_key_missing',
        'No key to encrypt secrets at rest: set PODIUM_SECRET_KEYS (or PODIUM_SECRET_KEYS_FILE) to "1:<base64 of 32 random bytes>", e.g. 1:$(openssl rand -base64 32)',
      );
    }
    const file = path.join(this.source.dataDir, GENERATED_KEY_FILE);
    const keys = readOrCreateKeyFile(file);
    this.warn(
      `PODIUM_SECRET_KEYS is not set: secrets at rest are sealed with a key generated into ${file}; set PODIUM_SECRET_KEYS for production`,
    );
    return keys;
  }
}

/** The sealer of a running Podium: configured keys, or the embedded database's generated key. */
export function sealerFromConfig(
  config: Pick<Config, 'secretKeys' | 'databaseUrl' | 'dataDir'>,
  warn?: (msg: string) => void,
): Sealer {
  return new Sealer(
    { keys: config.secretKeys, databaseUrl: config.databaseUrl, dataDir: config.dataDir },
    warn,
  );
}

function readOrCreateKeyFile(file: string): SealKey[] {
  mkdirSync(path.dirname(file), { recursive: true });
  try {
    // `wx`: exclusive create, so two processes starting together never write different keys.
    writeFileSync(file, `1:${randomBytes(32).toString('base64')}\n`, { mode: 0o600, flag: 'wx' });
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
  }
  return parseSecretKeys(readFileSync(file, 'utf8').trim());
}

function aadFor(version: number, aad: string): Buffer {
  return Buffer.from(`${version}\u0000${aad}`, 'utf8');
}

function parse(sealed: string): { version: number; iv: Buffer; tag: Buffer; ct: Buffer } {
  const m = /^gcm1:([1-9]\d{0,8}):([A-Za-z0-9_-]{16}):([A-Za-z0-9_-]{22}):([A-Za-z0-9_-]*)$/.exec(sealed);
  if (!m) throw unreadable('not a sealed value');
  return {
    version: Number(m[1]),
    iv: Buffer.from(m[2]!, 'base64url'),
    tag: Buffer.from(m[3]!, 'base64url'),
    ct: Buffer.from(m[4]!, 'base64url'),
  };
}

const b64 = (buf: Buffer): string => buf.toString('base64url');

function unreadable(why: string): AppError {
  return new AppError('secret_unreadable', `Sealed secret cannot be opened: ${why}`);
}

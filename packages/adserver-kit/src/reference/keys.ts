import { createHash, randomBytes } from 'node:crypto';

/** Prefix of reference-server API keys, so secret scanners and humans recognise them. */
export const KEY_PREFIX = 'rsk_';

/** A new random API key (256 bits). Shown once; only its hash is stored. */
export function mintKey(): string {
  return KEY_PREFIX + randomBytes(32).toString('base64url');
}

/** SHA-256 of a key, as stored at rest and used for lookup. */
export function hashKey(key: string): Buffer {
  return createHash('sha256').update(key, 'utf8').digest();
}

/** The non-secret leading part of a key, safe to list. */
export function keyHint(key: string): string {
  return `${key.slice(0, 8)}…`;
}

/** Reads the token of an `Authorization: Bearer` header; undefined when absent or malformed. */
export function parseBearer(header: string | undefined): string | undefined {
  const m = header ? /^Bearer[ ]+([A-Za-z0-9._~+/=-]{1,512})[ ]*$/i.exec(header) : null;
  return m?.[1];
}

/** A new opaque id with a readable kind prefix (`ord_…`, `li_…`). */
export function newId(prefix: string): string {
  return `${prefix}_${randomBytes(9).toString('base64url')}`;
}

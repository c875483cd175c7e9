import { hash, randomBytes, timingSafeEqual } from 'node:crypto';

/** Token kinds and their prefixes: the prefix tells a human (and a secret scanner) what a token is. */
export const TOKEN_PREFIX = { site: 'pds_', admin: 'pda_', postback: 'pdp_', advertiser: 'pdb_' } as const;
export type TokenKind = keyof typeof TOKEN_PREFIX;

/** A new random token (256 bits, base64url) with its kind prefix. Shown once, stored only as a hash. */
export function mintToken(kind: TokenKind): string {
  return TOKEN_PREFIX[kind] + randomBytes(32).toString('base64url');
}

/** SHA-256 of a token, as stored at rest and used for lookup. */
export function hashToken(token: string): Buffer {
  return hash('sha256', token, 'buffer');
}

/** The same SHA-256 as base64 text: the key of in-memory lookups (one call, no Hash object). */
export function tokenKey(token: string): string {
  return hash('sha256', token, 'base64');
}

/** Constant-time equality of two hashes (or any equal-length byte strings). */
export function sameBytes(a: Buffer | Uint8Array, b: Buffer | Uint8Array): boolean {
  return a.length === b.length && timingSafeEqual(a, b);
}

/** The non-secret leading part of a token, safe to display in lists ("pds_AbC1…"). */
export function tokenHint(token: string): string {
  return `${token.slice(0, 8)}…`;
}

/** Reads a bearer token from an Authorization header value; undefined when absent or malformed. */
export function parseBearer(header: string | undefined): string | undefined {
  if (!header) return undefined;
  const m = /^Bearer[ ]+([A-Za-z0-9._~+/=-]{1,512})[ ]*$/i.exec(header);
  return m?.[1];
}

/** A new token of a kind with what is stored of it: the hash it is checked by and the hint shown for it. */
export function newToken(kind: TokenKind): { token: string; hash: Buffer; hint: string } {
  const token = mintToken(kind);
  return { token, hash: hashToken(token), hint: tokenHint(token) };
}

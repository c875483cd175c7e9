import { randomBytes, type ScryptOptions, scrypt, timingSafeEqual } from 'node:crypto';
import { invalidField } from '../../lib/errors.ts';

/**
 * scrypt cost: N = 2^15, r = 8, p = 1 (about 32 MiB and tens of milliseconds per hash), a 64-byte
 * key and a 16-byte random salt. The parameters are stored with each hash, so raising them later
 * leaves older hashes verifiable.
 */
export const SCRYPT = { N: 2 ** 15, r: 8, p: 1, keyLength: 64, saltLength: 16 } as const;

/** Longest password accepted: hashing cost must not grow with what a client sends. */
export const PASSWORD_MAX = 200;
export const PASSWORD_MIN = 12;

// Hashes stored with bigger parameters than these are refused rather than run (a tampered row
// must not make one sign-in cost gigabytes).
const MAX_N = 2 ** 20;
const MAX_R = 16;
const MAX_P = 4;

function derive(password: string, salt: Buffer, N: number, r: number, p: number, len: number) {
  const opts: ScryptOptions = { N, r, p, maxmem: 256 * N * r + 1024 * 1024 };
  return new Promise<Buffer>((resolve, reject) =>
    scrypt(password.normalize('NFC'), salt, len, opts, (err, key) => (err ? reject(err) : resolve(key))),
  );
}

/** Hashes a password as `scrypt$N$r$p$salt$key` (salt and key base64). */
export async function hashPassword(password: string): Promise<string> {
  const { N, r, p, keyLength, saltLength } = SCRYPT;
  const salt = randomBytes(saltLength);
  const key = await derive(password, salt, N, r, p, keyLength);
  return `scrypt$${N}$${r}$${p}$${salt.toString('base64')}$${key.toString('base64')}`;
}

/** Whether `password` matches a stored hash; compares in constant time, false for a malformed hash. */
export async function verifyPassword(password: string, stored: string): Promise<boolean> {
  const parts = stored.split('$');
  if (parts.length !== 6 || parts[0] !== 'scrypt') return false;
  const [N, r, p] = parts.slice(1, 4).map(Number) as [number, number, number];
  if (![N, r, p].every(Number.isSafeInteger) || N > MAX_N || r > MAX_R || p > MAX_P || N < 2) return false;
  const salt = Buffer.from(parts[4]!, 'base64');
  const expected = Buffer.from(parts[5]!, 'base64');
  if (expected.length < 16 || expected.length > 128) return false;
  const key = await derive(password, salt, N, r, p, expected.length);
  return timingSafeEqual(key, expected);
}

let decoy: Promise<string> | undefined;

/**
 * Spends the work of one verification against a hash no password matches, so a sign-in for an
 * unknown email (or a user without a password) takes as long as a wrong password.
 */
export async function verifyDecoy(password: string): Promise<false> {
  decoy ??= hashPassword(randomBytes(32).toString('base64'));
  await verifyPassword(password, await decoy);
  return false;
}

// Passwords of 12 characters or more that lead the public breach lists; anything shorter is
// refused by length already.
const COMMON = new Set([
  '123456789012',
  '1234567890123',
  '12345678901234',
  '123123123123',
  '111111111111',
  '000000000000',
  'password1234',
  'password12345',
  'password123456',
  'passwordpassword',
  'qwertyuiop12',
  'qwertyuiopasdf',
  'qwertyuiopasdfgh',
  '1qaz2wsx3edc',
  '1q2w3e4r5t6y',
  'iloveyou1234',
  'administrator',
  'administrator1',
  'welcome12345',
  'letmein12345',
  'changeme1234',
  'abcdefghijkl',
  'abc123abc123',
  'trustno1trustno1',
  'football1234',
  'baseball1234',
  'superman1234',
  'monkey123456',
  'dragon123456',
  'sunshine1234',
  'princess1234',
  'starwars1234',
  'podiumpodium',
  'podium123456',
]);

/**
 * Minimum strength: 12 to 200 characters, not mostly one character, not a well-known password,
 * not the email or its local part. Throws a 422 naming `password`.
 */
export function checkPasswordStrength(password: string, email: string): void {
  const chars = [...password];
  if (chars.length < PASSWORD_MIN)
    throw invalidField('password', `must be at least ${PASSWORD_MIN} characters long`);
  if (chars.length > PASSWORD_MAX)
    throw invalidField('password', `must be at most ${PASSWORD_MAX} characters long`);
  const lower = password.toLowerCase();
  if (new Set(chars).size < 4)
    throw invalidField('password', 'must use more than three different characters');
  if (COMMON.has(lower)) throw invalidField('password', 'is a well-known password: choose another');
  const mail = email.toLowerCase();
  const local = mail.split('@')[0] ?? '';
  if (lower.includes(mail) || (local.length >= 4 && lower.includes(local)))
    throw invalidField('password', 'must not contain your email address');
}

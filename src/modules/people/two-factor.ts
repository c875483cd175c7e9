import { randomBytes } from 'node:crypto';
import { Secret, TOTP } from 'otpauth';
import QRCode from 'qrcode';
import { hashToken } from '../../lib/tokens.ts';

/**
 * TOTP as RFC 6238 and every authenticator app know it: SHA-1, 6 digits, 30-second steps, a
 * 160-bit secret. One step of drift either way is accepted (a phone's clock a little off).
 */
export const TOTP_PARAMS = { algorithm: 'SHA1', digits: 6, period: 30, window: 1 } as const;
/** Recovery codes made at enrolment. */
export const RECOVERY_CODES = 10;
/** How long the step between a right password and the code may take. */
export const CHALLENGE_TTL_MS = 5 * 60 * 1000;
/** Wrong codes one pending sign-in takes before it is spent (the password is asked again). */
export const CHALLENGE_ATTEMPTS = 5;

/** What enrolment shows once: the otpauth:// URI, the same as a QR code (PNG data URL) and the secret typed by hand. */
export interface Enrolment {
  otpauthUri: string;
  qrCodeDataUrl: string;
  secret: string;
}

const totp = (secretBase32: string, label: string) =>
  new TOTP({
    issuer: 'Podium',
    label,
    algorithm: TOTP_PARAMS.algorithm,
    digits: TOTP_PARAMS.digits,
    period: TOTP_PARAMS.period,
    secret: Secret.fromBase32(secretBase32),
  });

/** A fresh random TOTP secret (base32). */
export function newTotpSecret(): string {
  return new Secret({ size: 20 }).base32;
}

/** The enrolment of a secret for an account (`label`: its email). */
export async function enrolmentOf(secretBase32: string, label: string): Promise<Enrolment> {
  const otpauthUri = totp(secretBase32, label).toString();
  return {
    otpauthUri,
    qrCodeDataUrl: await QRCode.toDataURL(otpauthUri, { errorCorrectionLevel: 'M', margin: 2 }),
    secret: secretBase32,
  };
}

/** The time step a 6-digit code is valid for at `nowMs` (within the window), or null when it is not a current code. */
export function totpStep(secretBase32: string, code: string, nowMs: number): number | null {
  if (!/^\d{6}$/.test(code)) return null;
  const delta = totp(secretBase32, '').validate({
    token: code,
    timestamp: nowMs,
    window: TOTP_PARAMS.window,
  });
  return delta === null ? null : Math.floor(nowMs / 1000 / TOTP_PARAMS.period) + delta;
}

// Crockford-like base32 without look-alikes: codes are read off paper and typed.
const ALPHABET = 'abcdefghjkmnpqrstuvwxyz23456789';

/** Ten recovery codes of 16 characters (about 79 bits each), shown as `xxxx-xxxx-xxxx-xxxx`. */
export function newRecoveryCodes(): string[] {
  return Array.from({ length: RECOVERY_CODES }, () => {
    const bytes = randomBytes(16);
    const chars = [...bytes].map((b) => ALPHABET[b % ALPHABET.length]).join('');
    return chars.match(/.{4}/g)!.join('-');
  });
}

/** A recovery code as typed (any case, dashes or spaces) reduced to what is hashed; null when it cannot be one. */
export function normalRecoveryCode(typed: string): string | null {
  const bare = typed.toLowerCase().replace(/[\s-]/g, '');
  return bare.length === 16 && [...bare].every((c) => ALPHABET.includes(c)) ? bare : null;
}

/** The stored hash of a recovery code. */
export const recoveryHash = (code: string): Buffer => hashToken(normalRecoveryCode(code) ?? code);

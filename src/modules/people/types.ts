// Shapes of the people API that the console shares: no imports, so its build pulls in nothing else.

/**
 * An invitation or admin-issued reset as its issuer gets it: mailed (the link went only to the
 * person's inbox), or not (the link to pass on, and why it was not mailed when mail failed).
 */
export type IssuedLink =
  | { mailed: true; expiresAt: string }
  | { mailed: false; url: string; expiresAt: string; warning?: string };

/** What `POST /session/reset` answers, the same whether the email has an account or not. */
export interface ResetAnswer {
  mailConfigured: boolean;
  message: string;
}

/** A password sign-in waiting for its second step: send `pendingToken` with a code (or enrol first). */
export interface PendingSignIn {
  pendingToken: string;
  /** `totp`: a code from the app or a recovery code; `enrol`: two-factor is required and must be set up first. */
  step: 'totp' | 'enrol';
  expiresAt: string;
}

/** One's own two-factor as `GET /me/two-factor` tells it. */
export interface TwoFactorState {
  enabled: boolean;
  recoveryCodesLeft: number;
  /** Whether the owner requires two-factor for everyone (then it cannot be turned off). */
  required: boolean;
}

// Why a single sign-on was refused, by a fixed code: the callback sends a browser back to the
// console's sign-in page with only this code in the URL, never the provider's own text. No
// imports, so the console's build can share the sentences.

/** Each refusal of the SSO callback, and the sentence the sign-in page shows for it. */
export const SSO_REFUSALS = {
  flow_lost:
    'This single sign-on was not started in this browser, or it took more than ten minutes. Sign in with SSO again.',
  state_mismatch: 'This single sign-on does not match the one this browser started. Sign in with SSO again.',
  provider_refused:
    'Your company sign-in refused the request (you may have cancelled it). Sign in with SSO again, or ask an administrator.',
  provider_failed:
    'Your company sign-in could not be reached or sent an answer Podium cannot accept. Try again in a moment.',
  no_email: 'Your company sign-in did not tell Podium your email address. Ask an administrator.',
  email_unverified:
    'Your company sign-in has not verified your email address, so Podium cannot find your account.',
  identity_taken:
    'The Podium account with your email is linked to another company identity. Ask an administrator.',
  domain_not_allowed:
    'No Podium account has your email, and single sign-on creates accounts for other email domains only. Ask an administrator for an invitation.',
  no_role: 'None of your groups at your company sign-in gives a role in Podium. Ask an administrator.',
  suspended: 'Your Podium account is suspended. Ask an administrator.',
  rate_limited: 'Too many failed sign-ins from this address. Wait a few minutes and try again.',
  misconfigured:
    'Single sign-on is not set up correctly in Podium. Tell an administrator (the server log says why).',
  unavailable: 'Podium could not finish the sign-in just now. Try again in a moment.',
  refused: 'Single sign-on was refused. Sign in with SSO again, or ask an administrator.',
} as const;

export type SsoRefusal = keyof typeof SSO_REFUSALS;

/** The code of a URL's `sso_error`, or null for a missing or unknown one (the URL is anyone's to write). */
export function ssoRefusalOf(value: string | null | undefined): SsoRefusal | null {
  return value && Object.hasOwn(SSO_REFUSALS, value) ? (value as SsoRefusal) : null;
}

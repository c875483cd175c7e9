import type * as Oidc from 'openid-client';
import type { Config, SsoRoleRule } from '../../config.ts';
import { AppError, type ErrorCode } from '../../lib/errors.ts';
import type { OutboundClient } from '../../lib/outbound.ts';
import { protectSecret, redact } from '../../lib/redact.ts';
import type { Sealer } from '../../lib/seal.ts';
import { sameBytes } from '../../lib/tokens.ts';
import type { SsoRefusal } from './sso-refusals.ts';

/** How long a started SSO sign-in may take at the provider before its state cookie is refused. */
export const SSO_FLOW_TTL_MS = 10 * 60 * 1000;
/** Groups read from the claim; more are ignored (a role map never needs that many). */
const MAX_GROUPS = 500;
/** Associated data of the sealed state cookie: a value sealed for another record never opens as one. */
const FLOW_AAD = 'sso-flow';

/** The SSO settings of a running Podium (from the PODIUM_SSO_* variables). */
export interface SsoSettings {
  issuer: string;
  clientId: string;
  clientSecret?: string | undefined;
  scopes: string;
  allowedDomains: readonly string[];
  groupsClaim: string;
  roleMap: readonly SsoRoleRule[];
  defaultRole?: string | undefined;
  /** `<PODIUM_PUBLIC_URL>/api/admin/v1/session/sso/callback`, as registered at the provider. */
  redirectUrl: string;
}

/** Who the provider says signed in, once the ID token is verified. */
export interface SsoIdentity {
  issuer: string;
  subject: string;
  email: string;
  emailVerified: boolean;
  displayName: string;
  /** The role the group mapping gives (or the default role); null: none applies. */
  roleName: string | null;
}

/** A started sign-in: where to send the browser, and the sealed state for its cookie. */
export interface SsoStart {
  url: string;
  cookie: string;
}

/** What the state cookie holds, sealed: nothing of it is readable or changeable by the browser. */
interface Flow {
  state: string;
  nonce: string;
  verifier: string;
  returnTo: string;
  expiresAt: number;
}

/** Where the provider sends the browser back, under PODIUM_PUBLIC_URL (register it at the provider). */
export const SSO_CALLBACK_PATH = '/api/admin/v1/session/sso/callback';

/** The SSO settings from the configuration, or undefined when SSO is off. */
export function ssoSettingsFrom(config: Config): SsoSettings | undefined {
  if (!config.ssoIssuer || !config.ssoClientId) return undefined;
  return {
    issuer: config.ssoIssuer,
    clientId: config.ssoClientId,
    clientSecret: config.ssoClientSecret,
    scopes: config.ssoScopes,
    allowedDomains: config.ssoAllowedDomains,
    groupsClaim: config.ssoGroupsClaim,
    roleMap: config.ssoRoleMap,
    defaultRole: config.ssoDefaultRole,
    redirectUrl: `${config.publicUrl}${SSO_CALLBACK_PATH}`,
  };
}

/**
 * The role of a user in `groups`: the first entry of the map whose group they are in, else the
 * default role, else null.
 */
export function roleFor(settings: Pick<SsoSettings, 'roleMap' | 'defaultRole'>, groups: readonly string[]) {
  const held = new Set(groups);
  return settings.roleMap.find((r) => held.has(r.group))?.role ?? settings.defaultRole ?? null;
}

/** The groups a claim value lists: an array of strings, or one string. */
function groupsOf(value: unknown): string[] {
  if (typeof value === 'string') return [value];
  if (!Array.isArray(value)) return [];
  return value.filter((g): g is string => typeof g === 'string').slice(0, MAX_GROUPS);
}

/** A refusal of the callback, with its fixed code in `details.reason` (what the console is told). */
export const ssoRefused = (code: ErrorCode, reason: SsoRefusal, message: string) =>
  new AppError(code, message, { reason });

/**
 * OpenID Connect sign-in (authorization code with PKCE, state and nonce) through `openid-client`,
 * loaded with the first SSO request. Every call to the provider goes through the outbound client
 * (SSRF guard, timeouts, answer cap). The client secret is registered with the log scrubber.
 */
export class SingleSignOn {
  private discovered: Promise<{ lib: typeof Oidc; config: Oidc.Configuration }> | undefined;

  constructor(
    readonly settings: SsoSettings,
    private readonly outbound: OutboundClient,
    private readonly sealer: Sealer,
    private readonly now: () => Date,
  ) {
    if (settings.clientSecret) protectSecret(settings.clientSecret);
  }

  /** Secrets of a call, scrubbed by value from any message that could reach a client or the log. */
  private say(text: string, extra: readonly string[] = []): string {
    return redact(text, [...(this.settings.clientSecret ? [this.settings.clientSecret] : []), ...extra]);
  }

  /** The provider's metadata, fetched once; a failure is not cached, so the next sign-in retries. */
  private discover() {
    this.discovered ??= (async () => {
      const lib = await import('openid-client');
      const issuer = new URL(this.settings.issuer);
      const secret = this.settings.clientSecret;
      const config = await lib.discovery(
        issuer,
        this.settings.clientId,
        secret,
        secret ? lib.ClientSecretBasic(secret) : lib.None(),
        {
          [lib.customFetch]: (url, init) => this.outbound.fetch(url, init, 'sso'),
          // Plain http passes the config check only for a pair of the loopback allowance.
          execute: issuer.protocol === 'http:' ? [lib.allowInsecureRequests] : [],
        },
      );
      return { lib, config };
    })();
    this.discovered.catch(() => {
      this.discovered = undefined;
    });
    return this.discovered.catch((err: unknown) => {
      throw ssoRefused(
        'bad_gateway',
        'provider_failed',
        `The single sign-on provider could not be reached: ${this.say(String((err as Error)?.message ?? err))}`,
      );
    });
  }

  /** Starts a sign-in: the provider's authorization URL and the sealed state for the cookie. */
  async start(returnTo: string): Promise<SsoStart> {
    const { lib, config } = await this.discover();
    const verifier = lib.randomPKCECodeVerifier();
    const flow: Flow = {
      state: lib.randomState(),
      nonce: lib.randomNonce(),
      verifier,
      returnTo,
      expiresAt: this.now().getTime() + SSO_FLOW_TTL_MS,
    };
    const url = lib.buildAuthorizationUrl(config, {
      redirect_uri: this.settings.redirectUrl,
      scope: this.settings.scopes,
      response_type: 'code',
      code_challenge: await lib.calculatePKCECodeChallenge(verifier),
      code_challenge_method: 'S256',
      state: flow.state,
      nonce: flow.nonce,
    });
    return { url: url.href, cookie: this.sealer.seal(JSON.stringify(flow), FLOW_AAD) };
  }

  /**
   * Finishes a sign-in from the provider's redirect: the state cookie must open and match the
   * `state` parameter; the code is exchanged (with the PKCE verifier) and the ID token verified
   * (signature, issuer, audience, expiry, nonce). Claims missing from the ID token are read from
   * userinfo. Answers who signed in, with the role the mapping gives, and where to return.
   */
  async finish(
    query: string,
    cookie: string | undefined,
  ): Promise<{ identity: SsoIdentity; returnTo: string }> {
    const flow = this.openFlow(cookie);
    const callback = new URL(this.settings.redirectUrl);
    callback.search = query;
    const state = callback.searchParams.get('state') ?? '';
    if (!sameBytes(Buffer.from(state), Buffer.from(flow.state)))
      throw ssoRefused(
        'unauthorized',
        'state_mismatch',
        'This sign-in does not match the one this browser started: sign in with SSO again',
      );
    const { lib, config } = await this.discover();
    const code = callback.searchParams.get('code') ?? '';
    let tokens: Awaited<ReturnType<typeof lib.authorizationCodeGrant>>;
    try {
      tokens = await lib.authorizationCodeGrant(config, callback, {
        pkceCodeVerifier: flow.verifier,
        expectedState: flow.state,
        expectedNonce: flow.nonce,
        idTokenExpected: true,
      });
    } catch (err) {
      if (err instanceof lib.AuthorizationResponseError)
        throw ssoRefused(
          'unauthorized',
          'provider_refused',
          `The provider refused the sign-in: ${this.say(err.error, [code])}`,
        );
      throw ssoRefused(
        'bad_gateway',
        'provider_failed',
        `The single sign-on provider's answer was refused: ${this.say(String((err as Error).message), [code])}`,
      );
    }
    const idClaims = tokens.claims()!;
    let claims: Record<string, unknown> = idClaims;
    const missing = typeof idClaims.email !== 'string' || !(this.settings.groupsClaim in idClaims);
    if (missing && config.serverMetadata().userinfo_endpoint) {
      try {
        const info = await lib.fetchUserInfo(config, tokens.access_token, idClaims.sub);
        claims = { ...info, ...idClaims };
      } catch (err) {
        throw ssoRefused(
          'bad_gateway',
          'provider_failed',
          `The single sign-on provider's userinfo failed: ${this.say(String((err as Error).message), [tokens.access_token])}`,
        );
      }
    }
    if (typeof claims.email !== 'string' || !claims.email.includes('@'))
      throw ssoRefused(
        'forbidden',
        'no_email',
        'The provider sent no email address: ask for the `email` scope',
      );
    const name = typeof claims.name === 'string' ? claims.name : '';
    return {
      identity: {
        issuer: config.serverMetadata().issuer,
        subject: idClaims.sub,
        email: claims.email.slice(0, 320),
        emailVerified: claims.email_verified === true,
        displayName: name.slice(0, 200),
        roleName: roleFor(this.settings, groupsOf(claims[this.settings.groupsClaim])),
      },
      returnTo: flow.returnTo,
    };
  }

  /** The state of the sign-in this browser started; refused when missing, forged or expired. */
  private openFlow(cookie: string | undefined): Flow {
    const lost = ssoRefused(
      'unauthorized',
      'flow_lost',
      'No single sign-on was started in this browser, or it expired: sign in with SSO again',
    );
    if (!cookie || cookie.length > 2000) throw lost;
    let flow: Flow;
    try {
      flow = JSON.parse(this.sealer.open(cookie, FLOW_AAD)) as Flow;
    } catch {
      throw lost;
    }
    if (!(flow.expiresAt > this.now().getTime())) throw lost;
    return flow;
  }
}

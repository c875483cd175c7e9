import { readFileSync } from 'node:fs';
import path from 'node:path';
import ipaddr from 'ipaddr.js';
import { endpointKey, normaliseAddress, parseLoopbackPair } from './lib/ssrf.ts';

/** Parsed, validated, frozen runtime configuration. Built once per process by `loadConfig`. */
export interface Config {
  readonly host: string;
  readonly port: number;
  /** Absolute base URL that clients reach Podium at (links, tracker links). No trailing slash. */
  readonly publicUrl: string;
  /** PostgreSQL connection string; when absent the embedded PGlite database in `dataDir` is used. */
  readonly databaseUrl: string | undefined;
  readonly dataDir: string;
  readonly logLevel: 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace' | 'silent';
  readonly bodyLimitBytes: number;
  readonly trustProxy: boolean;
  /** Load the demo dataset when the database is empty (used by `npm start`). */
  readonly demoOnEmpty: boolean;
  /** Email of the owner account created at the first start of a database without an owner. */
  readonly ownerEmail: string;
  /** SMTP server invitations and password resets are mailed through; unset: no mail is sent. */
  readonly smtpUrl: string | undefined;
  /** Sender (From) of Podium's mail. */
  readonly mailFrom: string;
  /** Bearer token that `/metrics` requires; unset leaves it open (bind it to a private network). */
  readonly metricsToken: string | undefined;
  /** Path prefix of the documentation server (`/docs`); empty when the docs have their own port or host. */
  readonly docsBase: string;
  /** Separate port for the documentation server; 0 serves the docs on the main port. */
  readonly docsPort: number;
  /** Documentation server budget: requests per IP per 10 s before a 10 s block; 0 disables (benchmarks). */
  readonly docsRateLimit: number;
  /** Failed authentications per client address, credential kind and minute before a block; 0 disables. */
  readonly authFailureLimit: number;
  /** Seconds a client address stays blocked for a credential kind once over `authFailureLimit`. */
  readonly authBlockSeconds: number;
  /** Request header holding the visitor's country as set by a trusted edge (e.g. `cf-ipcountry`). */
  readonly countryHeader: string;
  /** Key of the HMAC that pseudonymises operators' player ids; unset: generated once and kept in the database. */
  readonly pseudonymKey: string | undefined;
  /** Clicks and impressions waiting for their group commit beyond which /go answers 503 and /readyz fails. */
  readonly clickBufferMax: number;
  readonly slowStatementMs: number;
  /** Days before today that every operator aggregate pull fetches again (operators revise recent days). */
  readonly aggregateWindowDays: number;
  /** Minutes between scheduled operator aggregate pulls. */
  readonly aggregatePullMinutes: number;
  /** Reconciliation flags a figure whose difference from the operator's exceeds this percentage. */
  readonly reconcileThresholdPercent: number;
  /** Redis shared by every process (docs rate-limit counters); unset: counters are per process. */
  readonly redisUrl: string | undefined;
  /** Prefix of every Redis key, so several deployments (or test runs) can share one Redis. */
  readonly redisPrefix: string;
  /** `podium serve` processes to fork on this machine (node:cluster); more than 1 needs DATABASE_URL. */
  readonly workers: number;
  /** Keys sealing secrets at rest (AES-256-GCM), current first; unset on PGlite: generated into the data directory. */
  readonly secretKeys: readonly SealKey[] | undefined;
  /** Outbound calls (ad servers, operators): connect timeout, total timeout, largest answer. */
  readonly outboundConnectTimeoutMs: number;
  readonly outboundTimeoutMs: number;
  readonly outboundMaxBytes: number;
  /** Local IP address every outbound socket is bound to (the source address peers see); unset: the system's choice. */
  readonly outboundAddress: string | undefined;
  /** The local-only allowance: exact loopback `address:port` pairs outbound calls may reach (the demo's reference ad server). */
  readonly outboundLoopbackAllow: readonly string[];
  /** Ad-server delivery pulls: minutes between runs, and trailing days pulled again on each run. */
  readonly adserverReportMinutes: number;
  readonly adserverTrailingDays: number;
  /** Marketplace: minutes a reservation holds its impressions, and minutes after which a forecast is fetched again. */
  readonly marketHoldMinutes: number;
  readonly marketForecastMaxAgeMinutes: number;
  /** Where creative bytes live: files under the data directory, the database, or S3-compatible storage. */
  readonly creativeStore: CreativeStoreKind;
  /** Largest creative per format, in bytes. */
  readonly creativeMaxBytes: Readonly<Record<CreativeFormat, number>>;
  /** Base URL the frame loads creatives from (a CDN in front of `/creatives`); default `<publicUrl>/creatives`. */
  readonly creativeBaseUrl: string;
  readonly creativeS3Bucket: string | undefined;
  readonly creativeS3Region: string;
  readonly creativeS3Endpoint: string | undefined;
  readonly creativeS3Prefix: string;
  /** PostgreSQL read replica for report queries; unset or unreachable: the primary answers them. */
  readonly databaseReadUrl: string | undefined;
  /** OpenID Connect single sign-on: the provider's issuer URL; unset: SSO is off. */
  readonly ssoIssuer: string | undefined;
  readonly ssoClientId: string | undefined;
  /** The client secret registered at the provider (never logged); unset: a public client (PKCE only). */
  readonly ssoClientSecret: string | undefined;
  /** Scopes asked of the provider (always with `openid`). */
  readonly ssoScopes: string;
  /** Email domains that may get an account at their first SSO sign-in (lower case); empty: none. */
  readonly ssoAllowedDomains: readonly string[];
  /** Claim of the ID token (or userinfo) listing the user's groups. */
  readonly ssoGroupsClaim: string;
  /** Group → role name, first matching entry wins. */
  readonly ssoRoleMap: readonly SsoRoleRule[];
  /** Role of an SSO user none of whose groups is mapped; unset: such a user is refused. */
  readonly ssoDefaultRole: string | undefined;
  /** Days of raw clicks/impressions, postback log and conversions kept; 0 keeps them forever. */
  readonly retentionClicksDays: number;
  readonly retentionPostbacksDays: number;
  readonly retentionConversionsDays: number;
  /** Directory receiving each expired partition as gzip CSV with a manifest before it is dropped. */
  readonly trackingArchiveDir: string | undefined;
}

/** One entry of the SSO group mapping: members of `group` get the role named `role`. */
export interface SsoRoleRule {
  readonly group: string;
  readonly role: string;
}

/** Parses `group=role[,group=role…]`; the owner role is never granted by a provider. */
export function parseRoleMap(raw: string): SsoRoleRule[] {
  const rules = raw
    .split(',')
    .map((part) => part.trim())
    .filter(Boolean)
    .map((part) => {
      const at = part.lastIndexOf('=');
      const group = part.slice(0, at).trim();
      const role = part.slice(at + 1).trim();
      if (at < 1 || !group || !role) throw new Error(`${part} is not group=role`);
      if (group.length > 200 || role.length > 100) throw new Error(`${part} is too long`);
      if (role.toLowerCase() === 'owner')
        throw new Error('owner cannot be granted by single sign-on (make owners in the Users screen)');
      return { group, role };
    });
  if (rules.length > 100) throw new Error('at most 100 group=role entries');
  return rules;
}

/** Parses a comma list of email domains, kept lower case. */
function domainList(raw: string): string[] {
  const domains = raw
    .split(',')
    .map((d) => d.trim().toLowerCase().replace(/^@/, ''))
    .filter(Boolean);
  for (const d of domains)
    if (!/^[a-z0-9]([a-z0-9-]{0,62}\.)+[a-z0-9-]{1,63}$/.test(d))
      throw new Error(`${d} is not a domain name`);
  if (domains.length > 100) throw new Error('at most 100 domains');
  return [...new Set(domains)];
}

/** One key of the secret-sealing key ring: `version` is stored beside every ciphertext it made. */
export interface SealKey {
  readonly version: number;
  readonly key: Buffer;
}

/** Parses `version:base64key[,version:base64key…]` (current key first; each key 32 bytes). */
export function parseSecretKeys(raw: string): SealKey[] {
  const keys = raw
    .split(',')
    .map((part) => part.trim())
    .filter(Boolean)
    .map((part) => {
      const m = /^([1-9]\d{0,8}):([A-Za-z0-9+/_-]+={0,2})$/.exec(part);
      if (!m) throw new Error('must be a comma list of version:base64key (version a positive integer)');
      const key = Buffer.from(m[2]!, 'base64');
      if (key.length !== 32) throw new Error(`key version ${m[1]} must decode to 32 bytes`);
      return { version: Number(m[1]), key };
    });
  if (!keys.length) throw new Error('must hold at least one version:base64key');
  if (new Set(keys.map((k) => k.version)).size !== keys.length)
    throw new Error('key versions must be unique');
  return keys;
}

/** Parses the local-only allowance: a comma list of exact loopback `address:port` pairs. */
export function loopbackPairs(raw: string): string[] {
  const pairs = raw
    .split(',')
    .map((p) => p.trim())
    .filter(Boolean)
    .map(parseLoopbackPair);
  if (pairs.length > 16) throw new Error('at most 16 address:port pairs');
  return [...new Set(pairs)];
}

/** Why a loopback allowance may not be used in this environment, or undefined when it may. */
export function loopbackAllowanceProblem(
  pairs: readonly string[],
  env: NodeJS.ProcessEnv = process.env,
): string | undefined {
  if (pairs.length && env.NODE_ENV === 'production')
    return `refused when NODE_ENV=production: it opens ${pairs.join(', ')} on this machine to outbound calls, a local-only allowance for trying Podium (unset it, or unset NODE_ENV)`;
  return undefined;
}

/**
 * The config with loopback pairs added to its allowance (what the demo does for the reference ad
 * server it runs); throws ConfigError under NODE_ENV=production.
 */
export function withLoopbackAllowance(
  config: Config,
  pairs: readonly string[],
  env: NodeJS.ProcessEnv = process.env,
): Config {
  const all = [...new Set([...config.outboundLoopbackAllow, ...pairs.map(parseLoopbackPair)])];
  const problem = loopbackAllowanceProblem(all, env);
  if (problem) throw new ConfigError([`PODIUM_OUTBOUND_LOOPBACK_ALLOW: ${problem}`]);
  return Object.freeze({ ...config, outboundLoopbackAllow: all });
}

type Parser<T> = (raw: string) => T;

export const CREATIVE_FORMATS = ['png', 'jpeg', 'gif', 'webp'] as const;
export type CreativeFormat = (typeof CREATIVE_FORMATS)[number];
export type CreativeStoreKind = 'files' | 'database' | 's3';
/** The IAB New Ad Portfolio's initial-load budget for a display creative: 150 KB. */
export const IAB_CREATIVE_KB = 150;

/** `150` (every format) or `png=150,jpeg=150,gif=200,webp=150` (formats left out keep 150), in KB. */
function creativeWeights(raw: string): Record<CreativeFormat, number> {
  const kb = (v: string) => {
    if (!/^\d+$/.test(v) || Number(v) < 1 || Number(v) > 10_240)
      throw new Error('each limit must be an integer number of KB between 1 and 10240');
    return Number(v) * 1024;
  };
  if (/^\d+$/.test(raw)) return Object.fromEntries(CREATIVE_FORMATS.map((f) => [f, kb(raw)])) as never;
  const out = Object.fromEntries(CREATIVE_FORMATS.map((f) => [f, IAB_CREATIVE_KB * 1024])) as Record<
    CreativeFormat,
    number
  >;
  for (const part of raw.split(',')) {
    const [f, v] = part.split('=').map((x) => x.trim());
    if (!CREATIVE_FORMATS.includes(f as CreativeFormat) || v === undefined)
      throw new Error(`must be KB or format=KB pairs of ${CREATIVE_FORMATS.join(', ')}`);
    out[f as CreativeFormat] = kb(v);
  }
  return out;
}

interface Setting<K extends keyof Config> {
  key: K;
  env: string;
  description: string;
  /** Secrets are only taken from the environment, never from flags, and never echoed back. */
  secret?: boolean;
  /** The default as the reference page states it, when it depends on other settings or is not a plain value. */
  defaultText?: string;
  default: (partial: Partial<Config>) => Config[K];
  parse: Parser<Config[K]>;
}

const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;

function int(min: number, max: number): Parser<number> {
  return (raw) => {
    if (!/^\d+$/.test(raw)) throw new Error(`must be an integer between ${min} and ${max}`);
    const n = Number(raw);
    if (n < min || n > max) throw new Error(`must be an integer between ${min} and ${max}`);
    return n;
  };
}

/** A secret string of at least `min` characters. */
function minLength(min: number): Parser<string> {
  return (raw) => {
    if (raw.length < min) throw new Error(`must be at least ${min} characters`);
    return raw;
  };
}

function bool(raw: string): boolean {
  if (/^(1|true|yes|on)$/i.test(raw)) return true;
  if (/^(0|false|no|off)$/i.test(raw)) return false;
  throw new Error('must be true or false');
}

function httpUrl(raw: string): string {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new Error('must be an absolute http(s) URL');
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new Error('must be an http(s) URL');
  if (url.search || url.hash) throw new Error('must not carry a query string or fragment');
  return url.toString().replace(/\/+$/, '');
}

function redisUrl(raw: string): string {
  if (!/^rediss?:\/\/[^\s]+$/.test(raw)) throw new Error('must be a redis:// or rediss:// URL');
  return raw;
}

/** A URL path prefix such as `/docs`, kept without its trailing slash (`/` becomes the empty prefix). */
function docsPath(raw: string): string {
  if (!/^(\/[a-z0-9][a-z0-9-]*)*\/?$/.test(raw)) throw new Error('must be a path like /docs');
  return raw.replace(/\/$/, '');
}

function redisKeyPrefix(raw: string): string {
  if (!/^[A-Za-z0-9:_.-]{1,64}$/.test(raw)) throw new Error('must be 1-64 characters of A-Z a-z 0-9 : _ . -');
  return raw;
}

function smtpUrl(raw: string): string {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new Error('must be an smtp:// or smtps:// URL');
  }
  if (url.protocol !== 'smtp:' && url.protocol !== 'smtps:')
    throw new Error('must be an smtp:// or smtps:// URL');
  if (!url.hostname) throw new Error('must name a host');
  return raw;
}

function postgresUrl(raw: string): string {
  if (!/^postgres(ql)?:\/\//.test(raw)) throw new Error('must be a postgres:// or postgresql:// URL');
  return raw;
}

/** Every setting Podium reads, in one table: the config reference in the docs is generated from it. */
export const SETTINGS = [
  {
    key: 'host',
    env: 'HOST',
    description: 'Interface to listen on.',
    default: () => '127.0.0.1',
    parse: (raw: string) => raw,
  } satisfies Setting<'host'>,
  {
    key: 'port',
    env: 'PORT',
    description: 'TCP port of the HTTP server.',
    default: () => 3000,
    parse: int(0, 65535),
  } satisfies Setting<'port'>,
  {
    key: 'publicUrl',
    env: 'PODIUM_PUBLIC_URL',
    description: 'Public base URL (scheme, host, optional port) used in links and tracker links.',
    default: (p: Partial<Config>) =>
      `http://${p.host === '0.0.0.0' ? '127.0.0.1' : (p.host ?? '127.0.0.1')}:${p.port ?? 3000}`,
    parse: httpUrl,
  } satisfies Setting<'publicUrl'>,
  {
    key: 'databaseUrl',
    env: 'DATABASE_URL',
    description: 'PostgreSQL connection string. Unset: embedded PGlite in the data directory.',
    secret: true,
    default: () => undefined,
    parse: postgresUrl,
  } satisfies Setting<'databaseUrl'>,
  {
    key: 'dataDir',
    env: 'PODIUM_DATA_DIR',
    description: 'Directory of the embedded database (ignored with DATABASE_URL).',
    default: () => path.resolve('data'),
    parse: (raw: string) => path.resolve(raw),
  } satisfies Setting<'dataDir'>,
  {
    key: 'logLevel',
    env: 'LOG_LEVEL',
    description: `Log level: ${LOG_LEVELS.join(', ')}.`,
    default: () => 'info',
    parse: (raw: string) => {
      if (!(LOG_LEVELS as readonly string[]).includes(raw))
        throw new Error(`must be one of ${LOG_LEVELS.join(', ')}`);
      return raw as Config['logLevel'];
    },
  } satisfies Setting<'logLevel'>,
  {
    key: 'bodyLimitBytes',
    env: 'PODIUM_BODY_LIMIT',
    description: 'Largest accepted request body in bytes.',
    default: () => 1024 * 1024,
    parse: int(1024, 64 * 1024 * 1024),
  } satisfies Setting<'bodyLimitBytes'>,
  {
    key: 'trustProxy',
    env: 'PODIUM_TRUST_PROXY',
    description:
      'Trust X-Forwarded-* headers from the reverse proxy in front. Set it behind the recommended TLS proxy: otherwise every visitor has the proxy address and shares one docs rate-limit bucket.',
    default: () => false,
    parse: bool,
  } satisfies Setting<'trustProxy'>,
  {
    key: 'demoOnEmpty',
    env: 'PODIUM_DEMO',
    description: 'Load the demo dataset into an empty database at start.',
    default: () => false,
    parse: bool,
  } satisfies Setting<'demoOnEmpty'>,
  {
    key: 'ownerEmail',
    env: 'PODIUM_OWNER_EMAIL',
    description:
      'Email of the owner account created at the first start of a database without one; the start prints a one-time link (valid 24 hours) to set its password.',
    default: () => 'owner@podium.local',
    parse: (raw: string) => {
      if (!/^[^\s@]{1,64}@[^\s@]{1,255}$/.test(raw)) throw new Error('must be an email address');
      return raw;
    },
  } satisfies Setting<'ownerEmail'>,
  {
    key: 'smtpUrl',
    env: 'PODIUM_SMTP_URL',
    description:
      'SMTP server for invitations and password resets, e.g. smtps://user:password@mail.example.com:465 or smtp://mail.example.com:587 (STARTTLS when offered). Unset: nothing is mailed; invitation links are shown to the inviting admin and password resets are issued by an admin.',
    secret: true,
    default: () => undefined,
    parse: smtpUrl,
  } satisfies Setting<'smtpUrl'>,
  {
    key: 'mailFrom',
    env: 'PODIUM_MAIL_FROM',
    description: 'Sender of the mail Podium sends: an address, or "Name <address>".',
    default: () => 'Podium <podium@localhost>',
    parse: (raw: string) => {
      if (!/^([^<>\r\n]{0,100}<[^\s@<>]{1,64}@[^\s@<>]{1,255}>|[^\s@<>]{1,64}@[^\s@<>]{1,255})$/.test(raw))
        throw new Error('must be an email address or "Name <address>"');
      return raw;
    },
  } satisfies Setting<'mailFrom'>,
  {
    key: 'metricsToken',
    env: 'PODIUM_METRICS_TOKEN',
    description: 'Bearer token required by GET /metrics (unset: no token required).',
    secret: true,
    default: () => undefined,
    parse: minLength(16),
  } satisfies Setting<'metricsToken'>,
  {
    key: 'docsBase',
    env: 'PODIUM_DOCS_BASE',
    description: 'Path prefix of the documentation server, e.g. /docs; "/" only with PODIUM_DOCS_PORT.',
    default: () => '/docs',
    parse: docsPath,
  } satisfies Setting<'docsBase'>,
  {
    key: 'docsPort',
    env: 'PODIUM_DOCS_PORT',
    description: 'Serve the documentation on this port instead of the main one (0: main port).',
    default: () => 0,
    parse: int(0, 65535),
  } satisfies Setting<'docsPort'>,
  {
    key: 'docsRateLimit',
    env: 'PODIUM_DOCS_RATE_LIMIT',
    description:
      'Documentation server requests per IP per 10 s before a 10 s block (0: off, for benchmarks).',
    default: () => 60,
    parse: int(0, 1_000_000),
  } satisfies Setting<'docsRateLimit'>,
  {
    key: 'authFailureLimit',
    env: 'PODIUM_AUTH_FAILURE_LIMIT',
    description:
      'Failed authentications (wrong admin token, site token, postback token or console sign-in) per client address and kind in one minute before that address is answered 429 for that kind (0: off). Counted in Redis across the fleet when REDIS_URL is set.',
    default: () => 20,
    parse: int(0, 1_000_000),
  } satisfies Setting<'authFailureLimit'>,
  {
    key: 'authBlockSeconds',
    env: 'PODIUM_AUTH_BLOCK_SECONDS',
    description:
      'Seconds an address over PODIUM_AUTH_FAILURE_LIMIT is answered 429 (with Retry-After) for further failures of that kind; correct credentials still pass.',
    default: () => 300,
    parse: int(1, 86_400),
  } satisfies Setting<'authBlockSeconds'>,
  {
    key: 'countryHeader',
    env: 'PODIUM_COUNTRY_HEADER',
    description:
      'Trusted request header carrying the visitor country recorded with clicks (ISO 3166-1 alpha-2).',
    default: () => 'cf-ipcountry',
    parse: (raw: string) => {
      if (!/^[A-Za-z0-9-]{1,64}$/.test(raw)) throw new Error('must be an HTTP header name');
      return raw.toLowerCase();
    },
  } satisfies Setting<'countryHeader'>,
  {
    key: 'pseudonymKey',
    env: 'PODIUM_PSEUDONYM_KEY',
    description:
      'HMAC key that pseudonymises player ids from postbacks (unset: generated once, kept in the database).',
    secret: true,
    default: () => undefined,
    parse: minLength(32),
  } satisfies Setting<'pseudonymKey'>,
  {
    key: 'clickBufferMax',
    env: 'PODIUM_CLICK_BUFFER_MAX',
    description:
      'Clicks and impressions waiting for their group commit beyond which /go and /imp answer 503 and /readyz reports not ready.',
    default: () => 20_000,
    parse: int(100, 1_000_000),
  } satisfies Setting<'clickBufferMax'>,
  {
    key: 'slowStatementMs',
    env: 'PODIUM_SLOW_STATEMENT_MS',
    description:
      'Database statements taking this many milliseconds or more are logged at warn, by name, at most once a minute each (0: never).',
    default: () => 500,
    parse: int(0, 600_000),
  } satisfies Setting<'slowStatementMs'>,
  {
    key: 'aggregateWindowDays',
    env: 'PODIUM_AGGREGATE_WINDOW_DAYS',
    description:
      "Trailing days (before today, in the programme's time zone) each scheduled operator aggregate pull fetches again.",
    default: () => 7,
    parse: int(1, 90),
  } satisfies Setting<'aggregateWindowDays'>,
  {
    key: 'aggregatePullMinutes',
    env: 'PODIUM_AGGREGATE_PULL_MINUTES',
    description: 'Minutes between scheduled operator aggregate pulls (once per period across all processes).',
    default: () => 360,
    parse: int(5, 10_080),
  } satisfies Setting<'aggregatePullMinutes'>,
  {
    key: 'reconcileThresholdPercent',
    env: 'PODIUM_RECONCILE_THRESHOLD_PERCENT',
    description:
      "Reconciliation flags a figure whose difference from the operator's exceeds this percentage of the operator's figure.",
    default: () => 5,
    parse: (raw: string) => {
      if (!/^\d{1,3}(\.\d{1,2})?$/.test(raw) || Number(raw) > 100)
        throw new Error('must be a percentage between 0 and 100 (up to 2 decimals)');
      return Number(raw);
    },
  } satisfies Setting<'reconcileThresholdPercent'>,
  {
    key: 'redisUrl',
    env: 'REDIS_URL',
    description:
      'Redis shared by every Podium process: documentation rate-limit counters count requests to the whole fleet. Unset: counters are kept per process.',
    secret: true,
    default: () => undefined,
    parse: redisUrl,
  } satisfies Setting<'redisUrl'>,
  {
    key: 'redisPrefix',
    env: 'PODIUM_REDIS_PREFIX',
    description: 'Prefix of every Redis key Podium writes, so several deployments can share one Redis.',
    default: () => 'podium:',
    parse: redisKeyPrefix,
  } satisfies Setting<'redisPrefix'>,
  {
    key: 'workers',
    env: 'PODIUM_WORKERS',
    description:
      'HTTP worker processes `podium serve` forks on this machine (node:cluster); above 1 needs DATABASE_URL.',
    default: () => 1,
    parse: int(1, 64),
  } satisfies Setting<'workers'>,
  {
    key: 'secretKeys',
    env: 'PODIUM_SECRET_KEYS',
    description:
      'Keys sealing secrets at rest (ad-server API keys, operator report keys, webhook signing secrets): comma list of version:base64 (32 bytes), current first; older ones only decrypt until `podium rotate-keys`. Unset: required with DATABASE_URL; on the embedded database one is generated into the data directory.',
    secret: true,
    default: () => undefined,
    parse: parseSecretKeys,
  } satisfies Setting<'secretKeys'>,
  {
    key: 'outboundConnectTimeoutMs',
    env: 'PODIUM_OUTBOUND_CONNECT_TIMEOUT_MS',
    description: 'Outbound calls to ad servers and operators: TCP + TLS connect timeout in milliseconds.',
    default: () => 10_000,
    parse: int(100, 120_000),
  } satisfies Setting<'outboundConnectTimeoutMs'>,
  {
    key: 'outboundTimeoutMs',
    env: 'PODIUM_OUTBOUND_TIMEOUT_MS',
    description: 'Outbound calls: total time for one request, answer body included, in milliseconds.',
    default: () => 30_000,
    parse: int(100, 600_000),
  } satisfies Setting<'outboundTimeoutMs'>,
  {
    key: 'outboundMaxBytes',
    env: 'PODIUM_OUTBOUND_MAX_BYTES',
    description: 'Outbound calls: largest answer body read, in bytes; a larger one fails the call.',
    default: () => 5 * 1024 * 1024,
    parse: int(1024, 256 * 1024 * 1024),
  } satisfies Setting<'outboundMaxBytes'>,
  {
    key: 'outboundAddress',
    env: 'PODIUM_OUTBOUND_ADDRESS',
    description:
      "Outbound calls (ad servers, operators' reports, webhooks): local IP address every connection is made from, one of this machine's own, so peers can allow-list it. Unset: the system picks the address of the route to each peer.",
    default: () => undefined,
    parse: (raw: string) => {
      if (!ipaddr.isValid(raw)) throw new Error('must be an IPv4 or IPv6 address');
      return ipaddr.parse(raw).toString();
    },
  } satisfies Setting<'outboundAddress'>,
  {
    key: 'outboundLoopbackAllow',
    env: 'PODIUM_OUTBOUND_LOOPBACK_ALLOW',
    description:
      'Local-only allowance: comma list of exact loopback address:port pairs (`127.0.0.1:3201`, `[::1]:3201`) that outbound calls may reach, over plain http too, although the SSRF guard refuses loopback. `npm start` sets it for the reference ad server it runs on a new embedded demo database (never with DATABASE_URL: there only by hand). Logged at start; refused when NODE_ENV=production. Unset: no loopback address is reachable.',
    default: () => [],
    parse: loopbackPairs,
  } satisfies Setting<'outboundLoopbackAllow'>,
  {
    key: 'adserverReportMinutes',
    env: 'PODIUM_ADSERVER_REPORT_MINUTES',
    description: "Minutes between pulls of delivery from publishers' ad servers (POST /reports).",
    default: () => 15,
    parse: int(1, 1440),
  } satisfies Setting<'adserverReportMinutes'>,
  {
    key: 'adserverTrailingDays',
    env: 'PODIUM_ADSERVER_TRAILING_DAYS',
    description: 'Days before today pulled again on every delivery pull (ad servers revise recent days).',
    default: () => 3,
    parse: int(0, 60),
  } satisfies Setting<'adserverTrailingDays'>,
  {
    key: 'marketHoldMinutes',
    env: 'PODIUM_MARKET_HOLD_MINUTES',
    description:
      'Minutes a marketplace reservation holds its impressions awaiting approval; then it expires and frees them.',
    default: () => 2880,
    parse: int(1, 43_200),
  } satisfies Setting<'marketHoldMinutes'>,
  {
    key: 'marketForecastMaxAgeMinutes',
    env: 'PODIUM_MARKET_FORECAST_MAX_AGE_MINUTES',
    description:
      "Minutes after which a product's cached forecast (POST /forecast) is fetched again in the background.",
    default: () => 15,
    parse: int(1, 1440),
  } satisfies Setting<'marketForecastMaxAgeMinutes'>,
  {
    key: 'creativeStore',
    env: 'PODIUM_CREATIVE_STORE',
    description:
      'Where uploaded creatives are stored, by SHA-256: `files` (under `<PODIUM_DATA_DIR>/creatives`), `database` (a bytea table; the default with DATABASE_URL, where processes may not share a disk) or `s3` (PODIUM_CREATIVE_S3_*; credentials from the AWS SDK default chain, e.g. AWS_ACCESS_KEY_ID).',
    defaultText: '`files`; `database` with DATABASE_URL',
    default: (c) => (c.databaseUrl ? 'database' : 'files'),
    parse: (raw: string) => {
      if (raw !== 'files' && raw !== 'database' && raw !== 's3')
        throw new Error('must be files, database or s3');
      return raw;
    },
  } satisfies Setting<'creativeStore'>,
  {
    key: 'creativeMaxBytes',
    env: 'PODIUM_CREATIVE_MAX_KB',
    description: `Largest creative accepted, in KB: one number for every format, or \`png=150,jpeg=150,gif=200,webp=150\`. Default ${IAB_CREATIVE_KB} KB each (the IAB initial-load budget for display ads).`,
    defaultText: `\`${IAB_CREATIVE_KB}\``,
    default: () => creativeWeights(String(IAB_CREATIVE_KB)),
    parse: creativeWeights,
  } satisfies Setting<'creativeMaxBytes'>,
  {
    key: 'creativeBaseUrl',
    env: 'PODIUM_CREATIVE_BASE_URL',
    description:
      'Base URL banner frames load creatives from: a CDN whose origin is `<PODIUM_PUBLIC_URL>/creatives`. Default: `<PODIUM_PUBLIC_URL>/creatives`.',
    defaultText: '`<PODIUM_PUBLIC_URL>/creatives`',
    default: (c) => `${c.publicUrl}/creatives`,
    parse: httpUrl,
  } satisfies Setting<'creativeBaseUrl'>,
  {
    key: 'creativeS3Bucket',
    env: 'PODIUM_CREATIVE_S3_BUCKET',
    description: 'Bucket of the `s3` creative store (needed with PODIUM_CREATIVE_STORE=s3).',
    default: () => undefined,
    parse: (raw: string) => {
      if (!/^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$/.test(raw)) throw new Error('must be an S3 bucket name');
      return raw;
    },
  } satisfies Setting<'creativeS3Bucket'>,
  {
    key: 'creativeS3Region',
    env: 'PODIUM_CREATIVE_S3_REGION',
    description: 'Region of the `s3` creative store.',
    default: () => 'us-east-1',
    parse: (raw: string) => {
      if (!/^[a-z0-9-]{1,40}$/.test(raw)) throw new Error('must be a region name such as eu-west-1');
      return raw;
    },
  } satisfies Setting<'creativeS3Region'>,
  {
    key: 'creativeS3Endpoint',
    env: 'PODIUM_CREATIVE_S3_ENDPOINT',
    description:
      'Endpoint of an S3-compatible service (MinIO, Ceph, R2…), addressed path-style. Unset: AWS S3 itself.',
    default: () => undefined,
    parse: httpUrl,
  } satisfies Setting<'creativeS3Endpoint'>,
  {
    key: 'creativeS3Prefix',
    env: 'PODIUM_CREATIVE_S3_PREFIX',
    description: 'Key prefix of creatives in the bucket.',
    default: () => 'creatives/',
    parse: (raw: string) => {
      if (!/^[A-Za-z0-9!_.*'()/-]{0,200}$/.test(raw)) throw new Error('must be a plain S3 key prefix');
      return raw;
    },
  } satisfies Setting<'creativeS3Prefix'>,
  {
    key: 'databaseReadUrl',
    env: 'DATABASE_READ_URL',
    description:
      'PostgreSQL read replica that report queries (stats, reconciliation, CSV, delivery counts) go to. Unset, or while it is unreachable: the primary answers them. Reports from a replica lag by its replication delay.',
    secret: true,
    default: () => undefined,
    parse: postgresUrl,
  } satisfies Setting<'databaseReadUrl'>,
  {
    key: 'retentionClicksDays',
    env: 'PODIUM_RETENTION_CLICKS_DAYS',
    description:
      'Days of raw clicks and impressions kept: a monthly partition wholly older than this is exported (with PODIUM_TRACKING_ARCHIVE_DIR) then dropped. Reports keep reading the rollups. 0 keeps everything.',
    default: () => 0,
    parse: int(0, 36_500),
  } satisfies Setting<'retentionClicksDays'>,
  {
    key: 'retentionPostbacksDays',
    env: 'PODIUM_RETENTION_POSTBACKS_DAYS',
    description: 'Days of the raw postback log and its outcomes kept, as for clicks. 0 keeps everything.',
    default: () => 0,
    parse: int(0, 36_500),
  } satisfies Setting<'retentionPostbacksDays'>,
  {
    key: 'retentionConversionsDays',
    env: 'PODIUM_RETENTION_CONVERSIONS_DAYS',
    description:
      'Days of conversions kept, as for clicks (the per-programme transaction-id keys stay, so a late duplicate is still recognised). 0 keeps everything.',
    default: () => 0,
    parse: int(0, 36_500),
  } satisfies Setting<'retentionConversionsDays'>,
  {
    key: 'trackingArchiveDir',
    env: 'PODIUM_TRACKING_ARCHIVE_DIR',
    description:
      'Directory each expired tracking partition is exported to before it is dropped (`<partition>.csv.gz` and `<partition>.manifest.json`). Unset: expired partitions are dropped without export.',
    default: () => undefined,
    parse: (raw: string) => path.resolve(raw),
  } satisfies Setting<'trackingArchiveDir'>,
  {
    key: 'ssoIssuer',
    env: 'PODIUM_SSO_ISSUER',
    description:
      'Single sign-on: issuer URL of the OpenID Connect provider (its discovery document is `<issuer>/.well-known/openid-configuration`), https; plain http only to a pair of PODIUM_OUTBOUND_LOOPBACK_ALLOW. Unset: SSO is off. The redirect URL to register at the provider is `<PODIUM_PUBLIC_URL>/api/admin/v1/session/sso/callback`.',
    default: () => undefined,
    parse: httpUrl,
  } satisfies Setting<'ssoIssuer'>,
  {
    key: 'ssoClientId',
    env: 'PODIUM_SSO_CLIENT_ID',
    description:
      'Single sign-on: the client id Podium is registered with at the provider (needed with PODIUM_SSO_ISSUER).',
    default: () => undefined,
    parse: (raw: string) => {
      if (raw.length > 500) throw new Error('must be at most 500 characters');
      return raw;
    },
  } satisfies Setting<'ssoClientId'>,
  {
    key: 'ssoClientSecret',
    env: 'PODIUM_SSO_CLIENT_SECRET',
    description:
      'Single sign-on: the client secret (sent with HTTP Basic to the token endpoint). Unset: Podium is a public client and proves itself with PKCE alone.',
    secret: true,
    default: () => undefined,
    parse: (raw: string) => {
      if (raw.length > 1000) throw new Error('must be at most 1000 characters');
      return raw;
    },
  } satisfies Setting<'ssoClientSecret'>,
  {
    key: 'ssoScopes',
    env: 'PODIUM_SSO_SCOPES',
    description:
      'Single sign-on: scopes asked of the provider, space-separated; `openid` is always sent. Add the one your provider needs for the groups claim (often `groups`).',
    default: () => 'openid email profile',
    parse: (raw: string) => {
      const scopes = raw.split(/\s+/).filter(Boolean);
      if (scopes.some((s) => !/^[\x21\x23-\x5b\x5d-\x7e]{1,100}$/.test(s)) || scopes.length > 20)
        throw new Error('must be up to 20 space-separated scope names');
      return [...new Set(['openid', ...scopes])].join(' ');
    },
  } satisfies Setting<'ssoScopes'>,
  {
    key: 'ssoAllowedDomains',
    env: 'PODIUM_SSO_ALLOWED_DOMAINS',
    description:
      'Single sign-on: comma list of email domains (`example.com`) whose people get an account at their first SSO sign-in, when the provider says the email is verified. Unset: no account is made by SSO; only existing users (matched by email) sign in.',
    default: () => [],
    parse: domainList,
  } satisfies Setting<'ssoAllowedDomains'>,
  {
    key: 'ssoGroupsClaim',
    env: 'PODIUM_SSO_GROUPS_CLAIM',
    description: 'Single sign-on: the claim (ID token or userinfo) that lists the groups of the user.',
    default: () => 'groups',
    parse: (raw: string) => {
      if (!/^[A-Za-z0-9_:./-]{1,100}$/.test(raw)) throw new Error('must be a claim name');
      return raw;
    },
  } satisfies Setting<'ssoGroupsClaim'>,
  {
    key: 'ssoRoleMap',
    env: 'PODIUM_SSO_ROLE_MAP',
    description:
      'Single sign-on: comma list of `group=role` (built-in or custom role names), most privileged first: an SSO user gets the role of the first entry whose group they are in, at every sign-in. `owner` is refused.',
    default: () => [],
    parse: parseRoleMap,
  } satisfies Setting<'ssoRoleMap'>,
  {
    key: 'ssoDefaultRole',
    env: 'PODIUM_SSO_DEFAULT_ROLE',
    description:
      'Single sign-on: role of a user none of whose groups is in PODIUM_SSO_ROLE_MAP. Unset: such a user is refused.',
    default: () => undefined,
    parse: (raw: string) => {
      if (raw.length > 100) throw new Error('must be a role name');
      if (raw.toLowerCase() === 'owner') throw new Error('owner cannot be granted by single sign-on');
      return raw;
    },
  } satisfies Setting<'ssoDefaultRole'>,
] as const;

/** What is wrong with the single sign-on settings taken together. */
function ssoProblems(out: Partial<Record<keyof Config, unknown>>): string[] {
  const issuer = out.ssoIssuer as string | undefined;
  if (!issuer) return out.ssoClientId ? ['PODIUM_SSO_CLIENT_ID: single sign-on needs PODIUM_SSO_ISSUER'] : [];
  if (!out.ssoClientId) return ['PODIUM_SSO_ISSUER: single sign-on needs PODIUM_SSO_CLIENT_ID'];
  const url = new URL(issuer);
  if (url.protocol === 'https:') return [];
  const pairs = (out.outboundLoopbackAllow as readonly string[] | undefined) ?? [];
  const address = normaliseAddress(url.hostname);
  return address !== undefined && pairs.includes(endpointKey(address, Number(url.port) || 80))
    ? []
    : ['PODIUM_SSO_ISSUER: must be https (plain http only to a pair of PODIUM_OUTBOUND_LOOPBACK_ALLOW)'];
}

/** Raised when the environment or flags hold invalid values; lists every bad key at once. */
export class ConfigError extends Error {
  constructor(readonly problems: string[]) {
    super(`Invalid configuration:\n  ${problems.join('\n  ')}`);
    this.name = 'ConfigError';
  }
}

/**
 * Builds the frozen config from the environment, with `overrides` (already typed, e.g. from CLI
 * flags or tests) taking precedence. Throws ConfigError naming every invalid key.
 */
export function loadConfig(env: NodeJS.ProcessEnv = process.env, overrides: Partial<Config> = {}): Config {
  const out: Partial<Record<keyof Config, unknown>> = {};
  const problems: string[] = [];
  for (const s of SETTINGS) {
    if (s.key in overrides && overrides[s.key] !== undefined) {
      out[s.key] = overrides[s.key];
      continue;
    }
    let raw = env[s.env];
    const file = 'secret' in s && s.secret ? env[`${s.env}_FILE`] : undefined;
    if ((raw === undefined || raw === '') && file) {
      try {
        raw = readFileSync(file, 'utf8').trim();
      } catch {
        problems.push(`${s.env}_FILE: cannot read ${file}`);
        continue;
      }
    }
    if (raw === undefined || raw === '') continue;
    try {
      out[s.key] = s.parse(raw);
    } catch (err) {
      problems.push(
        `${s.env}: ${(err as Error).message}${'secret' in s && s.secret ? '' : ` (got ${JSON.stringify(raw)})`}`,
      );
    }
  }
  if (out.docsBase === '' && !out.docsPort) problems.push('PODIUM_DOCS_BASE: "/" needs PODIUM_DOCS_PORT');
  if (typeof out.workers === 'number' && out.workers > 1 && !out.databaseUrl)
    problems.push(
      'PODIUM_WORKERS: more than one worker needs DATABASE_URL (the embedded database is single-process)',
    );
  if (out.databaseReadUrl && !out.databaseUrl)
    problems.push('DATABASE_READ_URL: a read replica needs DATABASE_URL (the embedded database has none)');
  if (out.creativeStore === 's3' && !out.creativeS3Bucket)
    problems.push('PODIUM_CREATIVE_STORE: s3 needs PODIUM_CREATIVE_S3_BUCKET');
  const loopbackProblem = loopbackAllowanceProblem(
    (out.outboundLoopbackAllow as readonly string[] | undefined) ?? [],
    env,
  );
  if (loopbackProblem) problems.push(`PODIUM_OUTBOUND_LOOPBACK_ALLOW: ${loopbackProblem}`);
  problems.push(...ssoProblems(out));
  if (problems.length) throw new ConfigError(problems);
  for (const s of SETTINGS) {
    if (!(s.key in out)) out[s.key] = s.default(out as Partial<Config>);
  }
  return Object.freeze(out as unknown as Config);
}

import { readFileSync } from 'node:fs';
import path from 'node:path';
import ipaddr from 'ipaddr.js';

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
  /** Ad-server delivery pulls: minutes between runs, and trailing days pulled again on each run. */
  readonly adserverReportMinutes: number;
  readonly adserverTrailingDays: number;
  /** PostgreSQL read replica for report queries; unset or unreachable: the primary answers them. */
  readonly databaseReadUrl: string | undefined;
  /** Days of raw clicks/impressions, postback log and conversions kept; 0 keeps them forever. */
  readonly retentionClicksDays: number;
  readonly retentionPostbacksDays: number;
  readonly retentionConversionsDays: number;
  /** Directory receiving each expired partition as gzip CSV with a manifest before it is dropped. */
  readonly trackingArchiveDir: string | undefined;
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

type Parser<T> = (raw: string) => T;

interface Setting<K extends keyof Config> {
  key: K;
  env: string;
  description: string;
  /** Secrets are only taken from the environment, never from flags, and never echoed back. */
  secret?: boolean;
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
] as const;

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
  if (problems.length) throw new ConfigError(problems);
  for (const s of SETTINGS) {
    if (!(s.key in out)) out[s.key] = s.default(out as Partial<Config>);
  }
  return Object.freeze(out as unknown as Config);
}

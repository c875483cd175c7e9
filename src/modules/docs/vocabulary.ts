import { stemmer } from 'stemmer';

/** Words that carry no meaning in a question about the docs; ignored in pages and queries alike. */
const STOP_WORDS = new Set(
  `a about above after again all also am an and any are as at be because been before being below between
  both but by can could did do does doing don down during each few for from further get got had has have
  having he her here hers how i if in into is it its itself just me mean means more most my no nor not of
  off on once only or other our out over own same she should so some such than that the their them then
  there these they this those through to too under until up very via was we were what when where which
  while who whom why will with would you your yours`.split(/\s+/),
);

/**
 * Words a user writes in nearly every question that say nothing about which section answers it:
 * the product's own name (every `PODIUM_*` variable holds it) and the conversational filler of
 * questions. Ignored like stop words.
 */
const NOISE_WORDS = new Set(
  `podium podium's please help hi hello want wants need needs tell know let lets ok okay thing things
  someone somebody anyone way ways possible actually really exactly supposed`.split(/\s+/),
);

/** Product and technology names written in camel case that must never split (`WordPress` is not `word` + `press`). */
export const WHOLE_NAMES = new Set([
  'wordpress',
  'javascript',
  'typescript',
  'postgresql',
  'pglite',
  'github',
  'cloudflare',
  'openapi',
  'fastify',
  'nodejs',
  'minisearch',
  'chatgpt',
]);

/** True for a term that is ignored: a stop word, a noise word, a single character. */
export const isIgnored = (lower: string): boolean =>
  lower.length < 2 || STOP_WORDS.has(lower) || NOISE_WORDS.has(lower);

/** An identifier is matched as written (never stemmed): it holds a digit or one of `_-./:{}`. */
const IDENTIFIER = /[\d_\-./:{}]/;

/** The index form of a lower-case word: identifiers as written, other words by their Porter stem. */
export const stem = (lower: string): string => (IDENTIFIER.test(lower) ? lower : stemmer(lower));

/**
 * Words users write for what the docs call otherwise, each with the docs' own words for it
 * (commands, signals, error codes, field names, headings). Query side only, and weighed below
 * the words actually asked. Keys and targets are written plainly; both go through `stem`.
 */
const ALIASES: Record<string, string[]> = {
  stop: ['shutdown', 'sigterm'],
  kill: ['shutdown', 'sigterm'],
  terminate: ['shutdown', 'sigterm'],
  graceful: ['shutdown'],
  restart: ['shutdown', 'start'],
  paginate: ['page', 'pagination'],
  pagination: ['page', 'per_page'],
  paging: ['pagination', 'per_page'],
  paged: ['pagination'],
  breaking: ['additive', 'versioning'],
  compatible: ['additive', 'versioning'],
  notify: ['webhook', 'event'],
  notification: ['webhook', 'event'],
  callback: ['webhook'],
  replace: ['rotate', 'rotation'],
  quota: ['rate', 'limit', '429'],
  throttle: ['rate', 'limit', '429'],
  budget: ['rate', 'limit'],
  compress: ['gzip', 'compression'],
  compressed: ['gzip', 'compression'],
  deflate: ['gzip', 'compression'],
  invalidate: ['purge'],
  erase: ['retention', 'delete'],
  gdpr: ['retention', 'delete', 'player_id'],
  signature: ['signature', 'verifywebhook'],
  signed: ['signature', 'verifywebhook'],
  deposit: ['ftd'],
  ftd: ['deposit'],
  signup: ['registration'],
  register: ['registration'],
  float: ['decimal'],
  rounding: ['decimal'],
  crawler: ['bot'],
  spider: ['bot'],
  money: ['revenue', 'commission'],
  spreadsheet: ['csv', 'export'],
  bill: ['statement'],
  excel: ['csv', 'export'],
  timezone: ['time', 'zone', 'tz'],
  nginx: ['proxy', 'podium_trust_proxy'],
  haproxy: ['proxy', 'podium_trust_proxy'],
  balancer: ['proxy', 'probe'],
  liveness: ['healthz', 'probe'],
  readiness: ['readyz', 'probe'],
  health: ['healthz', 'readyz'],
  monitoring: ['metrics', 'prometheus'],
  grafana: ['metrics', 'prometheus'],
  encrypt: ['sealed', 'aes-256-gcm'],
  encrypted: ['sealed', 'aes-256-gcm'],
  encryption: ['sealed', 'aes-256-gcm'],
  cluster: ['workers', 'processes'],
  scale: ['workers', 'processes'],
  replica: ['database_read_url'],
  archive: ['retention', 'podium_tracking_archive_dir'],
  egress: ['outbound'],
  allowlist: ['outbound', 'address'],
  whitelist: ['outbound', 'address'],
  firewall: ['outbound', 'address'],
  staging: ['sandbox'],
  deploy: ['install', 'release'],
  agent: ['mcp', 'llms.txt'],
  llm: ['mcp', 'llms.txt'],
  ai: ['mcp', 'llms.txt'],
  claude: ['mcp'],
  chatgpt: ['mcp'],
  frontend: ['browser', 'cors'],
  'client-side': ['browser', 'cors'],
  geoip: ['country', 'visitor'],
  sdk: ['podium-toplist-client', 'client'],
  library: ['podium-toplist-client', 'client'],
  backoff: ['retry'],
  resend: ['retry', 'replay'],
  twice: ['duplicate'],
  dedupe: ['duplicate'],
  idempotent: ['idempotency', 'duplicate'],
  colleague: ['person', 'people', 'user'],
  coworker: ['person', 'people', 'user'],
  teammate: ['person', 'people', 'user'],
  device: ['session', 'browser'],
  website: ['site'],
  receiver: ['endpoint'],
  postgres: ['postgresql'],
  folder: ['directory'],
  laptop: ['local', 'demo'],
  permission: ['scope'],
  permissions: ['scope'],
  role: ['scope'],
  history: ['audit', 'edition'],
  changelog: ['audit'],
  setup: ['install'],
  logout: ['session'],
  '2fa': ['two-factor', 'totp'],
  mfa: ['two-factor', 'totp'],
  invoice: ['statement', 'billing'],
  anonymise: ['erase', 'erasure', 'pseudonymised'],
  anonymize: ['erase', 'erasure', 'pseudonymised'],
  downgrade: ['rollback'],
  kubernetes: ['probe', 'healthz', 'readyz'],
  k8s: ['probe', 'healthz', 'readyz'],
  uptime: ['probe', 'healthz', 'metrics'],
  cron: ['schedule'],
  deeplink: ['landing'],
  sigterm: ['shutdown'],
  sigint: ['shutdown'],
  fetch: ['pull'],
  fetched: ['pull'],
  download: ['pull', 'export'],
  often: ['schedule', 'interval'],
  frequency: ['schedule', 'interval'],
  earn: ['revenue', 'epc'],
  earnings: ['revenue', 'epc'],
  profitable: ['revenue', 'epc'],
  delete: ['retention'],
  purge: ['retention'],
  cleanup: ['retention'],
  midnight: ['day', 'zone'],
};

const ALIAS_STEMS = new Map<string, string[]>(
  Object.entries(ALIASES).map(([k, v]) => [stem(k), [...new Set(v.map((w) => stem(w)))]]),
);

/** The docs' own words for a (stemmed) query term, not counting the term itself. */
export const aliasesOf = (term: string): readonly string[] =>
  (ALIAS_STEMS.get(term) ?? []).filter((t) => t !== term);

/**
 * Wordings of a query spelt as the docs spell them: the signal a `kill` command sends
 * (`kill -TERM`, `kill -s INT` → `SIGTERM`), and logging in (`login`, `log in`, `logged on`), which
 * the docs call `sign-in`; logging out is `logout` (`log` alone is about logs, `sign` also about
 * signatures).
 */
export const spellSignals = (query: string): string =>
  query
    .replace(/\bkill\s+-(?:s\s+)?(TERM|INT|HUP|QUIT|KILL)\b/gi, (_m, sig: string) => `kill SIG${sig}`)
    .replace(/\blog(?:s|ged|ging)?[\s-]*(?:in|on)\b/gi, 'sign-in')
    .replace(/\blog(?:s|ged|ging)?[\s-]*out\b/gi, 'logout');

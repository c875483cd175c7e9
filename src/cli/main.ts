import cluster from 'node:cluster';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import type { Static } from '@sinclair/typebox';
import { Value } from '@sinclair/typebox/value';
import { Command, InvalidArgumentError } from 'commander';
import { runPrimary } from '../cluster.ts';
import { type Config, ConfigError, loadConfig, withLoopbackAllowance } from '../config.ts';
import { CopyMismatchError, copyToPostgres } from '../db/copy.ts';
import { openConfiguredDb } from '../db/open.ts';
import { PACKAGE_VERSION } from '../lib/package-root.ts';
import { GENERATED_KEY_FILE } from '../lib/seal.ts';
import { SCOPES, type Scope } from '../modules/access/scopes.ts';
import type { AuditEntry } from '../modules/audit/repository.ts';
import { ensureDemo } from '../modules/catalog/demo.ts';
import { parseImportDocument } from '../modules/catalog/import-schema.ts';
import { ProgramInput } from '../modules/tracking/schemas.ts';
import { installShutdown, startServer } from '../server.ts';
import { withCatalog, withServices, withTracking } from './context.ts';
import { seedDemoMarket, startDemoAdServer } from './demo-adserver.ts';
import { loadDemoApart } from './demo-apart.ts';
import { demoText, progressBar, readImportFile, startBanner } from './output.ts';

const program = new Command('podium')
  .description('Podium: toplist delivery, affiliate tracking, docs and ad-server integration')
  .version(PACKAGE_VERSION)
  .addHelpText(
    'after',
    `
Examples:
  podium start                                   demo data in ./data, serves on http://127.0.0.1:3000
  DATABASE_URL=postgres://podium@db/podium podium migrate
  DATABASE_URL=postgres://podium@db/podium podium serve --workers 2
  podium token create --admin --scopes catalog:read
  podium <command> --help                        the flags of one command

Docs: docs/getting-started.md and docs/operations.md, or /docs/ on a running server.`,
  )
  .showHelpAfterError();

function port(raw: string): number {
  if (!/^\d{1,5}$/.test(raw) || Number(raw) > 65535) throw new InvalidArgumentError('must be a port number');
  return Number(raw);
}

/** Adds the flags every command shares. */
function common(cmd: Command): Command {
  return cmd
    .option('--data-dir <dir>', 'embedded database directory (default ./data)')
    .option(
      '--database-url <url>',
      'PostgreSQL URL (default: embedded PGlite); prefer the DATABASE_URL env var',
    )
    .option('--port <port>', 'HTTP port', port);
}

interface CommonOpts {
  dataDir?: string;
  databaseUrl?: string;
  port?: number;
  workers?: number;
}

/** Config from the environment with the command's flags on top. */
function configFrom(opts: CommonOpts, extra: Partial<Config> = {}): Config {
  const env = { ...process.env };
  if (opts.dataDir) env.PODIUM_DATA_DIR = opts.dataDir;
  if (opts.databaseUrl) env.DATABASE_URL = opts.databaseUrl;
  if (opts.port !== undefined) env.PORT = String(opts.port);
  if (opts.workers !== undefined) env.PODIUM_WORKERS = String(opts.workers);
  return loadConfig(env, extra);
}

const err = (msg: string) => process.stderr.write(`${msg}\n`);
const out = (msg: string) => process.stdout.write(`${msg}\n`);

function positiveInt(raw: string): number {
  if (!/^[1-9][0-9]{0,9}$/.test(raw) || Number(raw) > 2147483647) {
    throw new InvalidArgumentError('must be a positive whole number');
  }
  return Number(raw);
}

function tokenKind(opts: { site?: number; admin?: boolean }): 'site' | 'admin' {
  if ((opts.site === undefined) === !opts.admin)
    throw new Error('give exactly one of --site <id> or --admin');
  return opts.admin ? 'admin' : 'site';
}

function parseScopes(raw: string): Scope[] {
  const list = raw
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
  const bad = list.filter((s) => !(SCOPES as readonly string[]).includes(s));
  if (bad.length || !list.length)
    throw new Error(`--scopes: unknown scope ${bad.join(', ') || '(none)'}; known: ${SCOPES.join(', ')}`);
  return [...new Set(list)] as Scope[];
}

common(program.command('serve').description('run the HTTP server'))
  .option('--workers <n>', 'worker processes on this machine (node:cluster; needs DATABASE_URL)', positiveInt)
  .action(async (opts: CommonOpts) => {
    const config = configFrom(opts);
    // Workers re-run this command; only the primary forks.
    if (config.workers > 1 && cluster.isPrimary) return runPrimary(config, err);
    const server = await startServer(config);
    installShutdown(server, err);
  });

common(
  program.command('start').description('run the server on the embedded database, for a first look'),
).action(async (opts: CommonOpts) => {
  const asked = configFrom(opts, { demoOnEmpty: true });
  const loaded = await loadDemoApart(asked);
  // The demo's reference ad server, reached through the local-only allowance set for it alone.
  const ads = await startDemoAdServer(asked, loaded !== null, err).catch((e: Error) => {
    err(`demo: the reference ad server did not start: ${e.message}`);
    return null;
  });
  const config = ads ? withLoopbackAllowance(asked, [ads.pair]) : asked;
  const db = await openConfiguredDb(config, err);
  if (ads?.fresh) await seedDemoMarket(config, db, ads, err);
  const server = await startServer(loaded ? Object.freeze({ ...config, demoOnEmpty: false }) : config, {
    db,
    log: err,
  });
  const closeServer = server.close;
  // Podium drains first (its calls to the ad server finish), then the ad server drains.
  installShutdown(ads ? { ...server, close: () => closeServer().then(() => ads.close()) } : server, err);
  const docsOrigin = new URL(server.url);
  if (config.docsPort) docsOrigin.port = String(config.docsPort);
  out(startBanner(server.url, loaded ?? server.demo, `${docsOrigin.origin}${config.docsBase}/`, ads?.url));
});

common(program.command('migrate').description('apply pending database migrations')).action(
  async (opts: CommonOpts) => {
    const config = configFrom(opts);
    const db = await openConfiguredDb(config, (m) => process.stdout.write(`${m}\n`));
    await db.close();
    process.stdout.write('database is up to date\n');
  },
);

common(
  program
    .command('demo')
    .description('load the demo dataset into an empty database, or mint fresh demo tokens'),
)
  .option('--json', 'print the tokens as JSON')
  .action(async (opts: CommonOpts & { json?: boolean }) => {
    const tokens = await withServices(configFrom(opts), (services) => ensureDemo(services, err));
    if (!tokens) throw new Error('the database holds other data; the demo loads only into an empty database');
    out(opts.json ? JSON.stringify(tokens) : demoText(tokens));
  });

common(
  program.command('import').description('bulk-import owners, templates, brands and offers from a JSON file'),
)
  .argument('<file>', 'JSON import document (see docs/admin-api.md, "Bulk import")')
  .action(async (file: string, opts: CommonOpts) => {
    const doc = parseImportDocument(readImportFile(file));
    const summary = await withCatalog(configFrom(opts), (catalog) =>
      catalog.importer.importCatalog(doc, (p) => err(`import: ${p.done}/${p.total} rows (${p.section})`)),
    );
    out(JSON.stringify(summary));
  });

common(
  program
    .command('copy-to-postgres')
    .description(
      'copy the embedded database (--data-dir) into an empty PostgreSQL database (DATABASE_URL), checked row for row',
    ),
)
  .option('--verify-only', 'compare an earlier copy with the embedded database; copy nothing')
  .option('--batch-rows <n>', 'rows per batch read from the embedded database', positiveInt, 1000)
  .action(async (opts: CommonOpts & { verifyOnly?: boolean; batchRows: number }) => {
    const config = configFrom(opts);
    if (!config.databaseUrl)
      throw new Error('copy-to-postgres: give the target as DATABASE_URL or --database-url');
    const verifyOnly = opts.verifyOnly === true;
    let result: Awaited<ReturnType<typeof copyToPostgres>>;
    try {
      result = await copyToPostgres(
        { dataDir: config.dataDir, url: config.databaseUrl, verifyOnly, batchRows: opts.batchRows },
        {
          note: (m) => err(`copy: ${m}`),
          progress: (t, done, total) => err(`copy: ${progressBar(done, total)} ${t}`),
        },
      );
    } catch (e) {
      if (!(e instanceof CopyMismatchError)) throw e;
      err(`copy-to-postgres: verify failed${verifyOnly ? '' : ', nothing was committed'}:`);
      for (const d of e.differences) err(`  ${d}`);
      process.exitCode = 1;
      return;
    }
    err(
      `copy: ${verifyOnly ? 'verified' : 'copied and verified'} ${result.tables.length} tables, ${result.rows} rows (count and digest of every table on both databases)`,
    );
    const keyFile = join(config.dataDir, GENERATED_KEY_FILE);
    if (!verifyOnly && !config.secretKeys && existsSync(keyFile)) {
      err(
        `copy: secrets at rest are sealed with the key in ${keyFile}: run the server with PODIUM_SECRET_KEYS_FILE=${keyFile} (or that line in PODIUM_SECRET_KEYS)`,
      );
    }
    out(JSON.stringify({ tables: result.tables.length, rows: result.rows, verified: true }));
  });

const token = program.command('token').description('create or revoke API tokens');
common(token.command('create').description('mint a site read token (--site) or an admin token (--admin)'))
  .option('--site <id>', 'site id for a site read token', positiveInt)
  .option('--admin', 'mint an admin token')
  .option('--scopes <list>', `admin scopes, comma-separated (${SCOPES.join(', ')})`, 'admin')
  .option('--name <name>', 'a label to recognise the token by', '')
  .action(async (opts: CommonOpts & { site?: number; admin?: boolean; scopes: string; name: string }) => {
    const kind = tokenKind(opts);
    const scopes = parseScopes(opts.scopes);
    const minted = await withServices(
      configFrom(opts),
      ({ access }): Promise<{ id: number; token: string }> =>
        kind === 'site'
          ? access.createSiteToken(opts.site!, opts.name)
          : access.createAdminToken(opts.name || 'cli', scopes, null),
    );
    err(`token id ${minted.id} created; it is shown only now:`);
    out(minted.token);
  });
common(
  token
    .command('revoke')
    .description('revoke a site token (--site and --id) or an admin token (--admin and --id)'),
)
  .option('--site <id>', 'site id of the token', positiveInt)
  .option('--admin', 'the token is an admin token')
  .requiredOption('--id <tokenId>', 'token id (from the admin API token list)', positiveInt)
  .action(async (opts: CommonOpts & { site?: number; admin?: boolean; id: number }) => {
    const kind = tokenKind(opts);
    await withServices(
      configFrom(opts),
      ({ access }): Promise<unknown> =>
        kind === 'site' ? access.revokeSiteToken(opts.site!, opts.id) : access.revokeAdminToken(opts.id),
    );
    out(`token ${opts.id} revoked`);
  });

common(program.command('publish').description('publish the drafts of toplists as new editions'))
  .argument('<toplistId...>', 'toplist ids', (v: string, prev: number[] = []) => [...prev, positiveInt(v)])
  .action(async (ids: number[], opts: CommonOpts) => {
    await withCatalog(configFrom(opts), async (catalog) => {
      for (const id of ids) {
        const r = await catalog.publishing.publish(id);
        out(`toplist ${id} (${r.toplist.slug}) published as version ${r.version}`);
      }
    });
  });

const affiliate = program
  .command('program')
  .description('affiliate programmes (postback endpoints, landing parameters)');
common(
  affiliate
    .command('create')
    .description('create a programme; prints it with its postback URL (token shown only now)'),
)
  .requiredOption('--slug <slug>', 'the {program} segment of the postback URL')
  .requiredOption('--name <name>', 'display name')
  .option('--affiliate-id <id>', 'our account id at the operator ({affiliate_id})')
  .option(
    '--landing-params <template>',
    "query template added on redirect, e.g. 'btag={affiliate_id}_{click_id}'",
  )
  .option('--param-map <json>', 'the programme\'s postback parameter names, e.g. \'{"click_id":"btag"}\'')
  .option('--timezone <tz>', "IANA time zone of the programme's reports")
  .option('--currency <code>', 'ISO 4217 currency')
  .option('--trackers <ids>', 'comma-separated tracker ids paid by this programme')
  .action(async (opts: CommonOpts & Record<string, string | undefined>) => {
    let paramMap: unknown;
    try {
      paramMap = opts.paramMap === undefined ? undefined : JSON.parse(opts.paramMap);
    } catch {
      throw new InvalidArgumentError('--param-map must be a JSON object');
    }
    const input = {
      slug: opts.slug,
      name: opts.name,
      affiliateId: opts.affiliateId,
      landingParams: opts.landingParams,
      paramMap,
      timezone: opts.timezone,
      currency: opts.currency,
      trackerIds: opts.trackers?.split(',').map((v) => positiveInt(v.trim())),
    };
    const clean = Object.fromEntries(Object.entries(input).filter(([, v]) => v !== undefined));
    const problem = [...Value.Errors(ProgramInput, clean)][0];
    if (problem) throw new InvalidArgumentError(`${problem.path || 'input'} ${problem.message}`);
    const created = await withTracking(configFrom(opts), (t) =>
      t.createProgram(clean as Static<typeof ProgramInput>),
    );
    err(`programme ${created.id} created; its postback URL carries a token shown only now:`);
    out(JSON.stringify(created));
  });
common(affiliate.command('list').description('list programmes (JSON)')).action(async (opts: CommonOpts) => {
  const { data } = await withTracking(configFrom(opts), (t) => t.listPrograms(1, 100));
  out(JSON.stringify(data));
});
common(
  affiliate
    .command('rotate-token')
    .description("replace a programme's postback token (the old one stops working)"),
)
  .requiredOption('--id <id>', 'programme id', positiveInt)
  .action(async (opts: CommonOpts & { id: number }) => {
    const p = await withTracking(configFrom(opts), (t) => t.rotateProgramToken(opts.id));
    err(`programme ${p.id}: new postback URL, shown only now:`);
    out(p.postbackUrl);
  });

common(
  program
    .command('pull-aggregates')
    .description("backfill a programme's operator daily aggregates, one pull per day, with progress"),
)
  .requiredOption('--program <slug>', 'programme slug (or id)')
  .requiredOption('--from <day>', 'first day, YYYY-MM-DD')
  .requiredOption('--to <day>', 'last day, YYYY-MM-DD')
  .action(async (opts: CommonOpts & { program: string; from: string; to: string }) => {
    const results = await withServices(
      configFrom(opts),
      async ({ aggregates }) => {
        const id = /^\d+$/.test(opts.program)
          ? Number(opts.program)
          : await aggregates.programIdBySlug(opts.program);
        return aggregates.pullRange(id, opts.from, opts.to, (done, total, r) =>
          err(
            `${progressBar(done, total)} ${r.day} ${r.status === 'ok' ? `ok, ${r.rows} rows` : `failed: ${r.reason}`}`,
          ),
        );
      },
      err,
    );
    const failed = results.filter((r) => r.status === 'failed').length;
    out(JSON.stringify({ days: results.length, ok: results.length - failed, failed }));
    if (failed) process.exitCode = 1;
  });

const adserver = program.command('adserver').description("connections to publishers' ad servers");
common(
  adserver
    .command('connect')
    .description(
      'add a connection and run the verify probe; the API key is read from an environment variable',
    ),
)
  .requiredOption('--publisher <slug>', 'publisher slug')
  .requiredOption(
    '--base-url <url>',
    'https base URL of the ad server API, e.g. https://ads.example.com/api/v1',
  )
  .option('--environment <env>', 'production or sandbox', 'production')
  .option('--api-key-env <name>', 'environment variable holding the API key', 'ADSERVER_API_KEY')
  .action(
    async (
      opts: CommonOpts & { publisher: string; baseUrl: string; environment: string; apiKeyEnv: string },
    ) => {
      const apiKey = process.env[opts.apiKeyEnv];
      if (!apiKey)
        throw new Error(`set ${opts.apiKeyEnv} to the ad server's API key (never passed as a flag)`);
      if (opts.environment !== 'production' && opts.environment !== 'sandbox')
        throw new InvalidArgumentError('--environment must be production or sandbox');
      const c = await withServices(
        configFrom(opts),
        ({ adserver: a }) =>
          a.connections.create({
            publisher: opts.publisher,
            environment: opts.environment as 'production' | 'sandbox',
            base_url: opts.baseUrl,
            api_key: apiKey,
          }),
        err,
      );
      out(JSON.stringify(c));
      if (c.status !== 'connected') process.exitCode = 1;
    },
  );
common(adserver.command('verify').description('re-run the verify probe of a connection'))
  .argument('<id>', 'connection id (asc_…)')
  .action(async (id: string, opts: CommonOpts) => {
    const c = await withServices(configFrom(opts), ({ adserver: a }) => a.connections.verify(id), err);
    out(JSON.stringify(c));
    if (c.status !== 'connected') process.exitCode = 1;
  });
/** Re-seals every secret at rest with the current key; exit 1 when some cannot be opened. */
async function rotateKeys(opts: CommonOpts): Promise<void> {
  const r = await withServices(configFrom(opts), (s) => s.rotateSecretKeys(), err);
  out(JSON.stringify(r));
  if (r.unreadable.length) {
    err(`${r.unreadable.length} secret(s) could not be opened with the configured keys: re-enter them`);
    process.exitCode = 1;
  }
}
/**
 * The player id of a `player-data` command: the first line of standard input, never an argument
 * (arguments stay in shell histories and process lists).
 */
async function playerIdFromStdin(): Promise<string> {
  if (process.stdin.isTTY) err('player id, then Enter:');
  const lines = createInterface({ input: process.stdin, crlfDelay: Number.POSITIVE_INFINITY });
  for await (const line of lines) {
    lines.close();
    return line;
  }
  throw new Error('give the player id on standard input');
}

/** The audit row of a `player-data` command: who is the command line, never the player id. */
const cliAudit = (op: string, programId: number | undefined, after: unknown): AuditEntry => ({
  adminTokenId: null,
  actor: 'cli',
  action: `podium player-data ${op}`,
  targetType: 'player-data',
  targetId: programId === undefined ? 'all' : String(programId),
  status: 200,
  requestId: null,
  fields: programId === undefined ? ['player_id'] : ['player_id', 'program_id'],
  before: null,
  after,
});

const playerData = program
  .command('player-data')
  .description("export or erase one player's data; the player id is read from standard input");
common(
  playerData
    .command('export')
    .description("print one page of the player's conversions and postback log rows (JSON)"),
)
  .option('--program <id>', 'only this programme (default: every programme)', positiveInt)
  .option('--page <n>', 'page (default 1)', positiveInt)
  .option('--per-page <n>', 'rows of each list per page (default 500, at most 1000)', positiveInt)
  .action(async (opts: CommonOpts & { program?: number; page?: number; perPage?: number }) => {
    const playerId = await playerIdFromStdin();
    const page = await withServices(configFrom(opts), async (s) => {
      const r = await s.playerData.export({ playerId, programId: opts.program }, opts.page, opts.perPage);
      await s.audit.record(
        cliAudit('export', opts.program, {
          page: r.meta.page,
          conversionsTotal: r.meta.conversions_total,
          postbacksTotal: r.meta.postbacks_total,
        }),
      );
      return r;
    });
    out(JSON.stringify(page));
  });
common(
  playerData
    .command('erase')
    .description("delete the player's conversions and postback log rows (rollups stay)"),
)
  .option('--program <id>', 'only this programme (default: every programme)', positiveInt)
  .action(async (opts: CommonOpts & { program?: number }) => {
    const playerId = await playerIdFromStdin();
    const counts = await withServices(configFrom(opts), async (s) => {
      const c = await s.playerData.erase({ playerId, programId: opts.program });
      await s.audit.record(cliAudit('erase', opts.program, c));
      return c;
    });
    err(
      `erased ${counts.conversions} conversion(s), ${counts.postbacks} postback log row(s), ${counts.outcomes} outcome(s)`,
    );
    out(JSON.stringify(counts));
  });

common(
  program
    .command('rotate-keys')
    .description(
      're-encrypt every secret at rest (ad-server API keys, operator report keys, webhook secrets) with the current PODIUM_SECRET_KEYS key',
    ),
).action(rotateKeys);
common(
  adserver.command('rotate-keys').description('the same as `podium rotate-keys` (kept for scripts)'),
).action(rotateKeys);

program.parseAsync(process.argv).catch((e: unknown) => {
  if (e instanceof ConfigError) err(e.message);
  else err(`podium: ${(e as Error).message}`);
  process.exit(1);
});

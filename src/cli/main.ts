import { Command, InvalidArgumentError } from 'commander';
import { type Config, ConfigError, loadConfig } from '../config.ts';
import { installShutdown, openConfiguredDb, startServer } from '../server.ts';

const program = new Command('podium')
  .description('Podium: toplist delivery, affiliate tracking, docs and ad-server integration')
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
}

/** Config from the environment with the command's flags on top. */
function configFrom(opts: CommonOpts, extra: Partial<Config> = {}): Config {
  const env = { ...process.env };
  if (opts.dataDir) env.PODIUM_DATA_DIR = opts.dataDir;
  if (opts.databaseUrl) env.DATABASE_URL = opts.databaseUrl;
  if (opts.port !== undefined) env.PORT = String(opts.port);
  return loadConfig(env, extra);
}

const err = (msg: string) => process.stderr.write(`${msg}\n`);

common(program.command('serve').description('run the HTTP server')).action(async (opts: CommonOpts) => {
  const server = await startServer(configFrom(opts));
  installShutdown(server, err);
});

common(
  program.command('start').description('run the server on the embedded database, for a first look'),
).action(async (opts: CommonOpts) => {
  const server = await startServer(configFrom(opts, { demoOnEmpty: true }));
  installShutdown(server, err);
  process.stdout.write(`\nPodium is running at ${server.url}\n`);
});

common(program.command('migrate').description('apply pending database migrations')).action(
  async (opts: CommonOpts) => {
    const config = configFrom(opts);
    const db = await openConfiguredDb(config, (m) => process.stdout.write(`${m}\n`));
    await db.close();
    process.stdout.write('database is up to date\n');
  },
);

program.parseAsync(process.argv).catch((e: unknown) => {
  if (e instanceof ConfigError) err(e.message);
  else err(`podium: ${(e as Error).message}`);
  process.exit(1);
});

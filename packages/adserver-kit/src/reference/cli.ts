import { readFileSync } from 'node:fs';
import { Command, InvalidArgumentError } from 'commander';
import { openStore, type Store } from '../db.ts';
import { SCOPES, type Scope } from '../schemas.ts';
import { type ConsoleOps, remoteOps, startLocalAdmin, storeOps } from './local-admin.ts';
import * as repo from './repository.ts';
import { startReferenceServer } from './server.ts';

// `adserver-reference`: run the reference ad server and do its console-side chores (keys,
// activation). The store is PGlite in --data-dir, or PostgreSQL from ADSERVER_DATABASE_URL
// (an environment variable, so a password never sits in the process list).

const program = new Command('adserver-reference').description(
  'Reference ad server of the Ad Server Integration API',
);
program.option(
  '--data-dir <dir>',
  'PGlite data directory (ignored when ADSERVER_DATABASE_URL is set)',
  '.adserver-reference',
);

function storeOptions(): { url?: string; dataDir?: string } {
  const url = process.env.ADSERVER_DATABASE_URL;
  return url ? { url } : { dataDir: program.opts<{ dataDir: string }>().dataDir };
}

/**
 * Runs a console command: through the running server's loopback admin listener when `serve` runs
 * on the PGlite directory, else on the store itself (PostgreSQL is shared safely with a server).
 */
async function withConsole<T>(fn: (ops: ConsoleOps) => Promise<T>): Promise<T> {
  const opts = storeOptions();
  const remote = opts.dataDir ? await remoteOps(opts.dataDir) : undefined;
  if (remote) return fn(remote);
  const store: Store = await openStore(opts);
  try {
    const account = (await repo.listAccounts(store))[0];
    if (!account) throw new Error('no account yet: run `adserver-reference serve` once to create it');
    return await fn(storeOps(store, account.id));
  } finally {
    await store.close();
  }
}

const int = (v: string): number => {
  const n = Number(v);
  if (!Number.isInteger(n) || n < 0) throw new InvalidArgumentError('expected a non-negative integer');
  return n;
};

program
  .command('serve')
  .description('start the server; prints its base URL and a new API key')
  .option('--host <host>', 'listen address', '127.0.0.1')
  .option('--port <port>', 'listen port', int, 8080)
  .option('--tls-key <file>', 'PEM private key (serve HTTPS)')
  .option('--tls-cert <file>', 'PEM certificate chain (serve HTTPS)')
  .option('--timezone <zone>', 'IANA zone of a newly created account', 'Europe/Malta')
  .option('--currency <code>', 'ISO-4217 currency of a newly created account', 'EUR')
  .option('--no-forecast', 'create the account with capabilities.forecast = false')
  .option('--rate-max <n>', 'requests per key per window', int, 600)
  .option('--rate-window-ms <ms>', 'rate window', int, 60_000)
  .action(async (o) => {
    if (!o.tlsKey !== !o.tlsCert) throw new InvalidArgumentError('--tls-key and --tls-cert go together');
    const server = await startReferenceServer({
      store: storeOptions(),
      host: o.host,
      port: o.port,
      tls: o.tlsKey ? { key: readFileSync(o.tlsKey), cert: readFileSync(o.tlsCert) } : undefined,
      account: { timezone: o.timezone, currency: o.currency, forecast: o.forecast },
      rateLimit: { max: o.rateMax, windowMs: o.rateWindowMs },
      logger: false,
    });
    const dataDir = storeOptions().dataDir;
    const admin = dataDir
      ? await startLocalAdmin(storeOps(server.store, server.accountId), dataDir)
      : undefined;
    process.stdout.write(
      `base URL: ${server.url}\naccount:  ${server.accountId}\nAPI key:  ${server.apiKey}\n`,
    );
    if (!o.tlsKey)
      process.stdout.write(
        'plain HTTP: put a TLS-terminating proxy in front (the contract requires https://)\n',
      );
    const stop = async () => {
      await admin?.close();
      await server.close();
      process.exit(0);
    };
    process.once('SIGINT', stop);
    process.once('SIGTERM', stop);
  });

const keys = program.command('keys').description('manage API keys');
keys
  .command('create')
  .description('issue a key (printed once); several may be live at a time')
  .option('--scopes <list>', `comma-separated scopes (${SCOPES.join(', ')})`, SCOPES.join(','))
  .option('--label <text>', 'note shown in the list', '')
  .action((o) =>
    withConsole(async (c) => {
      const k = await c.createKey(o.scopes.split(',') as Scope[], o.label);
      process.stdout.write(`${k.id}\t${k.scopes.join(',')}\n${k.key}\n`);
    }),
  );
keys
  .command('list')
  .description('list keys (hints only)')
  .action(() =>
    withConsole(async (c) => {
      for (const k of await c.listKeys())
        process.stdout.write(
          `${k.id}\t${k.hint}\t${k.scopes.join(',')}\t${k.revoked ? 'revoked' : 'live'}\t${k.label}\n`,
        );
    }),
  );
keys
  .command('revoke <id>')
  .description('revoke a key at once')
  .action((id: string) =>
    withConsole(async (c) => {
      if (!(await c.revokeKey(id))) throw new Error(`no live key ${id}`);
      process.stdout.write(`revoked ${id}\n`);
    }),
  );

program
  .command('activate <orderId>')
  .description('console action: take a draft order live (its lines start delivering in reports)')
  .action((orderId: string) =>
    withConsole(async (c) => {
      if (!(await c.activate(orderId))) throw new Error(`no order ${orderId}`);
      process.stdout.write(`order ${orderId} is live\n`);
    }),
  );

program.parseAsync().catch((err: Error) => {
  process.stderr.write(`adserver-reference: ${err.message}\n`);
  process.exit(1);
});

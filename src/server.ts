import type { FastifyInstance } from 'fastify';
import { buildApp, buildDocsApp } from './app.ts';
import type { Config } from './config.ts';
import { ChangeBus } from './db/changes.ts';
import type { Db } from './db/index.ts';
import { openConfiguredDb } from './db/open.ts';
import { openRedis } from './lib/redis.ts';
import { scrub } from './lib/scrub.ts';
import { type DemoTokens, ensureDemo } from './modules/catalog/demo.ts';
import type { PeopleService } from './modules/people/service.ts';

/** How long a graceful close waits for buffered log lines to reach standard output. */
const LOG_FLUSH_WAIT_MS = 2000;

export interface RunningServer {
  app: FastifyInstance;
  db: Db;
  /** The address actually bound (port 0 picks a free one). */
  url: string;
  /** Demo tokens minted at start (only with `demoOnEmpty`, when the demo sites exist). */
  demo: DemoTokens | null;
  /** The one-time link to set the owner's password, when this start created the owner account. */
  ownerLink: string | null;
  /** Stops accepting, drains in-flight work, closes the database. Safe to call twice. */
  close(): Promise<void>;
}

/** Starts the whole service: database, migrations, change bus, HTTP listener. */
export async function startServer(
  config: Config,
  opts: { db?: Db; log?: (msg: string) => void } = {},
): Promise<RunningServer> {
  const db = opts.db ?? (await openConfiguredDb(config, opts.log));
  const bus = new ChangeBus(db);
  await bus.start();
  const log = opts.log ?? ((msg: string) => process.stderr.write(`${msg}\n`));
  const redis = config.redisUrl
    ? openRedis(config.redisUrl, (err) => log(`redis: ${scrub(err.message)}`))
    : undefined;
  const app = await buildApp({ config, db, bus, redis });
  warnOnUnsetPublicUrl(config, log);
  if (config.outboundLoopbackAllow.length)
    log(
      `outbound: local-only allowance PODIUM_OUTBOUND_LOOPBACK_ALLOW=${config.outboundLoopbackAllow.join(',')}: outbound calls may reach exactly these loopback address:port pairs`,
    );
  // Sites without their own tracking domain follow this server's public URL: links rendered by a
  // process on another host or port are re-rendered before the first request.
  const moved = await app.services.catalog.publishing.retargetTrackingLinks();
  if (moved) log(`tracking links: re-rendered the live toplists of ${moved} site(s) for ${config.publicUrl}`);
  const demo = config.demoOnEmpty ? await ensureDemo(app.services, opts.log) : null;
  const ownerLink = await firstOwner(app.services.people, config.ownerEmail, log);
  const address = await app.listen({ host: config.host, port: config.port });
  app.services.scheduler.start();
  app.services.webhooks.worker.start();
  const docsApp = config.docsPort ? await buildDocsApp({ config, redis }) : undefined;
  await docsApp?.listen({ host: config.host, port: config.docsPort });
  let closing: Promise<void> | undefined;
  return {
    app,
    db,
    url: address,
    demo,
    ownerLink,
    close() {
      closing ??= (async () => {
        await app.close();
        await docsApp?.close();
        await bus.stop();
        await db.close();
        redis?.disconnect();
        // Log lines still buffered by the destination (logDestination) go out now; a log reader
        // that stalled holds the close at most LOG_FLUSH_WAIT_MS (what is left goes at exit).
        const log = app.log as typeof app.log & { flush?: (cb: () => void) => void };
        await new Promise<void>((done) => {
          const bound = setTimeout(done, LOG_FLUSH_WAIT_MS);
          const flushed = () => {
            clearTimeout(bound);
            done();
          };
          log.flush ? log.flush(flushed) : flushed();
        });
      })();
      return closing;
    },
  };
}

/**
 * A server listening beyond loopback with no PODIUM_PUBLIC_URL would put `http://<bind address>:<port>`
 * into every tracker link and `links` URL: say so at start.
 */
export function warnOnUnsetPublicUrl(config: Config, log: (msg: string) => void): void {
  const loopback = /^(127\.[0-9.]+|localhost|::1)$/.test(config.host);
  const derived = `http://${config.host === '0.0.0.0' ? '127.0.0.1' : config.host}:${config.port}`;
  if (!loopback && config.publicUrl === derived)
    log(
      `warning: PODIUM_PUBLIC_URL is not set and the server listens on ${config.host}: tracker links and API links will use ${config.publicUrl}; set PODIUM_PUBLIC_URL (or a site's trackingBaseUrl) to the address visitors reach`,
    );
}

/** SIGTERM/SIGINT drain and close; a second signal exits at once. */
export function installShutdown(server: RunningServer, log: (msg: string) => void): void {
  let signalled = false;
  const onSignal = (sig: NodeJS.Signals) => {
    if (signalled) {
      log(`${sig} again: exiting now`);
      process.exit(1);
    }
    signalled = true;
    log(`${sig}: draining and shutting down`);
    server.close().then(
      () => process.exit(0),
      (err) => {
        log(`shutdown failed: ${(err as Error).message}`);
        process.exit(1);
      },
    );
  };
  process.on('SIGTERM', onSignal);
  process.on('SIGINT', onSignal);
}

/**
 * Creates the owner account on a database without one and returns its one-time link, written
 * to the terminal only (never the structured log). Processes starting together race for it:
 * the one that loses finds the owner there.
 */
async function firstOwner(people: PeopleService, email: string, log: (msg: string) => void) {
  try {
    const created = await people.firstRun(email);
    if (!created) return null;
    log(
      `first run: owner account ${email} created; set its password (link valid until ${created.link.expiresAt}) at\n  ${created.link.url}`,
    );
    return created.link.url;
  } catch (err) {
    if ((err as { code?: unknown }).code === '23505') return null;
    throw err;
  }
}

import type { FastifyBaseLogger } from 'fastify';
import pino from 'pino';
import type { Config } from '../config.ts';
import { registerSecret, scrubValue } from './scrub.ts';

/**
 * Set (to true) on log objects built by Podium itself from values that cannot hold a secret
 * (route patterns, statuses, numbers) and logged with a constant message: the per-request line.
 * They skip the scrubber, which deep-copies every line it checks (bench/README.md has the cost).
 * A symbol key: pino does not serialise it.
 */
export const TRUSTED_LINE: unique symbol = Symbol('podium.trustedLogLine');

const isTrusted = (v: unknown): boolean =>
  typeof v === 'object' && v !== null && (v as { [TRUSTED_LINE]?: boolean })[TRUSTED_LINE] === true;

/** Standard output as pino writes it, and the bytes given up because it stayed full. */
export interface LogDestination {
  stream: pino.DestinationStream & { flush(cb?: (err?: Error) => void): void };
  droppedBytes(): number;
}

/**
 * Standard output through pino's own destination (SonicBoom), asynchronous so a log reader that
 * stalls never holds the event loop. Lines are gathered into chunks, since each write is a
 * system call on the serving core:
 * - alone, a process writes chunks of 16–64 KiB (`minLength`, `maxWrite`), and at least every
 *   second (`periodicFlush`) so a quiet server's lines are not held back;
 * - `shared` (the workers of `podium serve --workers N`, which share the primary's standard
 *   output): at most 4 KiB, Linux's PIPE_BUF, so a chunk is whole lines that land in one atomic
 *   pipe write and the workers never cut each other's lines;
 * - `maxLength` 1 MiB: past that much waiting for a full pipe, lines are dropped whole (counted
 *   in `podium_log_dropped_bytes_total`) rather than held in memory.
 * A graceful close flushes (server.ts), and pino writes what is left when the process exits.
 */
export function logDestination(opts: { shared?: boolean } = {}): LogDestination {
  const stream = pino.destination({
    dest: 1,
    sync: false,
    minLength: opts.shared ? 2048 : 16 * 1024,
    maxWrite: opts.shared ? 4096 : 64 * 1024,
    maxLength: 1024 * 1024,
    periodicFlush: 1000,
  });
  let dropped = 0;
  stream.on('drop', (line: string) => {
    dropped += Buffer.byteLength(line);
  });
  return { stream, droppedBytes: () => dropped };
}

type LogFn = (...args: unknown[]) => void;

/** See lazyChildLogger: a class, so a request allocates one small object and no closures. */
class LazyChild {
  private made: FastifyBaseLogger | undefined;

  constructor(
    private readonly parent: FastifyBaseLogger,
    private readonly bindings: pino.Bindings,
    private readonly opts: pino.ChildLoggerOptions,
  ) {}

  private real(): FastifyBaseLogger {
    this.made ??= this.parent.child(this.bindings, this.opts);
    return this.made;
  }

  // One forwarding method per level, on the prototype: what `real()` logs through once it is made.
  static {
    for (const level of ['fatal', 'error', 'warn', 'info', 'debug', 'trace'] as const) {
      Object.defineProperty(LazyChild.prototype, level, {
        writable: true,
        configurable: true,
        value(this: LazyChild, ...a: unknown[]) {
          (this.real()[level] as LogFn)(...a);
        },
      });
    }
  }

  silent() {}
  child(b: pino.Bindings, o?: pino.ChildLoggerOptions) {
    return this.real().child(b, o);
  }
  get level(): string {
    return this.opts.level ?? (this.made ?? this.parent).level;
  }
  set level(l: string) {
    this.real().level = l;
  }
}

/**
 * Fastify's per-request child logger, made only when something logs through `request.log`
 * (errors do; the request line goes to the root logger with `reqId`), so a request that logs only
 * its line builds no pino child.
 */
export function lazyChildLogger(
  parent: FastifyBaseLogger,
  bindings: pino.Bindings,
  opts: pino.ChildLoggerOptions,
): FastifyBaseLogger {
  return new LazyChild(parent, bindings, opts) as unknown as FastifyBaseLogger;
}

/**
 * Pino options for the service: JSON lines, the Authorization and Cookie headers redacted by
 * path, and every logged value passed through the value-based scrubber, so a secret inside an
 * error message does not reach the log either.
 */
export function loggerOptions(config: Config): object {
  if (config.databaseUrl) {
    try {
      registerSecret(decodeURIComponent(new URL(config.databaseUrl).password));
    } catch {
      // Not a URL pino will ever see whole; the URL pattern of the scrubber still applies.
    }
  }
  return {
    level: config.logLevel,
    redact: ['req.headers.authorization', 'req.headers.cookie', 'headers.authorization'],
    serializers: { err: (err: unknown) => scrubValue(err) },
    formatters: {
      log: (obj: Record<string, unknown>) =>
        isTrusted(obj) ? obj : (scrubValue(obj) as Record<string, unknown>),
    },
    hooks: {
      logMethod(this: unknown, args: unknown[], method: (...a: unknown[]) => void) {
        if (isTrusted(args[0])) return method.apply(this, args);
        method.apply(
          this,
          args.map((a) => (typeof a === 'string' ? scrubValue(a) : a)),
        );
      },
    },
  };
}

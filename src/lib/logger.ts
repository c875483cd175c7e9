import type { Config } from '../config.ts';
import { registerSecret, scrubValue } from './scrub.ts';

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
    formatters: { log: (obj: Record<string, unknown>) => scrubValue(obj) as Record<string, unknown> },
    hooks: {
      logMethod(this: unknown, args: unknown[], method: (...a: unknown[]) => void) {
        method.apply(
          this,
          args.map((a) => (typeof a === 'string' ? scrubValue(a) : a)),
        );
      },
    },
  };
}

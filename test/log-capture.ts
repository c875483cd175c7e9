import { createWriteStream, mkdirSync, type WriteStream } from 'node:fs';
import { join } from 'node:path';

/** Where every log line the suite writes ends up; `test/global-setup.ts` greps it for secrets. */
export const LOG_DIR = join(import.meta.dirname, '..', 'test-output', 'logs');

let stream: WriteStream | undefined;

/** This test process's log file (append mode, one per worker process). */
export function suiteLogStream(): WriteStream {
  if (!stream) {
    mkdirSync(LOG_DIR, { recursive: true });
    stream = createWriteStream(join(LOG_DIR, `suite-${process.pid}.log`), { flags: 'a' });
  }
  return stream;
}

import { createWriteStream, mkdirSync, readFileSync, type WriteStream } from 'node:fs';
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

/** Everything this test process logged so far (written out first). */
export async function suiteLogText(): Promise<string> {
  const s = suiteLogStream();
  await new Promise<void>((r) => s.write('', () => r()));
  return readFileSync(s.path as string, 'utf8');
}

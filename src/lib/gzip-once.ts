import { promisify } from 'node:util';
import { gzip } from 'node:zlib';

const gzipAsync = promisify(gzip);

/** Bodies shorter than this go out plain: gzip's 18 bytes of framing would eat most of the gain. */
export const GZIP_MIN_BYTES = 1024;

/**
 * A body's gzip, or a promise of it while it is being compressed, or undefined when the body
 * stays plain (too small, or compressing failed).
 */
export type GzipOf = () => Buffer | Promise<Buffer | undefined> | undefined;

/**
 * The gzip of an immutable body, compressed once in the thread pool when first asked for and
 * kept beside the body for as long as the body is kept: every later answer sends the same bytes.
 * Asks while it compresses share the one compression. `kept` is told the bytes the gzip holds
 * once it does; a failure is told to `onError` and the next ask tries again.
 */
export function gzipOnce(
  body: Buffer,
  onError: (err: unknown) => void,
  kept: (bytes: number) => void = () => {},
): GzipOf {
  if (body.length < GZIP_MIN_BYTES) return () => undefined;
  let done: Buffer | undefined;
  let pending: Promise<Buffer | undefined> | undefined;
  return () => {
    if (done) return done;
    pending ??= gzipAsync(body).then(
      (gz) => {
        done = gz;
        kept(gz.length);
        return gz;
      },
      (err: unknown) => {
        pending = undefined;
        onError(err);
        return undefined;
      },
    );
    return pending;
  };
}

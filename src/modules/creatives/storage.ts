import { randomBytes } from 'node:crypto';
import { mkdir, open, readFile, rename, rm, stat } from 'node:fs/promises';
import path from 'node:path';
import type { S3Client, S3ClientConfig } from '@aws-sdk/client-s3';
import type { Config, CreativeStoreKind } from '../../config.ts';
import type { Queryable } from '../../db/index.ts';
import { CreativeRepository } from './repository.ts';

/**
 * Where creative bytes live, addressed by their SHA-256 (lowercase hex). `put` is idempotent (the
 * same image twice is stored once) and never leaves a partial object under the hash: readers see
 * the whole image or nothing. `q` is the transaction recording the upload (the database store
 * writes in it, so a refused or failed upload rolls its bytes back with its row).
 */
export interface CreativeStore {
  readonly kind: CreativeStoreKind;
  put(sha256: string, bytes: Buffer, contentType: string, q: Queryable): Promise<void>;
  get(sha256: string): Promise<Buffer | undefined>;
}

/**
 * Files under a directory, two hex characters per fan-out folder. A write goes to a temp file in
 * `tmp/`, is fsynced, then renamed over its final name (atomic on one filesystem) and the folder
 * fsynced: a crash or a refused upload leaves at most a temp file, never a short image.
 */
export class FileCreativeStore implements CreativeStore {
  readonly kind = 'files' as const;

  constructor(readonly dir: string) {}

  private pathOf(sha256: string): string {
    return path.join(this.dir, sha256.slice(0, 2), sha256);
  }

  async put(sha256: string, bytes: Buffer): Promise<void> {
    const final = this.pathOf(sha256);
    if (await exists(final)) return;
    const tmpDir = path.join(this.dir, 'tmp');
    await mkdir(tmpDir, { recursive: true });
    await mkdir(path.dirname(final), { recursive: true });
    const tmp = path.join(tmpDir, `${sha256}.${randomBytes(6).toString('hex')}`);
    try {
      const fh = await open(tmp, 'wx', 0o644);
      try {
        await fh.writeFile(bytes);
        await fh.sync();
      } finally {
        await fh.close();
      }
      await rename(tmp, final);
    } catch (err) {
      await rm(tmp, { force: true });
      throw err;
    }
    const folder = await open(path.dirname(final), 'r');
    try {
      await folder.sync();
    } finally {
      await folder.close();
    }
  }

  async get(sha256: string): Promise<Buffer | undefined> {
    try {
      return await readFile(this.pathOf(sha256));
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
      throw err;
    }
  }
}

async function exists(file: string): Promise<boolean> {
  try {
    await stat(file);
    return true;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return false;
    throw err;
  }
}

/** A bytea row per hash (`creative_blobs`), written in the upload's own transaction. */
export class DatabaseCreativeStore implements CreativeStore {
  readonly kind = 'database' as const;

  constructor(private readonly db: Queryable) {}

  async put(sha256: string, bytes: Buffer, _contentType: string, q: Queryable): Promise<void> {
    await new CreativeRepository(q).putBlob(sha256, bytes);
  }

  get(sha256: string): Promise<Buffer | undefined> {
    return new CreativeRepository(this.db).getBlob(sha256);
  }
}

/** The AWS SDK's S3 module, loaded with the first call of an `s3` store (it is large; other stores never load it). */
const sdk = () => import('@aws-sdk/client-s3');

/**
 * S3 or an S3-compatible service through the AWS SDK v3. PutObject is atomic (an object appears
 * whole or not at all) and carries the SHA-256 for the service to verify; an existing key is not
 * written again.
 */
export class S3CreativeStore implements CreativeStore {
  readonly kind = 's3' as const;
  private client: Promise<S3Client> | undefined;

  constructor(
    private readonly clientOf: () => Promise<S3Client>,
    private readonly bucket: string,
    private readonly prefix: string,
  ) {}

  private key(sha256: string): string {
    return `${this.prefix}${sha256}`;
  }

  private s3(): Promise<S3Client> {
    this.client ??= this.clientOf();
    return this.client;
  }

  async put(sha256: string, bytes: Buffer, contentType: string): Promise<void> {
    const [{ HeadObjectCommand, PutObjectCommand }, client] = await Promise.all([sdk(), this.s3()]);
    try {
      await client.send(new HeadObjectCommand({ Bucket: this.bucket, Key: this.key(sha256) }));
      return;
    } catch (err) {
      if (!isMissing(err)) throw err;
    }
    await client.send(
      new PutObjectCommand({
        Bucket: this.bucket,
        Key: this.key(sha256),
        Body: bytes,
        ContentType: contentType,
        ContentLength: bytes.length,
        CacheControl: IMMUTABLE,
        ChecksumSHA256: Buffer.from(sha256, 'hex').toString('base64'),
      }),
    );
  }

  async get(sha256: string): Promise<Buffer | undefined> {
    const [{ GetObjectCommand }, client] = await Promise.all([sdk(), this.s3()]);
    try {
      const out = await client.send(new GetObjectCommand({ Bucket: this.bucket, Key: this.key(sha256) }));
      return out.Body ? Buffer.from(await out.Body.transformToByteArray()) : undefined;
    } catch (err) {
      if (isMissing(err)) return undefined;
      throw err;
    }
  }
}

/** The cache header of a content-hashed creative: its bytes never change under its URL. */
export const IMMUTABLE = 'public, max-age=31536000, immutable';

function isMissing(err: unknown): boolean {
  const e = err as { name?: string; $metadata?: { httpStatusCode?: number } };
  return e?.name === 'NotFound' || e?.name === 'NoSuchKey' || e?.$metadata?.httpStatusCode === 404;
}

/** The store the config selects; `s3Client` replaces the SDK client built from config (tests). */
export function creativeStoreFrom(
  config: Pick<
    Config,
    | 'creativeStore'
    | 'dataDir'
    | 'creativeS3Bucket'
    | 'creativeS3Region'
    | 'creativeS3Endpoint'
    | 'creativeS3Prefix'
  >,
  db: Queryable,
  s3Client?: S3Client,
): CreativeStore {
  if (config.creativeStore === 'database') return new DatabaseCreativeStore(db);
  if (config.creativeStore === 'files') return new FileCreativeStore(path.join(config.dataDir, 'creatives'));
  // Credentials come from the SDK's default chain (environment, shared files, instance roles): never from Podium's config.
  const options: S3ClientConfig = {
    region: config.creativeS3Region,
    ...(config.creativeS3Endpoint ? { endpoint: config.creativeS3Endpoint, forcePathStyle: true } : {}),
  };
  const client = async () => s3Client ?? new (await sdk()).S3Client(options);
  return new S3CreativeStore(client, config.creativeS3Bucket!, config.creativeS3Prefix);
}

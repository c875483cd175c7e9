import { createHmac, randomBytes } from 'node:crypto';
import type { Config } from '../../config.ts';
import { AppError, notFound } from '../../lib/errors.ts';
import { ulid } from '../../lib/ids.ts';
import { storableText } from '../../lib/text.ts';
import { hashToken, sameBytes } from '../../lib/tokens.ts';
import type { TrackingMetrics } from '../ops/metrics.ts';
import { GroupCommit } from './group-commit.ts';
import type { TrackingPartitions } from './partitions.ts';
import {
  mergeFields,
  type Postback,
  parseBody,
  rawBodyForLog,
  readPostback,
  redactForLog,
} from './postback.ts';
import type {
  PostbackJob,
  PostbackWritten,
  Rejection,
  StoredProgram,
  TrackingRepository,
} from './repository.ts';
import type { ConversionInput } from './types.ts';

/** A raw postback as it arrived. */
export interface RawPostback {
  program: string;
  token: string;
  method: string;
  contentType: string | undefined;
  query: Record<string, unknown>;
  body: string;
  remoteIp: string | undefined;
}

export interface PostbackResult {
  status: 'accepted';
  conversionId: string;
  duplicate: boolean;
  attributed: boolean;
}

/**
 * A programme is reused this long between postbacks. A token rotated in another process is
 * seen at the latest after this; a token that does not match is always re-read first, so a
 * new token works at once.
 */
const PROGRAM_TTL_MS = 1000;
const PROGRAM_CACHE_MAX = 1000;

/** What an unknown programme's token is compared with (no token hashes to it). */
const NO_PROGRAM_HASH = Buffer.alloc(32);

const trunc = (v: string | undefined, n: number) => (v ? v.slice(0, n) : null);
/** A player id the log already holds pseudonymised (`ref:` and the keyed hash). */
const PSEUDONYM = /^ref:[0-9a-f]{64}$/;

/** A player id pseudonymised with the key: joinable, not reversible. */
const refOf = (key: Buffer, playerId: string) =>
  `ref:${createHmac('sha256', key).update(playerId, 'utf8').digest('hex')}`;

/** A logged postback as a replay reads it back (secrets already removed). */
export interface LoggedPostback {
  id: number;
  receivedAt: Date;
  program: string;
  method: string;
  contentType: string | null;
  query: Record<string, unknown>;
  body: string | null;
}

/** The new outcome of a replayed postback. */
export interface ReplayOutcome {
  status: number;
  code: string;
  conversionId: string | null;
  duplicate: boolean;
  /** A refusal's message (null when accepted). */
  message: string | null;
}

/**
 * Postbacks: each is validated on its own, then logged, deduplicated and recorded in a shared
 * group-committed transaction (log row, conversion, outcome), so a storm costs a few statements
 * per batch instead of several per postback and no answer goes out before its batch commits.
 */
export class PostbackIntake {
  private readonly batches: GroupCommit<PostbackJob, PostbackWritten | null>;
  private readonly writeOne: (job: PostbackJob) => Promise<PostbackWritten | null>;
  private readonly programs = new Map<string, { program: StoredProgram | undefined; expires: number }>();
  private pseudonymKey: Promise<Buffer> | undefined;

  constructor(
    private readonly repo: TrackingRepository,
    private readonly config: Pick<Config, 'pseudonymKey'>,
    private readonly now: () => Date,
    private readonly metrics: TrackingMetrics | undefined,
    concurrency: number,
    partitions: TrackingPartitions,
  ) {
    // One statement a batch, atomic on its own (see TrackingRepository.writePostbacks).
    const write = (jobs: PostbackJob[]) => repo.writePostbacks(jobs);
    this.writeOne = async (job) =>
      (
        await partitions.writing(
          () => [job.receivedAt],
          () => write([job]),
        )
      )[0] ?? null;
    this.batches = new GroupCommit<PostbackJob, PostbackWritten | null>(
      (jobs) =>
        partitions.writing(
          () => jobs.map((j) => j.receivedAt),
          () => write(jobs),
        ),
      { maxWaitMs: 2, maxBatch: 200, maxInFlight: concurrency },
    );
  }

  /** Drops cached programmes (after a create, change or token rotation). */
  forget(): void {
    this.programs.clear();
  }

  /** Writes every pending postback batch; called on shutdown. */
  drain(): Promise<void> {
    return this.batches.drain();
  }

  private key(): Promise<Buffer> {
    this.pseudonymKey ??= this.config.pseudonymKey
      ? Promise.resolve(Buffer.from(this.config.pseudonymKey, 'utf8'))
      : this.repo.ensureKey('player_pseudonym', randomBytes(32));
    return this.pseudonymKey;
  }

  /** The keyed hash (`ref:` and HMAC-SHA256) a postback's player id is stored as, in every programme. */
  async playerRef(playerId: string): Promise<string> {
    return refOf(await this.key(), playerId);
  }

  private async program(slug: string, fresh = false): Promise<StoredProgram | undefined> {
    if (!/^[a-z0-9-]{1,63}$/.test(slug)) return undefined;
    const now = Date.now();
    const hit = this.programs.get(slug);
    if (hit && hit.expires > now && !fresh) return hit.program;
    const program = await this.repo.getProgramBySlug(slug);
    if (this.programs.size >= PROGRAM_CACHE_MAX) this.programs.clear();
    this.programs.set(slug, { program, expires: now + PROGRAM_TTL_MS });
    return program;
  }

  /**
   * The programme when the token is its current one; re-reads it once before refusing. An unknown
   * programme goes through the same steps (hash, compare, re-read) against a stand-in hash and
   * gets the same refusal, so neither the answer nor its timing tells whether a slug exists.
   */
  private async authorise(raw: RawPostback, program: StoredProgram | undefined): Promise<StoredProgram> {
    const hash = hashToken(raw.token);
    if (program && sameBytes(hash, program.tokenHash)) return program;
    if (!program) sameBytes(hash, NO_PROGRAM_HASH);
    const fresh = await this.program(raw.program, true);
    if (fresh && sameBytes(hash, fresh.tokenHash)) return fresh;
    throw new AppError('unauthorized', 'Unknown programme or invalid postback token');
  }

  /**
   * Handles one postback: checks the programme and token, validates, then logs it (secrets
   * removed) with its outcome and records the conversion exactly once per transaction id, all in
   * one committed batch. Rejected postbacks are logged too, with their outcome.
   */
  async handle(raw: RawPostback): Promise<PostbackResult> {
    let program = await this.program(raw.program);
    const key = await this.key();
    const pseudonymise = (v: string) => refOf(key, v);
    const playerKeys = new Set(['player_id', program?.paramMap.player_id ?? 'player_id']);
    let body: Record<string, unknown> | undefined;
    let bodyError: unknown;
    try {
      body = parseBody(raw.contentType, raw.body);
    } catch (err) {
      bodyError = err;
    }
    const job: PostbackJob = {
      log: {
        program: storableText(raw.program.slice(0, 64)),
        method: raw.method,
        contentType: trunc(raw.contentType, 200),
        query: redactForLog(raw.query, playerKeys, pseudonymise),
        body: body
          ? JSON.stringify(redactForLog(body, playerKeys, pseudonymise))
          : raw.body
            ? rawBodyForLog(raw.body)
            : null,
        remoteIp: trunc(raw.remoteIp, 64),
      },
      receivedAt: this.now(),
    };
    let rejection: AppError | undefined;
    try {
      program = await this.authorise(raw, program);
      if (bodyError) throw bodyError;
      const pb = readPostback(mergeFields(raw.query, body ?? {}), program.paramMap);
      job.conversion = conversionOf(program, pb, pseudonymise);
    } catch (err) {
      if (!(err instanceof AppError)) throw err;
      rejection = err;
      job.rejected = rejectionOf(err);
    }
    let done: PostbackWritten | null;
    try {
      done = await this.batches.add(job);
    } catch {
      this.metrics?.postback('service_unavailable');
      throw new AppError('service_unavailable', 'The postback could not be recorded; send it again');
    }
    if (rejection) {
      this.metrics?.postback(rejection.code);
      throw rejection;
    }
    if (!done) throw new Error('a postback with a conversion was written without its outcome');
    this.metrics?.postback(done.duplicate ? 'duplicate' : 'accepted');
    return {
      status: 'accepted',
      conversionId: done.conversionId,
      duplicate: done.duplicate,
      attributed: done.attributed,
    };
  }

  /**
   * Processes a logged postback again with its programme's current settings (parameter mapping,
   * currency) and records the new outcome, marked as a replay, beside the original one. The log
   * row is not written again; dedupe applies as for any postback. The token is not checked again:
   * callers replay only postbacks whose token was accepted when they arrived.
   */
  async replay(entry: LoggedPostback): Promise<ReplayOutcome> {
    const program = await this.program(entry.program, true);
    if (!program) throw notFound('Program');
    const key = await this.key();
    const pseudonymise = (v: string) => (PSEUDONYM.test(v) ? v : refOf(key, v));
    const job: PostbackJob = {
      log: { ...entry, remoteIp: null },
      receivedAt: entry.receivedAt,
      logId: entry.id,
    };
    // A body that parsed was logged as the JSON of its fields (`{}` when empty); one that did not
    // was logged as text and fails again under its own content type.
    const type = (entry.contentType ?? '').split(';')[0]?.trim().toLowerCase();
    const storedType =
      entry.body === '{}' || type === 'application/x-www-form-urlencoded'
        ? 'application/json'
        : entry.contentType;
    try {
      const body = parseBody(storedType ?? undefined, entry.body ?? '');
      job.conversion = conversionOf(
        program,
        readPostback(mergeFields(entry.query, body), program.paramMap),
        pseudonymise,
      );
    } catch (err) {
      if (!(err instanceof AppError)) throw err;
      job.rejected = rejectionOf(err);
    }
    const done = await this.writeOne(job);
    return {
      status: job.rejected?.status ?? 200,
      code: job.rejected?.code ?? (done?.duplicate ? 'duplicate' : 'accepted'),
      conversionId: done?.conversionId ?? null,
      duplicate: done?.duplicate ?? false,
      message: job.rejected?.message ?? null,
    };
  }
}

/** A refusal as its outcome keeps it: what the operator was told, and the parameter it names. */
function rejectionOf(err: AppError): Rejection {
  const field = err.details?.field;
  return {
    status: err.status,
    code: err.code,
    message: err.message,
    field: typeof field === 'string' ? field : null,
  };
}

/** The conversion a valid postback records; an amount without a currency is in the programme's. */
function conversionOf(
  program: StoredProgram,
  pb: Postback,
  pseudonymise: (v: string) => string,
): ConversionInput {
  return {
    id: ulid(),
    programId: program.id,
    transactionId: pb.transactionId,
    event: pb.event,
    amount: pb.amount,
    currency: pb.currency ?? (pb.amount === null ? null : program.currency),
    playerRef: pb.playerId === null ? null : pseudonymise(pb.playerId),
    clickId: pb.clickId,
  };
}

/**
 * Typed errors. Every error the client throws is a `PodiumError` with a stable `code`; the token is
 * never part of a message (server-supplied text is scrubbed of it before it is kept).
 */

/** Codes of errors raised by the client itself (the API's own codes arrive on `PodiumApiError`). */
export type ClientErrorCode =
  | 'network_error'
  | 'timeout'
  | 'invalid_response'
  | 'response_too_large'
  | 'unexpected_redirect'
  | 'family_changed'
  | 'page_cap_exceeded';

export class PodiumError extends Error {
  override name = 'PodiumError';
  constructor(
    /** Stable, machine-readable code: one of `ClientErrorCode`, or the API's `code`. */
    readonly code: string,
    message: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
}

/** The API answered with an error status; `code` and `message` come from its `{code, message}` body. */
export class PodiumApiError extends PodiumError {
  override name = 'PodiumApiError';
  constructor(
    readonly status: number,
    code: string,
    message: string,
    readonly details: Record<string, unknown> | undefined,
    /** The server's `Retry-After`, in milliseconds, when it sent one (429 and 503). */
    readonly retryAfterMs: number | undefined,
  ) {
    super(code, message);
  }
}

/** The request never produced a usable answer: network failure, timeout, malformed or oversize body, redirect. */
export class PodiumTransportError extends PodiumError {
  override name = 'PodiumTransportError';
}

/** A multi-page walk could not produce a consistent, complete set. */
export class PodiumWalkError extends PodiumError {
  override name = 'PodiumWalkError';
}

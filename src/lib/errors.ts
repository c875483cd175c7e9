/**
 * The one error catalog. Every error that reaches a client is an AppError with a stable
 * snake_case `code`, an HTTP status and a human `message`; the error handler renders
 * `{ code, message, details? }` at the root of the body.
 */
export const ERRORS = {
  bad_request: 400,
  unauthorized: 401,
  forbidden: 403,
  /** A person limited to some sites asked to write into, or use a route spanning, other sites. */
  site_restricted: 403,
  not_found: 404,
  method_not_allowed: 405,
  request_timeout: 408,
  conflict: 409,
  payload_too_large: 413,
  uri_too_long: 414,
  unsupported_media_type: 415,
  validation_failed: 422,
  /** A publish would put a brand in front of a country where it may not be advertised. */
  compliance_violation: 422,
  rate_limited: 429,
  /** The request line and headers together are larger than the server reads (Node's limit). */
  headers_too_large: 431,
  internal_error: 500,
  /** A server Podium called (a publisher's ad server, an operator) failed or broke its contract. */
  bad_gateway: 502,
  /** Sealing a secret needs PODIUM_SECRET_KEYS (DATABASE_URL deployments). */
  secret_key_missing: 500,
  /** A sealed secret cannot be opened: unknown key version, wrong record or tampered. */
  secret_unreadable: 500,
  service_unavailable: 503,
} as const;

export type ErrorCode = keyof typeof ERRORS;

export class AppError extends Error {
  readonly status: number;
  constructor(
    readonly code: ErrorCode,
    message: string,
    readonly details?: Record<string, unknown>,
  ) {
    super(message);
    this.name = 'AppError';
    this.status = ERRORS[code];
  }

  /** The public JSON body. */
  toBody(): { code: string; message: string; details?: Record<string, unknown> } {
    return this.details
      ? { code: this.code, message: this.message, details: this.details }
      : { code: this.code, message: this.message };
  }
}

export const notFound = (what = 'Resource'): AppError => new AppError('not_found', `${what} not found`);

/** A 422 naming the offending field; `field` is a dotted path such as `items.2.brandId`. */
export const invalidField = (field: string, message: string): AppError =>
  new AppError('validation_failed', `${field}: ${message}`, { field });

export const conflict = (message: string, details?: Record<string, unknown>): AppError =>
  new AppError('conflict', message, details);

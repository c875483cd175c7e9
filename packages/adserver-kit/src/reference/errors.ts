/** An API failure with its HTTP status and the contract's error body. */
export class ApiError extends Error {
  constructor(
    readonly statusCode: number,
    readonly code: string,
    message: string,
    readonly details?: Record<string, unknown>,
    readonly headers: Record<string, string> = {},
  ) {
    super(message);
  }

  /** The `{code, message, details?}` body. */
  body(): { code: string; message: string; details?: Record<string, unknown> } {
    return this.details
      ? { code: this.code, message: this.message, details: this.details }
      : { code: this.code, message: this.message };
  }
}

/** 404 with the contract's fixed code for an unknown inventory, order or line item id. */
export function unknownId(kind: 'inventory_id' | 'order_id' | 'line_item_id', id: string): ApiError {
  return new ApiError(404, 'inventory_not_found', `unknown ${kind} ${JSON.stringify(id)}`, {
    field: kind,
    id,
  });
}

/** 422 for a well-formed request with invalid values. */
export function invalidValue(code: string, field: string, message: string): ApiError {
  return new ApiError(422, code, message, { field });
}

/** Thrown while reading a request; becomes a 400 (or the given status) error envelope. */
export class InvalidRequestError extends Error {
  constructor(
    message: string,
    readonly param: string,
    readonly status = 400,
    readonly code?: string,
  ) {
    super(message);
  }
}

/** A plain JSON object (not null, not an array). */
export function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

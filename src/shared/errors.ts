/**
 * The error codes of the interface (DECISIONS.md, "General") and the status each one carries.
 * Services throw `AppError`; the app's one error handler turns it into
 * `{"error": {"code", "message"}}`.
 */
export const ERROR_STATUS = {
  'bad-request': 400,
  'wishlist-limit': 400,
  'wishlist-size': 400,
  'group-limit': 400,
  'device-limit': 400,
  'invitation-limit': 400,
  'card-not-eligible': 400,
  unauthorized: 401,
  forbidden: 403,
  'not-found': 404,
  'method-not-allowed': 405,
  'request-timeout': 408,
  'idempotency-key-in-use': 409,
  'device-offline': 409,
  'precondition-failed': 412,
  'payload-too-large': 413,
  'range-not-satisfiable': 416,
  'unsupported-media-type': 415,
  'idempotency-key-reused': 422,
  'rate-limited': 429,
  'headers-too-large': 431,
  internal: 500,
  /** A linked service (src/modules/links/) answered wrongly or not at all. */
  'remote-failed': 502,
  unavailable: 503,
} as const;

export type ErrorCode = keyof typeof ERROR_STATUS;

export class AppError extends Error {
  readonly statusCode: number;
  constructor(
    readonly code: ErrorCode,
    message: string,
    readonly headers: Record<string, string> = {},
  ) {
    super(message);
    this.name = 'AppError';
    this.statusCode = ERROR_STATUS[code];
  }
}

export const notFound = (what: string): AppError => new AppError('not-found', `${what} not found`);
export const badRequest = (message: string): AppError => new AppError('bad-request', message);

/** The code a bare 4xx status maps to when a library (not our code) raised it. */
export function codeForStatus(status: number): ErrorCode {
  switch (status) {
    case 401:
      return 'unauthorized';
    case 403:
      return 'forbidden';
    case 404:
      return 'not-found';
    case 405:
      return 'method-not-allowed';
    case 408:
      return 'request-timeout';
    case 413:
      return 'payload-too-large';
    case 415:
      return 'unsupported-media-type';
    case 429:
      return 'rate-limited';
    case 431:
      return 'headers-too-large';
    default:
      return status >= 500 ? 'internal' : 'bad-request';
  }
}

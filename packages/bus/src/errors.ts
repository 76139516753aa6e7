/**
 * The bus could not do what was asked: unreachable, timed out, closed, or refused by
 * the server. The underlying client error is in `cause`; the message names the step.
 */
export class JobBusError extends Error {
  constructor(message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = 'JobBusError';
  }
}

/** True for a {@link JobBusError}. */
export function isJobBusError(error: unknown): error is JobBusError {
  return error instanceof JobBusError;
}

/**
 * A job reference or message body is malformed; `field` names the offending field
 * (`kind`, `id`, `brandId`, or `body` when the body is not a JSON object).
 */
export class InvalidJobError extends Error {
  /** The field that failed validation. */
  readonly field: string;

  constructor(field: string, message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = 'InvalidJobError';
    this.field = field;
  }
}

/** True for an {@link InvalidJobError}. */
export function isInvalidJobError(error: unknown): error is InvalidJobError {
  return error instanceof InvalidJobError;
}

/**
 * A handler broke the settle contract: it returned without calling ack, nak or term.
 * The bus has nakked the message; this error only reaches `onError`.
 */
export class UnsettledJobError extends Error {
  constructor(message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = 'UnsettledJobError';
  }
}

/** True for an {@link UnsettledJobError}. */
export function isUnsettledJobError(error: unknown): error is UnsettledJobError {
  return error instanceof UnsettledJobError;
}

/**
 * A request withdrawn by its caller while it waited (a connection, a retry, a rate limit): it never
 * reached the gateway, so the caller may send it again as it is (an account keeps it in its outbox).
 */
import { GatewayError } from './errors';

export function withdrawnError(): GatewayError {
  const error = new GatewayError({
    type: 'network',
    retryable: true,
    message: 'Not sent: withdrawn before it reached the gateway',
  });
  error.mayHaveReached = false;
  withdrawn.add(error);
  return error;
}

const withdrawn = new WeakSet<Error>();

/** Whether an error is one a request ended with because it was withdrawn (it was never tried). */
export function isWithdrawn(error: unknown): boolean {
  return error instanceof Error && withdrawn.has(error);
}

/** What undici is aborted with for a withdrawn request (recognised by its code). */
export const WITHDRAWN_CODE = 'BULKGATE_WITHDRAWN';

/**
 * A request withdrawn before it reached the wire: its caller's withdraw signal fired while it waited
 * for a connection, a retry or a rate limit. It never reached the gateway, so it may be sent again
 * as it is; what to do with it is the caller's decision (an account keeps it in its outbox while
 * it finds the gateway unreachable).
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

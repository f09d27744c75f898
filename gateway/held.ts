/**
 * A request held back before it reached the wire: its caller's hold signal fired while it waited
 * for a connection, a retry or a rate limit. It never reached the gateway, so it may be sent again
 * as it is; what to do with it is the caller's decision (an account keeps it in its outbox while
 * it finds the gateway unreachable).
 */
import { GatewayError } from './errors';

export function heldError(): GatewayError {
  const error = new GatewayError({
    type: 'network',
    retryable: true,
    message: 'Not sent: held back before it reached the gateway',
  });
  error.mayHaveReached = false;
  held.add(error);
  return error;
}

const held = new WeakSet<Error>();

/** Whether an error is one a request ended with because it was held back (it was never tried). */
export function isHeld(error: unknown): boolean {
  return error instanceof Error && held.has(error);
}

/** What undici is aborted with for a held request (recognised by its code). */
export const HELD_CODE = 'BULKGATE_HELD';

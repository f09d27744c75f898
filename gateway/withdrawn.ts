/** A request withdrawn while it waited: it never reached the gateway, so it may be sent again. */
import { GatewayError } from './errors';

export function withdrawnError(): GatewayError {
  const error = new GatewayError({
    type: 'network',
    retryable: true,
    wording: { key: 'withdrawn' },
  });
  error.mayHaveReached = false;
  withdrawn.add(error);
  return error;
}

const withdrawn = new WeakSet<Error>();

export function isWithdrawn(error: unknown): boolean {
  return error instanceof Error && withdrawn.has(error);
}

/** What undici is aborted with for a withdrawn request. */
export const WITHDRAWN_CODE = 'BULKGATE_WITHDRAWN';

/**
 * Whether an account's gateway is known to be unreachable. A request that fails for a reason the
 * account's outbox keeps opens the circuit; from then on, requests given the circuit are not put
 * on the wire (those waiting for a connection, a retry or the rate limit stop at once) and go to
 * the outbox, which probes the gateway with one request at a time and closes the circuit when a
 * probe gets through. Without it, an alarm storm during an outage sends every alert and each of
 * its retries to the failing gateway.
 */
import { AbortGroup } from './abort';
import { GatewayError } from './errors';

export class Circuit {
  #open = false;
  /** Aborted when the circuit opens: what waits with it stops. A new one when it closes again. */
  #opened = new AbortGroup();
  /** Called when the circuit opens or closes. */
  onChange: () => void = () => undefined;

  get open(): boolean {
    return this.#open;
  }

  /** Stops waits when the circuit opens (at once while it is open). */
  get signal(): AbortGroup {
    return this.#opened;
  }

  /** The gateway could not be reached: hold every request given this circuit. */
  trip(): void {
    if (this.#open) return;
    this.#open = true;
    this.#opened.abort();
    this.onChange();
  }

  /** The gateway took a request again. */
  reset(): void {
    if (!this.#open) return;
    this.#open = false;
    this.#opened = new AbortGroup();
    this.onChange();
  }
}

/** The error a request ends with when it was held back because its circuit is open: it never reached the gateway. */
export function heldError(): GatewayError {
  const error = new GatewayError({
    type: 'network',
    retryable: true,
    message: 'Not sent yet: the gateway could not be reached a moment ago, so this message waits in the outbox',
  });
  error.mayHaveReached = false;
  held.add(error);
  return error;
}

const held = new WeakSet<Error>();

/** Whether an error is one a request ended with because its circuit was open (it was never tried). */
export function isHeld(error: unknown): boolean {
  return error instanceof Error && held.has(error);
}

/** What undici is aborted with for a held request (recognised by its code). */
export const HELD_CODE = 'BULKGATE_HELD';

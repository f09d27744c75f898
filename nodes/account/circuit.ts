/**
 * Whether an account's gateway is known to be unreachable (the outbox trips and resets it). While
 * it is open, the account's sends are not put on the wire: new ones go behind the waiting ones in
 * the outbox, and those waiting for a connection, a retry or the rate limit are withdrawn (by its
 * signal) and kept too. The outbox probes the gateway with one request at a time
 * and closes the circuit when one gets through. Without it, an alarm storm during an outage sends
 * every alert and each of its retries to the failing gateway.
 */
import { AbortGroup } from '../../gateway';
import { sameCause, shortCause, type ShortCause } from './outage';

/** Why the circuit is open: the failure's sentence, its few words, and since when. */
export interface Outage {
  reason: string;
  brief: ShortCause;
  since: number;
}

export class Circuit {
  /** Aborted when the circuit opens: what waits with it stops. A new one when it closes again. */
  #opened = new AbortGroup();
  /** Why it is open; undefined while it is closed. */
  #cause: Outage | undefined;
  /** Called when the circuit opens or closes, and when the cause of an outage changes. */
  onChange: () => void = () => undefined;

  get open(): boolean {
    return this.#cause !== undefined;
  }

  /** Fires when the circuit opens (at once while it is open): withdrawing the sends it covers. */
  get signal(): AbortGroup {
    return this.#opened;
  }

  /** Why it is open (the last failure; `since` the first), while it is. */
  get cause(): Outage | undefined {
    return this.#cause;
  }

  /** The gateway could not be reached (`failure`): withdraw every request given this circuit. Told again while open, a new cause is noted. */
  trip(failure: unknown): void {
    const brief = shortCause(failure);
    const reason = (failure as Error)?.message ?? String(failure);
    const cause = this.#cause;
    if (cause) {
      if (sameCause(cause.brief, brief)) return;
      this.#cause = { reason, brief, since: cause.since };
      this.onChange();
      return;
    }
    this.#cause = { reason, brief, since: Date.now() };
    this.#opened.abort();
    this.onChange();
  }

  /** The gateway took a request again. */
  reset(): void {
    if (!this.#cause) return;
    this.#cause = undefined;
    this.#opened = new AbortGroup();
    this.onChange();
  }
}

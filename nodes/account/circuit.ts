/**
 * Whether an account's gateway is known to be unreachable (the outbox trips and resets it). While
 * open, new sends go behind the waiting ones in the outbox, and those waiting for a connection, a
 * retry or the rate limit are withdrawn (by its signal) and kept too. Without it, an alarm storm
 * during an outage sends every alert and each of its retries to the failing gateway.
 */
import { AbortGroup } from '../../gateway';
import { sameCause, shortCause, type ShortCause } from './outage';

export interface Outage {
  reason: string;
  brief: ShortCause;
  since: number;
}

export class Circuit {
  /** Aborted when the circuit opens: what waits with it stops. A new one when it closes again. */
  #opened = new AbortGroup();
  #cause: Outage | undefined;
  /** Called when the circuit opens or closes, and when the cause of an outage changes. */
  onChange: () => void = () => undefined;

  get open(): boolean {
    return this.#cause !== undefined;
  }

  /** Fires when the circuit opens (at once while it is open). */
  get signal(): AbortGroup {
    return this.#opened;
  }

  /** The last failure; `since` the first. */
  get cause(): Outage | undefined {
    return this.#cause;
  }

  /** Withdraws every request given this circuit. Told again while open, a new cause is noted. */
  trip(failure: unknown): void {
    const brief = shortCause(failure);
    const cause = this.#cause;
    if (cause && sameCause(cause.brief, brief)) return;
    this.#cause = { reason: (failure as Error)?.message ?? String(failure), brief, since: cause?.since ?? Date.now() };
    if (!cause) this.#opened.abort();
    this.onChange();
  }

  reset(): void {
    if (!this.#cause) return;
    this.#cause = undefined;
    this.#opened = new AbortGroup();
    this.onChange();
  }
}

/**
 * Whether an account's gateway is known to be unreachable (the outbox trips and resets it). While
 * open, new sends go behind the waiting ones in the outbox, and those waiting for a connection, a
 * retry or the rate limit are withdrawn (by its signal) and kept too. Without it, an alarm storm
 * during an outage sends every alert and each of its retries to the failing gateway.
 */
import { AbortGroup, GatewayError } from '../../gateway';

/** Why the gateway is unreachable, in a few words a status can show (`3 waiting: HTTP 503`): a catalog key under `cause.`. */
export interface ShortCause {
  key: string;
  params?: Record<string, string | number>;
}

export interface Outage {
  reason: string;
  brief: ShortCause;
  since: number;
}

const CODES: Record<string, string> = {
  ECONNREFUSED: 'refused',
  ENOTFOUND: 'not-found',
  EAI_AGAIN: 'not-found',
  ECONNRESET: 'reset',
  EPIPE: 'reset',
  UND_ERR_SOCKET: 'reset',
  UND_ERR_CLOSED: 'reset',
  EHOSTUNREACH: 'no-route',
  ENETUNREACH: 'no-route',
  UND_ERR_CONNECT_TIMEOUT: 'timeout',
  UND_ERR_HEADERS_TIMEOUT: 'timeout',
  UND_ERR_BODY_TIMEOUT: 'timeout',
};

/** Read from the failure the client reported: its HTTP status, or the transport's error code in its cause. */
function shortCause(error: unknown): ShortCause {
  if (!(error instanceof GatewayError)) return { key: 'network' };
  if (error.status !== undefined) return { key: 'http', params: { status: error.status } };
  if (error.code === 'timeout') return { key: 'timeout' };
  if (error.code === 'closed') return { key: 'closing' };
  if (/^The proxy would not connect/.test(error.message)) return { key: 'proxy' };
  const code = /\b(E[A-Z]{3,}|UND_ERR_[A-Z_]+)\b/.exec(`${error.message} ${String(error.cause ?? '')}`)?.[1];
  return { key: (code && CODES[code]) || 'network' };
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
    if (cause && cause.brief.key === brief.key && cause.brief.params?.status === brief.params?.status) return;
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

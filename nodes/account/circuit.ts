// Whether the gateway is known to be unreachable: while open, new sends and those waiting are kept.
// Without it, an alarm storm during an outage sends every alert and retry to a failing gateway.
import { GatewayError } from '../../gateway';

interface Outage {
  reason: string;
  /** The failure itself: a node words it in the user's language. */
  failure: unknown;
  /** A catalog key under `cause.`, a few words a status can show (`3 waiting: HTTP 503`). */
  brief: { key: string; params?: Record<string, string | number> };
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

/** The failure's HTTP status, or the transport's error code in its cause. */
function shortCause(error: unknown): Outage['brief'] {
  if (!(error instanceof GatewayError)) return { key: 'network' };
  if (error.status !== undefined) return { key: 'http', params: { status: error.status } };
  if (error.code === 'timeout') return { key: 'timeout' };
  if (error.code === 'closed') return { key: 'closing' };
  if (/^The proxy would not connect/.test(error.message)) return { key: 'proxy' };
  const code = /\b(E[A-Z]{3,}|UND_ERR_[A-Z_]+)\b/.exec(`${error.message} ${String(error.cause ?? '')}`)?.[1];
  return { key: (code && CODES[code]) || 'network' };
}

/** How an outage ended: the gateway answered a waiting msg, or the last one stopped waiting without an answer (gave up, discarded). */
export type OutageEnd = 'answered' | 'nothing-waits';

export class Circuit {
  #opened = new AbortController();
  #cause: Outage | undefined;
  #ended: OutageEnd | undefined;
  /** Also when the cause of an outage changes. */
  onChange: () => void = () => undefined;

  get open(): boolean {
    return this.#cause !== undefined;
  }

  /** Fires when the circuit opens (at once while it is open). */
  get signal(): AbortSignal {
    return this.#opened.signal;
  }

  /** How the last outage ended (the log says "reachable again" only when it answered). */
  get ended(): OutageEnd | undefined {
    return this.#ended;
  }

  /** The last failure; `since` the first. */
  get cause(): Outage | undefined {
    return this.#cause;
  }

  trip(failure: unknown): void {
    const brief = shortCause(failure);
    const cause = this.#cause;
    if (cause && cause.brief.key === brief.key && cause.brief.params?.status === brief.params?.status) return;
    this.#cause = { reason: (failure as Error)?.message ?? String(failure), failure, brief, since: cause?.since ?? Date.now() };
    if (!cause) this.#opened.abort();
    this.onChange();
  }

  reset(how: OutageEnd): void {
    if (!this.#cause) return;
    this.#cause = undefined;
    this.#ended = how;
    this.#opened = new AbortController();
    this.onChange();
  }
}

// Whether the gateway is known to be unreachable: while open, new sends and those waiting are kept.
// Without it, an alarm storm during an outage sends every alert and retry to a failing gateway.
import { GatewayError } from '../../gateway';
import { causeKind, type CauseKind } from '../plumbing/wording';

interface Outage {
  reason: string;
  /** The failure itself: a node words it in the user's language. */
  failure: unknown;
  /** A catalog key under `cause.`, a few words a status can show (`3 waiting: HTTP 503`). */
  brief: { key: string; params?: Record<string, string | number> };
  since: number;
}

// A status's few words for a kind of failure below the package (`status.causes.<key>`); any other: `network`.
const BRIEF: Partial<Record<CauseKind, string>> = {
  refused: 'refused',
  'not-found': 'not-found',
  reset: 'reset',
  'no-route': 'no-route',
  'no-answer': 'timeout',
};

/** The failure's HTTP status, or what failed below it (the transport's error code). */
function shortCause(error: unknown): Outage['brief'] {
  if (!(error instanceof GatewayError)) return { key: 'network' };
  if (error.status !== undefined) return { key: 'http', params: { status: error.status } };
  if (error.code === 'timeout') return { key: 'timeout' };
  if (error.code === 'closed') return { key: 'closing' };
  if (/^The proxy would not connect/.test(error.message)) return { key: 'proxy' };
  const kind = causeKind(error)?.kind;
  return { key: (kind && BRIEF[kind]) || 'network' };
}

/**
 * How an outage ended: the gateway answered a waiting msg, or the last one stopped waiting without an answer (gave up,
 * discarded).
 */
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
    this.#cause = {
      reason: (failure as Error)?.message ?? String(failure),
      failure,
      brief,
      since: cause?.since ?? Date.now(),
    };
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

// Whether a shared store can be reached, in words: a log line's reason, and the short cause a status shows.
import { causeKind, type CauseKind } from '../plumbing/wording';

export type StoreState = 'connected' | 'unreachable' | 'lost' | 'back' | 'eviction';

// By the key a status names it with (`status.store-causes.<key>`): the words a log line starts with.
export const STORE_CAUSES = {
  auth: 'authentication refused',
  certificate: 'certificate refused',
  refused: 'nothing listening',
  'no-answer': 'no answer',
  'not-found': 'host not found',
  network: 'no connection',
} as const;
type StoreCause = keyof typeof STORE_CAUSES;

// Each kind of failure below the package a store's status names; any other reads `network`.
const STORE_KINDS: Partial<Record<CauseKind, StoreCause>> = {
  auth: 'auth',
  'no-permission': 'auth',
  certificate: 'certificate',
  refused: 'refused',
  'no-answer': 'no-answer',
  'not-found': 'not-found',
};

/** The cause a reason told by {@link storeFailure} starts with. */
export function storeCause(reason: string): StoreCause {
  return (
    (Object.keys(STORE_CAUSES) as StoreCause[]).find((key) => reason.startsWith(`${STORE_CAUSES[key]}:`)) ?? 'network'
  );
}

/**
 * Why a store cannot be reached, in words a user acts on, with the client's own message (and its code, so a log line
 * can word it: causeOf).
 */
export function storeFailure(error: Error): string {
  const known = causeKind(error);
  const words = STORE_CAUSES[(known && STORE_KINDS[known.kind]) ?? 'network'];
  const code = (error as { code?: unknown }).code;
  return `${words}: ${error.message}${typeof code === 'string' && !error.message.includes(code) ? ` (${code})` : ''}`;
}

/** Whether the account's store can be reached: the one place that knows (a store in this process always can). */
export class StoreHealth {
  /** While it cannot: why (the client's words) and since when. */
  #trouble: { reason: string; since: number } | undefined;
  readonly #listeners = new Set<() => void>();

  /** `up`: answers now; a shared store is not before it connected, nor after it was closed (no trouble either). */
  constructor(private connected: boolean) {}

  get up(): boolean {
    return this.connected;
  }

  get trouble(): { reason: string; since: number } | undefined {
    return this.#trouble;
  }

  /** What the connection saw; an eviction policy is no trouble of reach. */
  tell(state: StoreState, reason: string): void {
    this.connected = state === 'connected' || state === 'back';
    if (state === 'unreachable' || state === 'lost')
      this.#trouble = { reason, since: this.#trouble?.since ?? Date.now() };
    else if (state === 'connected' || state === 'back') this.#trouble = undefined;
    else return;
    for (const listener of this.#listeners) listener();
  }

  /** Closed (a redeploy): nothing is asked of it any more. */
  close(): void {
    this.connected = false;
  }

  watch(listener: () => void): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }
}

// Whether a shared store can be reached, in words: a log line's reason, and the short cause a status shows.

export type StoreState = 'connected' | 'unreachable' | 'lost' | 'back' | 'eviction';

// By the key a status names it with: the words a log line starts with, and what a client's error
// says for it (the first that matches; else `network`).
export const STORE_CAUSES = {
  auth: ['authentication refused', /WRONGPASS|NOAUTH|NOPERM|invalid password|AUTH/i],
  certificate: ['certificate refused', /certificate|CERT_|self[- ]signed|altnames|TLS/i],
  refused: ['nothing listening', /ECONNREFUSED/],
  'no-answer': ['no answer', /timeout|ETIMEDOUT/i],
  'not-found': ['host not found', /ENOTFOUND|EAI_AGAIN/],
  network: ['no connection', undefined],
} as const;
type StoreCause = keyof typeof STORE_CAUSES;

/** The cause a reason told by {@link storeFailure} starts with. */
export function storeCause(reason: string): StoreCause {
  return (Object.keys(STORE_CAUSES) as StoreCause[]).find((key) => reason.startsWith(`${STORE_CAUSES[key][0]}:`)) ?? 'network';
}

/** Why a store cannot be reached, in words a user acts on, with the client's own message. */
export function storeFailure(error: Error): string {
  const text = `${error.message ?? ''} ${(error as { code?: string }).code ?? ''}`;
  const [words] = Object.values(STORE_CAUSES).find(([, pattern]) => pattern?.test(text)) ?? STORE_CAUSES.network;
  return `${words}: ${error.message}`;
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
    if (state === 'unreachable' || state === 'lost') this.#trouble = { reason, since: this.#trouble?.since ?? Date.now() };
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

/**
 * Stopping many waits at once (a node's requests on close, a client's retry sleeps). A request
 * given an AbortSignal adds a listener to it, and an EventTarget looks through all its listeners
 * for a duplicate on each add: one signal shared by a burst of 10,000 requests spent 8 % of the
 * burst's CPU there (O(n²); issue 17's profile), and an AbortController per request instead costs
 * undici a quarter of its throughput. A group keeps its listeners in a Set: O(1) to join and leave.
 */
export class AbortGroup {
  #listeners = new Set<() => void>();
  #aborted = false;

  get aborted(): boolean {
    return this.#aborted;
  }

  /** Calls `listener` once when the group is aborted; returns the function that stops listening. */
  onAbort(listener: () => void): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }

  /** Aborts every wait listening now, and marks the group so later ones stop at once. */
  abort(): void {
    this.#aborted = true;
    const listeners = [...this.#listeners];
    this.#listeners.clear();
    for (const listener of listeners) listener();
  }
}

/** What a wait may be stopped by: a standard AbortSignal, or an AbortGroup. */
export type StopSignal = AbortSignal | AbortGroup;

/** Listens for `signal` to abort; returns the function that stops listening. */
export function onStop(signal: StopSignal | undefined, listener: () => void): () => void {
  if (!signal) return () => undefined;
  if (signal instanceof AbortGroup) return signal.onAbort(listener);
  signal.addEventListener('abort', listener, { once: true });
  return () => signal.removeEventListener('abort', listener);
}

/**
 * The tasks of a node or a client still running, so that closing can wait for them. A count and
 * the waiters, not a Set of promises: a burst adds and removes 10,000 of them.
 */
export class InFlight {
  #count = 0;
  #waiters: (() => void)[] = [];

  get count(): number {
    return this.#count;
  }

  /** Counts `task` until it settles; returns it as it is. */
  track<T>(task: Promise<T>): Promise<T> {
    this.#count++;
    task.then(this.#settle, this.#settle);
    return task;
  }

  /** Resolves when no task runs (at once if none does), or after `within` ms. */
  settled(within?: number): Promise<void> {
    if (this.#count === 0) return Promise.resolve();
    return new Promise((resolve) => {
      let timer: NodeJS.Timeout | undefined;
      const done = () => {
        clearTimeout(timer);
        resolve();
      };
      if (within !== undefined) timer = setTimeout(done, within);
      this.#waiters.push(done);
    });
  }

  #settle = (): void => {
    if (--this.#count > 0) return;
    const waiters = this.#waiters;
    this.#waiters = [];
    for (const waiter of waiters) waiter();
  };
}

/**
 * Stopping many waits at once (a node's requests on close, a client's retry sleeps). A request
 * given an AbortSignal adds a listener to it, and an EventTarget looks through all its listeners
 * for a duplicate on each add: one signal shared by a burst of 10,000 requests spent 8 % of the
 * burst's CPU there (O(n²), in the benchmark's profile), and an AbortController per request instead costs
 * undici a quarter of its throughput. A group keeps its listeners in a list of links: O(1) to
 * join and leave.
 *
 * Not a Set (nor a Map): a listener holds its whole request (the answer read, the parser's
 * state), and with a long-lived Set of them the young generation's collections kept far more
 * alive. Measured with the gateway client alone at 64 requests in flight, each given a node's
 * group (the benchmark's burst): 1.6 MB promoted to the old generation per scavenge with a Set or a Map,
 * 0.13 MB with links, as much as with no group at all. Garbage collection was most of the
 * package node's gap to the bare node in the closed loops.
 * Buys the 1 x 10,000 burst: plain AbortControllers in its place read 0.90x to 0.93x of the floor against 0.98x to 1.00x.
 */
import { setTimeout as delay } from 'node:timers/promises';

export class AbortGroup {
  /** The ring's head: `next` is the oldest listener, `prev` the newest. */
  #ring: Link = { listener: undefined, next: undefined, prev: undefined };
  #aborted = false;

  constructor() {
    this.#ring.next = this.#ring.prev = this.#ring;
  }

  get aborted(): boolean {
    return this.#aborted;
  }

  /** Calls `listener` once when the group is aborted; returns the function that stops listening. */
  onAbort(listener: () => void): () => void {
    const ring = this.#ring;
    const link: Link = { listener, next: ring, prev: ring.prev };
    (ring.prev as Link).next = link;
    ring.prev = link;
    return () => unlink(link);
  }

  /** Aborts every wait listening now, and marks the group so later ones stop at once. */
  abort(): void {
    this.#aborted = true;
    const listeners: (() => void)[] = [];
    const ring = this.#ring;
    for (let link = ring.next as Link; link !== ring; link = link.next as Link) listeners.push(link.listener as () => void);
    for (let link = ring.next as Link; link !== ring; link = ring.next as Link) unlink(link);
    for (const listener of listeners) listener();
  }
}

interface Link {
  listener: (() => void) | undefined;
  next: Link | undefined;
  prev: Link | undefined;
}

/** Takes a link out of its ring (once; later calls do nothing) and lets go of its listener. */
function unlink(link: Link): void {
  if (!link.next || !link.prev) return;
  link.prev.next = link.next;
  link.next.prev = link.prev;
  link.next = link.prev = link.listener = undefined;
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
 * Waits until every task has settled, or `ms` has passed, whichever is first (a close that gives
 * work in flight its time, then stops it); the timer keeps no process alive.
 */
export function settledWithin(tasks: Iterable<Promise<unknown>>, ms: number): Promise<unknown> {
  return Promise.race([Promise.allSettled(tasks), delay(ms, undefined, { ref: false })]);
}

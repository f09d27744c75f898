/**
 * Stopping many waits at once (a node's requests on close, a client's retry sleeps). Not one
 * AbortSignal: an EventTarget looks for a duplicate listener on each add, 8 % of a 10,000-request
 * burst's CPU (O(n²), the benchmark's profile); an AbortController per request costs undici a
 * quarter of its throughput. Not a Set or Map: a listener holds its whole request, and a long-lived
 * Set kept far more alive (64 requests in flight: 1.6 MB promoted per scavenge, 0.13 MB with
 * links, as with no group; GC was most of the node's gap to the bare one in the closed loops).
 * So a ring of links: O(1) to join and leave.
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

/** Waits until every task has settled or `ms` has passed (a close's grace); the timer keeps no process alive. */
export function settledWithin(tasks: Iterable<Promise<unknown>>, ms: number): Promise<unknown> {
  return Promise.race([Promise.allSettled(tasks), delay(ms, undefined, { ref: false })]);
}

/** The fault injector: latency, and a fault for the next API requests (control requests are never faulted). */

/** A fault applied to the next `count` API requests. */
export interface Fault {
  count?: number;
  /** Answer this HTTP status with an error body (not processed). */
  status?: number;
  /** Retry-After header, in seconds, with `status`. */
  retryAfter?: number;
  /** Answer a body that is not the documented JSON. html is not processed; truncated and empty are. */
  body?: 'html' | 'truncated' | 'empty';
  /** Close the connection before reading the body (nothing processed), or after processing it. */
  drop?: 'before' | 'after';
  /** Process, then never answer (the client's timeout fires). */
  hang?: boolean;
  /** Answer HTTP 400 with an error body that echoes the request's application_token in every field (not processed). */
  echo?: boolean;
  /** Gone for `seconds`: `refuse` closes every socket (controls too), `503` answers the API 503. */
  offline?: { seconds: number; mode?: 'refuse' | '503' };
}

/** What POST /simulator/faults takes: a fault, and the latency and jitter of every API request. */
export type FaultSettings = Fault & { latency?: number; jitter?: number };

export class FaultInjector {
  /** Milliseconds every API request waits before it is answered. */
  latency = 0;
  /** Up to this many ms more, drawn per request: answers come back out of order, as a real gateway's do. */
  jitter = 0;
  /** Until when (ms since the epoch) every API request is answered 503. */
  unavailableUntil = 0;
  /** Called for an `offline` fault in `refuse` mode: the server stops listening for the seconds given. */
  onRefuse: (seconds: number) => void = () => undefined;
  #fault: Fault & { count: number } = { count: 0 };

  /** Sets latency and a fault (a fault without a count applies once). */
  set(input: FaultSettings): void {
    if (typeof input.latency === 'number') this.latency = input.latency;
    if (typeof input.jitter === 'number') this.jitter = input.jitter;
    const { latency: _latency, jitter: _jitter, offline, ...rest } = input;
    if (offline) {
      // seconds 0 ends a 503 outage now (a refusing server is not there to be told).
      const seconds = Number(offline.seconds) || 0;
      if (offline.mode === '503' || seconds === 0)
        this.unavailableUntil = seconds > 0 ? Date.now() + seconds * 1000 : 0;
      else this.onRefuse(seconds);
      return;
    }
    const once = rest.status || rest.body || rest.drop || rest.hang || rest.echo;
    this.#fault = { ...rest, count: typeof rest.count === 'number' ? rest.count : once ? 1 : 0 };
  }

  clear(): void {
    this.latency = 0;
    this.jitter = 0;
    this.unavailableUntil = 0;
    this.#fault = { count: 0 };
  }

  delay(): number {
    return this.latency + (this.jitter > 0 ? Math.random() * this.jitter : 0);
  }

  next(): Fault | undefined {
    if (Date.now() < this.unavailableUntil) return { status: 503 };
    if (this.#fault.count <= 0) return undefined;
    this.#fault.count--;
    return { ...this.#fault, count: undefined };
  }
}

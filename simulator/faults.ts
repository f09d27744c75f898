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
  /** Close the connection: before the request body is read (nothing processed), or after processing it without answering. */
  drop?: 'before' | 'after';
  /** Process, then never answer (the client's timeout fires). */
  hang?: boolean;
  /** Answer HTTP 400 with an error body that echoes the request's application_token in every field (not processed). */
  echo?: boolean;
}

export class FaultInjector {
  /** Milliseconds every API request waits before it is answered. */
  latency = 0;
  #fault: Fault & { count: number } = { count: 0 };

  /** Sets latency and a fault (a fault without a count applies once). */
  set(input: Fault & { latency?: number }): void {
    if (typeof input.latency === 'number') this.latency = input.latency;
    const { latency: _latency, ...rest } = input;
    const once = rest.status || rest.body || rest.drop || rest.hang || rest.echo;
    this.#fault = { ...rest, count: typeof rest.count === 'number' ? rest.count : once ? 1 : 0 };
  }

  clear(): void {
    this.latency = 0;
    this.#fault = { count: 0 };
  }

  /** The fault for the request now arriving, if one is left. */
  next(): Fault | undefined {
    if (this.#fault.count <= 0) return undefined;
    this.#fault.count--;
    return { ...this.#fault, count: undefined };
  }
}

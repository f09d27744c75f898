/** What the simulator received, newest last, bounded in entries and bytes so memory stays bounded. */

export interface ReceivedRequest {
  method: string;
  path: string;
  contentType: string | undefined;
  /** The parameters as received (JSON body, form body or query); a form's yes/no read as booleans. */
  body: Record<string, unknown>;
  raw: string;
  at: string;
  fault?: string;
}

export const LOG_MAX_REQUESTS = 10_000;
export const LOG_MAX_BYTES = 64 * 1024 * 1024;

export class RequestLog {
  /** The log itself: tests and GET /simulator/requests read it. */
  readonly requests: ReceivedRequest[] = [];
  #bytes = 0;

  constructor(
    private readonly maxRequests = LOG_MAX_REQUESTS,
    private readonly maxBytes = LOG_MAX_BYTES,
  ) {}

  add(record: ReceivedRequest): void {
    this.requests.push(record);
    this.#bytes += record.raw.length;
    while (this.requests.length > this.maxRequests || (this.#bytes > this.maxBytes && this.requests.length > 1)) {
      this.#bytes -= (this.requests.shift() as ReceivedRequest).raw.length;
    }
  }

  clear(): void {
    this.requests.length = 0;
    this.#bytes = 0;
  }
}

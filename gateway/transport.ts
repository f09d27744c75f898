/** The client's transport (no retries, no operations): the pool or proxy agent, the wire, the answers. */
import type { Dispatcher, Pool } from 'undici';
import { onStop } from './abort';
import { Fifo } from './fifo';
import { WITHDRAWN_CODE } from './withdrawn';
import { redactAnswer } from './errors';
import { parseInSteps } from './json-steps';
import { isPlainObject, type PreparedRequest } from './prepared';
import { parseRetryAfter, type Answer } from './retry-policy';
import { inTurns } from './steps';

export const DEFAULT_CONNECTIONS = 32;
/** Larger answers than this are not the documented JSON (100,000 records are about 10 MB). */
const MAX_RESPONSE_BYTES = 64 * 1024 * 1024;

export interface ProxySettings {
  url: string;
  /** Hosts reached directly: a name matches itself and its subdomains (`.example.com` too); `*` all. */
  noProxy?: string[];
  username?: string;
  password?: string;
}

export function bypassesProxy(host: string, noProxy: string[] | undefined): boolean {
  const name = host.toLowerCase().replace(/^\[|\]$/g, '');
  return (noProxy ?? []).some((raw) => {
    const entry = raw
      .trim()
      .toLowerCase()
      .replace(/^\*?\./, '')
      .replace(/:\d+$/, '');
    return entry === '*' || (entry !== '' && (name === entry || name.endsWith(`.${entry}`)));
  });
}

const PROXY_VARIABLES = ['HTTP_PROXY', 'http_proxy', 'HTTPS_PROXY', 'https_proxy'];

type Headers = Record<string, string | string[] | undefined>;

interface RawAnswer {
  status: number;
  text: string;
  headers: Headers;
}

export class Transport {
  readonly #pool: Dispatcher;
  readonly #origin: string;
  readonly #basePath: string;
  /** Requests waiting for a connection wait here: in undici's queue a withdrawn one costs a connection. */
  readonly #wire: WireQueue;

  constructor(url: URL, timeout: number, connections: number, proxy: ProxySettings | undefined) {
    this.#origin = url.origin;
    this.#basePath = url.pathname.replace(/\/+$/, '');
    this.#wire = new WireQueue(connections);
    this.#pool = dispatcherFor(url, proxy, {
      connections,
      pipelining: 1,
      keepAliveTimeout: 10_000,
      headersTimeout: timeout,
      bodyTimeout: timeout,
      connect: { timeout },
      maxResponseSize: MAX_RESPONSE_BYTES,
    });
  }

  send(
    prepared: PreparedRequest,
    signal: AbortSignal | undefined,
    withdraw: AbortSignal | undefined,
  ): Promise<RawAnswer> {
    // A new object per request: a proxy agent adds the Host header to it.
    const headers: Record<string, string> = {
      'cache-control': 'no-cache',
      accept: 'application/json',
      'user-agent': 'node-red-contrib-bulkgate',
    };
    if (prepared.contentType) headers['content-type'] = prepared.contentType;
    return new Promise<RawAnswer>((resolve, reject) => {
      // The pool's timeouts cover the wire, not the wait. dispatch: streams and signals cost most.
      const start = () =>
        this.#pool.dispatch(
          {
            origin: this.#origin,
            path: this.#basePath + prepared.path,
            method: prepared.method,
            headers,
            body: prepared.payload,
          },
          new AnswerReader(signal, withdraw, this.#wire, resolve, reject),
        );
      this.#wire.enter({ start, reject, signal, withdraw });
    });
  }

  destroy(): Promise<void> {
    return this.#pool.destroy().catch(() => undefined);
  }
}

/** Redacted: an error body always (a JSON escape could hide the token), a success holding it. */
export function readAnswer(raw: RawAnswer, token: string): Answer {
  let body: unknown;
  try {
    body = raw.text ? JSON.parse(raw.text) : undefined;
  } catch {
    body = undefined;
  }
  return answerOf(raw, body, token);
}

/** readAnswer, for an answer longer than LONG_JSON (a list's records), read in steps a turn of the event loop apart. */
export async function readLongAnswer(raw: RawAnswer, token: string): Promise<Answer> {
  let body: unknown;
  try {
    body = await inTurns(parseInSteps(raw.text));
  } catch {
    body = undefined;
  }
  return answerOf(raw, body, token);
}

function answerOf(raw: RawAnswer, body: unknown, token: string): Answer {
  if (isPlainObject(body) && (body.error !== undefined || raw.text.includes(token))) body = redactAnswer(body, token);
  return { status: raw.status, body, retryAfter: parseRetryAfter(raw.headers['retry-after']) };
}

/** A proxy agent (its credentials in Proxy-Authorization only), one reading the environment, or a pool. */
function dispatcherFor(url: URL, proxy: ProxySettings | undefined, poolOptions: Pool.Options): Dispatcher {
  // Loaded with the first client, not the package: the benchmark's unused-install cost.
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const { EnvHttpProxyAgent, Pool, ProxyAgent } = require('undici') as typeof import('undici');
  if (proxy?.url) {
    if (bypassesProxy(url.hostname, proxy.noProxy)) return new Pool(url.origin, poolOptions);
    const token = proxy.username
      ? `Basic ${Buffer.from(`${proxy.username}:${proxy.password ?? ''}`).toString('base64')}`
      : undefined;
    return new ProxyAgent({ ...poolOptions, uri: proxy.url, token });
  }
  if (PROXY_VARIABLES.some((name) => process.env[name])) return new EnvHttpProxyAgent(poolOptions);
  return new Pool(url.origin, poolOptions);
}

/** One answer into one string: undici's request() in its place read 0.64x of the floor, not 0.88x. */
class AnswerReader implements Dispatcher.DispatchHandler {
  #chunks: Buffer[] = [];
  #status = 0;
  #headers: Headers = {};
  #stopListening: (() => void) | undefined;

  constructor(
    private readonly signal: AbortSignal | undefined,
    private readonly withdraw: AbortSignal | undefined,
    private readonly wire: WireQueue,
    private readonly resolve: (answer: RawAnswer) => void,
    private readonly reject: (error: unknown) => void,
  ) {}

  onRequestStart(controller: Dispatcher.DispatchController): void {
    this.#stopListening?.();
    const stop = stopReason(this.signal, this.withdraw);
    if (stop) return controller.abort(stop);
    this.#stopListening = onStop(this.signal, () => controller.abort(aborted()));
  }

  onResponseStart(_controller: Dispatcher.DispatchController, statusCode: number, headers: Headers): void {
    // A 1xx answer comes before the real one: only the last counts.
    this.#status = statusCode;
    this.#headers = headers;
    this.#chunks = [];
  }

  onResponseData(_controller: Dispatcher.DispatchController, chunk: Buffer): void {
    this.#chunks.push(chunk);
  }

  onResponseEnd(): void {
    this.#stopListening?.();
    const chunks = this.#chunks;
    const text = chunks.length === 1 ? (chunks[0] as Buffer).toString('utf8') : Buffer.concat(chunks).toString('utf8');
    try {
      this.wire.release();
      this.resolve({ status: this.#status, text, headers: this.#headers });
    } catch (error) {
      // Reading the answer must not throw into undici: the request fails instead.
      this.#fail(error);
    }
  }

  onResponseError(_controller: Dispatcher.DispatchController, error: Error): void {
    this.#stopListening?.();
    this.#fail(error);
  }

  #fail(error: unknown): void {
    this.wire.release();
    this.reject(error);
  }
}

interface WireWaiter {
  start(): void;
  reject(error: unknown): void;
  signal: AbortSignal | undefined;
  withdraw: AbortSignal | undefined;
}

/** At most `connections` requests in undici: its pool queue instead read 0.92x-0.95x, not 0.98x-1.00x. */
class WireQueue {
  #active = 0;
  readonly #waiting = new Fifo<WireWaiter>();

  constructor(private readonly connections: number) {}

  enter(waiter: WireWaiter): void {
    if (this.#active < this.connections && this.#waiting.size === 0) {
      this.#active++;
      waiter.start();
    } else this.#waiting.push(waiter);
  }

  release(): void {
    this.#active--;
    while (this.#active < this.connections && this.#waiting.size > 0) {
      const waiter = this.#waiting.shift() as WireWaiter;
      const stop = stopReason(waiter.signal, waiter.withdraw);
      if (stop) waiter.reject(stop);
      else {
        this.#active++;
        waiter.start();
      }
    }
  }
}

function stopReason(signal: AbortSignal | undefined, withdraw: AbortSignal | undefined): Error | undefined {
  if (signal?.aborted) return aborted();
  if (withdraw?.aborted) return Object.assign(new Error('withdrawn'), { code: WITHDRAWN_CODE });
  return undefined;
}

function aborted(): Error {
  return Object.assign(new Error('Request aborted'), { name: 'AbortError', code: 'UND_ERR_ABORTED' });
}

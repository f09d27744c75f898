/**
 * The client's transport: the dispatcher (one keep-alive pool to the gateway, or a proxy agent),
 * the requests on the wire (at most one per connection; the rest wait here, not in undici's queue),
 * and each answer read into one string. It knows nothing of retries or operations.
 */
import type { Dispatcher, Pool } from 'undici';
import { onStop, type StopSignal } from './abort';
import { Fifo } from './fifo';
import { WITHDRAWN_CODE } from './withdrawn';
import { redactAnswer } from './errors';
import { isPlainObject, type PreparedRequest } from './prepared';
import { parseRetryAfter, type Answer } from './retry-policy';

const USER_AGENT = 'node-red-contrib-bulkgate';
/** Connections a client's pool opens at once: as many requests are on the wire. */
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

/** Whether a host is one the proxy's no-proxy list sends directly. */
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

/** An answer as it came off the wire. */
export interface RawAnswer {
  status: number;
  text: string;
  headers: Record<string, string | string[] | undefined>;
}

export interface TransportOptions {
  /** The gateway's base URL (checked by the caller). */
  url: URL;
  /** Milliseconds for the wire: connect, answer headers, answer body. */
  timeout: number;
  connections: number;
  proxy?: ProxySettings;
}

export class Transport {
  readonly #pool: Dispatcher;
  readonly #origin: string;
  readonly #basePath: string;
  /**
   * Requests on the wire, and those waiting for a connection (in this client, not in undici's
   * queue: a request waiting there when it is withdrawn would cost a connection to leave).
   */
  readonly #wire: WireQueue;

  constructor(options: TransportOptions) {
    const { url, timeout } = options;
    this.#origin = url.origin;
    this.#basePath = url.pathname.replace(/\/+$/, '');
    this.#wire = new WireQueue(options.connections);
    const poolOptions = {
      connections: this.#wire.connections,
      pipelining: 1,
      keepAliveTimeout: 10_000,
      headersTimeout: timeout,
      bodyTimeout: timeout,
      connect: { timeout },
      maxResponseSize: MAX_RESPONSE_BYTES,
    };
    this.#pool = dispatcherFor(url, options.proxy, poolOptions);
  }

  /**
   * One attempt: the request on the wire when a connection is free, its answer read. Unless its
   * signal stopped (it fails as aborted) or it was withdrawn (it never reached the gateway).
   */
  send(prepared: PreparedRequest, signal: StopSignal | undefined, withdraw: StopSignal | undefined): Promise<RawAnswer> {
    // A new object per request: a proxy agent adds the Host header to it.
    const headers: Record<string, string> = { 'cache-control': 'no-cache', accept: 'application/json', 'user-agent': USER_AGENT };
    if (prepared.contentType) headers['content-type'] = prepared.contentType;
    return new Promise<RawAnswer>((resolve, reject) => {
      // The timeout covers the wire (connect, answer headers, answer body: the pool's own
      // timeouts), not the wait for a free connection, so a burst behind one slow answer is not
      // failed for it. undici's dispatch, not its request(): the answer is read into one string
      // without a stream per request (streams and signals were most of the client's cost in a
      // burst, in the benchmark's profile).
      const wire = this.#wire;
      const start = () =>
        this.#pool.dispatch(
          { origin: this.#origin, path: this.#basePath + prepared.path, method: prepared.method, headers, body: prepared.payload },
          new AnswerReader(
            signal,
            withdraw,
            (status, text, headers) => {
              wire.release();
              resolve({ status, text, headers });
            },
            (error) => {
              wire.release();
              reject(error);
            },
          ),
        );
      wire.enter({ start, reject, signal, withdraw });
    });
  }

  /** Closes the pool's sockets (what is on the wire ends with UND_ERR_DESTROYED). */
  destroy(): Promise<void> {
    return this.#pool.destroy().catch(() => undefined);
  }
}

/**
 * An answer as the retry policy reads it: the JSON body (undefined when it is not JSON), redacted.
 * Every string of an answer is redacted before anything reads it: an error body always (it is
 * small, and a JSON escape could hide the token from a text search), a success when its text
 * holds the token.
 */
export function readAnswer(raw: RawAnswer, token: string): Answer {
  let body: unknown;
  try {
    body = raw.text ? JSON.parse(raw.text) : undefined;
  } catch {
    body = undefined;
  }
  if (isPlainObject(body) && (body.error !== undefined || raw.text.includes(token))) body = redactAnswer(body, token);
  return { status: raw.status, body, retryAfter: parseRetryAfter(raw.headers['retry-after']) };
}

/**
 * The dispatcher for the gateway: a proxy agent when a proxy is set (and the gateway's host is
 * not on its no-proxy list), one that follows the environment's proxy variables when those are
 * set, else a plain pool. The proxy's credentials go in its Proxy-Authorization header only.
 */
function dispatcherFor(url: URL, proxy: ProxySettings | undefined, poolOptions: Pool.Options & { connections: number }): Dispatcher {
  // Loaded with the first client, not with the package: a Node-RED that has the package
  // installed but no account deployed does not pay undici's load time and memory (the benchmark's unused-install cost).
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const { EnvHttpProxyAgent, Pool, ProxyAgent } = require('undici') as typeof import('undici');
  if (proxy?.url) {
    if (bypassesProxy(url.hostname, proxy.noProxy)) return new Pool(url.origin, poolOptions);
    const token = proxy.username ? `Basic ${Buffer.from(`${proxy.username}:${proxy.password ?? ''}`).toString('base64')}` : undefined;
    return new ProxyAgent({ ...poolOptions, uri: proxy.url, token });
  }
  if (PROXY_VARIABLES.some((name) => process.env[name])) return new EnvHttpProxyAgent(poolOptions);
  return new Pool(url.origin, poolOptions);
}

/**
 * Reads one answer for undici's dispatch: status, headers and the body as one string. The
 * caller's signal is listened to only while the request is on the wire.
 * Buys the bursts: undici's request() in its place read 0.64x of the floor (1 x 10,000) against 0.88x.
 */
class AnswerReader implements Dispatcher.DispatchHandler {
  #chunks: Buffer[] = [];
  #status = 0;
  #headers: Record<string, string | string[] | undefined> = {};
  #stopListening: (() => void) | undefined;

  constructor(
    private readonly signal: StopSignal | undefined,
    /** Once it fired, the request is not written: its caller withdrew it while it waited for a connection. */
    private readonly withdraw: StopSignal | undefined,
    private readonly answered: (status: number, text: string, headers: Record<string, string | string[] | undefined>) => void,
    private readonly failed: (error: unknown) => void,
  ) {}

  onRequestStart(controller: Dispatcher.DispatchController): void {
    this.#stopListening?.();
    if (this.signal?.aborted) return controller.abort(aborted());
    if (this.withdraw?.aborted) return controller.abort(withdrawnAbort());
    this.#stopListening = onStop(this.signal, () => controller.abort(aborted()));
  }

  onResponseStart(_controller: Dispatcher.DispatchController, statusCode: number, headers: Record<string, string | string[] | undefined>): void {
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
      this.answered(this.#status, text, this.#headers);
    } catch (error) {
      // Reading the answer must not throw into undici: the request fails instead.
      this.failed(error);
    }
  }

  onResponseError(_controller: Dispatcher.DispatchController, error: Error): void {
    this.#stopListening?.();
    this.failed(error);
  }
}

interface WireWaiter {
  start(): void;
  reject(error: unknown): void;
  signal: StopSignal | undefined;
  withdraw: StopSignal | undefined;
}

/**
 * At most `connections` requests handed to undici at once; the rest wait here, oldest first. A
 * waiter whose signal stopped or that was withdrawn while it waited leaves without a connection.
 * Buys the 1 x 10,000 burst: undici's pool queue in its place read 0.95x and 0.92x of the floor against 0.98x and 1.00x.
 */
class WireQueue {
  #active = 0;
  readonly #waiting = new Fifo<WireWaiter>();

  constructor(readonly connections: number) {}

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
      if (waiter.signal?.aborted) waiter.reject(aborted());
      else if (waiter.withdraw?.aborted) waiter.reject(withdrawnAbort());
      else {
        this.#active++;
        waiter.start();
      }
    }
  }
}

/** What a request not yet on the wire ends with when it was withdrawn: read back as `withdrawnError()`. */
function withdrawnAbort(): Error {
  return Object.assign(new Error('withdrawn'), { code: WITHDRAWN_CODE });
}

/** The error a request stopped by its signal ends with (undici's own code for it). */
function aborted(): Error {
  return Object.assign(new Error('Request aborted'), { name: 'AbortError', code: 'UND_ERR_ABORTED' });
}

/**
 * The gateway client: sends prepared requests with undici over one keep-alive pool, reads the
 * answers the way the vendor's SDK does, and retries only what is safe to retry.
 * No Node-RED import: usable on its own.
 */
import type { Dispatcher, Pool } from 'undici';
import { AbortGroup, InFlight, onStop, type StopSignal } from './abort';
import { HELD_CODE, heldError, type Circuit } from './circuit';
import { baseUrlProblem } from './base-url';
import { GatewayError, gatewayAnswerError, invalidRequest, redactAnswer } from './errors';
import { sendOperation, type ApiFamily, type ApiVersion, type BodyEncoding, type HttpMethod, type Operation } from './operations';
import { INVALID_NUMBER_CODE, prepareInfo, prepareSend, type AccountIdentity, type PreparedRequest, type RejectedRecipient, type SendFields } from './request';
import { prepareResend, resendable } from './resend';
import { backoffDelay, parseRetryAfter } from './retry-policy';
import { prepareEndpoint, type EndpointName } from './endpoints';

import { DEFAULT_BASE_URL, DEFAULT_RETRIES, DEFAULT_TIMEOUT } from './defaults';

export { DEFAULT_BASE_URL, DEFAULT_RETRIES, DEFAULT_TIMEOUT } from './defaults';
const USER_AGENT = 'node-red-contrib-bulkgate';
/** Connections a client's pool opens at once: as many requests are on the wire. */
export const DEFAULT_CONNECTIONS = 32;
/** Larger answers than this are not the documented JSON (100,000 records are about 10 MB). */
const MAX_RESPONSE_BYTES = 64 * 1024 * 1024;

export interface GatewayClientOptions extends AccountIdentity {
  baseUrl?: string;
  /** Milliseconds for one HTTP request (connect, answer headers, answer body). */
  timeout?: number;
  /** Extra attempts after the first; 0 = never retry. */
  retries?: number;
  /** First backoff delay in ms; doubles each attempt, with jitter. */
  retryDelay?: number;
  /** Longest wait between attempts in ms (also caps a Retry-After). */
  retryMaxDelay?: number;
  /** Connections the pool may open at once. */
  connections?: number;
  /**
   * How to reach the gateway: through this HTTP proxy (Node-RED's `http proxy` node), or, when
   * not given, as the `HTTP_PROXY` / `HTTPS_PROXY` / `NO_PROXY` environment variables say
   * (either case), like Node-RED's own `http request` node.
   */
  proxy?: ProxySettings;
}

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

export interface SendOptions {
  api?: ApiFamily;
  version?: ApiVersion;
  /** Body encoding for the simple API (`json` or `form`). */
  encoding?: 'json' | 'form';
  signal?: StopSignal;
}

export interface InfoOptions {
  api?: ApiFamily;
  method?: HttpMethod;
  encoding?: BodyEncoding;
  signal?: StopSignal;
}

/** A per-recipient record: success (`status`, `sms_id`, `price`, `credit`, `number`) or error. */
export interface SendRecord {
  status: string;
  sms_id?: string;
  price?: number;
  credit?: number;
  number?: string;
  code?: number;
  type?: string;
  error?: string;
  [key: string]: unknown;
}

export interface PromotionalResult {
  total: { price: number; status: { sent: number; accepted: number; scheduled: number; error: number } };
  response: SendRecord[];
}

export interface TransactionalResult {
  record: SendRecord;
  /** The recipient was refused (a 2.0 `invalid_phone_number` answer, or an error record). */
  rejected: boolean;
}

export interface BalanceRecord {
  wallet: string;
  credit: number;
  currency: string;
  free_messages: number;
  datetime: string;
  [key: string]: unknown;
}

/** When a msg gives up waiting (its node's give-up time), and the error it ends with then. */
export interface GiveUp {
  at: number;
  error: () => GatewayError;
}

/** How one request is sent, where it differs from the account's policy. */
export interface SendPolicy {
  /** No retry starts after this; the msg ends with its error instead. */
  giveUp?: GiveUp;
  /** Extra attempts after the first, instead of the account's (an outbox resend makes none: the outbox is the retry). */
  retries?: number;
  /**
   * The account's circuit: while it is open the request is not put on the wire (it fails with
   * `mayHaveReached` false), and a failure its outbox would keep opens it instead of being retried.
   */
  circuit?: Circuit;
}

/** Observes each attempt (for status, tests and the benchmark). */
export interface AttemptEvent {
  attempt: number;
  error?: GatewayError;
  /** Milliseconds before the next attempt, when there is one. */
  retryIn?: number;
}

interface Answer {
  status: number;
  body: unknown;
  retryAfter?: number;
}

/** A failed attempt: the error, whether the gateway may have taken the request, how long it asked to wait. */
interface Failure {
  error: GatewayError;
  reached: boolean;
  retryAfter?: number;
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

export class GatewayClient {
  readonly baseUrl: string;
  readonly timeout: number;
  readonly retries: number;
  #identity: AccountIdentity;
  #basePath: string;
  /** One keep-alive pool to the gateway, or a proxy agent holding its pools. */
  #pool: Dispatcher;
  #origin: string;
  #retryDelay: number;
  #retryMaxDelay: number;
  /** Stopped by close(): the retry sleeps wake, no new attempt starts. */
  #closing = new AbortGroup();
  #inFlight = new InFlight();
  /**
   * Requests on the wire, and those waiting for a connection (in this client, not in undici's
   * queue: a request held there when its circuit opens would cost a connection to leave).
   */
  #wire: WireQueue;

  constructor(options: GatewayClientOptions) {
    const baseUrl = options.baseUrl || DEFAULT_BASE_URL;
    const problem = baseUrlProblem(baseUrl);
    if (problem) throw invalidRequest(problem);
    const url = new URL(baseUrl);
    this.baseUrl = url.origin + url.pathname.replace(/\/+$/, '');
    this.#basePath = url.pathname.replace(/\/+$/, '');
    this.timeout = options.timeout && options.timeout > 0 ? options.timeout : DEFAULT_TIMEOUT;
    this.retries = Math.max(0, Math.floor(options.retries ?? DEFAULT_RETRIES));
    this.#retryDelay = options.retryDelay ?? 500;
    this.#retryMaxDelay = options.retryMaxDelay ?? 30_000;
    // The token lives in a private field only: it is not enumerable and never leaves a request body.
    this.#identity = {
      applicationId: options.applicationId,
      applicationToken: options.applicationToken,
      applicationProduct: options.applicationProduct,
      defaultCountry: options.defaultCountry,
    };
    this.#origin = url.origin;
    this.#wire = new WireQueue(options.connections ?? DEFAULT_CONNECTIONS);
    const poolOptions = {
      connections: this.#wire.connections,
      pipelining: 1,
      keepAliveTimeout: 10_000,
      headersTimeout: this.timeout,
      bodyTimeout: this.timeout,
      connect: { timeout: this.timeout },
      maxResponseSize: MAX_RESPONSE_BYTES,
    };
    this.#pool = dispatcherFor(url, options.proxy, poolOptions);
  }

  /** Checks and serialises a send request without sending it (throws `invalid_request`). */
  prepare(kind: 'promotional' | 'transactional', fields: SendFields, options: SendOptions = {}): PreparedRequest {
    return this.prepareOperation(sendOperation(kind, options), fields);
  }

  /** The same, for an operation already decided (a node's settings). */
  prepareOperation(operation: Operation, fields: SendFields): PreparedRequest {
    return prepareSend(operation, fields, this.#identity);
  }

  /** A body kept without credentials (an outbox's), ready to send again with this account's. */
  prepareResend(operation: Operation, kept: { body: Record<string, unknown>; rejected: RejectedRecipient[]; messages: number }): PreparedRequest {
    return prepareResend(operation, kept, this.#identity);
  }

  async promotional(fields: SendFields, options: SendOptions = {}, onAttempt?: (e: AttemptEvent) => void): Promise<PromotionalResult> {
    return this.sendPromotional(this.prepare('promotional', fields, options), options.signal, onAttempt);
  }

  async transactional(fields: SendFields, options: SendOptions = {}, onAttempt?: (e: AttemptEvent) => void): Promise<TransactionalResult> {
    return this.sendTransactional(this.prepare('transactional', fields, options), options.signal, onAttempt);
  }

  // The sends are promise chains, not async functions: an async function keeps a frame of all its
  // locals per request in flight, and a burst holds 10,000 of them.
  sendPromotional(prepared: PreparedRequest, signal?: StopSignal, onAttempt?: (e: AttemptEvent) => void, policy?: SendPolicy): Promise<PromotionalResult> {
    if (prepared.nothingToSend) {
      return Promise.resolve(withRejected({ total: { price: 0, status: { sent: 0, accepted: 0, scheduled: 0, error: 0 } }, response: [] }, prepared));
    }
    return this.execute(prepared, signal, onAttempt, policy).then((answer) => {
      const data = (answer.body as { data?: unknown }).data;
      if (!isObject(data) || !isObject(data.total) || !Array.isArray(data.response))
        throw badResponse(answer.status, 'a promotional result without total and response');
      return withRejected(data as unknown as PromotionalResult, prepared);
    });
  }

  sendTransactional(prepared: PreparedRequest, signal?: StopSignal, onAttempt?: (e: AttemptEvent) => void, policy?: SendPolicy): Promise<TransactionalResult> {
    const rejected = prepared.rejected[0];
    // An impossible number is answered as the gateway answers an invalid one: a rejected recipient.
    if (prepared.nothingToSend && rejected) return Promise.resolve({ rejected: true, record: { ...rejected.record } });
    return this.execute(prepared, signal, onAttempt, policy).then((answer) => this.#transactionalResult(prepared, answer));
  }

  #transactionalResult(prepared: PreparedRequest, answer: Answer): TransactionalResult {
    const body = answer.body as Record<string, unknown>;
    if (isObject(body.error) || typeof body.error === 'string') {
      // Only the 2.0 invalid_phone_number answer reaches here: a rejected recipient, not an error.
      // Its code is the one a per-recipient record gives an invalid number (9), wherever it was
      // found: by the gateway here (whose body's code is the HTTP status, 400), or by the checks.
      return {
        rejected: true,
        record: {
          status: 'error',
          code: INVALID_NUMBER_CODE,
          type: String(body.type),
          error: String(body.error),
          number: this.#numberOf(prepared),
        },
      };
    }
    const data = body.data;
    if (!isObject(data) || typeof data.status !== 'string') throw badResponse(answer.status, 'a transactional result without a status');
    return { record: data as SendRecord, rejected: data.status === 'error' };
  }

  async info(options: InfoOptions = {}, onAttempt?: (e: AttemptEvent) => void): Promise<BalanceRecord> {
    const api = options.api ?? 'advanced';
    const method = options.method ?? (api === 'simple' ? 'GET' : 'POST');
    const encoding = options.encoding ?? (method === 'GET' ? 'query' : 'json');
    const prepared = prepareInfo({ kind: 'info', api, version: '1.0', method, encoding }, this.#identity);
    const answer = await this.execute(prepared, options.signal, onAttempt);
    const data = (answer.body as { data?: unknown }).data;
    if (!isObject(data) || typeof data.credit !== 'number') throw badResponse(answer.status, 'a balance without credit');
    return data as BalanceRecord;
  }

  /**
   * One call to the gateway's other endpoints (one-time passwords, number check, blacklist,
   * address book; gateway/endpoints.ts): the body checked against its schema, sent with the
   * retry policy (a write is repeated only when the gateway certainly did not take it), and the
   * answer's `data` returned as the gateway gave it. A wrong OTP code is `{verified: false}`,
   * not an error.
   */
  async call(
    name: EndpointName,
    fields: Record<string, unknown>,
    options: { signal?: StopSignal } = {},
    onAttempt?: (e: AttemptEvent) => void,
  ): Promise<unknown> {
    const prepared = prepareEndpoint(name, fields, this.#identity);
    const answer = await this.execute(prepared, options.signal, onAttempt);
    return (answer.body as { data: unknown }).data;
  }

  /** Sends a prepared request with the retry policy. Resolves with a `data` answer. */
  execute(prepared: PreparedRequest, signal?: StopSignal, onAttempt?: (e: AttemptEvent) => void, policy?: SendPolicy): Promise<Answer> {
    if (this.#closing.aborted) return Promise.reject(Object.assign(closedError(), { mayHaveReached: false }));
    if (policy?.circuit?.open) return Promise.reject(heldError());
    return this.#inFlight.track(this.#try(prepared, signal, onAttempt, 1, policy));
  }

  /**
   * Attempt number `attempt`: its answer handed on when it is a success, else weighed by the
   * retry policy. The caller's signal goes to the request; closing the client destroys the pool,
   * which ends its requests too. So no combined signal per request.
   */
  #try(
    prepared: PreparedRequest,
    signal: StopSignal | undefined,
    onAttempt: ((e: AttemptEvent) => void) | undefined,
    attempt: number,
    policy: SendPolicy | undefined,
  ): Promise<Answer> {
    return this.#attempt(prepared, signal, policy?.circuit).then(
      (answer) => {
        const refused = this.#classify(prepared, answer);
        if (refused) return this.#retry(prepared, signal, onAttempt, attempt, refused, policy);
        onAttempt?.({ attempt });
        return answer;
      },
      (error: unknown) => this.#retry(prepared, signal, onAttempt, attempt, this.#transportFailure(error, this.#stopped(signal)), policy),
    );
  }

  /** After attempt `attempt` failed: the next one after the backoff, when the policy allows one; else the failure. */
  async #retry(
    prepared: PreparedRequest,
    signal: StopSignal | undefined,
    onAttempt: ((e: AttemptEvent) => void) | undefined,
    attempt: number,
    failure: Failure,
    policy: SendPolicy | undefined,
  ): Promise<Answer> {
    const { error, reached } = failure;
    // A request that may have reached the gateway is repeated only when the gateway drops copies.
    const safe = !reached || prepared.duplicatesChecked;
    const circuit = policy?.circuit;
    // With a circuit, the outbox is the retry: a failure it keeps opens the circuit, and what
    // waits (this request's own retries too) goes there instead of to the failing gateway.
    if (circuit && error.retryable && isSend(prepared.operation) && resendable(prepared.operation, reached)) circuit.trip();
    const again = error.retryable && safe && attempt <= (policy?.retries ?? this.retries) && !this.#stopped(signal) && !circuit?.open;
    if (!again) {
      error.mayHaveReached = reached;
      onAttempt?.({ attempt, error });
      throw error;
    }
    const wait = backoffDelay(attempt, failure.retryAfter, { retryDelay: this.#retryDelay, retryMaxDelay: this.#retryMaxDelay });
    const giveUp = policy?.giveUp;
    if (giveUp && Date.now() + wait >= giveUp.at) {
      const expired = giveUp.error();
      expired.mayHaveReached = reached;
      onAttempt?.({ attempt, error: expired });
      throw expired;
    }
    onAttempt?.({ attempt, error, retryIn: wait });
    const stops = [this.#closing, ...(signal ? [signal] : []), ...(circuit ? [circuit.signal] : [])];
    await sleep(wait, stops);
    if (this.#stopped(signal) || circuit?.open) {
      const stop = this.#closing.aborted ? closedError() : error;
      stop.mayHaveReached = reached;
      throw stop;
    }
    return this.#try(prepared, signal, onAttempt, attempt + 1, policy);
  }

  #stopped(signal: StopSignal | undefined): boolean {
    return Boolean(signal?.aborted) || this.#closing.aborted;
  }

  #attempt(prepared: PreparedRequest, signal: StopSignal | undefined, circuit: Circuit | undefined): Promise<Answer> {
    // A new object per request: a proxy agent adds the Host header to it.
    const headers: Record<string, string> = { 'cache-control': 'no-cache', accept: 'application/json', 'user-agent': USER_AGENT };
    if (prepared.contentType) headers['content-type'] = prepared.contentType;
    return new Promise<Answer>((resolve, reject) => {
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
            circuit,
            (status, text, headers) => {
              wire.release();
              resolve(this.#answer(status, text, headers));
            },
            (error) => {
              wire.release();
              reject(error);
            },
          ),
        );
      wire.enter({ start, reject, signal, circuit });
    });
  }

  /** An answer as the retry policy reads it: the JSON body (undefined when it is not JSON), redacted. */
  #answer(status: number, text: string, headers: Record<string, string | string[] | undefined>): Answer {
    let body: unknown;
    try {
      body = text ? JSON.parse(text) : undefined;
    } catch {
      body = undefined;
    }
    // Every string of an answer is redacted before anything reads it: an error body always (it
    // is small, and a JSON escape could hide the token from a text search), a success when its
    // text holds the token.
    const token = this.#identity.applicationToken;
    if (isObject(body) && (body.error !== undefined || text.includes(token))) body = redactAnswer(body, token);
    return { status, body, retryAfter: parseRetryAfter(headers['retry-after']) };
  }

  /** Returns the failure an answer stands for, or undefined when it is a success to hand on. */
  #classify(prepared: PreparedRequest, answer: Answer): Failure | undefined {
    const { status, body } = answer;
    // 429 and 503 say the gateway did not take the request; other 5xx may come after it did.
    const reached = !(status === 429 || status === 503);
    if (isObject(body) && body.error !== undefined) {
      if (prepared.operation.kind === 'transactional' && prepared.operation.version === '2.0' && status === 400 && body.type === 'invalid_phone_number') {
        return undefined;
      }
      const error = gatewayAnswerError(status, body);
      return { error, reached, retryAfter: answer.retryAfter };
    }
    if (isObject(body) && body.data !== undefined && status < 400) return undefined;
    if (status === 429) {
      return {
        error: new GatewayError({ type: 'rate_limited', status, retryable: true, message: 'The gateway asked to slow down (HTTP 429)' }),
        reached,
        retryAfter: answer.retryAfter,
      };
    }
    const error = badResponse(status, body === undefined ? 'a body that is not JSON' : 'JSON without data or error');
    return { error, reached, retryAfter: answer.retryAfter };
  }

  #transportFailure(error: unknown, stopped: boolean): Failure {
    if (error instanceof GatewayError) return { error, reached: true };
    if ((error as { code?: string })?.code === HELD_CODE) return { error: heldError(), reached: false };
    if (this.#closing.aborted || (error as { code?: string })?.code === 'UND_ERR_DESTROYED') return { error: closedError(), reached: true };
    const code = (error as { code?: string })?.code ?? '';
    const name = (error as { name?: string })?.name ?? '';
    if (name === 'TimeoutError' || code === 'UND_ERR_HEADERS_TIMEOUT' || code === 'UND_ERR_BODY_TIMEOUT' || code === 'UND_ERR_CONNECT_TIMEOUT') {
      return {
        error: new GatewayError({ type: 'timeout', retryable: true, message: `No answer from the gateway within ${this.timeout} ms`, cause: error }),
        // A connect timeout means nothing was sent.
        reached: code !== 'UND_ERR_CONNECT_TIMEOUT',
      };
    }
    if (stopped) return { error: closedError(), reached: true };
    // A proxy that would not open the tunnel: nothing reached the gateway.
    const proxyRefusal = code === 'UND_ERR_ABORTED' ? /^Proxy response \((\d+)\)/.exec((error as Error).message ?? '') : null;
    if (proxyRefusal) {
      return {
        error: new GatewayError({
          type: 'network',
          retryable: true,
          message: `The proxy would not connect to the gateway at ${this.baseUrl} (HTTP ${proxyRefusal[1]} from the proxy)`,
          cause: error,
        }),
        reached: false,
      };
    }
    if (code === 'UND_ERR_RES_EXCEEDED_MAX_SIZE') {
      return { error: badResponse(200, 'an answer larger than 64 MB'), reached: true };
    }
    const notSent = ['ECONNREFUSED', 'ENOTFOUND', 'EAI_AGAIN', 'EHOSTUNREACH', 'ENETUNREACH'].includes(code);
    return {
      error: new GatewayError({
        type: 'network',
        retryable: true,
        message: `Could not reach the gateway at ${this.baseUrl}${code ? ` (${code})` : ''}${notSent ? '' : '; the connection broke before an answer'}`,
        cause: error,
      }),
      reached: !notSent,
    };
  }

  #numberOf(prepared: PreparedRequest): string | undefined {
    if (!prepared.payload) return undefined;
    try {
      const body = prepared.contentType === 'application/json' ? JSON.parse(prepared.payload) : Object.fromEntries(new URLSearchParams(prepared.payload));
      return typeof body.number === 'string' ? body.number : undefined;
    } catch {
      return undefined;
    }
  }

  /**
   * Stops the client: no new request starts; requests in flight may finish within `grace` ms
   * (the timeout by default), then are aborted; then the pool's sockets are closed.
   */
  async close(grace = this.timeout): Promise<void> {
    await this.#inFlight.settled(grace);
    this.#closing.abort();
    await this.#inFlight.settled();
    await this.#pool.destroy().catch(() => undefined);
  }
}

function isSend(operation: PreparedRequest['operation']): operation is Operation {
  return operation.kind === 'promotional' || operation.kind === 'transactional';
}

function badResponse(status: number, what: string): GatewayError {
  return new GatewayError({
    type: 'bad_response',
    status,
    retryable: status === 429 || status >= 500,
    message: `The gateway answered HTTP ${status} with ${what}, not the documented JSON`,
  });
}

function closedError(): GatewayError {
  return new GatewayError({ type: 'closed', retryable: true, message: 'The request was stopped because the node was closed (redeploy or shutdown)' });
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
 * The gateway's answer with the recipients the checks rejected put back at their places among
 * the numbers, and counted as errors: one answer per recipient given, whoever refused it.
 */
function withRejected(result: PromotionalResult, prepared: PreparedRequest): PromotionalResult {
  if (!prepared.rejected.length) return result;
  const response = [...result.response];
  for (const { at, record } of prepared.rejected) response.splice(at, 0, { ...record });
  const status = { ...result.total.status, error: result.total.status.error + prepared.rejected.length };
  return { total: { ...result.total, status }, response };
}

/** Waits `ms`, or less when one of the signals aborts. */
function sleep(ms: number, signals: StopSignal[]): Promise<void> {
  return new Promise((resolve) => {
    if (signals.some((s) => s.aborted)) return resolve();
    const done = () => {
      clearTimeout(timer);
      for (const stop of stops) stop();
      resolve();
    };
    const timer = setTimeout(done, ms);
    const stops = signals.map((s) => onStop(s, done));
  });
}

/**
 * Reads one answer for undici's dispatch: status, headers and the body as one string. The
 * caller's signal is listened to only while the request is on the wire.
 */
class AnswerReader implements Dispatcher.DispatchHandler {
  #chunks: Buffer[] = [];
  #status = 0;
  #headers: Record<string, string | string[] | undefined> = {};
  #stopListening: (() => void) | undefined;

  constructor(
    private readonly signal: StopSignal | undefined,
    /** While it is open, the request is not written: it waited for a connection when the gateway was found unreachable. */
    private readonly circuit: Circuit | undefined,
    private readonly answered: (status: number, text: string, headers: Record<string, string | string[] | undefined>) => void,
    private readonly failed: (error: unknown) => void,
  ) {}

  onRequestStart(controller: Dispatcher.DispatchController): void {
    this.#stopListening?.();
    if (this.signal?.aborted) return controller.abort(aborted());
    if (this.circuit?.open) return controller.abort(heldAbort());
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
  circuit: Circuit | undefined;
}

/**
 * At most `connections` requests handed to undici at once; the rest wait here, oldest first. A
 * waiter whose signal stopped or whose circuit opened while it waited leaves without a connection.
 */
class WireQueue {
  #active = 0;
  #waiting: (WireWaiter | undefined)[] = [];
  #head = 0;

  constructor(readonly connections: number) {}

  enter(waiter: WireWaiter): void {
    if (this.#active < this.connections && this.#head === this.#waiting.length) {
      this.#active++;
      waiter.start();
    } else this.#waiting.push(waiter);
  }

  release(): void {
    this.#active--;
    while (this.#active < this.connections && this.#head < this.#waiting.length) {
      const waiter = this.#waiting[this.#head] as WireWaiter;
      this.#waiting[this.#head++] = undefined;
      if (this.#head === this.#waiting.length || this.#head > 1024) {
        this.#waiting = this.#waiting.slice(this.#head);
        this.#head = 0;
      }
      if (waiter.signal?.aborted) waiter.reject(aborted());
      else if (waiter.circuit?.open) waiter.reject(heldAbort());
      else {
        this.#active++;
        waiter.start();
      }
    }
  }
}

/** What a request not yet on the wire ends with when its circuit opened: read back as `heldError()`. */
function heldAbort(): Error {
  return Object.assign(new Error('held: the gateway is unreachable'), { code: HELD_CODE });
}

/** The error a request stopped by its signal ends with (undici's own code for it). */
function aborted(): Error {
  return Object.assign(new Error('Request aborted'), { name: 'AbortError', code: 'UND_ERR_ABORTED' });
}

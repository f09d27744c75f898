/** The gateway client (no Node-RED import): each operation prepared, sent, read and retried. */
import { onStop, settledWithin } from './abort';
import { monotonicNow, timerDelay } from './clock';
import { withdrawnError } from './withdrawn';
import { baseUrlProblem } from './base-url';
import { DEFAULT_BASE_URL, DEFAULT_RETRIES, DEFAULT_TIMEOUT } from './defaults';
import { prepareEndpoint } from './endpoints';
import { LONG_JSON } from './json-steps';
import { GatewayError, invalidRequest } from './errors';
import {
  sendOperation,
  type ApiFamily,
  type BodyEncoding,
  type EndpointName,
  type HttpMethod,
  type Operation,
} from './operations';
import { INVALID_NUMBER_CODE, isPlainObject, type AccountIdentity, type PreparedRequest } from './prepared';
import { prepareInfo, prepareSend, prepareSendInSteps, type SendFields } from './request';
import { prepareResendInSteps, storableBody, type Kept } from './resend';
import {
  backoffDelay,
  badResponse,
  classifyAnswer,
  closedError,
  mayRetry,
  transportFailure,
  type Answer,
  type Failure,
} from './retry-policy';
import { DEFAULT_CONNECTIONS, readAnswer, readLongAnswer, Transport, type ProxySettings } from './transport';

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
  connections?: number;
  /** Node-RED's `http proxy` node; without it, `HTTP(S)_PROXY` and `NO_PROXY` as core `http request` reads them. */
  proxy?: ProxySettings;
}

export type SendOptions = NonNullable<Parameters<typeof sendOperation>[1]> & { signal?: AbortSignal };

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
  /** On the monotonic clock (monotonicNow): a step of the wall clock neither ends it early nor holds it. */
  at: number;
  error: () => GatewayError;
}

/** How one request is sent, where it differs from the client's settings. */
export interface SendPolicy {
  /** No retry starts after this; the msg ends with its error instead. */
  giveUp?: GiveUp;
  retries?: number;
  /** Withdraws the request wherever it waits (a connection, a backoff): it ends with `withdrawnError()`. */
  withdraw?: AbortSignal;
}

/** One request through its attempts. */
type Job = { prepared: PreparedRequest; signal?: AbortSignal; policy?: SendPolicy };

export class GatewayClient {
  readonly baseUrl: string;
  readonly timeout: number;
  readonly retries: number;
  readonly #identity: AccountIdentity;
  readonly #transport: Transport;
  readonly #backoff: { retryDelay: number; retryMaxDelay: number };
  /** Stopped by close(): the retry sleeps wake, no new attempt starts. */
  readonly #closing = new AbortController();
  #inFlight = new Set<Promise<Answer>>();

  constructor(options: GatewayClientOptions) {
    const baseUrl = options.baseUrl || DEFAULT_BASE_URL;
    const problem = baseUrlProblem(baseUrl);
    if (problem) throw invalidRequest(problem);
    const url = new URL(baseUrl);
    this.baseUrl = url.origin + url.pathname.replace(/\/+$/, '');
    this.timeout = options.timeout && options.timeout > 0 ? options.timeout : DEFAULT_TIMEOUT;
    this.retries = Math.max(0, Math.floor(options.retries ?? DEFAULT_RETRIES));
    this.#backoff = { retryDelay: options.retryDelay ?? 500, retryMaxDelay: options.retryMaxDelay ?? 30_000 };
    // The token lives in a private field only: it is not enumerable and never leaves a request body.
    const { applicationId, applicationToken, applicationProduct, defaultCountry } = options;
    this.#identity = { applicationId, applicationToken, applicationProduct, defaultCountry };
    this.#transport = new Transport(url, this.timeout, options.connections ?? DEFAULT_CONNECTIONS, options.proxy);
  }

  /** Checks and serialises a send request without sending it (throws `invalid_request`). */
  prepareOperation(operation: Operation, fields: SendFields): PreparedRequest {
    return prepareSend(operation, fields, this.#identity);
  }

  /** prepareOperation, a long list of recipients in steps a turn of the event loop apart; a short one at once. */
  prepareOperationInSteps(operation: Operation, fields: SendFields): Promise<PreparedRequest> {
    return prepareSendInSteps(operation, fields, this.#identity);
  }

  /**
   * A body kept without credentials (an outbox's), ready to send again with this account's; a long list in steps a turn
   * of the event loop apart.
   */
  prepareResendInSteps(operation: Operation, kept: Kept): Promise<PreparedRequest> {
    return prepareResendInSteps(operation, kept, this.#identity);
  }

  async promotional(fields: SendFields, options: SendOptions = {}): Promise<PromotionalResult> {
    return this.sendPromotional(this.prepareOperation(sendOperation('promotional', options), fields), options.signal);
  }

  async transactional(fields: SendFields, options: SendOptions = {}): Promise<TransactionalResult> {
    return this.sendTransactional(
      this.prepareOperation(sendOperation('transactional', options), fields),
      options.signal,
    );
  }

  async sendPromotional(
    prepared: PreparedRequest,
    signal?: AbortSignal,
    policy?: SendPolicy,
  ): Promise<PromotionalResult> {
    if (prepared.nothingToSend)
      return withRejected(
        { total: { price: 0, status: { sent: 0, accepted: 0, scheduled: 0, error: 0 } }, response: [] },
        prepared,
      );
    const answer = await this.#execute(prepared, signal, policy);
    const data = (answer.body as { data?: unknown }).data;
    if (!isPlainObject(data) || !isPlainObject(data.total) || !Array.isArray(data.response))
      throw badResponse(answer.status, 'promotional-result');
    return withRejected(data as unknown as PromotionalResult, prepared);
  }

  async sendTransactional(
    prepared: PreparedRequest,
    signal?: AbortSignal,
    policy?: SendPolicy,
  ): Promise<TransactionalResult> {
    const rejected = prepared.rejected[0];
    // An impossible number is answered as the gateway answers an invalid one: a rejected recipient.
    if (prepared.nothingToSend && rejected) return { rejected: true, record: { ...rejected.record } };
    return this.#transactionalResult(prepared, await this.#execute(prepared, signal, policy));
  }

  #transactionalResult(prepared: PreparedRequest, answer: Answer): TransactionalResult {
    const body = answer.body as Record<string, unknown>;
    if (isPlainObject(body.error) || typeof body.error === 'string') {
      // Only 2.0's invalid_phone_number reaches here: a rejected recipient, code 9 (not 400).
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
    if (!isPlainObject(data) || typeof data.status !== 'string')
      throw badResponse(answer.status, 'transactional-result');
    return { record: data as SendRecord, rejected: data.status === 'error' };
  }

  async info(
    options: { api?: ApiFamily; method?: HttpMethod; encoding?: BodyEncoding; signal?: AbortSignal } = {},
  ): Promise<BalanceRecord> {
    const api = options.api ?? 'advanced';
    const method = options.method ?? (api === 'simple' ? 'GET' : 'POST');
    const encoding = options.encoding ?? (method === 'GET' ? 'query' : 'json');
    const answer = await this.#execute(
      prepareInfo({ kind: 'info', api, version: '1.0', method, encoding }, this.#identity),
      options.signal,
    );
    const data = (answer.body as { data?: unknown }).data;
    if (!isPlainObject(data) || typeof data.credit !== 'number') throw badResponse(answer.status, 'balance-result');
    return data as BalanceRecord;
  }

  /** One call to the other endpoints: the answer's `data` (a wrong OTP code is `{verified: false}`, no error). */
  async call(
    name: EndpointName,
    fields: Record<string, unknown>,
    options: { signal?: AbortSignal } = {},
  ): Promise<unknown> {
    const answer = await this.#execute(prepareEndpoint(name, fields, this.#identity), options.signal);
    return (answer.body as { data: unknown }).data;
  }

  async #execute(prepared: PreparedRequest, signal?: AbortSignal, policy?: SendPolicy): Promise<Answer> {
    if (this.#closing.signal.aborted) throw Object.assign(closedError(), { mayHaveReached: false });
    if (policy?.withdraw?.aborted) throw withdrawnError();
    const task = this.#attempts({ prepared, signal, policy });
    this.#inFlight.add(task);
    try {
      return await task;
    } finally {
      this.#inFlight.delete(task);
    }
  }

  /**
   * The request through its attempts. No combined signal per request: closing destroys the pool, ending its requests.
   */
  async #attempts(job: Job): Promise<Answer> {
    const { prepared, signal, policy } = job;
    for (let attempt = 1; ; attempt++) {
      let raw;
      try {
        raw = await this.#transport.send(prepared, signal, policy?.withdraw);
      } catch (error) {
        const context = {
          stopped: this.#stopped(signal),
          closing: this.#closing.signal.aborted,
          baseUrl: this.baseUrl,
          timeout: this.timeout,
        };
        await this.#beforeRetry(job, attempt, transportFailure(error, context));
        continue;
      }
      // A list's answer in steps; any other at once (no turn of the event loop for an alert's).
      const token = this.#identity.applicationToken;
      const answer = raw.text.length > LONG_JSON ? await readLongAnswer(raw, token) : readAnswer(raw, token);
      const refused = classifyAnswer(prepared, answer);
      if (!refused) return answer;
      await this.#beforeRetry(job, attempt, refused);
    }
  }

  /** Waits out the backoff before attempt `attempt + 1`, or throws the failure's error when none may follow. */
  async #beforeRetry(job: Job, attempt: number, failure: Failure): Promise<void> {
    const { prepared, signal, policy } = job;
    const { error, reached } = failure;
    const withdraw = policy?.withdraw;
    const again =
      mayRetry(failure, attempt, policy?.retries ?? this.retries, prepared.duplicatesChecked) &&
      !this.#stopped(signal) &&
      !withdraw?.aborted;
    const ending = (end: GatewayError): GatewayError => Object.assign(end, { mayHaveReached: reached });
    if (!again) throw ending(error);
    const wait = backoffDelay(attempt, failure.retryAfter, this.#backoff);
    const giveUp = policy?.giveUp;
    if (giveUp && monotonicNow() + wait >= giveUp.at) throw ending(giveUp.error());
    await sleep(wait, [this.#closing.signal, signal, withdraw]);
    if (this.#stopped(signal) || withdraw?.aborted) throw ending(this.#closing.signal.aborted ? closedError() : error);
  }

  #stopped(signal: AbortSignal | undefined): boolean {
    return Boolean(signal?.aborted) || this.#closing.signal.aborted;
  }

  #numberOf(prepared: PreparedRequest): string | undefined {
    if (!prepared.payload) return undefined;
    try {
      const { number } = storableBody(prepared);
      return typeof number === 'string' ? number : undefined;
    } catch {
      return undefined;
    }
  }

  /** No new request starts; those in flight get `grace` ms, then are aborted; then the sockets close. */
  async close(grace = this.timeout): Promise<void> {
    await settledWithin(this.#inFlight, grace);
    this.#closing.abort();
    await Promise.allSettled(this.#inFlight);
    await this.#transport.destroy();
  }
}

/** The answer with the recipients the checks rejected at their places, as errors: a record per recipient. */
function withRejected(result: PromotionalResult, prepared: PreparedRequest): PromotionalResult {
  if (!prepared.rejected.length) return result;
  const response = [...result.response];
  for (const { at, record } of prepared.rejected) response.splice(at, 0, { ...record });
  const status = { ...result.total.status, error: result.total.status.error + prepared.rejected.length };
  return { total: { ...result.total, status }, response };
}

function sleep(ms: number, signals: (AbortSignal | undefined)[]): Promise<void> {
  return new Promise((resolve) => {
    if (signals.some((s) => s?.aborted)) return resolve();
    const done = () => {
      clearTimeout(timer);
      for (const stop of stops) stop();
      resolve();
    };
    const timer = setTimeout(done, timerDelay(ms));
    const stops = signals.map((s) => onStop(s, done));
  });
}

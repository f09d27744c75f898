/**
 * The retry policy, as pure functions: what an answer or a transport error stands for (a success,
 * or a failure that may or may not have reached the gateway), whether another attempt is safe, how
 * long to wait before it, and what a Retry-After header asks for. The client (client.ts) runs it.
 */
import { GatewayError, gatewayAnswerError } from './errors';
import { WITHDRAWN_CODE, withdrawnError } from './withdrawn';
import { isPlainObject, type PreparedRequest } from './prepared';

/** An answer as the policy reads it: the JSON body (undefined when it is not JSON), redacted. */
export interface Answer {
  status: number;
  body: unknown;
  retryAfter?: number;
}

/** A failed attempt: the error, whether the gateway may have taken the request, how long it asked to wait. */
export interface Failure {
  error: GatewayError;
  reached: boolean;
  retryAfter?: number;
}

export interface BackoffSettings {
  /** First delay, ms; it doubles with each attempt. */
  retryDelay: number;
  /** The longest wait, ms (it also caps a Retry-After). */
  retryMaxDelay: number;
}

/**
 * The wait before the attempt after attempt number `attempt` (1 for the first): what the
 * gateway's Retry-After asked for (capped), else exponential backoff with "equal jitter": at least
 * half the ceiling, so attempts spread out but never hammer. `random` is Math.random's range.
 */
export function backoffDelay(attempt: number, retryAfter: number | undefined, settings: BackoffSettings, random: number = Math.random()): number {
  if (retryAfter !== undefined) return Math.min(retryAfter, settings.retryMaxDelay);
  const ceiling = Math.min(settings.retryMaxDelay, settings.retryDelay * 2 ** (attempt - 1));
  return Math.round(ceiling / 2 + random * (ceiling / 2));
}

/** A Retry-After header in ms: seconds, or an HTTP date (from now); undefined when absent or unreadable. */
export function parseRetryAfter(value: string | string[] | undefined, now: number = Date.now()): number | undefined {
  const raw = Array.isArray(value) ? value[0] : value;
  if (!raw) return undefined;
  if (/^\d+$/.test(raw.trim())) return Number(raw) * 1000;
  const date = Date.parse(raw);
  return Number.isNaN(date) ? undefined : Math.max(0, date - now);
}

/**
 * Whether another attempt is allowed after attempt number `attempt` failed: the error is one to
 * retry, `retries` extra attempts are not used up, and a request that may have reached the
 * gateway is repeated only when the gateway drops duplicates of it.
 */
export function mayRetry(failure: Failure, attempt: number, retries: number, duplicatesChecked: boolean): boolean {
  return failure.error.retryable && (!failure.reached || duplicatesChecked) && attempt <= retries;
}

/** The failure an answer stands for, or undefined when it is a success to hand on. */
export function classifyAnswer(prepared: Pick<PreparedRequest, 'operation'>, answer: Answer): Failure | undefined {
  const { status, body } = answer;
  // 429 and 503 say the gateway did not take the request; other 5xx may come after it did.
  const reached = !(status === 429 || status === 503);
  if (isPlainObject(body) && body.error !== undefined) {
    const operation = prepared.operation;
    // The 2.0 transactional answer for an invalid number is a rejected recipient, not a failure.
    if (operation.kind === 'transactional' && operation.version === '2.0' && status === 400 && body.type === 'invalid_phone_number') return undefined;
    return { error: gatewayAnswerError(status, body), reached, retryAfter: answer.retryAfter };
  }
  if (isPlainObject(body) && body.data !== undefined && status < 400) return undefined;
  if (status === 429) {
    return {
      error: new GatewayError({ type: 'rate_limited', status, retryable: true, message: 'The gateway asked to slow down (HTTP 429)' }),
      reached,
      retryAfter: answer.retryAfter,
    };
  }
  return { error: badResponse(status, body === undefined ? 'a body that is not JSON' : 'JSON without data or error'), reached, retryAfter: answer.retryAfter };
}

/** What the transport's error stands for, with what the client knows around it. */
export interface TransportContext {
  /** The caller's signal stopped the request. */
  stopped: boolean;
  /** The client is closing. */
  closing: boolean;
  baseUrl: string;
  timeout: number;
}

/** The failure a transport error stands for: what it is called, and whether the gateway may have got the request. */
export function transportFailure(error: unknown, context: TransportContext): Failure {
  if (error instanceof GatewayError) return { error, reached: true };
  const code = (error as { code?: string })?.code ?? '';
  const name = (error as { name?: string })?.name ?? '';
  if (code === WITHDRAWN_CODE) return { error: withdrawnError(), reached: false };
  if (context.closing || code === 'UND_ERR_DESTROYED') return { error: closedError(), reached: true };
  if (name === 'TimeoutError' || code === 'UND_ERR_HEADERS_TIMEOUT' || code === 'UND_ERR_BODY_TIMEOUT' || code === 'UND_ERR_CONNECT_TIMEOUT') {
    return {
      error: new GatewayError({
        type: 'timeout',
        retryable: true,
        message: `No answer from the gateway at ${context.baseUrl} within ${context.timeout} ms`,
        cause: error,
      }),
      // A connect timeout means nothing was sent.
      reached: code !== 'UND_ERR_CONNECT_TIMEOUT',
    };
  }
  if (context.stopped) return { error: closedError(), reached: true };
  // A proxy that would not open the tunnel: nothing reached the gateway.
  const proxyRefusal = code === 'UND_ERR_ABORTED' ? /^Proxy response \((\d+)\)/.exec((error as Error).message ?? '') : null;
  if (proxyRefusal) {
    return {
      error: new GatewayError({
        type: 'network',
        retryable: true,
        message: `The proxy would not connect to the gateway at ${context.baseUrl} (HTTP ${proxyRefusal[1]} from the proxy)`,
        cause: error,
      }),
      reached: false,
    };
  }
  if (code === 'UND_ERR_RES_EXCEEDED_MAX_SIZE') return { error: badResponse(200, 'an answer larger than 64 MB'), reached: true };
  const notSent = ['ECONNREFUSED', 'ENOTFOUND', 'EAI_AGAIN', 'EHOSTUNREACH', 'ENETUNREACH'].includes(code);
  return {
    error: new GatewayError({
      type: 'network',
      retryable: true,
      message: `Could not reach the gateway at ${context.baseUrl}${code ? ` (${code})` : ''}${notSent ? '' : '; the connection broke before an answer'}`,
      cause: error,
    }),
    reached: !notSent,
  };
}

/** An answer that is not the documented JSON; worth another attempt when the status says the gateway was busy. */
export function badResponse(status: number, what: string): GatewayError {
  return new GatewayError({
    type: 'bad_response',
    status,
    retryable: status === 429 || status >= 500,
    message: `The gateway answered HTTP ${status} with ${what}, not the documented JSON`,
  });
}

export function closedError(): GatewayError {
  return new GatewayError({ type: 'closed', retryable: true, message: 'The request was stopped because the node was closed (redeploy or shutdown)' });
}

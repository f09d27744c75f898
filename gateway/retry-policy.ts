/** The retry policy: what an answer or error stands for, whether and when to try again. */
import { GatewayError, gatewayAnswerError } from './errors';
import { ERRORS, wording, type Wording } from './wording';
import { WITHDRAWN_CODE, withdrawnError } from './withdrawn';
import { isPlainObject, type PreparedRequest } from './prepared';

/** The JSON body (undefined when it is not JSON), redacted. */
export interface Answer {
  status: number;
  body: unknown;
  retryAfter?: number;
}

export interface Failure {
  error: GatewayError;
  /** The gateway may have taken the request. */
  reached: boolean;
  retryAfter?: number;
}

/**
 * Retry-After (capped), else exponential backoff with "equal jitter": at least half the ceiling.
 * One of three backoff rules, each for its own reason: this one spaces one request's retries,
 * and many requests (every node, every copy of Node-RED) fail together in an outage, so jitter
 * spreads them; the outbox's probes (outbox.ts) and the store's reconnects (redis-store.ts) differ.
 */
export function backoffDelay(
  attempt: number,
  retryAfter: number | undefined,
  settings: { retryDelay: number; retryMaxDelay: number },
  random: number = Math.random(),
): number {
  if (retryAfter !== undefined) return Math.min(retryAfter, settings.retryMaxDelay);
  const ceiling = Math.min(settings.retryMaxDelay, settings.retryDelay * 2 ** (attempt - 1));
  return Math.round(ceiling / 2 + random * (ceiling / 2));
}

/** A Retry-After header (seconds, or an HTTP date) in ms; undefined when absent or unreadable. */
export function parseRetryAfter(value: string | string[] | undefined, now?: number): number | undefined {
  const raw = Array.isArray(value) ? value[0] : value;
  if (!raw) return undefined;
  if (/^\d+$/.test(raw.trim())) return Number(raw) * 1000;
  const date = Date.parse(raw);
  // The clock read only for a date: an answer without the header (nearly all) costs none.
  return Number.isNaN(date) ? undefined : Math.max(0, date - (now ?? Date.now()));
}

/** A request that may have reached the gateway is repeated only when the gateway drops duplicates. */
export function mayRetry(failure: Failure, attempt: number, retries: number, duplicatesChecked: boolean): boolean {
  return failure.error.retryable && (!failure.reached || duplicatesChecked) && attempt <= retries;
}

export function classifyAnswer(prepared: Pick<PreparedRequest, 'operation'>, answer: Answer): Failure | undefined {
  const { status, body } = answer;
  // 429 and 503 say the gateway did not take the request; other 5xx may come after it did.
  const reached = !(status === 429 || status === 503);
  if (isPlainObject(body) && body.error !== undefined) {
    const operation = prepared.operation;
    // The 2.0 transactional answer for an invalid number is a rejected recipient, not a failure.
    if (
      operation.kind === 'transactional' &&
      operation.version === '2.0' &&
      status === 400 &&
      body.type === 'invalid_phone_number'
    )
      return undefined;
    return { error: gatewayAnswerError(status, body), reached, retryAfter: answer.retryAfter };
  }
  if (isPlainObject(body) && body.data !== undefined && status < 400) return undefined;
  const error =
    status === 429
      ? new GatewayError({ type: 'rate_limited', status, retryable: true, wording: { key: 'rate-limited' } })
      : badResponse(status, body === undefined ? 'not-json' : 'no-data');
  return { error, reached, retryAfter: answer.retryAfter };
}

/** The failure a transport error stands for. `stopped`: the caller's signal stopped it. */
export function transportFailure(
  error: unknown,
  context: { stopped: boolean; closing: boolean; baseUrl: string; timeout: number },
): Failure {
  if (error instanceof GatewayError) return { error, reached: true };
  const code = (error as { code?: string })?.code ?? '';
  const name = (error as { name?: string })?.name ?? '';
  const failure = (type: string, said: Wording, reached: boolean): Failure => ({
    error: new GatewayError({ type, retryable: true, wording: said, cause: error }),
    reached,
  });
  if (code === WITHDRAWN_CODE) return { error: withdrawnError(), reached: false };
  if (context.closing || code === 'UND_ERR_DESTROYED') return { error: closedError(), reached: true };
  if (
    name === 'TimeoutError' ||
    code === 'UND_ERR_HEADERS_TIMEOUT' ||
    code === 'UND_ERR_BODY_TIMEOUT' ||
    code === 'UND_ERR_CONNECT_TIMEOUT'
  ) {
    // A connect timeout means nothing was sent.
    return failure(
      'timeout',
      wording('timeout', { url: context.baseUrl, ms: context.timeout }),
      code !== 'UND_ERR_CONNECT_TIMEOUT',
    );
  }
  if (context.stopped) return { error: closedError(), reached: true };
  // A proxy that would not open the tunnel: nothing reached the gateway.
  const proxyRefusal =
    code === 'UND_ERR_ABORTED' ? /^Proxy response \((\d+)\)/.exec((error as Error).message ?? '') : null;
  if (proxyRefusal)
    return failure(
      'network',
      wording('proxy-refused', { url: context.baseUrl, status: proxyRefusal[1] as string }),
      false,
    );
  if (code === 'UND_ERR_RES_EXCEEDED_MAX_SIZE') return { error: badResponse(200, 'too-large'), reached: true };
  const notSent = ['ECONNREFUSED', 'ENOTFOUND', 'EAI_AGAIN', 'EHOSTUNREACH', 'ENETUNREACH'].includes(code);
  const said = notSent ? 'unreachable-code' : code ? 'broke-code' : 'broke';
  return failure('network', wording(said, { url: context.baseUrl, ...(code ? { code } : {}) }), !notSent);
}

/** An answer that is not the documented JSON; retryable when the status says the gateway was busy. */
export function badResponse(status: number, what: keyof typeof ERRORS.what): GatewayError {
  return new GatewayError({
    type: 'bad_response',
    status,
    retryable: status === 429 || status >= 500,
    wording: wording('bad-response', { status, what: wording(`what.${what}`) }),
  });
}

export function closedError(): GatewayError {
  return new GatewayError({ type: 'closed', retryable: true, wording: wording('closed') });
}

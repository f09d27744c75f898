/** The one error type of the client, and the sentences and status words of each type. */
import { english, type ErrorKey, type Wording } from './wording';

/** Per type: the sentence of a gateway type we can say (others pass through) and its own status phrase. */
const TYPES: Record<string, { sentence?: ErrorKey; brief?: string }> = {
  unknown_identity: { sentence: 'type.wrong-credentials', brief: 'wrong-token' },
  authentication_failed: { sentence: 'type.wrong-credentials', brief: 'wrong-token' },
  low_credit: { sentence: 'type.low_credit', brief: 'low-credit' },
  banned: { sentence: 'type.banned', brief: 'banned' },
  invalid_numeric_sender: { sentence: 'type.invalid_numeric_sender' },
  empty_message: { sentence: 'type.empty_message', brief: 'no-text' },
  admin_not_found: { sentence: 'type.admin_not_found' },
  no_recipients: { sentence: 'type.no_recipients', brief: 'no-recipient' },
  blacklisted_number: { sentence: 'type.blacklisted_number', brief: 'blacklisted' },
  method_not_allowed: { sentence: 'type.method_not_allowed' },
  unknown_action: { sentence: 'type.unknown_action' },
  unsupported_api_version: { sentence: 'type.unsupported_api_version' },
  invalid_phone_number: { sentence: 'type.invalid_phone_number', brief: 'invalid-number' },
  invalid_id_provided: { sentence: 'type.invalid_id_provided', brief: 'unknown-otp' },
  invalid_input_parameters: { sentence: 'type.invalid_input_parameters' },
  invalid_wallet: { sentence: 'type.invalid_wallet' },
  you_must_select_wallet: { sentence: 'type.you_must_select_wallet' },
  no_valid_numbers: { sentence: 'type.no_valid_numbers' },
  number_already_exists: { sentence: 'type.number_already_exists' },
  missing_parameters: { sentence: 'type.missing_parameters' },
  use_number_or_source_id_not_both: { sentence: 'type.use_number_or_source_id_not_both' },
  number_not_found: { sentence: 'type.number_not_found', brief: 'not-found' },
  invalid_phone_mobile: { sentence: 'type.invalid_phone_number', brief: 'invalid-number' },
  network: { brief: 'unreachable' },
  timeout: { brief: 'timeout' },
  rate_limited: { brief: 'rate-limited' },
  bad_response: { brief: 'bad-response' },
  closed: { brief: 'closed' },
};

/** Gateway types that a repeat of the same request cannot fix. */
const NEVER_RETRY = new Set(['unknown_identity', 'authentication_failed', 'low_credit', 'banned', 'invalid_request']);

/** A node's status for an error: a catalog key (`brief.<key>`) and its parameters. */
interface ErrorBrief {
  key: string;
  params?: Record<string, string | number>;
}

export class GatewayError extends Error {
  /** The error type; Node-RED copies an Error's `code` into the Catch node's `msg.error.code`. */
  readonly code: string;
  readonly status: number | undefined;
  readonly detail: string | null;
  readonly retryable: boolean;
  readonly brief: ErrorBrief;
  /** The sentence as a catalog key and parameters, for the nodes to word (the message is its English). */
  readonly wording: Wording | undefined;
  /** The request may have reached the gateway (so a resend could send it twice). */
  mayHaveReached: boolean | undefined;

  constructor(
    init: {
      type: string;
      brief?: ErrorBrief;
      status?: number;
      detail?: string | null;
      retryable?: boolean;
      cause?: unknown;
    } & ({ message: string; wording?: Wording } | { wording: Wording; message?: undefined }),
  ) {
    // A message beside a wording is its English from a table the client does not hold (the nodes' own sentences).
    const message = init.message ?? english(init.wording);
    super(message, init.cause === undefined ? undefined : { cause: readableCause(init.cause) });
    this.name = 'GatewayError';
    this.code = init.type;
    this.status = init.status;
    this.detail = init.detail ?? null;
    this.retryable = init.retryable ?? false;
    this.brief = init.brief ?? briefOf(init.type, message);
    this.wording = init.wording;
  }

  get type(): string {
    return this.code;
  }

  /** Node-RED builds a Catch node's `msg.error.message` from toString(): the sentence alone. */
  override toString(): string {
    return this.message;
  }

  /** What a node puts on `msg.bulkgate`. */
  toJSON(): { type: string; status: number | undefined; detail: string | null; retryable: boolean } {
    return { type: this.code, status: this.status, detail: this.detail, retryable: this.retryable };
  }
}

/** An error as a file keeps it: its type, status, detail, sentence, wording and brief (what a Catch node gets). */
export function errorRecord(e: GatewayError): Record<string, unknown> {
  return {
    type: e.code,
    status: e.status,
    detail: e.detail,
    retryable: e.retryable,
    brief: e.brief,
    message: e.message,
    wording: e.wording,
  };
}

/** The error an `errorRecord` kept, as it was: worded from its wording where it had one. */
export function revivedError(record: Record<string, unknown>): GatewayError {
  const text = (value: unknown) => (typeof value === 'string' ? value : undefined);
  const object = <T>(value: unknown) => (typeof value === 'object' && value !== null ? (value as T) : undefined);
  return new GatewayError({
    type: text(record.type) ?? 'unknown',
    status: typeof record.status === 'number' ? record.status : undefined,
    detail: text(record.detail) ?? null,
    retryable: record.retryable === true,
    brief: object<ErrorBrief>(record.brief),
    message: text(record.message) ?? '',
    wording: object<Wording>(record.wording),
  });
}

/** A check's error: its sentence worded (the nodes say it in the user's language), or plain English. */
export function invalidRequest(said: Wording | string, brief?: ErrorBrief): GatewayError {
  return typeof said === 'string'
    ? new GatewayError({ type: 'invalid_request', message: said, brief })
    : new GatewayError({ type: 'invalid_request', wording: said, brief });
}

/** A status for an error without one: the type's, else the field a check names first, else the type. */
export function briefOf(type: string, message: string): ErrorBrief {
  const own = TYPES[type]?.brief;
  if (own) return { key: own };
  if (type === 'invalid_request') {
    const field = /^([a-z_]+)\b/.exec(message)?.[1];
    if (field === 'number') return { key: 'invalid-number' };
    if (field === 'one') return { key: 'no-recipient' };
    if (field && field !== 'the') return { key: 'invalid-field', params: { field } };
    return { key: 'invalid-request' };
  }
  return { key: 'gateway-error', params: { type } };
}

/** Message and code on one line: Node-RED prints `cause + ""`, `[object Object]` for undici's errors. */
function readableCause(cause: unknown): string {
  if (typeof cause !== 'object' || cause === null) return String(cause);
  const { message, code } = cause as { message?: unknown; code?: unknown };
  const inner = (cause as { cause?: { message?: unknown; code?: unknown } }).cause;
  const text =
    typeof message === 'string' && message
      ? message
      : typeof inner?.message === 'string'
        ? inner.message
        : Object.prototype.toString.call(cause);
  const theCode = typeof code === 'string' ? code : typeof inner?.code === 'string' ? inner.code : undefined;
  return theCode && !text.includes(theCode) ? `${text} (${theCode})` : text;
}

/** An error type as the gateway may name one: a short identifier (no echoed text). */
const TYPE_SHAPE = /^[a-z][a-z0-9_]{0,63}$/i;

/** The sentence of an error type as a wording (its catalog key): the type's own, else "the gateway refused". */
export function typeWording(type: string): Wording {
  return { key: TYPES[type]?.sentence ?? 'type.refused' };
}

/** The error for an answer whose body carried `error` (both versions), its strings redacted. */
export function gatewayAnswerError(
  status: number,
  body: { type?: unknown; error?: unknown; code?: unknown; detail?: unknown },
): GatewayError {
  // 2.0: type is the identifier and error the description; 1.0: error is the identifier.
  let type = 'unknown';
  if (typeof body.type === 'string' && TYPE_SHAPE.test(body.type)) type = body.type;
  else if (typeof body.error === 'string' && /^[a-z_]+$/.test(body.error)) type = body.error;
  const described = typeof body.error === 'string' && body.error !== type ? body.error : undefined;
  const own = TYPES[type]?.sentence;
  const sentence: Wording = own
    ? { key: own }
    : described
      ? { key: 'type.refused-described', params: { described } }
      : { key: 'type.refused' };
  const detail = typeof body.detail === 'string' ? body.detail : null;
  const retryable = !NEVER_RETRY.has(type) && (status === 429 || status >= 500);
  return new GatewayError({
    type,
    status,
    detail,
    retryable,
    wording: detail
      ? { key: 'answer-detail', params: { sentence, type, status, detail } }
      : { key: 'answer', params: { sentence, type, status } },
  });
}

/** Removes a secret from every string of an answer, keys included: an echo reaches no msg or log. */
export function redactAnswer<T>(value: T, secret: string | undefined): T {
  if (!secret) return value;
  if (typeof value === 'string') return value.replaceAll(secret, '***') as T;
  if (Array.isArray(value)) return value.map((v) => redactAnswer(v, secret)) as T;
  if (typeof value === 'object' && value !== null) {
    const out: Record<string, unknown> = {};
    for (const key of Object.keys(value))
      out[redactAnswer(key, secret)] = redactAnswer((value as Record<string, unknown>)[key], secret);
    return out as T;
  }
  return value;
}

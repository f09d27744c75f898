/**
 * The one error type of the client. `code` is the error type (the gateway's own where it gave
 * one, else the client's), so that Node-RED hands it to a Catch node as `msg.error.code`.
 */
export type ClientErrorType = 'invalid_request' | 'timeout' | 'network' | 'rate_limited' | 'bad_response' | 'closed';

/** One wording for a wrong id or token, wherever it shows: what happened and what to do. */
export const WRONG_CREDENTIALS = 'The gateway does not accept this application id and token: check them in the BulkGate account node (they come from the API application in the BulkGate portal)';

/** Gateway types whose meaning we can say in a sentence; others are passed through as they came. */
const GATEWAY_SENTENCES: Record<string, string> = {
  unknown_identity: WRONG_CREDENTIALS,
  authentication_failed: WRONG_CREDENTIALS,
  low_credit: 'There is not enough credit on the account to send this',
  banned: 'The account or application is banned from sending',
  invalid_numeric_sender: 'The numeric sender is not valid',
  empty_message: 'The message text is empty',
  admin_not_found: 'The administrator was not found',
  no_recipients: 'The request has no recipient',
  blacklisted_number: 'The number is on the blacklist',
  method_not_allowed: 'The gateway does not allow this HTTP method here',
  unknown_action: 'The gateway does not know this endpoint',
  unsupported_api_version: 'The gateway does not support this API version',
  invalid_phone_number: 'Invalid phone number',
};

/** Gateway types that a repeat of the same request cannot fix. */
const NEVER_RETRY = new Set(['unknown_identity', 'authentication_failed', 'low_credit', 'banned', 'invalid_request']);

export interface GatewayErrorInit {
  type: string;
  message: string;
  status?: number;
  detail?: string | null;
  retryable?: boolean;
  cause?: unknown;
}

export class GatewayError extends Error {
  /** The error type; Node-RED copies an Error's `code` into the Catch node's `msg.error.code`. */
  readonly code: string;
  readonly status: number | undefined;
  readonly detail: string | null;
  readonly retryable: boolean;

  constructor(init: GatewayErrorInit) {
    super(init.message, init.cause === undefined ? undefined : { cause: init.cause });
    this.name = 'GatewayError';
    this.code = init.type;
    this.status = init.status;
    this.detail = init.detail ?? null;
    this.retryable = init.retryable ?? false;
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

export function invalidRequest(message: string): GatewayError {
  return new GatewayError({ type: 'invalid_request', message });
}

/** An error type as the gateway may name one: a short identifier, nothing else (no echoed text). */
const TYPE_SHAPE = /^[a-z][a-z0-9_]{0,63}$/i;

/** The sentence for an error type, in the client's own words (no text of the remote body). */
export function typeSentence(type: string): string {
  return GATEWAY_SENTENCES[type] ?? 'The gateway refused the request';
}

/**
 * Builds the error for an answer whose body carried `error` (both versions' shapes). The body's
 * strings must have been redacted already (see `redactAnswer`).
 */
export function gatewayAnswerError(status: number, body: { type?: unknown; error?: unknown; code?: unknown; detail?: unknown }): GatewayError {
  // 2.0: type is the identifier and error the description; 1.0: error is the identifier.
  const type = typeof body.type === 'string' && TYPE_SHAPE.test(body.type) ? body.type
    : typeof body.error === 'string' && /^[a-z_]+$/.test(body.error) ? body.error
      : 'unknown';
  const described = typeof body.error === 'string' && body.error !== type ? body.error : undefined;
  const sentence = GATEWAY_SENTENCES[type] ?? (described ? `The gateway refused the request: ${described}` : 'The gateway refused the request');
  const detail = typeof body.detail === 'string' ? body.detail : null;
  const retryable = !NEVER_RETRY.has(type) && (status === 429 || status >= 500);
  return new GatewayError({
    type,
    status,
    detail,
    retryable,
    message: `${sentence} (${type}, HTTP ${status})${detail ? `: ${detail}` : ''}`,
  });
}

/** Removes a secret from a text that may have come from elsewhere (an echoing gateway, say). */
export function redact(text: string, secret: string | undefined): string {
  if (!secret || !text.includes(secret)) return text;
  return text.split(secret).join('***');
}

/**
 * Removes a secret from every string of a parsed answer, keys included, however deep: whatever
 * a gateway (or a proxy in between) echoes reaches no msg, error, status or log.
 */
export function redactAnswer<T>(value: T, secret: string | undefined): T {
  if (!secret) return value;
  if (typeof value === 'string') return redact(value, secret) as T;
  if (Array.isArray(value)) return value.map((v) => redactAnswer(v, secret)) as T;
  if (typeof value === 'object' && value !== null) {
    const out: Record<string, unknown> = {};
    for (const key of Object.keys(value)) out[redact(key, secret)] = redactAnswer((value as Record<string, unknown>)[key], secret);
    return out as T;
  }
  return value;
}

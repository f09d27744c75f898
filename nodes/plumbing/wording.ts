/**
 * The nodes' own error sentences (the client's are gateway/wording.ts ERRORS): English, `__name__` a parameter, worded
 * in the user's language from the `errors` section of locales/<lang>/shared.json, whose en-US is this table (tested).
 */
import { GatewayError } from '../../gateway';
import { english, fill, type Leaves, type Wording, type WordingParam } from '../../gateway/wording';
import { STORE_URL_ERRORS } from './store-url';

export const NODE_ERRORS = {
  'no-account':
    'No BulkGate account is selected in this node: open it and choose one (or add one with the pencil button)',
  unreadable: '__field__ could not be read from __type__ __value__: __cause__',
  'not-built': 'The request could not be built: __cause__',
  'no-number': 'no number: the Recipients field reads __where__ (set it, or choose another property in the node)',
  'no-number-elsewhere':
    'no number: the Recipients field reads __where__ (set it, or choose another property in the node); msg.__elsewhere__ holds a phone number: to send to it, set Recipients to msg.__elsewhere__',
  // Where a TypedInput reads from, as a user reads it in the panel.
  setting: {
    nothing: 'nothing',
    env: 'the environment variable __name__',
    jsonata: 'its JSONata expression',
    empty: 'a fixed value that is empty',
  },
  'timestamp-as-text':
    "text is empty in the node, so msg.payload is the text, and it is a number (an inject node's timestamp?): write the text in the node, or send msg.payload as a string",
  'template-unfilled': 'text template could not be filled from the msg: __cause__',
  'threshold-not-number': 'threshold must be a number, got "__value__"',
  'action-unknown': 'action must be one of __actions__, not __action__',
  'number-required': 'number is required: one or more phone numbers, in msg.payload by default',
  'data-required': "data is required: the contact's fields (phone_mobile, first_name, ...) in msg.payload",
  'not-phones': '__field__ must be a phone number, numbers separated by ; or , or a list of them',
  'one-phone': '__field__ must be one phone number (it holds __numbers__)',
  // The account: its settings, its rate limit, its outbox.
  'account-problem': '__problem__; open the BulkGate account "__account__" and set it',
  'account-no-credential': 'the account has no __field__',
  'store-url': STORE_URL_ERRORS,
  'proxy-missing':
    'proxy: the http proxy node this account uses is missing; open the BulkGate account "__account__" and choose one (or none)',
  'proxy-unusable': "proxy: the http proxy node's URL is not one undici can use",
  'proxy-error': 'proxy: __cause__',
  discarded: 'Not sent: removed from the outbox in the editor (the account\'s "empty" button)',
  'not-sent': 'Not sent: __reason__',
  // What failed below the package (the disk, the network, the store's server), as a person acts on it; the code to
  // search for.
  cause: {
    'disk-full': 'no space left on the disk (__code__)',
    'no-permission': 'no permission (__code__)',
    'read-only': 'the file system is read-only (__code__)',
    missing: 'a folder on the path is missing or is a file (__code__)',
    'too-many-files': 'too many open files (__code__)',
    refused: 'nothing listening (__code__)',
    'not-found': 'host not found (__code__)',
    reset: 'connection broken (__code__)',
    'no-route': 'no route to the host (__code__)',
    'no-answer': 'no answer in time (__code__)',
    auth: 'user or password refused (__code__)',
    certificate: 'certificate refused (__code__)',
    other: '__message__',
  },
  reason: {
    'older-wait': 'older messages of this account wait in the outbox',
    'unreachable-now': 'the gateway could not be reached a moment ago: __cause__',
    cancelled: 'the request was cancelled',
    'account-closed': 'the account was closed (redeploy or shutdown)',
    'rate-unchecked': 'the rate limit could not be checked (__cause__)',
    'rate-wait': "it waited for the account's rate limit",
    'retry-due': 'the gateway could not be reached before the next retry was due',
    unreached: 'the gateway could not be reached in time (__tries__). Last: __last__',
  },
  'over-rate-limit':
    "This request has __messages__ messages; the account's rate limit allows __limit__ per __seconds__ s",
  'rate-queue-full':
    'Rate limit reached (__limit__ per __seconds__ s) and __queued__ messages already wait; this one was refused',
  'outbox-unwritable':
    'Not kept: the outbox file __file__ could not be written (__cause__); this message could not wait for the gateway',
  'outbox-full':
    'Not kept: the outbox already holds __size__ messages waiting for the gateway (the account\'s "outbox size" setting)',
  'outbox-full-of':
    'Not kept: the outbox of the BulkGate account "__account__" already holds __size__ messages waiting for the gateway (the account\'s "outbox size" setting)',
  'outbox-locked':
    'Not kept: another Node-RED process holds the outbox file __file__ (two Node-REDs on one user directory); this message could not wait for the gateway',
  'store-unavailable':
    'Not kept: the gateway could not be reached and the shared store does not answer, so the message cannot wait (__cause__)',
  expired:
    "Not sent: the gateway could not be reached for __minutes__ (the account's outbox time; __tries__). Last: __last__",
  'gave-up': 'Not sent within __seconds__ s (the node\'s "give up after"): __why__',
  unconfirmed:
    'Not confirmed: Node-RED stopped or was redeployed while this message was being sent, and this API cannot drop a second copy, so it was not sent again; it may have been delivered',
  // The escalation node's chain, checked when an incident is raised (nothing is sent when it fails).
  escalation: {
    'no-steps': 'steps: the chain has no step (it takes 1 to 10)',
    'too-many-steps': 'steps: the chain has __steps__ steps; it takes at most 10',
    'no-numbers': 'steps: step __step__ has no number',
    'bad-number': 'steps: step __step__ has an impossible number, __number__',
    wait: 'steps: step __step__ waits __wait__; a wait is a whole number of seconds from 1 to 86400',
    repeat: 'repeat must be a whole number from 1 to 10, not __repeat__',
    command: 'msg.escalation must be "acknowledge" or "resolve", not __value__',
    unstored: 'The incident could not be stored (__where__): __cause__; nothing was sent',
    rejected: 'The gateway refused the chain SMS to __number__: __reason__',
  },
  // The account panel's Test connection: why it did not ask, or what the answer was without an HTTP status.
  test: {
    'no-token': 'Type the application token: no deployed account holds one for this test',
    'token-again': 'Type the application token again to test another base URL than the deployed one',
    'proxy-undeployed': 'Deploy the http proxy node first: the test goes through a deployed one',
    'no-store-password': 'Type the store password: no deployed account holds one for this test',
    'store-password-again': 'Type the store password again to test another store URL than the deployed one',
    failed: 'The test failed',
    refused: '__sentence__ (__type__)',
  },
  // A count inside a sentence (`n`, not i18next's `count`: one key per form the English needs).
  count: {
    'minute-one': '__n__ minute',
    minutes: '__n__ minutes',
    'attempt-one': '__n__ attempt',
    attempts: '__n__ attempts',
  },
} as const;

export type NodeErrorKey = Leaves<typeof NODE_ERRORS>;

export type CauseKind = Exclude<keyof typeof NODE_ERRORS.cause, 'other'>;

// The first that matches an error's code, name, message and its cause's; the match is the code a wording shows.
const CAUSES: [kind: CauseKind, pattern: RegExp][] = [
  ['disk-full', /\b(ENOSPC|EDQUOT)\b/],
  ['no-permission', /\b(EACCES|EPERM|NOPERM)\b/],
  ['read-only', /\b(EROFS)\b/],
  ['missing', /\b(ENOENT|ENOTDIR|EEXIST)\b/],
  ['too-many-files', /\b(EMFILE|ENFILE)\b/],
  ['auth', /\b(WRONGPASS|NOAUTH|AUTH|invalid password)\b/],
  ['certificate', /\b([A-Z_]*CERT[A-Z_]*|ERR_TLS_[A-Z_]+|UNABLE_TO_VERIFY_LEAF_SIGNATURE)\b/],
  ['refused', /\b(ECONNREFUSED)\b/],
  ['not-found', /\b(ENOTFOUND|EAI_AGAIN)\b/],
  ['reset', /\b(ECONNRESET|EPIPE|UND_ERR_SOCKET|UND_ERR_CLOSED)\b/],
  ['no-route', /\b(EHOSTUNREACH|ENETUNREACH)\b/],
  ['no-answer', /\b(ETIMEDOUT|UND_ERR_[A-Z_]*TIMEOUT|\w*TimeoutError)\b/],
];

/** What failed below the package (the disk, the network, the store's server), by the code an error carries. */
export function causeKind(error: unknown): { kind: CauseKind; code: string } | undefined {
  const e = (typeof error === 'object' && error !== null ? error : {}) as {
    code?: unknown;
    name?: unknown;
    message?: unknown;
    cause?: { code?: unknown; message?: unknown };
  };
  const text =
    typeof error === 'object' && error !== null
      ? [e.code, e.name, e.message, e.cause?.code, e.cause?.message].filter((part) => part !== undefined).join(' ')
      : String(error);
  for (const [kind, pattern] of CAUSES) {
    const code = pattern.exec(text)?.[1];
    if (code) return { kind, code };
  }
  return undefined;
}

/**
 * A failure below the package (an Error of the OS, undici or the store's client) as a wording: what failed in the
 * reader's language, with the code to search for; one of no known kind keeps its own words, the package's own its own.
 */
export function causeOf(error: unknown): Wording {
  if (error instanceof GatewayError && error.wording) return error.wording;
  const known = causeKind(error);
  return known
    ? { key: `cause.${known.kind}`, params: { code: known.code } }
    : { key: 'cause.other', params: { message: error instanceof Error ? error.message : String(error) } };
}

export function nodeWording(key: NodeErrorKey, params?: Record<string, WordingParam>): Wording {
  return params ? { key, params } : { key };
}

/** The English sentence of a wording, the nodes' own or the client's (a key neither knows reads as the key). */
export function nodeEnglish(said: Wording): string {
  let text: unknown = NODE_ERRORS;
  for (const part of said.key.split('.')) text = (text as Record<string, unknown> | undefined)?.[part];
  return typeof text === 'string' ? fill(text, said.params, nodeEnglish) : english(said);
}

type ErrorBrief = { key: string; params?: Record<string, string | number> };

/** An error of the nodes' own: its sentence worded (in the user's language at Catch), its English the message. */
export function nodeError(init: {
  type: string;
  key: NodeErrorKey;
  params?: Record<string, WordingParam>;
  brief?: ErrorBrief;
  retryable?: boolean;
  cause?: unknown;
}): GatewayError {
  const { key, params, ...rest } = init;
  const wording = nodeWording(key, params);
  return new GatewayError({ ...rest, wording, message: nodeEnglish(wording) });
}

/** A node's check refusing a msg. */
export function nodeInvalid(
  key: NodeErrorKey,
  params?: Record<string, WordingParam>,
  brief?: ErrorBrief,
): GatewayError {
  return nodeError({ type: 'invalid_request', key, params, brief });
}

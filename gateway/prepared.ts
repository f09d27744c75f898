/** A request as the client sends it, prepared and checked, and the one place that writes the credentials into a body. */
import type { EndpointOperation, Operation } from './operations';

export interface AccountIdentity {
  applicationId: string;
  applicationToken: string;
  applicationProduct?: string;
  /** ISO 3166-1 alpha-2 code used when a request gives no country. */
  defaultCountry?: string;
}

export interface PreparedRequest {
  operation: Operation | EndpointOperation;
  method: 'GET' | 'POST';
  /** Path relative to the base URL, with the query for a GET. */
  path: string;
  contentType?: string;
  /** The serialised body. Holds the token: never logged, never attached to anything. */
  payload?: string;
  /** Messages this request sends: one per recipient number (groups and admins count once each). */
  messages: number;
  /** Whether a duplicate would be dropped by the gateway, so a retry cannot send twice. */
  duplicatesChecked: boolean;
  /** `<name>` placeholders that some recipient has no variable for. */
  missingVariables: string[];
  /** Recipients the checks found impossible (`12ab`, too short, too long): answered here as the gateway would. */
  rejected: RejectedRecipient[];
  /** No recipient is left to send to: no request is made, the rejected ones are the answer. */
  nothingToSend: boolean;
  /** A schedule in the past (ISO 8601): the gateway sends the message at once, and its sender should hear of it. */
  pastSchedule?: string;
}

/** The code a per-recipient record gives an invalid phone number (the reference's one per-recipient code). */
export const INVALID_NUMBER_CODE = 9;

export interface RejectedRecipient {
  /** The position among the request's numbers, as given. */
  at: number;
  record: { status: 'error'; code: 9; type: 'invalid_phone_number'; error: string; number: string };
}

/** A number the checks find impossible, as the gateway's own record for an invalid number. */
export function impossibleNumber(at: number, given: string | number): RejectedRecipient {
  return { at, record: { status: 'error', code: INVALID_NUMBER_CODE, type: 'invalid_phone_number', error: 'Invalid phone number', number: String(given) } };
}

/** The credentials part of a body (a field of these names from a msg is refused by each request's checks). */
export function credentialsBody(account: AccountIdentity, withProduct = true): Record<string, unknown> {
  const body: Record<string, unknown> = { application_id: account.applicationId, application_token: account.applicationToken };
  if (withProduct && account.applicationProduct) body.application_product = account.applicationProduct;
  return body;
}

/** The keys `credentialsBody` writes. */
export const CREDENTIAL_KEYS = ['application_id', 'application_token', 'application_product'] as const;

/** A field left empty: no value. */
export const isAbsent = (v: unknown): boolean => v === undefined || v === null || v === '';

/**
 * An object as a msg or a JSON answer carries one: not null, an array, a Date or bytes (a Buffer).
 * The client and the nodes use this one; the simulator keeps its own (it is the test oracle).
 */
export function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value) && !(value instanceof Date) && !(value instanceof Uint8Array);
}

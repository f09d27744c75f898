/** A request as the client sends it, prepared and checked; the one place that writes the credentials. */
import type { EndpointName, Operation } from './operations';

export interface AccountIdentity {
  applicationId: string;
  applicationToken: string;
  applicationProduct?: string;
  /** ISO 3166-1 alpha-2 code used when a request gives no country. */
  defaultCountry?: string;
}

export interface PreparedRequest {
  operation: Operation | { kind: 'endpoint'; name: EndpointName; method: 'POST'; encoding: 'json' };
  method: 'GET' | 'POST';
  /** Relative to the base URL, with the query for a GET. */
  path: string;
  contentType?: string;
  /** Holds the token: never logged, never attached to anything. */
  payload?: string;
  /** One per recipient number (groups and admins count once each). */
  messages: number;
  /** A duplicate would be dropped by the gateway, so a retry cannot send twice. */
  duplicatesChecked: boolean;
  /** `<name>` placeholders some recipient has no variable for. */
  missingVariables: string[];
  /** Recipients the checks found impossible (`12ab`): answered here as the gateway would. */
  rejected: RejectedRecipient[];
  /** No recipient left: no request is made, the rejected ones are the answer. */
  nothingToSend: boolean;
  /** A schedule in the past (ISO 8601): the gateway sends at once, and the sender should hear of it. */
  pastSchedule?: string;
}

export const INVALID_NUMBER_CODE = 9;

export interface RejectedRecipient {
  /** Among the request's numbers, as given. */
  at: number;
  record: { status: 'error'; code: 9; type: 'invalid_phone_number'; error: string; number: string };
}

/** A number the checks find impossible, recorded as the gateway records an invalid one. */
export function impossibleNumber(at: number, given: string | number): RejectedRecipient {
  return {
    at,
    record: {
      status: 'error',
      code: INVALID_NUMBER_CODE,
      type: 'invalid_phone_number',
      error: 'Invalid phone number',
      number: String(given),
    },
  };
}

/** The credentials part of a body (a msg's field of these names is refused by the checks). */
export function credentialsBody(account: AccountIdentity, withProduct = true): Record<string, unknown> {
  const body: Record<string, unknown> = {
    application_id: account.applicationId,
    application_token: account.applicationToken,
  };
  if (withProduct && account.applicationProduct) body.application_product = account.applicationProduct;
  return body;
}

export const CREDENTIAL_KEYS = ['application_id', 'application_token', 'application_product'] as const;

export const isAbsent = (v: unknown): boolean => v === undefined || v === null || v === '';

/** Not null, an array, a Date or bytes. The simulator keeps its own (it is the test oracle). */
export function isPlainObject(value: unknown): value is Record<string, unknown> {
  return (
    typeof value === 'object' &&
    value !== null &&
    !Array.isArray(value) &&
    !(value instanceof Date) &&
    !(value instanceof Uint8Array)
  );
}

/** Sending a request again later (the outbox): kept without credentials, sent with duplicates_check. */
import { bodyShape, operationPath, type Operation } from './operations';
import {
  CREDENTIAL_KEYS,
  credentialsBody,
  type AccountIdentity,
  type PreparedRequest,
  type RejectedRecipient,
} from './prepared';
import { LONG_JSON, parseInSteps } from './json-steps';
import { serialiseInSteps } from './request';
import { bodyFields, schemaKey } from './schemas';
import { inTurns, type Steps } from './steps';

/** The reference's duplicate window: the gateway drops a copy (`duplicates_check`) sent within it. */
export const DUPLICATE_WINDOW_MS = 5 * 60_000;

/** Whether the operation's body can carry duplicates_check (the simple 1.0 bodies cannot). */
function checksDuplicates(operation: Operation): boolean {
  const shape = bodyShape(operation);
  return bodyFields(schemaKey(operation.kind, shape.api, shape.version)).includes('duplicates_check');
}

export function resendable(operation: Operation, mayHaveReached: boolean | undefined): boolean {
  return checksDuplicates(operation) || mayHaveReached === false;
}

/** The wire body without the credentials: what may be written to a file. */
export function storableBody(prepared: PreparedRequest): Record<string, unknown> {
  const payload = prepared.payload ?? '';
  return withoutCredentials(
    prepared.contentType === 'application/json'
      ? (JSON.parse(payload) as Record<string, unknown>)
      : Object.fromEntries(new URLSearchParams(payload)),
  );
}

/** storableBody, a JSON body longer than LONG_JSON (a list's) read in steps a turn of the event loop apart. */
export async function storableBodyInSteps(prepared: PreparedRequest): Promise<Record<string, unknown>> {
  const payload = prepared.payload ?? '';
  if (prepared.contentType !== 'application/json' || payload.length <= LONG_JSON) return storableBody(prepared);
  return withoutCredentials((await inTurns(parseInSteps(payload))) as Record<string, unknown>);
}

function withoutCredentials(body: Record<string, unknown>): Record<string, unknown> {
  for (const key of CREDENTIAL_KEYS) delete body[key];
  return body;
}

/** A body kept without credentials, with what preparing it found: what a resend starts from. */
export type Kept = { body: Record<string, unknown>; rejected: RejectedRecipient[]; messages: number };

/** A kept body, checked once already, with duplicates_check on: a copy that arrived is dropped. Long lists in steps. */
export function prepareResendInSteps(
  operation: Operation,
  kept: Kept,
  account: AccountIdentity,
): Promise<PreparedRequest> {
  return inTurns(preparingResend(operation, kept, account));
}

function* preparingResend(operation: Operation, kept: Kept, account: AccountIdentity): Steps<PreparedRequest> {
  const body = Object.assign(credentialsBody(account), kept.body);
  const duplicatesChecked = checksDuplicates(operation);
  if (duplicatesChecked) {
    if (operation.kind === 'transactional') body.duplicates_check = 'on';
    else if (body.duplicates_check !== 'same_number') body.duplicates_check = 'same_text';
  }
  const wire = yield* serialiseInSteps(operation, body);
  return {
    operation,
    method: 'POST',
    path: operationPath(operation),
    contentType: wire.contentType,
    payload: wire.payload,
    messages: kept.messages,
    duplicatesChecked,
    missingVariables: [],
    rejected: kept.rejected,
    nothingToSend: false,
  };
}

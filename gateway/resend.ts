/**
 * Sending a request again later (the nodes' outbox): what of a prepared request may be
 * kept (its wire body without the credentials), and that body made ready to send again with the
 * account's credentials and duplicates_check, so a copy that reached the gateway before is dropped
 * there.
 */
import { bodyShape, operationPath, type Operation } from './operations';
import { CREDENTIAL_KEYS, credentialsBody, type AccountIdentity, type PreparedRequest, type RejectedRecipient } from './prepared';
import { serialise } from './request';
import { bodyFields, schemaKey } from './schemas';

/** Whether the operation's body can carry duplicates_check (the simple 1.0 bodies cannot). */
export function checksDuplicates(operation: Operation): boolean {
  const shape = bodyShape(operation);
  return bodyFields(schemaKey(operation.kind, shape.api, shape.version)).includes('duplicates_check');
}

/**
 * Whether a send that failed may be sent again later without risking a duplicate: its body can
 * carry duplicates_check (the resend turns it on), or the failed attempt never reached the gateway.
 */
export function resendable(operation: Operation, mayHaveReached: boolean | undefined): boolean {
  return checksDuplicates(operation) || mayHaveReached === false;
}

/** The wire body of a prepared request without the credentials: what may be written to a file. */
export function storableBody(prepared: PreparedRequest): Record<string, unknown> {
  const payload = prepared.payload ?? '';
  const body: Record<string, unknown> =
    prepared.contentType === 'application/json' ? (JSON.parse(payload) as Record<string, unknown>) : Object.fromEntries(new URLSearchParams(payload));
  for (const key of CREDENTIAL_KEYS) delete body[key];
  return body;
}

/**
 * A kept body ready to send again: the account's credentials put back, duplicates_check on where
 * the body takes it (`on`; for a promotional one `same_text` unless it asked for `same_number`).
 * It was checked before its first attempt, so it is not checked again.
 */
export function prepareResend(
  operation: Operation,
  kept: { body: Record<string, unknown>; rejected: RejectedRecipient[]; messages: number },
  account: AccountIdentity,
): PreparedRequest {
  const body = Object.assign(credentialsBody(account), kept.body);
  if (checksDuplicates(operation)) {
    if (operation.kind === 'transactional') body.duplicates_check = 'on';
    else if (body.duplicates_check !== 'same_number') body.duplicates_check = 'same_text';
  }
  return {
    operation,
    method: 'POST',
    path: operationPath(operation),
    ...serialise(operation, body),
    messages: kept.messages,
    duplicatesChecked: checksDuplicates(operation),
    missingVariables: [],
    rejected: kept.rejected,
    nothingToSend: false,
  };
}

/** The other endpoints' bodies (one-time passwords, number check, blacklist, address book). */
import { invalidRequest } from './errors';
import { wording } from './wording';
import { ENDPOINTS, type EndpointName } from './operations';
import {
  CREDENTIAL_KEYS,
  credentialsBody,
  isAbsent,
  isPlainObject,
  type AccountIdentity,
  type PreparedRequest,
} from './prepared';
import { setOrDelete, wireCascade } from './request';
import { normalizeNumber } from './recipients';
import { validateBody } from './validate';

const asNumber = (v: unknown): unknown => (typeof v === 'string' || typeof v === 'number' ? normalizeNumber(v) : v);

const asInteger = (v: unknown): unknown => (typeof v === 'string' && /^\s*\d+\s*$/.test(v) ? Number(v) : v);

const INTEGER_FIELDS = [
  'code_length',
  'request_quota_number',
  'trials_available_resend',
  'trials_available_verification',
  'daily_limit',
  'expiration',
];

/** The wire fields: empty ones dropped, numbers normalised, an OTP code a string (a keypad's `1234`). */
function endpointFields(name: EndpointName, given: Record<string, unknown>): Record<string, unknown> {
  const fields: Record<string, unknown> = {};
  for (const key of Object.keys(given)) if (!isAbsent(given[key])) fields[key] = given[key];
  for (const key of ['number', 'phone_number']) if (key in fields) fields[key] = asNumber(fields[key]);
  if (Array.isArray(fields.numbers)) {
    fields.numbers = fields.numbers.map((n) =>
      isPlainObject(n) && 'phone_number' in n ? { ...n, phone_number: asNumber(n.phone_number) } : asNumber(n),
    );
  }
  const contact = (c: unknown) => {
    if (!isPlainObject(c)) return c;
    const out: Record<string, unknown> = {};
    for (const key of Object.keys(c))
      if (!isAbsent(c[key])) out[key] = key === 'phone_mobile' || key === 'phone' ? asNumber(c[key]) : c[key];
    return out;
  };
  if (name.startsWith('address-book'))
    fields.data = Array.isArray(fields.data) ? fields.data.map(contact) : contact(fields.data);
  if (fields.data === undefined) delete fields.data;
  if (name === 'otp send' && 'channel' in fields) setOrDelete(fields, 'channel', wireCascade(fields.channel));
  if (name === 'otp verify' && typeof fields.code === 'number' && Number.isFinite(fields.code))
    fields.code = String(fields.code);
  for (const key of INTEGER_FIELDS) if (key in fields) fields[key] = asInteger(fields[key]);
  if (typeof fields.groups === 'string') fields.groups = fields.groups.split(/[;,\s]+/).filter(Boolean);
  if (Array.isArray(fields.groups)) fields.groups = fields.groups.map(asInteger);
  if (typeof fields.country === 'string') fields.country = fields.country.trim();
  return fields;
}

export function prepareEndpoint(
  name: EndpointName,
  given: Record<string, unknown>,
  account: AccountIdentity,
): PreparedRequest {
  const endpoint: { path: string; read: boolean } | undefined = ENDPOINTS[name];
  if (!endpoint) throw invalidRequest(wording('no-endpoint', { name: String(name) }));
  const fields = endpointFields(name, given);
  // Only the account gives the credentials.
  const credential = CREDENTIAL_KEYS.find((key) => key in fields);
  if (credential) throw invalidRequest(wording('credential-field', { field: credential, name }));
  if (account.defaultCountry && name === 'otp send' && fields.country === undefined)
    fields.country = account.defaultCountry;
  if (account.defaultCountry && name === 'number-check' && Array.isArray(fields.numbers)) {
    fields.numbers = fields.numbers.map((n) =>
      isPlainObject(n) && n.country === undefined ? { ...n, country: account.defaultCountry } : n,
    );
  }
  const body = Object.assign(credentialsBody(account), fields);
  validateBody(name, body);
  return {
    operation: { kind: 'endpoint', name, method: 'POST', encoding: 'json' },
    method: 'POST',
    path: endpoint.path,
    contentType: 'application/json',
    payload: JSON.stringify(body),
    messages: name === 'otp send' || name === 'otp resend' ? 1 : 0,
    duplicatesChecked: endpoint.read,
    missingVariables: [],
    rejected: [],
    nothingToSend: false,
  };
}

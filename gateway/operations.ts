/** The operations of the reference (class, API family, version, method, encoding) and their paths. */
import { wording, type Wording } from './wording';

export type OperationKind = 'promotional' | 'transactional' | 'info';
export type ApiFamily = 'advanced' | 'simple';
export type ApiVersion = '1.0' | '2.0';
export type HttpMethod = 'GET' | 'POST';
/** How the credentials and fields travel: a JSON body, a form body, or (simple info GET) the query. */
export type BodyEncoding = 'json' | 'form' | 'query';

export interface Operation {
  kind: OperationKind;
  api: ApiFamily;
  version: ApiVersion;
  method: HttpMethod;
  encoding: BodyEncoding;
}

const API_FAMILIES: readonly ApiFamily[] = ['advanced', 'simple'];

/** Versions each class offers per API family (simple promotional has no 2.0). */
export const VERSIONS: Record<OperationKind, Record<ApiFamily, readonly ApiVersion[]>> = {
  promotional: { advanced: ['2.0', '1.0'], simple: ['1.0'] },
  transactional: { advanced: ['2.0', '1.0'], simple: ['2.0', '1.0'] },
  info: { advanced: ['1.0'], simple: ['1.0'] },
};

/** Methods and encodings per family (the credit's simple API adds a GET). The advanced API takes JSON only. */
const SEND_ENCODINGS: Record<ApiFamily, readonly string[]> = {
  advanced: ['POST json'],
  simple: ['POST json', 'POST form'],
};
const INFO_ENCODINGS: Record<ApiFamily, readonly string[]> = {
  advanced: ['POST json'],
  simple: ['GET query', 'POST json', 'POST form'],
};

/** The send operation asked for, with the defaults (advanced, the family's first version, JSON). */
export function sendOperation(
  kind: 'promotional' | 'transactional',
  choice: { api?: ApiFamily; version?: ApiVersion; encoding?: 'json' | 'form' } = {},
): Operation {
  const api = choice.api ?? 'advanced';
  const version = choice.version ?? VERSIONS[kind][api]?.[0] ?? '2.0';
  return { kind, api, version, method: 'POST', encoding: choice.encoding ?? 'json' };
}

export function operationPath(op: Pick<Operation, 'kind' | 'api' | 'version'>): string {
  return `/api/${op.version}/${op.api}/${op.kind}`;
}

export function operationProblem(op: Operation): Wording | undefined {
  const versions = VERSIONS[op.kind]?.[op.api];
  if (!versions) return wording('api-unknown', { apis: API_FAMILIES.join(', ') });
  if (!versions.includes(op.version)) {
    return wording('version-unknown', {
      version: op.version,
      api: op.api,
      kind: op.kind,
      versions: versions.join(', '),
    });
  }
  // The body's family decides: the 2.0 simple transactional path takes the advanced body, JSON only.
  const allowed = (op.kind === 'info' ? INFO_ENCODINGS : SEND_ENCODINGS)[bodyShape(op).api];
  if (!allowed.includes(`${op.method} ${op.encoding}`)) {
    return wording('encoding-unknown', {
      method: op.method,
      encoding: op.encoding,
      api: op.api,
      kind: op.kind,
      allowed: allowed.join(', '),
    });
  }
  return undefined;
}

export function bodyShape(op: Operation): { api: ApiFamily; version: ApiVersion } {
  if (op.kind === 'transactional' && op.version === '2.0') return { api: 'advanced', version: '2.0' };
  return { api: op.api, version: op.version };
}

/** The vendor's other endpoints. A write is repeated only when the gateway surely did not take it. */
export const ENDPOINTS = {
  'otp send': { path: '/api/1.0/otp/send', read: false },
  'otp resend': { path: '/api/1.0/otp/resend', read: false },
  // Not a read: each verification spends one of the OTP's trials.
  'otp verify': { path: '/api/1.0/otp/verify', read: false },
  // The vendor's PHP SDK's endpoint (NumberChecker): no public page documents it.
  'number-check': { path: '/api/1.0/sdk/check-phone-numbers', read: true },
  'black-list check': { path: '/api/1.0/black-list/is-black-listed', read: true },
  'black-list add': { path: '/api/1.0/black-list/add', read: false },
  'black-list remove': { path: '/api/1.0/black-list/remove', read: false },
  'address-book get': { path: '/api/1.0/address-book/get', read: true },
  'address-book add': { path: '/api/1.0/address-book/add', read: false },
  'address-book edit': { path: '/api/1.0/address-book/edit', read: false },
  'address-book import': { path: '/api/1.0/address-book/import', read: false },
  'address-book remove': { path: '/api/1.0/address-book/remove', read: false },
  'address-book consent-show': { path: '/api/1.0/address-book/agreement/show', read: true },
  'address-book consent-add': { path: '/api/1.0/address-book/agreement/add', read: false },
  'address-book consent-remove': { path: '/api/1.0/address-book/agreement/remove', read: false },
} as const satisfies Record<string, { path: string; read: boolean }>;

export type EndpointName = keyof typeof ENDPOINTS;

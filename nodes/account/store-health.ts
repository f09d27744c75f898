/**
 * Whether a shared store can be reached, in words: why not (a log line's reason, and the short
 * cause a status shows), and what a store tells of itself. The account keeps this beside its
 * state without knowing which store it runs on.
 */

/** What a shared store tells of itself; told by a Redis store's events. */
export type StoreState = 'connected' | 'unreachable' | 'lost' | 'back' | 'eviction';

/** Why a store cannot be reached, by the key a status names it with: the words a log line starts with. */
export const STORE_CAUSES = {
  auth: 'authentication refused',
  certificate: 'certificate refused',
  refused: 'nothing listening',
  'no-answer': 'no answer',
  'not-found': 'host not found',
  network: 'no connection',
} as const;
export type StoreCause = keyof typeof STORE_CAUSES;

/** The cause a reason told by {@link storeFailure} starts with. */
export function storeCause(reason: string): StoreCause {
  const found = (Object.keys(STORE_CAUSES) as StoreCause[]).find((key) => reason.startsWith(`${STORE_CAUSES[key]}:`));
  return found ?? 'network';
}

/** Why a store cannot be reached, in words a user acts on, with the client's own message. */
export function storeFailure(error: Error): string {
  const text = `${error.message ?? ''} ${(error as { code?: string }).code ?? ''}`;
  const cause: StoreCause = /WRONGPASS|NOAUTH|NOPERM|invalid password|AUTH/i.test(text)
    ? 'auth'
    : /certificate|CERT_|self[- ]signed|altnames|TLS/i.test(text)
      ? 'certificate'
      : /ECONNREFUSED/.test(text)
        ? 'refused'
        : /timeout|ETIMEDOUT/i.test(text)
          ? 'no-answer'
          : /ENOTFOUND|EAI_AGAIN/.test(text)
            ? 'not-found'
            : 'network';
  return `${STORE_CAUSES[cause]}: ${error.message}`;
}

// Whether a shared store can be reached, in words: a log line's reason, and the short cause a status shows.

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
type StoreCause = keyof typeof STORE_CAUSES;

/** The cause a reason told by {@link storeFailure} starts with. */
export function storeCause(reason: string): StoreCause {
  return (Object.keys(STORE_CAUSES) as StoreCause[]).find((key) => reason.startsWith(`${STORE_CAUSES[key]}:`)) ?? 'network';
}

/** What a client's error says, by the cause it names (the first that matches; else `network`). */
const CAUSE_PATTERNS: [RegExp, StoreCause][] = [
  [/WRONGPASS|NOAUTH|NOPERM|invalid password|AUTH/i, 'auth'],
  [/certificate|CERT_|self[- ]signed|altnames|TLS/i, 'certificate'],
  [/ECONNREFUSED/, 'refused'],
  [/timeout|ETIMEDOUT/i, 'no-answer'],
  [/ENOTFOUND|EAI_AGAIN/, 'not-found'],
];

/** Why a store cannot be reached, in words a user acts on, with the client's own message. */
export function storeFailure(error: Error): string {
  const text = `${error.message ?? ''} ${(error as { code?: string }).code ?? ''}`;
  const cause = CAUSE_PATTERNS.find(([pattern]) => pattern.test(text))?.[1] ?? 'network';
  return `${STORE_CAUSES[cause]}: ${error.message}`;
}

/** Why the account's `storeUrl` cannot be used, at runtime and in the editor (bundled into it: no Node.js imports). */
import type { Wording } from '../../gateway/wording';

/**
 * The English sentences; the nodes' error table holds them under `store-url` (worded in the user's language from the
 * catalog).
 */
export const STORE_URL_ERRORS = {
  required: 'storeUrl is required for a Redis store (redis://host:6379 or rediss://host:6380)',
  'not-url': 'storeUrl is not a URL (redis://host:6379, redis://user@host:6379 or rediss://host:6380)',
  protocol: 'storeUrl must start with redis:// (or rediss:// for TLS)',
  password: 'storeUrl must not carry a password: put it in the account\'s "Store password" (kept with the credentials)',
  user: "storeUrl's user name is not a well-formed escaped name (redis://user@host:6379)",
  path: "storeUrl's path must be a database's number, if any (redis://host:6379/2)",
} as const;

type StoreUrlError = keyof typeof STORE_URL_ERRORS;

/** Why the store URL cannot be used, as a wording (key `store-url.*`). */
export function storeUrlWording(value: unknown): Wording | undefined {
  const problem = (key: StoreUrlError): Wording => ({ key: `store-url.${key}` });
  if (typeof value !== 'string' || !value.trim()) return problem('required');
  let url: URL;
  try {
    url = new URL(value.trim());
  } catch {
    // Not echoed: what cannot be parsed cannot be cut free of a password either.
    return problem('not-url');
  }
  if (url.protocol !== 'redis:' && url.protocol !== 'rediss:') return problem('protocol');
  // A password in the URL would sit in the flows file, in every export and backup of it.
  if (url.password) return problem('password');
  try {
    decodeURIComponent(url.username);
  } catch {
    return problem('user');
  }
  if (!/^\/?(\d{1,5})?$/.test(url.pathname)) return problem('path');
  return undefined;
}

/** Why the store URL cannot be used, in English. */
export function storeUrlProblem(value: unknown): string | undefined {
  const problem = storeUrlWording(value);
  return problem && STORE_URL_ERRORS[problem.key.slice('store-url.'.length) as StoreUrlError];
}

/** Why the account's `storeUrl` cannot be used, at runtime and in the editor (bundled into it: no Node.js imports). */
export function storeUrlProblem(value: unknown): string | undefined {
  if (typeof value !== 'string' || !value.trim()) return 'storeUrl is required for a Redis store (redis://host:6379 or rediss://host:6380)';
  let url: URL;
  try {
    url = new URL(value.trim());
  } catch {
    // Not echoed: what cannot be parsed cannot be cut free of a password either.
    return 'storeUrl is not a URL (redis://host:6379, redis://user@host:6379 or rediss://host:6380)';
  }
  if (url.protocol !== 'redis:' && url.protocol !== 'rediss:') return 'storeUrl must start with redis:// (or rediss:// for TLS)';
  // A password in the URL would sit in the flows file, in every export and backup of it.
  if (url.password) return 'storeUrl must not carry a password: put it in the account\'s "Store password" (kept with the credentials)';
  try {
    decodeURIComponent(url.username);
  } catch {
    return "storeUrl's user name is not a well-formed escaped name (redis://user@host:6379)";
  }
  if (!/^\/?(\d{1,5})?$/.test(url.pathname)) return "storeUrl's path must be a database's number, if any (redis://host:6379/2)";
  return undefined;
}

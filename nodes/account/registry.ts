/**
 * What an account keeps across redeploys in this Node-RED process, in one registry: its outbox
 * (by its log), the local store's journals and trackers (by file, by user directory and account),
 * and a shared store's tracker, outbox log and running client (by key prefix). A redeploy builds
 * new nodes and a new account; what they find here is what the last ones left.
 */
const shelves = new Map<string, Map<unknown, unknown>>();

function shelf(kind: string): Map<unknown, unknown> {
  let found = shelves.get(kind);
  if (!found) shelves.set(kind, (found = new Map()));
  return found;
}

/** The `kind` kept under `key`, made by `make` the first time it is asked for. */
export function keptOnce<T>(kind: string, key: unknown, make: () => T): T {
  const kept = shelf(kind);
  if (!kept.has(key)) kept.set(key, make());
  return kept.get(key) as T;
}

/** Keeps `value` as the `kind` under `key`, in place of the one before (the account running now). */
export function keepLatest<T>(kind: string, key: unknown, value: T): void {
  shelf(kind).set(key, value);
}

/** The `kind` last kept under `key`. */
export function latest<T>(kind: string, key: unknown): T | undefined {
  return shelf(kind).get(key) as T | undefined;
}

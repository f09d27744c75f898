/** What accounts keep across redeploys in this process: new nodes find what the last ones left. */
const shelves = new Map<string, Map<unknown, unknown>>();

function shelf(kind: string): Map<unknown, unknown> {
  let found = shelves.get(kind);
  if (!found) shelves.set(kind, (found = new Map()));
  return found;
}

export function keptOnce<T>(kind: string, key: unknown, make: () => T): T {
  const kept = shelf(kind);
  if (!kept.has(key)) kept.set(key, make());
  return kept.get(key) as T;
}

/** In place of the one before (the account running now). */
export function keepLatest<T>(kind: string, key: unknown, value: T): void {
  shelf(kind).set(key, value);
}

export function latest<T>(kind: string, key: unknown): T | undefined {
  return shelf(kind).get(key) as T | undefined;
}

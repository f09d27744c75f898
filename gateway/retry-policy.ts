/**
 * The retry policy's arithmetic, as pure functions: how long to wait before the next attempt,
 * and what a Retry-After header asks for. The client (client.ts) decides whether to retry.
 */

export interface BackoffSettings {
  /** First delay, ms; it doubles with each attempt. */
  retryDelay: number;
  /** The longest wait, ms (it also caps a Retry-After). */
  retryMaxDelay: number;
}

/**
 * The wait before the attempt after attempt number `attempt` (1 for the first): what the
 * gateway's Retry-After asked for (capped), else exponential backoff with "equal jitter": at least
 * half the ceiling, so attempts spread out but never hammer. `random` is Math.random's range.
 */
export function backoffDelay(attempt: number, retryAfter: number | undefined, settings: BackoffSettings, random: number = Math.random()): number {
  if (retryAfter !== undefined) return Math.min(retryAfter, settings.retryMaxDelay);
  const ceiling = Math.min(settings.retryMaxDelay, settings.retryDelay * 2 ** (attempt - 1));
  return Math.round(ceiling / 2 + random * (ceiling / 2));
}

/** A Retry-After header in ms: seconds, or an HTTP date (from now); undefined when absent or unreadable. */
export function parseRetryAfter(value: string | string[] | undefined, now: number = Date.now()): number | undefined {
  const raw = Array.isArray(value) ? value[0] : value;
  if (!raw) return undefined;
  if (/^\d+$/.test(raw.trim())) return Number(raw) * 1000;
  const date = Date.parse(raw);
  return Number.isNaN(date) ? undefined : Math.max(0, date - now);
}

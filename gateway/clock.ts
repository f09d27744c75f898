// Time inside a process. The wall clock (Date.now) steps: NTP sets a Raspberry Pi without a real-time clock right
// after boot, by hours or years. So durations run on the monotonic clock, and no timer is armed past Node's limit
// (Node fires a longer one after 1 ms, with a TimeoutOverflowWarning: a pump that asks again floods the log).

/** setTimeout's longest wait: 2^31-1 ms, about 24.8 days. */
export const MAX_TIMER_MS = 2 ** 31 - 1;

/** A wait a timer can be armed with: 0 to MAX_TIMER_MS (one that waited less checks again and is armed again). */
export function timerDelay(ms: number): number {
  return ms > 0 ? Math.min(MAX_TIMER_MS, ms) : 0;
}

/** Calls `fire` once `ms` have passed, in timers within the limit; returns its cancel. */
export function after(ms: number, fire: () => void): () => void {
  let left = Number.isFinite(ms) ? Math.max(0, ms) : MAX_TIMER_MS;
  let timer: NodeJS.Timeout;
  const arm = (): void => {
    const wait = timerDelay(left);
    left -= wait;
    timer = setTimeout(left > 0 ? arm : fire, wait);
  };
  arm();
  return () => clearTimeout(timer);
}

/** Ms on a clock that never steps; read through the global at each call, so a fake clock in a test reaches it. */
export function monotonicNow(): number {
  return performance.now();
}

/** Wall minus monotonic, as last read: read again only when the wall clock stepped (a second or more). */
let wallOffset: number | undefined;

/**
 * A stored wall-clock time (a deadline's start, written to survive a restart) as a point on the
 * monotonic clock: its age when first read, so a later step of the wall clock moves nothing. One in
 * the future (the clock stepped back) is now; one long past is that old (the wall clock is all a
 * process knows of the time before it). One offset until the clock steps, so order holds.
 */
export function monotonicAt(wall: number): number {
  const mono = monotonicNow();
  const offset = Date.now() - mono;
  if (wallOffset === undefined || Math.abs(offset - wallOffset) >= 1000) wallOffset = offset;
  return Math.min(mono, wall - wallOffset);
}

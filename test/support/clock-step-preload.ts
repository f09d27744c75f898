/**
 * Preloaded into a Node-RED process (`--require`): its wall clock steps as NTP steps it, by the ms
 * written in the file BULKGATE_CLOCK_STEP_FILE names (looked at every 100 ms). Date.now() and
 * `new Date()` move; the monotonic clock (performance.now) and the timers do not, as in a real step.
 */
import { readFileSync } from 'node:fs';

const file = process.env.BULKGATE_CLOCK_STEP_FILE;
if (file) {
  const RealDate = Date;
  let step = 0;
  const look = setInterval(() => {
    try {
      step = Number(readFileSync(file, 'utf8')) || 0;
    } catch {
      // Not written yet: no step.
    }
  }, 100);
  look.unref();
  class SteppedDate extends RealDate {
    constructor(...args: unknown[]) {
      if (args.length === 0) super(RealDate.now() + step);
      else super(...(args as [string]));
    }
    static override now(): number {
      return RealDate.now() + step;
    }
  }
  globalThis.Date = SteppedDate as DateConstructor;
}

/**
 * Work on a long list in steps a turn of the event loop apart (three lists of 10,000 numbers held
 * every other flow for 60 to 150 ms each), written once as a generator that yields between steps:
 * `atOnce` runs it through (a short list never yields), `inTurns` lets the event loop run between
 * steps. All stepped work shares one queue, one step a turn: Node.js runs every immediate queued
 * before its check phase in one turn, so each list on its own setImmediate would not take turns.
 */
import { Fifo } from './fifo';

/** Recipients (or answer records) a step: under a ms (a recipient prepared whole costs about 3 µs). */
export const LIST_STEP = 250;

/** Work that yields (`yield;`) where the event loop may run, then returns its result. */
export type Steps<T> = Generator<void, T, void>;

/** Calls `each` on every item `forEach` would visit, LIST_STEP items a step (a yield before each but the first). */
export function* eachInSteps<T>(list: readonly T[], each: (item: T, index: number) => void): Steps<void> {
  const length = list.length;
  for (let i = 0; i < length; i++) {
    if (i > 0 && i % LIST_STEP === 0) yield;
    // forEach skips the holes of a sparse array: so does this.
    if (i in list) each(list[i] as T, i);
  }
}

/** Runs the steps through without yielding to the event loop. */
export function atOnce<T>(steps: Steps<T>): T {
  for (;;) {
    const step = steps.next();
    if (step.done) return step.value;
  }
}

/** The steps waiting for a turn, the oldest first; one runs a turn. */
const waiting = new Fifo<() => void>();
let turning = false;

function turn(): void {
  (waiting.shift() as () => void)();
  if (waiting.size > 0) setImmediate(turn);
  else turning = false;
}

/** `step` in a later turn, after those waiting before it (setImmediate: I/O and timers go first). */
function later(step: () => void): void {
  waiting.push(step);
  if (turning) return;
  turning = true;
  setImmediate(turn);
}

/** The first step at once; when more follow, each in a later turn, one step of all stepped work a turn. */
export async function inTurns<T>(steps: Steps<T>): Promise<T> {
  const first = steps.next();
  if (first.done) return first.value;
  return new Promise<T>((resolve, reject) => {
    const step = () => {
      try {
        const next = steps.next();
        if (next.done) resolve(next.value);
        else later(step);
      } catch (error) {
        reject(error);
      }
    };
    later(step);
  });
}

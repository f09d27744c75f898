/**
 * Work on a long list in steps a turn of the event loop apart: three promotional lists of 10,000
 * numbers checked and written at once held every other flow of the Node-RED for 60 to 150 ms each
 * (now other flows wait no longer than a step). The work is written once, as a generator that
 * yields between steps; `atOnce` runs
 * it through (a short list never yields: the one-number alert pays no turn), `inTurns` lets the
 * event loop run between its steps.
 */

/** Recipients (or answer records) handled in one turn: a few ms of work each, well under the 50 ms another flow may wait. */
export const LIST_STEP = 1000;

/** Work that yields (`yield;`) where the event loop may run, then returns its result. */
export type Steps<T> = Generator<void, T, void>;

/** Yields before each step of `list` but the first, LIST_STEP items a step, calling `each` on every item `forEach` would visit. */
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

/** The first step at once; when more follow, each in a later turn (setImmediate: what waits on I/O and timers goes first). */
export async function inTurns<T>(steps: Steps<T>): Promise<T> {
  const first = steps.next();
  if (first.done) return first.value;
  return new Promise<T>((resolve, reject) => {
    const turn = () => {
      try {
        const step = steps.next();
        if (step.done) resolve(step.value);
        else setImmediate(turn);
      } catch (error) {
        reject(error);
      }
    };
    setImmediate(turn);
  });
}

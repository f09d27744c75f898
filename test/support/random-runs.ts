/**
 * fast-check's settings for a random test that CI runs: the seed printed before the first run, so
 * that a run which never ends can still be replayed (`{ seed, path }` in `fc.assert`), and a time
 * limit after which the test fails instead of going on (shrinking a failure of a run that talks
 * to a redis-server or a fake clock can take hours; a random run must not hold CI past its bound).
 */
import type fc from 'fast-check';

export function randomRuns(numRuns: number, timeLimitMs: number): fc.Parameters<unknown> {
  // fast-check's own default seed, drawn here so that it can be printed first.
  const seed = Date.now() ^ (Math.random() * 0x100000000);
  console.log(`      fast-check seed ${seed}, ${numRuns} runs, at most ${timeLimitMs / 1000} s`);
  return { seed, numRuns, interruptAfterTimeLimit: timeLimitMs, markInterruptAsFailure: true };
}

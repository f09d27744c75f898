/**
 * The retry policy's arithmetic (unit): a Retry-After is waited for as asked, not less and not
 * more than the cap; without one, the wait doubles with each attempt, with jitter in the upper
 * half, up to the longest wait.
 */
import assert from 'node:assert/strict';
import { backoffDelay, parseRetryAfter } from '../gateway';

const settings = { retryDelay: 500, retryMaxDelay: 30_000 };

describe('retry policy (unit)', () => {
  it('Retry-After: seconds or an HTTP date, in ms; capped by the longest wait; unreadable is absent', () => {
    const now = Date.parse('2026-11-23T12:00:00Z');
    assert.equal(parseRetryAfter('7', now), 7_000);
    assert.equal(parseRetryAfter(['3', '9'], now), 3_000);
    assert.equal(parseRetryAfter('Mon, 23 Nov 2026 12:00:05 GMT', now), 5_000);
    assert.equal(parseRetryAfter('Mon, 23 Nov 2026 11:59:00 GMT', now), 0, 'a date in the past: at once');
    assert.equal(parseRetryAfter('soon', now), undefined);
    assert.equal(parseRetryAfter(undefined, now), undefined);
    // Waited for as asked, whatever the jitter would say; never beyond the cap.
    for (const random of [0, 0.5, 1]) {
      assert.equal(backoffDelay(1, 7_000, settings, random), 7_000);
      assert.equal(backoffDelay(3, 120_000, settings, random), 30_000);
    }
  });

  it('without one: from half the ceiling to the ceiling, the ceiling doubling per attempt up to the longest wait', () => {
    const range = (attempt: number) => [backoffDelay(attempt, undefined, settings, 0), backoffDelay(attempt, undefined, settings, 1)];
    assert.deepEqual(range(1), [250, 500]);
    assert.deepEqual(range(2), [500, 1000]);
    assert.deepEqual(range(3), [1000, 2000]);
    assert.deepEqual(range(7), [15_000, 30_000], 'capped: 500 x 2^6 would be 32 s');
    assert.deepEqual(range(20), [15_000, 30_000]);
  });
});

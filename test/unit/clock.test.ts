/** Timers past Node's limit (2^31-1 ms) on a fake clock: armed in pieces, fired once, on time. */
import assert from 'node:assert/strict';
import FakeTimers from '@sinonjs/fake-timers';
import { after, MAX_TIMER_MS, timerDelay } from '../../gateway';

describe('clock (unit, fake clock)', () => {
  let clock: ReturnType<typeof FakeTimers.install>;
  beforeEach(() => {
    clock = FakeTimers.install({ toFake: ['setTimeout', 'clearTimeout'] });
  });
  afterEach(() => clock.uninstall());

  it("a timer's wait: 0 for none, a negative or NaN, the limit for longer or Infinity", () => {
    assert.deepEqual(
      [timerDelay(-5), timerDelay(Number.NaN), timerDelay(1_000), timerDelay(MAX_TIMER_MS + 1), timerDelay(Infinity)],
      [0, 0, 1_000, MAX_TIMER_MS, MAX_TIMER_MS],
    );
  });

  it('after 2.5 times the limit: fires once, then and not a millisecond before; cancelled, never', () => {
    let fired = 0;
    let never = 0;
    after(2.5 * MAX_TIMER_MS, () => fired++);
    const cancel = after(2.5 * MAX_TIMER_MS, () => never++);
    clock.tick(MAX_TIMER_MS * 2);
    cancel();
    clock.tick(0.5 * MAX_TIMER_MS - 1);
    assert.equal(fired, 0);
    clock.tick(1);
    assert.equal(fired, 1);
    clock.tick(10 * MAX_TIMER_MS);
    assert.deepEqual([fired, never], [1, 0]);
  });
});

/** The status throttle across a wall clock stepped back (fake clock): statuses do not freeze for the step. */
import assert from 'node:assert/strict';
import FakeTimers from '@sinonjs/fake-timers';
import type { Node, NodeStatus } from 'node-red';
import { StatusThrottle } from '../../nodes/plumbing/runtime';

describe('status throttle (unit, fake clock)', () => {
  let clock: ReturnType<typeof FakeTimers.install>;
  beforeEach(() => {
    clock = FakeTimers.install({
      toFake: ['setTimeout', 'clearTimeout', 'Date', 'performance'],
      now: Date.parse('2026-11-25T10:00:00Z'),
    });
  });
  afterEach(() => clock.uninstall());

  it('a wall clock stepped back an hour between two statuses: the second is shown half a second on, not an hour on', async () => {
    const shown: NodeStatus[] = [];
    const throttle = new StatusThrottle({ status: (status: NodeStatus) => void shown.push(status) } as unknown as Node);
    throttle.show(() => ({ text: 'first' }));
    assert.deepEqual(shown, [{ text: 'first' }]);
    clock.setSystemTime(Date.now() - 3600_000);
    throttle.show(() => ({ text: 'second' }));
    await clock.tickAsync(500);
    assert.deepEqual(shown, [{ text: 'first' }, { text: 'second' }]);
    throttle.close();
  });
});

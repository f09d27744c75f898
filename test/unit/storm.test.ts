/**
 * The storm guard's window, on a fake clock, from the settings as a flow file keeps them
 * (`stormWindow` in seconds): held inside the window, let through again right after it, and one
 * notice at its end, not before.
 */
import assert from 'node:assert/strict';
import FakeTimers from '@sinonjs/fake-timers';
import { stormGuardOf } from '../../nodes/account/storm';

describe('storm guard (unit, fake clock)', () => {
  let clock: ReturnType<typeof FakeTimers.install>;
  beforeEach(() => {
    clock = FakeTimers.install({ toFake: ['setTimeout', 'clearTimeout', 'Date'] });
  });
  afterEach(() => clock.uninstall());

  it('stormWindow counts in seconds: 2 alerts per 2 s hold the third until 2 s have passed, and the notice comes then', () => {
    const notices: [string, number][] = [];
    const guard = stormGuardOf<string>({ stormLimit: 2, stormWindow: 2 }, (last, held) => notices.push([last, held]));
    assert.deepEqual(
      ['a', 'b', 'c', 'd'].map((alert) => guard.admit(alert)),
      [true, true, false, false],
    );
    clock.tick(1_999);
    assert.equal(guard.admit('e'), false, 'still the same window (not milliseconds)');
    assert.deepEqual(notices, [], 'no notice before the window ends');
    clock.tick(2);
    assert.deepEqual(notices, [['e', 3]], 'one notice at its end, with the last held alert and how many');
    assert.equal(guard.admit('f'), true, 'a new window (not minutes)');
    guard.close();
  });

  it('a flow file without the settings: off; the window 60 s by default', () => {
    assert.equal(stormGuardOf({}, () => undefined).enabled, false);
    const guard = stormGuardOf<string>({ stormLimit: 1 }, () => undefined);
    assert.equal(guard.windowMs, 60_000);
    guard.close();
  });
});

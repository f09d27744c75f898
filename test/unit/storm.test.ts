/**
 * The storm guard's window, on a fake clock, from the settings as a flow file keeps them
 * (`stormWindow` in seconds): held inside the window, let through again right after it, and one
 * notice at its end, not before.
 */
import assert from 'node:assert/strict';
import FakeTimers from '@sinonjs/fake-timers';
import { SHARED_SETTLE_MS, stormGuardOf } from '../../nodes/account/storm';

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
  it('a window with nothing held ends without a notice; the counts start again in the next one', () => {
    const notices: [string, number][] = [];
    const guard = stormGuardOf<string>({ stormLimit: 2, stormWindow: 1 }, (last, held) => notices.push([last, held]));
    assert.deepEqual([guard.admit('a'), guard.admit('b')], [true, true]);
    clock.tick(1_000);
    assert.deepEqual(notices, [], 'two of two: nothing held, no notice');
    assert.deepEqual([guard.admit('c'), guard.admit('d'), guard.admit('e')], [true, true, false]);
    assert.equal(guard.held, 1);
    clock.tick(1_000);
    assert.deepEqual(notices, [['e', 1]]);
    assert.equal(guard.held, 0, 'the count starts again');
    assert.equal(clock.countTimers(), 0, 'no window runs until the next alert');
    guard.close();
  });

  it('a window opens with the first alert after the last one ended, not on a fixed beat', () => {
    const guard = stormGuardOf<string>({ stormLimit: 1, stormWindow: 10 }, () => undefined);
    clock.tick(7_000);
    assert.equal(guard.admit('a'), true);
    clock.tick(9_999);
    assert.equal(guard.admit('b'), false, '10 s from the first alert, not from the start');
    clock.tick(1);
    assert.equal(guard.admit('c'), true);
    guard.close();
  });

  it('off with a limit or a window of 0 (or not a number): every alert goes, and no timer runs', () => {
    for (const settings of [
      { stormLimit: 0 },
      { stormLimit: 3, stormWindow: 0 },
      { stormLimit: 'x' },
      { stormLimit: '' },
    ]) {
      const guard = stormGuardOf<string>(settings, () => undefined);
      assert.equal(guard.enabled, false, JSON.stringify(settings));
      for (let i = 0; i < 20; i++) assert.equal(guard.admit(`a${i}`), true);
      assert.equal(clock.countTimers(), 0);
    }
    assert.equal(
      stormGuardOf({ stormLimit: '2', stormWindow: '5' }, () => undefined).windowMs,
      5_000,
      'settings as strings, as a flow file may hold them',
    );
  });

  it('closed mid-window: no notice for what it held (those msgs have ended), no timer left', () => {
    const notices: unknown[] = [];
    const guard = stormGuardOf<string>({ stormLimit: 1, stormWindow: 5 }, (...args) => notices.push(args));
    guard.admit('a');
    guard.admit('b');
    guard.close();
    assert.equal(clock.countTimers(), 0);
    clock.tick(10_000);
    assert.deepEqual(notices, []);
  });
});

describe('storm guard with a shared store (unit, fake clock, a stand-in store)', () => {
  let clock: ReturnType<typeof FakeTimers.install>;
  beforeEach(() => {
    clock = FakeTimers.install({ toFake: ['setTimeout', 'clearTimeout', 'Date'] });
  });
  afterEach(() => clock.uninstall());

  /** Lets the promise callbacks of a collect run. */
  const settle = () => new Promise<void>((resolve) => setImmediate(resolve));

  it("the store's answer decides, not this copy's count; one notice per shared window, asked for just after it ends, with every copy's count", async () => {
    const notices: [string, number][] = [];
    const asked: string[] = [];
    const guard = stormGuardOf<string>({ stormLimit: 1, stormWindow: 60 }, (last, held) => notices.push([last, held]));
    const collect = (window: string) => (asked.push(window), Promise.resolve(5));
    assert.equal(guard.admitShared('a', { admitted: true, window: 'w1', endsInMs: 1_000 }, collect), true);
    assert.equal(
      guard.admitShared('b', { admitted: true, window: 'w1', endsInMs: 900 }, collect),
      true,
      "admitted by the store beyond this copy's limit",
    );
    assert.equal(guard.admitShared('c', { admitted: false, window: 'w1', endsInMs: 800 }, collect), false);
    assert.equal(guard.admitShared('d', { admitted: false, window: 'w1', endsInMs: 700 }, collect), false);
    assert.equal(guard.held, 2, 'the status counts what this copy holds');
    assert.equal(clock.countTimers(), 1, 'one timer per shared window, none of its own');
    clock.tick(800 + SHARED_SETTLE_MS - 1);
    assert.deepEqual(asked, [], 'not asked before the window ended');
    clock.tick(1);
    await settle();
    assert.deepEqual(asked, ['w1']);
    assert.deepEqual(notices, [['d', 5]], "the last one this copy held, with the count the store gave (every copy's)");
    assert.equal(guard.held, 0);
    guard.close();
  });

  it("another copy collected the count (0 here): no notice; the store not answering: this copy's own count", async () => {
    const notices: [string, number][] = [];
    const guard = stormGuardOf<string>({ stormLimit: 1, stormWindow: 60 }, (last, held) => notices.push([last, held]));
    guard.admitShared('a', { admitted: false, window: 'w1', endsInMs: 100 }, () => Promise.resolve(0));
    guard.admitShared('b', { admitted: false, window: 'w2', endsInMs: 300 }, () =>
      Promise.reject(new Error('store down')),
    );
    guard.admitShared('c', { admitted: false, window: 'w2', endsInMs: 200 }, () =>
      Promise.reject(new Error('store down')),
    );
    clock.tick(100 + SHARED_SETTLE_MS);
    await settle();
    assert.deepEqual(notices, []);
    clock.tick(200);
    await settle();
    assert.deepEqual(notices, [['c', 2]]);
    guard.close();
  });

  it("this copy's own window, ending while a shared one is open (a msg with nothing to send counts here), notices only what it held itself", async () => {
    const notices: [string, number][] = [];
    const guard = stormGuardOf<string>({ stormLimit: 1, stormWindow: 1 }, (last, held) => notices.push([last, held]));
    assert.deepEqual([guard.admit('a'), guard.admit('b')], [true, false]);
    guard.admitShared('c', { admitted: false, window: 'w1', endsInMs: 5_000 }, () => Promise.resolve(1));
    assert.equal(guard.held, 2, 'the status counts both');
    clock.tick(1_000);
    assert.deepEqual(notices, [['b', 1]], "its own held one, not the shared window's too");
    clock.tick(4_000 + SHARED_SETTLE_MS);
    await settle();
    assert.deepEqual(notices, [
      ['b', 1],
      ['c', 1],
    ]);
    guard.close();
  });

  it('closed with a shared window open: no notice, no timer left', async () => {
    const notices: unknown[] = [];
    const guard = stormGuardOf<string>({ stormLimit: 1, stormWindow: 60 }, (...args) => notices.push(args));
    guard.admitShared('a', { admitted: false, window: 'w1', endsInMs: 100 }, () => Promise.resolve(3));
    guard.close();
    assert.equal(clock.countTimers(), 0);
    clock.tick(1_000);
    await settle();
    assert.deepEqual(notices, []);
  });
});

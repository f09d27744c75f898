/**
 * The account's rate limit on a fake clock: the sliding window of this process, and the same
 * queue over a window that answers asynchronously (as a shared store's does), with a stand-in
 * window that counts what it was asked.
 */
import assert from 'node:assert/strict';
import FakeTimers from '@sinonjs/fake-timers';
import { AbortGroup, GatewayError } from '../../gateway';
import { RateLimiter } from '../../nodes/account/rate-limit';
import { MemoryWindow, type RateWindow } from '../../nodes/account/store';

/** This process's window behind a promise, as a window kept elsewhere answers; `failing` makes it throw. */
class FarWindow implements RateWindow {
  readonly inner: MemoryWindow;
  asked = 0;
  failing = false;
  constructor(limit: number, windowMs: number) {
    this.inner = new MemoryWindow(limit, windowMs);
  }
  async reserve(messages: number, now: number): Promise<number> {
    this.asked++;
    await Promise.resolve();
    if (this.failing) throw new Error('store unreachable');
    return this.inner.reserve(messages, now);
  }
  async refund(messages: number): Promise<void> {
    await Promise.resolve();
    this.inner.refund(messages);
  }
}

/** Which acquires have resolved, by label, in the order they did. */
function passes(limiter: RateLimiter, labels: string[], order: string[]): Promise<unknown>[] {
  return labels.map((label) =>
    limiter.acquire(1).then(
      () => void order.push(label),
      (error: GatewayError) => void order.push(`${label}:${error.code}`),
    ),
  );
}

describe('rate limit (unit, fake clock)', () => {
  let clock: ReturnType<typeof FakeTimers.install>;
  beforeEach(() => {
    clock = FakeTimers.install({ toFake: ['setTimeout', 'clearTimeout', 'Date'] });
  });
  afterEach(() => clock.uninstall());

  it("this process's window: 2 per 1 s let 2 through at once, the third when the first leaves the window, in order", async () => {
    const limiter = new RateLimiter(2, 1_000, 10);
    const order: string[] = [];
    const all = passes(limiter, ['a', 'b', 'c', 'd'], order);
    await clock.tickAsync(0);
    assert.deepEqual(order, ['a', 'b']);
    assert.equal(limiter.queued, 2);
    await clock.tickAsync(999);
    assert.deepEqual(order, ['a', 'b'], 'not before the window has passed');
    await clock.tickAsync(2);
    assert.deepEqual(order, ['a', 'b', 'c', 'd']);
    await Promise.all(all);
    limiter.close('done');
  });

  it('the window answers 0 when it fits, else how long until the oldest leaves it', () => {
    const window = new MemoryWindow(2, 1_000);
    assert.equal(window.reserve(1, 10_000), 0);
    assert.equal(window.reserve(1, 10_400), 0);
    assert.equal(window.reserve(1, 10_500), 501, 'the first leaves at 11,000 (and 1 ms for the boundary)');
    window.refund(1);
    assert.equal(window.reserve(1, 10_500), 0, 'a refund frees the last slot');
    assert.equal(window.reserve(2, 11_000), 501, 'two do not fit before the one of 10,500 leaves');
    assert.equal(window.reserve(2, 11_501), 0);
  });

  it('a window that answers later (a shared store): the same limit and order, the window asked once per msg that passes', async () => {
    const window = new FarWindow(2, 1_000);
    const limiter = new RateLimiter(2, 1_000, 10, undefined, window);
    const order: string[] = [];
    const all = passes(limiter, ['a', 'b', 'c', 'd', 'e'], order);
    await clock.tickAsync(0);
    assert.deepEqual(order, ['a', 'b']);
    await clock.tickAsync(1_001);
    assert.deepEqual(order, ['a', 'b', 'c', 'd']);
    await clock.tickAsync(1_001);
    assert.deepEqual(order, ['a', 'b', 'c', 'd', 'e']);
    await Promise.all(all);
    assert.ok(window.asked >= 5 && window.asked <= 8, `asked ${window.asked} times`);
    limiter.close('done');
  });

  it('a window that answers later: a refund lets the head through; beyond the queue, refused', async () => {
    const window = new FarWindow(1, 60_000);
    const limiter = new RateLimiter(1, 60_000, 1, undefined, window);
    const order: string[] = [];
    const all = passes(limiter, ['a', 'b', 'c'], order);
    await clock.tickAsync(0);
    assert.deepEqual([...order].sort(), ['a', 'c:rate_limited'], 'b waits (the queue holds one); c is refused');
    limiter.refund(1);
    await clock.tickAsync(0);
    assert.equal(order.at(-1), 'b', 'the refunded slot lets b through without waiting a minute');
    await Promise.all(all);
    limiter.close('done');
  });

  it('a window that cannot answer: the msg asking is refused (closed, not sent), the next is asked again', async () => {
    const window = new FarWindow(5, 1_000);
    const limiter = new RateLimiter(5, 1_000, 10, undefined, window);
    const order: string[] = [];
    window.failing = true;
    const first = passes(limiter, ['a'], order);
    await clock.tickAsync(0);
    window.failing = false;
    const second = passes(limiter, ['b'], order);
    await clock.tickAsync(0);
    await Promise.all([...first, ...second]);
    assert.deepEqual(order, ['a:closed', 'b']);
    limiter.close('done');
  });

  it('one timer at most: a msg that leaves the queue and another that waits leave no timer behind once the limit is closed', async () => {
    const limiter = new RateLimiter(1, 60_000, 10);
    await limiter.acquire(1);
    const stop = new AbortGroup();
    const leaving = limiter.acquire(1, stop).catch((error: GatewayError) => error.code);
    stop.abort();
    assert.equal(await leaving, 'closed');
    const waiting = limiter.acquire(1).catch((error: GatewayError) => error.code);
    await clock.tickAsync(0);
    assert.equal(clock.countTimers(), 1, 'the window is waited for by one timer');
    limiter.close('done');
    assert.equal(await waiting, 'closed');
    assert.equal(clock.countTimers(), 0, 'nothing keeps the process alive');
  });
});

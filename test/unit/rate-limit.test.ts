/**
 * The account's rate limit on a fake clock: the sliding window of this process, and the same
 * queue over a window that answers asynchronously (as a shared store's does), with a stand-in
 * window that counts what it was asked.
 */
import assert from 'node:assert/strict';
import FakeTimers from '@sinonjs/fake-timers';
import { GatewayError } from '../../gateway';
import { listening } from '../../gateway/abort';
import { Circuit } from '../../nodes/account/circuit';
import { RateLimiter } from '../../nodes/account/rate-limit';
import { MemoryWindow, type RateWindow, type Reservation } from '../../nodes/account/store';

/** One send of `messages` at `now`: 0 when it fits, else the ms until the oldest leaves (a run of one). */
const reserve = async (window: MemoryWindow, messages: number, now: number) =>
  (await window.reserveInOrder([messages], now)).wait;

/** This process's window behind a promise, as a window kept elsewhere answers; `failing` makes it throw. */
class FarWindow implements RateWindow {
  readonly inner: MemoryWindow;
  asked = 0;
  failing = false;
  constructor(limit: number, windowMs: number) {
    this.inner = new MemoryWindow(limit, windowMs);
  }
  async reserveInOrder(sends: readonly number[], now: number): Promise<Reservation> {
    this.asked++;
    await Promise.resolve();
    if (this.failing) throw new Error('store unreachable');
    return this.inner.reserveInOrder(sends, now);
  }
  async refund(messages: number): Promise<void> {
    await Promise.resolve();
    await this.inner.refund(messages);
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
    clock = FakeTimers.install({ toFake: ['setTimeout', 'clearTimeout', 'Date', 'performance'] });
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

  it('the window answers 0 when it fits, else how long until the oldest leaves it', async () => {
    const window = new MemoryWindow(2, 1_000);
    assert.equal(await reserve(window, 1, 10_000), 0);
    assert.equal(await reserve(window, 1, 10_400), 0);
    assert.equal(await reserve(window, 1, 10_500), 501, 'the first leaves at 11,000 (and 1 ms for the boundary)');
    void window.refund(1); // counted at once; the promise only says so
    assert.equal(await reserve(window, 1, 10_500), 0, 'a refund frees the last slot');
    assert.equal(await reserve(window, 2, 11_000), 501, 'two do not fit before the one of 10,500 leaves');
    assert.equal(await reserve(window, 2, 11_501), 0);
  });

  it('a window that answers later (a shared store): the same limit and order; the window asked once for all that wait, not once per msg', async () => {
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
    // a alone; then b to e in one question (b passes); c to e when the window has room (c, d
    // pass); e at last.
    assert.equal(window.asked, 4);
    limiter.close('done');
  });

  it('a window that answers later: 20 msgs at once cost 2 questions (the first, then the 19 that came meanwhile), in order; one cancelled meanwhile gives its place back', async () => {
    const window = new FarWindow(100, 1_000);
    const limiter = new RateLimiter(100, 1_000, 50, undefined, window);
    const order: string[] = [];
    const labels = Array.from({ length: 20 }, (_, i) => `m${i}`);
    const all = passes(limiter, labels.slice(0, 10), order);
    const stop = new AbortController();
    all.push(
      limiter.acquire(1, stop.signal).then(
        () => void order.push('cancelled'),
        (error: GatewayError) => void order.push(`cancelled:${error.code}`),
      ),
    );
    all.push(...passes(limiter, labels.slice(10), order));
    stop.abort();
    await clock.tickAsync(0);
    await Promise.all(all);
    assert.deepEqual(order, ['cancelled:closed', ...labels]);
    assert.equal(window.asked, 2);
    assert.equal(
      await reserve(window.inner, 80, Date.now()),
      0,
      'the cancelled one reserved a place and gave it back: 80 more fit beside the 20',
    );
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

  it("a window that cannot answer: the refusal says why and that the gateway never saw the msg; a window's own GatewayError passes as it is; the account hears nothing (it never waited for the limit)", async () => {
    const window = new FarWindow(5, 1_000);
    let changes = 0;
    const limiter = new RateLimiter(5, 1_000, 10, () => changes++, window);
    window.failing = true;
    const giveUp = {
      at: performance.now() + 60_000,
      error: () => new GatewayError({ type: 'timeout', message: 'gave up' }),
    };
    const refused = limiter.acquire(1, undefined, undefined, giveUp).catch((error: unknown) => error);
    await clock.tickAsync(0);
    const error = (await refused) as GatewayError;
    assert.equal(error.message, 'Not sent: the rate limit could not be checked (store unreachable)');
    assert.deepEqual([error.code, error.retryable, error.mayHaveReached], ['closed', true, false]);
    assert.equal(changes, 0, 'it never waited for the limit: nothing to tell');
    assert.equal(clock.countTimers(), 0, 'its give-up timer is gone with it');
    const own = new GatewayError({ type: 'store_unavailable', retryable: true, message: 'the store is gone' });
    window.reserveInOrder = () => Promise.reject(own);
    const second = limiter.acquire(1).catch((e: unknown) => e);
    await clock.tickAsync(0);
    assert.equal(await second, own);
    limiter.close('done');
  });

  it('one timer at most: a msg that leaves the queue and another that waits leave no timer behind once the limit is closed', async () => {
    const limiter = new RateLimiter(1, 60_000, 10);
    await limiter.acquire(1);
    const stop = new AbortController();
    const leaving = limiter.acquire(1, stop.signal).catch((error: GatewayError) => error.code);
    stop.abort();
    assert.equal(await leaving, 'closed');
    const waiting = limiter.acquire(1).catch((error: GatewayError) => error.code);
    await clock.tickAsync(0);
    assert.equal(clock.countTimers(), 1, 'the window is waited for by one timer');
    limiter.close('done');
    assert.equal(await waiting, 'closed');
    assert.equal(clock.countTimers(), 0, 'nothing keeps the process alive');
  });
  it('the account is told when its queue changes: a msg starts waiting, passes, or is refused on close; never for one that passes at once', async () => {
    let changes = 0;
    const limiter = new RateLimiter(1, 1_000, 10, () => changes++);
    await limiter.acquire(1);
    assert.equal(changes, 0, 'passed at once');
    const second = limiter.acquire(1);
    await clock.tickAsync(0); // the window answers in a promise
    assert.equal(changes, 1, 'waits');
    await clock.tickAsync(1_001);
    await second;
    assert.equal(changes, 2, 'passed');
    const third = limiter.acquire(1).catch((error: GatewayError) => error.code);
    await clock.tickAsync(0);
    assert.equal(changes, 3);
    limiter.close('done');
    assert.equal(await third, 'closed');
    assert.equal(changes, 4, 'refused on close');
  });

  it('a msg that passed stops listening: its cancel signal and its circuit no longer reach the queue, and its give-up timer is gone', async () => {
    let changes = 0;
    const limiter = new RateLimiter(1, 1_000, 10, () => changes++);
    await limiter.acquire(1);
    const stop = new AbortController();
    const circuit = new Circuit();
    const giveUp = {
      at: performance.now() + 60_000,
      error: () => new GatewayError({ type: 'timeout', message: 'gave up' }),
    };
    const waiting = limiter.acquire(1, stop.signal, circuit.signal, giveUp);
    await clock.tickAsync(1_001);
    await waiting;
    assert.equal(changes, 2);
    assert.equal(clock.countTimers(), 0, 'no give-up timer left behind');
    assert.equal(listening(stop.signal) + listening(circuit.signal), 0, 'no listener left on either signal');
    stop.abort();
    circuit.trip('HTTP 503');
    await clock.tickAsync(0);
    assert.equal(changes, 2, 'nothing left the queue again');
    limiter.close('done');
  });

  it('strict order: a one-message msg behind a waiting two-message one does not overtake it, though it would fit', async () => {
    const limiter = new RateLimiter(2, 1_000, 10);
    const order: string[] = [];
    await limiter.acquire(1);
    const big = limiter.acquire(2).then(() => void order.push('big'));
    const small = limiter.acquire(1).then(() => void order.push('small'));
    await clock.tickAsync(0);
    assert.deepEqual(order, [], 'one place is free, but the big one is first');
    await clock.tickAsync(1_001);
    assert.deepEqual(order, ['big']);
    await clock.tickAsync(1_001);
    await Promise.all([big, small]);
    assert.deepEqual(order, ['big', 'small']);
    limiter.close('done');
  });

  describe('what the limit refuses, and what leaves its queue', () => {
    const refusal = (p: Promise<unknown>) =>
      p.then(
        () => undefined,
        (error: GatewayError) => error,
      );

    it('off (a limit or a window of 0): everything passes at once, and a refund is nothing', async () => {
      for (const limiter of [new RateLimiter(0, 1_000, 1), new RateLimiter(5, 0, 1)]) {
        assert.equal(limiter.enabled, false);
        for (let i = 0; i < 50; i++) await limiter.acquire(1000);
        limiter.refund(5);
        assert.equal(limiter.queued, 0);
      }
    });

    it('a request with more messages than the limit: refused at once, naming both', async () => {
      const limiter = new RateLimiter(5, 2_000, 10);
      const error = await refusal(limiter.acquire(6));
      assert.equal(error?.code, 'rate_limited');
      assert.equal(error?.message, "This request has 6 messages; the account's rate limit allows 5 per 2 s");
      await limiter.acquire(5);
      limiter.close('done');
    });

    it('a full queue: the next is refused (rate_limited), naming the limit and the queue; one fewer waits', async () => {
      const limiter = new RateLimiter(1, 1_000, 2);
      await limiter.acquire(1);
      const waiting = [limiter.acquire(1), limiter.acquire(1)];
      const error = await refusal(limiter.acquire(1));
      assert.equal(error?.message, 'Rate limit reached (1 per 1 s) and 2 messages already wait; this one was refused');
      assert.equal(limiter.queued, 2);
      limiter.close('done');
      await Promise.all(waiting.map(refusal));
    });

    it('closed: what waits and what comes later is refused as closed with the reason, never having reached the gateway', async () => {
      const changes: number[] = [];
      const limiter = new RateLimiter(1, 1_000, 5, () => changes.push(limiter.queued));
      await limiter.acquire(1);
      const waiting = refusal(limiter.acquire(1));
      await clock.tickAsync(0); // the window answers in a promise
      assert.deepEqual(changes, [1]);
      limiter.close('the account node was closed');
      const error = await waiting;
      assert.deepEqual(
        [error?.code, error?.message, error?.retryable, error?.mayHaveReached],
        ['closed', 'Not sent: the account node was closed', true, false],
      );
      assert.deepEqual(changes, [1, 0]);
      assert.equal((await refusal(limiter.acquire(1)))?.message, 'Not sent: the account node was closed');
      assert.equal(clock.countTimers(), 0);
    });

    it('a cancelled request: refused before it waits, or leaves the queue when cancelled while waiting', async () => {
      const limiter = new RateLimiter(1, 1_000, 5);
      const cancelled = new AbortController();
      cancelled.abort();
      assert.equal(
        (await refusal(limiter.acquire(1, cancelled.signal)))?.message,
        'Not sent: the request was cancelled',
      );
      await limiter.acquire(1);
      const later = new AbortController();
      const waiting = refusal(limiter.acquire(1, later.signal));
      const behind = limiter.acquire(1);
      await clock.tickAsync(0); // the window answers in a promise
      assert.equal(limiter.queued, 2);
      later.abort();
      assert.equal((await waiting)?.code, 'closed');
      assert.equal(limiter.queued, 1);
      await clock.tickAsync(1_001);
      await behind;
      limiter.close('done');
    });

    it('the circuit: open, a msg is held at once (network, for the outbox); opening while one waits sends it there too', async () => {
      const limiter = new RateLimiter(1, 1_000, 5);
      const circuit = new Circuit();
      await limiter.acquire(1, undefined, circuit.signal);
      const waiting = refusal(limiter.acquire(1, undefined, circuit.signal));
      circuit.trip('HTTP 503');
      const held = await waiting;
      assert.deepEqual([held?.code, held?.mayHaveReached], ['network', false]);
      assert.equal(limiter.queued, 0);
      assert.equal((await refusal(limiter.acquire(1, undefined, circuit.signal)))?.code, 'network');
      circuit.reset('answered');
      await clock.tickAsync(1_001);
      await limiter.acquire(1, undefined, circuit.signal);
      limiter.close('done');
    });

    it("a msg's give-up time passes while it waits: it ends then with its own error, not a moment before", async () => {
      const limiter = new RateLimiter(1, 10_000, 5);
      await limiter.acquire(1);
      const expired = new GatewayError({ type: 'expired', message: 'not sent in time' });
      let ended: GatewayError | undefined;
      void limiter
        .acquire(1, undefined, undefined, { at: performance.now() + 3_000, error: () => expired })
        .catch((e: GatewayError) => (ended = e));
      await clock.tickAsync(2_999);
      assert.equal(ended, undefined);
      assert.equal(limiter.queued, 1);
      await clock.tickAsync(1);
      assert.equal(ended, expired);
      assert.equal(limiter.queued, 0);
      limiter.close('done');
    });

    it('a refund lets the head of the queue through at once (a probe that never reached the gateway does not use the limit)', async () => {
      const limiter = new RateLimiter(1, 10_000, 5);
      await limiter.acquire(1);
      let passed = false;
      void limiter.acquire(1).then(() => (passed = true));
      await clock.tickAsync(100);
      assert.equal(passed, false);
      limiter.refund(0);
      await clock.tickAsync(0);
      assert.equal(passed, false, 'a refund of nothing frees nothing');
      limiter.refund(1);
      await clock.tickAsync(0);
      assert.equal(passed, true);
      limiter.close('done');
    });
  });
});

const DAY = 24 * 3600 * 1000;

/** A window kept elsewhere whose own clock is the wall clock (a shared store's server, stepped with this host). */
class WallWindow extends FarWindow {
  override async reserveInOrder(sends: readonly number[]): Promise<Reservation> {
    return super.reserveInOrder(sends, Date.now());
  }
}

describe('rate limit across clock steps (unit, fake clock: the wall clock steps, timers and the monotonic clock do not)', () => {
  let clock: ReturnType<typeof FakeTimers.install>;
  beforeEach(() => {
    clock = FakeTimers.install({
      toFake: ['setTimeout', 'clearTimeout', 'Date', 'performance'],
      now: Date.parse('2026-11-25T10:00:00Z'),
    });
  });
  afterEach(() => clock.uninstall());

  it('a step back of 30 days with a queued msg: the window is asked a bounded number of times (no timer past the 24.8-day limit, which fires after 1 ms), and a give-up time is not ended early', async () => {
    const window = new WallWindow(1, 60_000);
    const limiter = new RateLimiter(1, 60_000, 10, () => undefined, window);
    await limiter.acquire(1);
    const order: string[] = [];
    void passes(limiter, ['b'], order);
    await clock.tickAsync(0);
    clock.setSystemTime(Date.now() - 30 * DAY);
    const expired = new GatewayError({ type: 'expired', message: 'not sent in time' });
    void limiter.acquire(1, undefined, undefined, { at: Date.now() + 30 * DAY + 600_000, error: () => expired }).then(
      () => void order.push('c'),
      (error: GatewayError) => void order.push(`c:${error.code}`),
    );
    const before = window.asked;
    await clock.tickAsync(120_000);
    assert.ok(window.asked - before <= 3, `asked ${window.asked - before} times in 2 minutes`);
    assert.deepEqual(
      order,
      [],
      'b waits for the window (its store says 30 days), c behind it, its give-up time not reached',
    );
    limiter.close('done');
  });

  it("a step back of an hour: this process's window still admits at its rate (2 per 1 s)", async () => {
    const limiter = new RateLimiter(2, 1_000, 10);
    const order: string[] = [];
    const all = passes(limiter, ['a', 'b', 'c', 'd'], order);
    await clock.tickAsync(0);
    assert.deepEqual(order, ['a', 'b']);
    clock.setSystemTime(Date.now() - 3600_000);
    await clock.tickAsync(1_001);
    assert.deepEqual(order, ['a', 'b', 'c', 'd'], 'the window passed, on the clock that does not step');
    await Promise.all(all);
    limiter.close('done');
  });

  it('a step forward of a year: the window holds (no burst), and a msg waiting with a give-up time is not ended untried', async () => {
    const limiter = new RateLimiter(2, 1_000, 10);
    const order: string[] = [];
    void passes(limiter, ['a', 'b'], order);
    await clock.tickAsync(0);
    clock.setSystemTime(Date.now() + 365 * DAY);
    const expired = new GatewayError({ type: 'expired', message: 'not sent in time' });
    const giveUp = { at: performance.now() + 600_000, error: () => expired };
    const later = ['c', 'd'].map((label) =>
      limiter.acquire(1, undefined, undefined, giveUp).then(
        () => void order.push(label),
        (error: GatewayError) => void order.push(`${label}:${error.code}`),
      ),
    );
    await clock.tickAsync(500);
    assert.deepEqual(order, ['a', 'b'], 'c and d wait for the window: a year on the wall clock is not a second passed');
    await clock.tickAsync(501);
    assert.deepEqual(order, ['a', 'b', 'c', 'd']);
    await Promise.all(later);
    limiter.close('done');
  });
});

describe('rate limit past the timer limit (real timers: Node warns of a wait past 2^31-1 ms)', () => {
  it('a window that answers a wait of 30 days, and a give-up time 30 days on: no TimeoutOverflowWarning, no question asked again, nothing ended', async () => {
    const warnings: Error[] = [];
    const onWarning = (warning: Error) => void warnings.push(warning);
    process.on('warning', onWarning);
    let asked = 0;
    const window: RateWindow = {
      reserveInOrder: async () => (asked++ === 0 ? { passed: 1, wait: 0 } : { passed: 0, wait: 30 * DAY }),
      refund: async () => undefined,
    };
    const limiter = new RateLimiter(1, 60_000, 10, () => undefined, window);
    try {
      await limiter.acquire(1);
      let ended: unknown;
      void limiter
        .acquire(1, undefined, undefined, {
          at: Date.now() + 30 * DAY,
          error: () => new GatewayError({ type: 'expired', message: 'late' }),
        })
        .then(
          () => (ended = 'passed'),
          (error: unknown) => (ended = error),
        );
      await new Promise((resolve) => setTimeout(resolve, 50));
      assert.deepEqual(
        warnings.map((w) => w.name),
        [],
      );
      assert.equal(asked, 2, 'asked once for the first, once for the second');
      assert.equal(ended, undefined);
    } finally {
      limiter.close('done');
      process.off('warning', onWarning);
    }
  });
});

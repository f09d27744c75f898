/**
 * The wall clock steps (NTP sets a Raspberry Pi without a real-time clock after boot), on a fake
 * clock: `setSystemTime` moves Date.now and leaves the monotonic clock and the
 * timers alone, as a step does. Four rows: forward a year, forward an hour with tracked sends, back
 * an hour, back 30 days: nothing kept is expired untried, output 3 neither early nor late, the rate
 * limit holds its window, and no timer is armed past Node's limit.
 */
import assert from 'node:assert/strict';
import FakeTimers from '@sinonjs/fake-timers';
import { GatewayError, MAX_TIMER_MS, monotonicAt, sendOperation } from '../../gateway';
import { Outbox, type NewEntry, type OutboxEntry, type OutboxWorker, type Outcome } from '../../nodes/account/outbox';
import { RateLimiter } from '../../nodes/account/rate-limit';
import { RecentSends } from '../../nodes/account/recent-sends';
import { DeliveryTracker, memoryTracking, type Tracked } from '../../nodes/account/tracking';

const SECOND = 1000;
const MINUTE = 60 * SECOND;
const HOUR = 60 * MINUTE;
const DAY = 24 * HOUR;
const YEAR = 365 * DAY;
const OPERATION = sendOperation('transactional', {});

function entry(seq: number, overrides: Partial<NewEntry> = {}): NewEntry {
  return {
    node: 't',
    operation: OPERATION,
    body: { number: '420777123456', text: `Alert ${seq}` },
    rejected: [],
    messages: 1,
    msg: { seq },
    since: Date.now(),
    order: seq,
    attempts: 1,
    reason: 'HTTP 503',
    ...overrides,
  };
}

/** An account of 60 minutes' outbox whose gateway is away while `away()`; what it sent and settled, in order. */
function account(away: () => boolean) {
  const sent: unknown[] = [];
  const settled: { seq: unknown; code: string }[] = [];
  const worker: OutboxWorker = {
    minutes: 60,
    firstDelay: SECOND,
    size: 1_000,
    account: 'home',
    concurrency: 3,
    report: () => undefined,
    transient: (error) => error instanceof GatewayError && error.retryable,
    send: async (e: OutboxEntry) => {
      sent.push(e.msg.seq);
      if (away()) throw new GatewayError({ type: 'network', retryable: true, message: 'connect ECONNREFUSED' });
      return { record: { status: 'accepted', number: String(e.body.number) }, rejected: false } as never;
    },
    settle: (e: OutboxEntry, _msg, outcome: Outcome) =>
      void settled.push({ seq: e.msg.seq, code: 'result' in outcome ? 'sent' : outcome.error.code }),
  };
  return { worker, sent, settled };
}

const sent = (i: number) => ({ topic: `t${i}`, payload: i, node: 'n' });

describe('the wall clock steps (unit, fake clock)', () => {
  let clock: ReturnType<typeof FakeTimers.install>;
  /** Every wait a timer was armed with: none past Node's limit (Node fires one after 1 ms, with a TimeoutOverflowWarning). */
  let waits: number[];
  let realSetTimeout: typeof setTimeout;
  beforeEach(() => {
    clock = FakeTimers.install({
      toFake: [
        'setTimeout',
        'clearTimeout',
        'setInterval',
        'clearInterval',
        'setImmediate',
        'clearImmediate',
        'Date',
        'performance',
      ],
    });
    realSetTimeout = globalThis.setTimeout;
    waits = [];
    globalThis.setTimeout = ((fire: () => void, ms?: number, ...rest: unknown[]) => {
      waits.push(ms ?? 0);
      return realSetTimeout(fire, ms, ...rest);
    }) as typeof setTimeout;
  });
  afterEach(() => {
    globalThis.setTimeout = realSetTimeout;
    clock.uninstall();
  });
  const step = (by: number) => clock.setSystemTime(Date.now() + by);
  const noTimerPastTheLimit = () =>
    assert.deepEqual(
      waits.filter((ms) => ms > MAX_TIMER_MS),
      [],
    );

  describe('forward a year', () => {
    it('alerts kept before the step are sent once the gateway answers, not expired untried; a give-up time still counts its own seconds', async () => {
      let away = true;
      const { worker, sent: tried, settled } = account(() => away);
      const outbox = new Outbox(undefined, () => undefined);
      for (let i = 1; i <= 10; i++)
        await outbox.keep(entry(i, i > 5 ? { deadline: Date.now() + 600 * SECOND } : {}), {});
      outbox.attach(worker);
      await clock.tickAsync(MINUTE);
      assert.equal(settled.length, 0, 'the gateway is away: all wait');
      step(YEAR);
      const before = tried.length;
      away = false;
      await clock.tickAsync(25 * SECOND);
      assert.deepEqual(
        settled.map((s) => `${s.seq}:${s.code}`),
        ['1:sent', '2:sent', '3:sent', '4:sent', '5:sent', '6:sent', '7:sent', '8:sent', '9:sent', '10:sent'],
      );
      assert.equal(tried.length - before, 10, 'each tried again after the step');
      await outbox.detach(worker);
      noTimerPastTheLimit();
    });

    it('the gateway still away: the kept ones end on the monotonic clock, the give-up ones after 600 s, the rest after the outbox time', async () => {
      const { worker, settled } = account(() => true);
      const outbox = new Outbox(undefined, () => undefined);
      for (let i = 1; i <= 4; i++)
        await outbox.keep(entry(i, i > 2 ? { deadline: Date.now() + 600 * SECOND } : {}), {});
      outbox.attach(worker);
      await clock.tickAsync(SECOND);
      step(YEAR);
      await clock.tickAsync(598 * SECOND);
      assert.equal(settled.length, 0, 'not one ends at the step');
      await clock.tickAsync(2 * SECOND);
      assert.deepEqual(
        settled.map((s) => `${s.seq}:${s.code}`),
        ['3:expired', '4:expired'],
      );
      await clock.tickAsync(60 * MINUTE - 602 * SECOND);
      assert.equal(settled.length, 2, 'the outbox time (60 minutes) has not passed');
      await clock.tickAsync(2 * SECOND);
      assert.deepEqual(
        settled.map((s) => `${s.seq}:${s.code}`),
        ['3:expired', '4:expired', '1:expired', '2:expired'],
      );
      await outbox.detach(worker);
    });

    it("tracked sends are not forgotten (24 hours are not over): output 3 fires at each one's timeout", () => {
      const tracker = new DeliveryTracker(memoryTracking());
      const late: string[] = [];
      tracker.listen({}, 10 * MINUTE, (t: Tracked) => late.push(t.smsId));
      tracker.track('a', '420777000001', sent(1));
      clock.tick(MINUTE);
      tracker.track('b', '420777000002', sent(2));
      step(YEAR);
      tracker.track('c', '420777000003', sent(3));
      clock.tick(9 * MINUTE - 1);
      assert.deepEqual(late, []);
      clock.tick(1);
      assert.deepEqual(late, ['a']);
      clock.tick(MINUTE);
      assert.deepEqual(late, ['a', 'b', 'c']);
    });
  });

  describe('forward an hour with tracked sends', () => {
    it('no early no_report: each send fires at its own timeout, once, however the wall clock stepped between', () => {
      const tracker = new DeliveryTracker(memoryTracking());
      const late: string[] = [];
      tracker.listen({}, 30 * MINUTE, (t: Tracked) => late.push(t.smsId));
      for (const id of ['a', 'b', 'c', 'd', 'e']) {
        tracker.track(id, '420777000001', sent(1));
        clock.tick(MINUTE);
      }
      step(HOUR);
      tracker.track('f', '420777000009', sent(9));
      clock.tick(25 * MINUTE);
      assert.deepEqual(late, ['a'], 'a is 30 minutes old; b to e 26 to 29, f 25: not theirs yet');
      clock.tick(4 * MINUTE);
      assert.deepEqual(late, ['a', 'b', 'c', 'd', 'e']);
      clock.tick(MINUTE);
      assert.deepEqual(late, ['a', 'b', 'c', 'd', 'e', 'f']);
      clock.tick(DAY);
      assert.equal(late.length, 6, 'once each');
    });

    it('scheduled sends: each fires at its own schedule and timeout, in the order they fall due, the step between them not counted', () => {
      const tracker = new DeliveryTracker(memoryTracking());
      const late: string[] = [];
      tracker.listen({}, 5 * MINUTE, (t: Tracked) => late.push(t.smsId));
      tracker.track('in-20', '420777000001', sent(1), Date.now() + 20 * MINUTE);
      step(HOUR);
      tracker.track('in-10', '420777000002', sent(2), Date.now() + 10 * MINUTE);
      clock.tick(15 * MINUTE);
      assert.deepEqual(late, ['in-10']);
      clock.tick(10 * MINUTE);
      assert.deepEqual(late, ['in-10', 'in-20']);
    });

    it('the 24 hours tracking remembers run on the monotonic clock: still known after the step, forgotten 24 hours after the send', async () => {
      const tracker = new DeliveryTracker(memoryTracking());
      tracker.listen({}, 0, () => undefined);
      tracker.track('a', '420777000001', sent(1));
      step(2 * HOUR);
      clock.tick(23 * HOUR);
      assert.ok(await tracker.report('a', 'buffered'), 'known 23 hours after its send (25 by the wall clock)');
      clock.tick(HOUR + 1);
      assert.equal(await tracker.report('a', 'delivered'), undefined);
    });

    it("the gateway's duplicate window (5 minutes) holds: an sms_id got again a minute later is still a dropped copy", () => {
      const recent = new RecentSends();
      assert.equal(recent.seenBefore('sms-1'), false);
      step(HOUR);
      clock.tick(MINUTE);
      assert.equal(recent.seenBefore('sms-1'), true);
      clock.tick(5 * MINUTE);
      assert.equal(recent.seenBefore('sms-1'), false, 'after the window, not');
    });
  });

  describe('back an hour', () => {
    it('the rate limit holds its window: the next passes after it, not an hour later', async () => {
      const limiter = new RateLimiter(1, 10 * SECOND, 10);
      await limiter.acquire(1);
      step(-HOUR);
      let passed = false;
      void limiter.acquire(1).then(() => (passed = true));
      await clock.tickAsync(10 * SECOND - 1);
      assert.equal(passed, false, 'not before the window has passed');
      await clock.tickAsync(2);
      assert.equal(passed, true);
      limiter.close('done');
    });

    it('an alert kept after the step goes behind those kept before it; what was kept ends after the outbox time, not an hour more', async () => {
      const { worker, settled } = account(() => true);
      const outbox = new Outbox(undefined, () => undefined);
      await outbox.keep(entry(1), {});
      await outbox.keep(entry(2), {});
      step(-HOUR);
      await outbox.keep(entry(3), {});
      outbox.attach(worker);
      await clock.tickAsync(60 * MINUTE + SECOND);
      assert.deepEqual(
        settled.map((s) => `${s.seq}:${s.code}`),
        ['1:expired', '2:expired', '3:expired'],
        'in the order they came, each after its 60 minutes',
      );
      await outbox.detach(worker);
    });

    it('output 3 fires at the timeout, not an hour late', () => {
      const tracker = new DeliveryTracker(memoryTracking());
      const late: string[] = [];
      tracker.listen({}, 10 * MINUTE, (t: Tracked) => late.push(t.smsId));
      tracker.track('a', '420777000001', sent(1));
      step(-HOUR);
      tracker.track('b', '420777000002', sent(2));
      clock.tick(10 * MINUTE);
      assert.deepEqual(late, ['a', 'b']);
    });
  });

  describe('back 30 days', () => {
    it('a kept alert ends after the outbox time, not 30 days later; no timer armed past the limit, no round that repeats at once', async () => {
      const { worker, sent: tried, settled } = account(() => true);
      const outbox = new Outbox(undefined, () => undefined);
      await outbox.keep(entry(1), {});
      outbox.attach(worker);
      await clock.tickAsync(SECOND);
      step(-30 * DAY);
      await clock.tickAsync(60 * MINUTE);
      assert.deepEqual(
        settled.map((s) => `${s.seq}:${s.code}`),
        ['1:expired'],
      );
      // One probe at a time, 15 s apart at most: about 240 in the hour, not a flood.
      assert.ok(tried.length <= 250, `${tried.length} tries in the hour`);
      await outbox.detach(worker);
      noTimerPastTheLimit();
    });

    it('output 3 fires at the timeout; the rate limit holds its window', async () => {
      const tracker = new DeliveryTracker(memoryTracking());
      const late: string[] = [];
      tracker.listen({}, 10 * MINUTE, (t: Tracked) => late.push(t.smsId));
      tracker.track('a', '420777000001', sent(1));
      const limiter = new RateLimiter(1, 10 * SECOND, 10);
      await limiter.acquire(1);
      step(-30 * DAY);
      let passed = false;
      void limiter.acquire(1).then(() => (passed = true));
      await clock.tickAsync(10 * SECOND + 1);
      assert.equal(passed, true);
      await clock.tickAsync(10 * MINUTE);
      assert.deepEqual(late, ['a']);
      limiter.close('done');
      noTimerPastTheLimit();
    });
  });

  describe('a stored time read by a new process (monotonicAt)', () => {
    it('its age at the first look, then monotonic; a time in the future is now; the same times come out alike', () => {
      const now = performance.now();
      assert.equal(monotonicAt(Date.now() - HOUR), now - HOUR, 'an hour old (a power cut counts)');
      assert.equal(monotonicAt(Date.now() + HOUR), now, 'from the future (the clock stepped back since): age 0');
      const written = Date.now() - MINUTE;
      const first = monotonicAt(written);
      clock.tick(5 * SECOND);
      step(HOUR);
      assert.equal(
        monotonicAt(written),
        first - HOUR,
        'read again after a step forward: that much older, as a new process would see it',
      );
    });
  });
});

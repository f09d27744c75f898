/**
 * The outbox's rounds and rules (unit, a stand-in account, in memory): what a round sends and in
 * which order, how many at once, what ends a message (a refusal ends it, a transient failure keeps
 * it), its bound, and the errors and msgs it hands back.
 */
import assert from 'node:assert/strict';
import FakeTimers from '@sinonjs/fake-timers';
import { GatewayError, isWithdrawn, sendOperation } from '../../gateway';
import {
  DEFAULT_OUTBOX_SIZE,
  MAX_PROBE_DELAY,
  Outbox,
  deferrable,
  expiredError,
  fullError,
  giveUpError,
  outboxFor,
  storableMsg,
  type NewEntry,
  type OutboxEntry,
  type OutboxReport,
  type OutboxWorker,
  type Outcome,
} from '../../nodes/account/outbox';
import { FileOutboxLog } from '../../nodes/account/outbox-journal';
import { RedisOutboxLog } from '../../nodes/account/redis-store';
import { localStore, type LoggedEntry, type OutboxLog } from '../../nodes/account/store';
import { until as waitUntil } from '../support/wait';

const OPERATION = sendOperation('transactional', {});
/**
 * When the msgs were taken: a minute ago (an hour later they would have run out of time). Not the module's load time: a
 * test run alone comes within milliseconds of it, and `BASE + 50` would be in the future (taken as now, at each keep).
 */
const BASE = Date.now() - 60_000;

function newEntry(i: number, overrides: Partial<NewEntry> = {}): NewEntry {
  return {
    node: 't',
    operation: OPERATION,
    body: { number: '420777123456', text: `Alert ${i}` },
    rejected: [],
    messages: 1,
    msg: { payload: `Alert ${i}`, seq: i },
    since: BASE + i,
    order: 0,
    attempts: 1,
    reason: 'HTTP 503',
    ...overrides,
  };
}

const unreachable = () => new GatewayError({ type: 'network', retryable: true, message: 'connect ECONNREFUSED' });

/** A stand-in account: `answer(entry, probe)` decides each send; it records what was sent, what settled and what it was told. */
function standIn(answer: (entry: OutboxEntry, probe: boolean) => 'ok' | GatewayError, concurrency = 3) {
  const sent: { seq: unknown; probe: boolean; attempts: number }[] = [];
  const settled: { seq: unknown; outcome: Outcome }[] = [];
  // `empty` when the gateway answered the last waiting one; `nothing answered` when it gave up or was discarded.
  const reports: (OutboxReport['kind'] | 'nothing answered')[] = [];
  let inFlight = 0;
  let most = 0;
  const worker: OutboxWorker = {
    minutes: 60,
    firstDelay: 5,
    size: 1_000,
    account: 'home',
    concurrency,
    report: (report) => reports.push(report.kind === 'empty' && !report.answered ? 'nothing answered' : report.kind),
    transient: (error) => error instanceof GatewayError && error.retryable,
    send: async (entry, probe) => {
      inFlight++;
      most = Math.max(most, inFlight);
      sent.push({ seq: entry.msg.seq, probe, attempts: entry.attempts });
      // The answer comes a turn of the event loop later: the sends of a round overlap, as on the wire.
      await new Promise((r) => setImmediate(r));
      inFlight--;
      const result = answer(entry, probe);
      if (result !== 'ok') throw result;
      return { record: { status: 'accepted', number: String(entry.body.number) }, rejected: false } as never;
    },
    settle: (_entry, msg, outcome) => void settled.push({ seq: msg.seq, outcome }),
  };
  return { worker, sent, settled, reports, most: () => most };
}

const until = (what: string, check: () => boolean, ms = 5_000) => waitUntil(what, check, ms, { every: 5 });

describe('the outbox (unit, a stand-in account)', () => {
  it('a round: the oldest probes alone, then the rest follow oldest first, at most `concurrency` at once; results in the order the msgs came', async () => {
    const outbox = new Outbox(undefined, () => undefined);
    const { worker, sent, settled, most } = standIn(() => 'ok', 3);
    for (const i of [3, 1, 2, 5, 4, 6, 7]) await outbox.keep(newEntry(i), {});
    outbox.attach(worker);
    await until('all settled', () => settled.length === 7);
    assert.deepEqual(
      sent.map((s) => [s.seq, s.probe]),
      [
        [1, true],
        [2, false],
        [3, false],
        [4, false],
        [5, false],
        [6, false],
        [7, false],
      ],
    );
    assert.equal(most(), 3);
    assert.deepEqual(
      settled.map((s) => s.seq),
      [1, 2, 3, 4, 5, 6, 7],
    );
    assert.equal(outbox.waiting, 0);
    assert.deepEqual(
      sent.map((s) => s.attempts),
      [2, 2, 2, 2, 2, 2, 2],
      'each attempt counted: kept after one, sent again once',
    );
    await outbox.detach(worker);
  });

  it('msgs taken in the same millisecond keep the order they were taken in', async () => {
    const outbox = new Outbox(undefined, () => undefined);
    const { worker, settled } = standIn(() => 'ok');
    for (const order of [2, 0, 1]) await outbox.keep(newEntry(order, { since: BASE + 50, order }), {});
    outbox.attach(worker);
    await until('all settled', () => settled.length === 3);
    assert.deepEqual(
      settled.map((s) => s.seq),
      [0, 1, 2],
    );
    await outbox.detach(worker);
  });

  it('a probe that fails leaves everything waiting, in order, and is told to the account; so is the next that gets through, and then that nothing waits', async () => {
    const outbox = new Outbox(undefined, () => undefined);
    let away = true;
    const { worker, sent, settled, reports } = standIn(() => (away ? unreachable() : 'ok'));
    for (let i = 1; i <= 3; i++) await outbox.keep(newEntry(i), {});
    outbox.attach(worker);
    await until('a probe', () => sent.length === 1);
    await until('the failed probe told', () => reports.at(-1) === 'probe-failed');
    assert.equal(outbox.waiting, 3);
    assert.deepEqual(settled, []);
    away = false;
    await until('all settled', () => settled.length === 3, 10_000);
    assert.deepEqual(reports.slice(-2), ['probe-through', 'empty']);
    assert.ok(
      reports.slice(0, -2).every((kind) => kind === 'probe-failed'),
      `only failed probes before: ${reports.join()}`,
    );
    const probes = sent.filter((s) => s.probe);
    assert.ok(probes.length >= 2 && probes.every((s) => s.seq === 1), 'only the oldest probes, once per round');
    assert.deepEqual(
      sent.filter((s) => !s.probe).map((s) => s.seq),
      [2, 3],
      'the rest follow the probe that got through',
    );
    await outbox.detach(worker);
  });

  it('the last waiting msg gives up while the gateway is away: the account hears that nothing waits, and that nothing answered', async () => {
    const outbox = new Outbox(undefined, () => undefined);
    const { worker, settled, reports } = standIn(() => unreachable());
    await outbox.keep(newEntry(1, { deadline: Date.now() + 300 }), {});
    outbox.attach(worker);
    await until('the failed probe told', () => reports.includes('probe-failed'));
    await until('given up', () => settled.length === 1);
    assert.equal((settled[0]?.outcome as { error: GatewayError }).error.code, 'expired');
    assert.equal(
      reports.at(-1),
      'nothing answered',
      'the account closes the circuit as "nothing waits", not "reachable again"',
    );
    await outbox.detach(worker);
  });

  it('a refusal a repeat cannot fix ends that message (its error to its node); a transient failure after the probe stops the round and keeps the rest', async () => {
    const outbox = new Outbox(undefined, () => undefined);
    const lowCredit = new GatewayError({ type: 'low_credit', status: 400, message: 'There is not enough credit' });
    let failAt4 = true;
    const { worker, sent, settled, reports } = standIn((entry) => {
      if (entry.msg.seq === 2) return lowCredit;
      if (entry.msg.seq === 4 && failAt4) return unreachable();
      return 'ok';
    }, 1);
    for (let i = 1; i <= 5; i++) await outbox.keep(newEntry(i), {});
    outbox.attach(worker);
    await until(
      'the unreachable one to end the round',
      () => settled.length === 3 && reports.at(-1) === 'probe-failed',
    );
    assert.ok(!sent.some((s) => s.seq === 5), '5 not tried after the unreachable one');
    assert.deepEqual(
      settled.map((s) => [s.seq, 'error' in s.outcome ? s.outcome.error.code : 'sent']),
      [
        [1, 'sent'],
        [2, 'low_credit'],
        [3, 'sent'],
      ],
    );
    assert.equal(outbox.waiting, 2, '4 failed for now, 5 was not tried after it');
    failAt4 = false;
    await until('all settled', () => settled.length === 5, 10_000);
    assert.deepEqual(
      settled.slice(3).map((s) => s.seq),
      [4, 5],
    );
    await outbox.detach(worker);
  });

  it("bounded: the outbox of the account's size refuses the next with outbox_full, naming the account and the size; per node counts", async () => {
    const outbox = new Outbox(undefined, () => undefined);
    const { worker: standInWorker } = standIn(() => unreachable());
    const worker = { ...standInWorker, size: 2, firstDelay: 60_000 };
    outbox.attach(worker);
    await outbox.keep(newEntry(1), {});
    await outbox.keep(newEntry(2, { node: 'other' }), {});
    const error = await outbox.keep(newEntry(3), {}).then(
      () => undefined,
      (e: GatewayError) => e,
    );
    assert.equal(error?.code, 'outbox_full');
    assert.equal(error?.message, fullError(2, 'home').message);
    assert.deepEqual(
      [outbox.waiting, outbox.waitingFor('t'), outbox.waitingFor('other'), outbox.waitingFor('none')],
      [2, 1, 1, 0],
    );
    await outbox.detach(worker);
    const emptied = await outbox.empty(() => new GatewayError({ type: 'discarded', message: 'removed' }));
    assert.equal(emptied, 2);
    assert.equal(outbox.waiting, 0);
  });

  it('keeping a msg in memory (no user directory) warns once; every change of what waits is told to its watchers', async () => {
    const warned: string[] = [];
    const outbox = new Outbox(undefined, (key) => warned.push(key));
    assert.equal(outbox.persistent, false);
    const seen: number[] = [];
    const stop = outbox.watch(() => seen.push(outbox.waiting));
    await outbox.keep(newEntry(1), {});
    await outbox.keep(newEntry(2), {});
    stop();
    await outbox.keep(newEntry(3), {});
    assert.deepEqual(warned, ['outbox-memory-only']);
    assert.deepEqual(seen, [1, 2]);
  });

  it("thousands that gave up while others wait (the list swept of them): the rest still go oldest first, and each node's count is right", async function () {
    this.timeout(20_000);
    const outbox = new Outbox(undefined, () => undefined);
    let reachable = false;
    const { worker, settled } = standIn(() => (reachable ? 'ok' : unreachable()), 8);
    const soon = Date.now() + 30;
    for (let i = 0; i < 3000; i++)
      await outbox.keep(newEntry(i, i % 3 === 0 ? { node: 'keeper' } : { node: 'quick', deadline: soon }), {});
    assert.deepEqual([outbox.waitingFor('keeper'), outbox.waitingFor('quick')], [1000, 2000]);
    outbox.attach(worker);
    try {
      await until('the quick ones gave up', () => settled.length === 2000);
      assert.deepEqual([outbox.waiting, outbox.waitingFor('keeper'), outbox.waitingFor('quick')], [1000, 1000, 0]);
      reachable = true;
      await until('the rest sent', () => settled.length === 3000, 15_000);
      assert.deepEqual(
        settled.slice(2000).map((s) => s.seq),
        Array.from({ length: 1000 }, (_, k) => k * 3),
      );
      assert.deepEqual([outbox.waiting, outbox.waitingFor('keeper')], [0, 0]);
    } finally {
      await outbox.detach(worker);
    }
  });

  it('a result that ends while no account is attached (a redeploy between detach and attach) is handed to the next one, not dropped', async () => {
    const outbox = new Outbox(undefined, () => undefined);
    const first = standIn(() => 'ok');
    let answer: () => void = () => undefined;
    const onWire = new Promise<void>((wired) => {
      first.worker.send = () =>
        new Promise((resolve) => {
          answer = () => resolve({ record: { status: 'accepted', number: '420777123456' }, rejected: false } as never);
          wired();
        });
    });
    await outbox.keep(newEntry(1), {});
    outbox.attach(first.worker);
    await onWire;
    const detached = outbox.detach(first.worker);
    answer();
    await detached;
    assert.deepEqual(first.settled, [], 'detached: not handed to the account that left');
    assert.equal(outbox.waiting, 0);
    const next = standIn(() => 'ok');
    outbox.attach(next.worker);
    await until('handed to the next account', () => next.settled.length === 1);
    assert.equal(next.settled[0]?.seq, 1);
    assert.ok('result' in (next.settled[0]?.outcome ?? {}));
    await outbox.detach(next.worker);
  });

  it('a simple 1.0 resend cut off by a redeploy (no answer within the grace): the next account gets it as unconfirmed, not as closed and never sent again', async () => {
    const outbox = new Outbox(undefined, () => undefined);
    const simple = sendOperation('transactional', { api: 'simple', version: '1.0' });
    const first = standIn(() => 'ok');
    first.worker.transient = (error, entry) => deferrable(error, entry.operation);
    let cutOff: () => void = () => undefined;
    const onWire = new Promise<void>((wired) => {
      first.worker.send = () =>
        new Promise((_resolve, reject) => {
          // What the client says when the account stops a request on the wire: closed, and it may have reached the gateway.
          cutOff = () =>
            reject(
              Object.assign(new GatewayError({ type: 'closed', retryable: true, message: 'closed' }), {
                mayHaveReached: true,
              }),
            );
          wired();
        });
    });
    await outbox.keep(newEntry(1, { operation: simple }), {});
    outbox.attach(first.worker);
    await onWire;
    const detached = outbox.detach(first.worker);
    cutOff();
    await detached;
    const next = standIn(() => 'ok');
    outbox.attach(next.worker);
    await until('handed to the next account', () => next.settled.length === 1);
    const outcome = next.settled[0]?.outcome as { error: GatewayError };
    assert.equal(outcome.error?.code, 'unconfirmed');
    assert.equal(next.sent.length, 0, 'never sent again');
    assert.equal(outbox.waiting, 0);
    await outbox.detach(next.worker);
  });

  it('a node that throws while its msg is handed back does not stop the round', async () => {
    const outbox = new Outbox(undefined, () => undefined);
    const { worker: standInWorker, sent } = standIn(() => 'ok');
    const handed: unknown[] = [];
    const worker: OutboxWorker = {
      ...standInWorker,
      settle: (_entry, msg) => {
        handed.push(msg.seq);
        throw new Error('a broken node');
      },
    };
    outbox.attach(worker);
    for (let i = 1; i <= 3; i++) await outbox.keep(newEntry(i), {});
    await until('all handed back', () => handed.length === 3);
    assert.equal(sent.length, 3);
    await outbox.detach(worker);
  });

  it('withdrawn by their node (an acknowledged escalation): the waiting entries it picks end withdrawn, never sent; one on the wire ends so when that attempt fails; one the gateway took ends with its result', async () => {
    const outbox = new Outbox(undefined, () => undefined);
    const sent: unknown[] = [];
    const settled: { seq: unknown; outcome: Outcome }[] = [];
    /** The answers of the attempts on the wire, given by the test. */
    const answers: ((error?: GatewayError) => void)[] = [];
    const worker: OutboxWorker = {
      ...standIn(() => 'ok', 1).worker,
      send: (entry) =>
        new Promise((resolve, reject) => {
          sent.push(entry.msg.seq);
          answers.push((error) =>
            error ? reject(error) : resolve({ record: { status: 'accepted' }, rejected: false } as never),
          );
        }),
      settle: (_entry, msg, outcome) => void settled.push({ seq: msg.seq, outcome }),
    };
    const entry = (i: number, node = 't') =>
      newEntry(i, { node, msg: { seq: i, escalation: { key: i % 2 ? 'door' : 'smoke' } } });
    const key = (name: string) => (msg: Record<string, unknown>) => (msg.escalation as { key: string }).key === name;
    const ends = () =>
      settled.map((s) => [
        s.seq,
        'error' in s.outcome ? (isWithdrawn(s.outcome.error) ? 'withdrawn' : s.outcome.error.code) : 'result',
      ]);
    for (const i of [1, 2, 3, 4]) await outbox.keep(entry(i), {});
    await outbox.keep(entry(5, 'u'), {});
    outbox.attach(worker);
    await until('the probe on the wire', () => sent.length === 1);
    assert.equal(await outbox.withdraw('t', key('door')), 1, "3 ends now; 1 is on the wire, and 5 is another node's");
    assert.deepEqual(ends(), [[3, 'withdrawn']]);
    assert.equal(outbox.waiting, 4);
    (answers.shift() as (error?: GatewayError) => void)(unreachable());
    await until('the probe on the wire again', () => sent.length === 2);
    assert.deepEqual(ends(), [
      [3, 'withdrawn'],
      [1, 'withdrawn'],
    ]);
    assert.equal(await outbox.withdraw('t', key('smoke')), 1, '4 ends now; 2 is on the wire');
    (answers.shift() as (error?: GatewayError) => void)();
    await until('5 on the wire', () => sent.length === 3);
    (answers.shift() as (error?: GatewayError) => void)();
    await until('all ended', () => settled.length === 5);
    assert.deepEqual(sent, [1, 2, 5], '1 not sent again after its failed attempt, 3 and 4 never');
    assert.deepEqual(ends(), [
      [3, 'withdrawn'],
      [1, 'withdrawn'],
      [4, 'withdrawn'],
      [2, 'result'],
      [5, 'result'],
    ]);
    assert.equal(outbox.waiting, 0);
    await outbox.detach(worker);
  });
});

describe("the outbox's rules (unit)", () => {
  it('the bounds: probes at most 15 s apart; 10,000 messages unless the account says otherwise', () => {
    assert.equal(MAX_PROBE_DELAY, 15_000);
    assert.equal(DEFAULT_OUTBOX_SIZE, 10_000);
  });

  it("what goes to the outbox: only a retryable failure, never the account's own full queue, and only where a second copy cannot be sent", () => {
    const advanced1 = sendOperation('transactional', { version: '1.0' });
    const simple = sendOperation('transactional', { api: 'simple', version: '1.0' });
    const busy = new GatewayError({ type: 'unknown', status: 503, retryable: true, message: 'HTTP 503' });
    assert.equal(deferrable(busy, OPERATION), true, 'the body takes duplicates_check');
    assert.equal(
      deferrable(busy, simple),
      false,
      'the simple API has no duplicates_check, and it may have reached the gateway',
    );
    assert.equal(
      deferrable(Object.assign(unreachable(), { mayHaveReached: false }), simple),
      true,
      'it never reached the gateway',
    );
    assert.equal(
      deferrable(new GatewayError({ type: 'low_credit', status: 400, message: 'x' }), advanced1),
      false,
      'not retryable',
    );
    assert.equal(deferrable(new Error('boom'), OPERATION), false, 'not a gateway error');
    assert.equal(
      deferrable(new GatewayError({ type: 'rate_limited', retryable: true, message: 'queue full' }), OPERATION),
      false,
      "the account's own limit",
    );
    assert.equal(
      deferrable(
        new GatewayError({ type: 'rate_limited', status: 429, retryable: true, message: 'HTTP 429' }),
        OPERATION,
      ),
      true,
      "the gateway's 429",
    );
  });

  it("the errors a message ends with: the account's outbox time in minutes, or its node's give-up time in seconds, with the attempts and the last failure", () => {
    const entry = { ...newEntry(1), id: 'x', since: 1_000_000, attempts: 3, reason: 'HTTP 503' } as OutboxEntry;
    const account = expiredError(entry, 5);
    assert.deepEqual([account.code, account.brief], ['expired', { key: 'expired' }]);
    assert.equal(
      account.message,
      "Not sent: the gateway could not be reached for 5 minutes (the account's outbox time; 3 attempts). Last: HTTP 503",
    );
    assert.equal(
      expiredError({ ...entry, attempts: 1 }, 1).message,
      "Not sent: the gateway could not be reached for 1 minute (the account's outbox time; 1 attempt). Last: HTTP 503",
    );
    const node = expiredError({ ...entry, deadline: 1_090_000 }, 5);
    assert.equal(node.code, 'expired');
    assert.equal(
      node.message,
      'Not sent within 90 s (the node\'s "give up after"): the gateway could not be reached in time (3 attempts). Last: HTTP 503',
    );
    assert.equal(
      expiredError({ ...entry, deadline: 1_300_000 }, 5).message,
      account.message,
      "a give-up time no sooner than the account's: the account's",
    );
    assert.deepEqual(giveUpError(30, 'why').brief, { key: 'expired' });
  });

  it('outbox_full names the account when it has a name', () => {
    assert.equal(
      fullError(3, 'home').message,
      'Not kept: the outbox of the BulkGate account "home" already holds 3 messages waiting for the gateway (the account\'s "outbox size" setting)',
    );
    assert.equal(
      fullError(3).message,
      'Not kept: the outbox already holds 3 messages waiting for the gateway (the account\'s "outbox size" setting)',
    );
    assert.deepEqual(fullError(3).brief, { key: 'outbox-full' });
  });

  it("what of a msg a file can keep: JSON, without an http in node's req and res, functions, or a second visit to one object", () => {
    const shared = { a: 1 };
    const circular: Record<string, unknown> = { payload: 'x' };
    circular.self = circular;
    const msg = {
      payload: { shared, again: shared },
      topic: 't',
      req: { socket: 1 },
      res: {},
      fn: () => 1,
      nested: { req: 'kept', when: new Date(0) },
      circular,
    };
    assert.deepEqual(storableMsg(msg as never), {
      payload: { shared: { a: 1 } },
      topic: 't',
      nested: { req: 'kept', when: '1970-01-01T00:00:00.000Z' },
      circular: { payload: 'x' },
    });
  });

  it("one outbox per account's log (or per account id in memory), for the process's life; the running account hears its warnings", () => {
    const store = localStore(undefined);
    const first: string[] = [];
    const second: string[] = [];
    const a = outboxFor(store, 'unit-acc', (key) => first.push(key));
    const b = outboxFor(store, 'unit-acc', (key) => second.push(key));
    assert.equal(a, b);
    assert.notEqual(
      outboxFor(store, 'unit-acc-2', () => undefined),
      a,
    );
    a.warn('x', {});
    assert.deepEqual([first, second], [[], ['x']]);
  });
});

/** A stand-in log in memory: what a file or a shared store would hold, with each call recorded. */
function memoryLog(options: { held?: 'free' | 'other' | 'gone' | 'broken'; left?: NewEntry[]; shared?: boolean } = {}) {
  /** 'gone': another's lock that is not stale yet, and whose holder is not known to live. */
  let held = options.held;
  const lines = new Map<string, string>();
  (options.left ?? []).forEach((entry, i) => lines.set(`left-${i}`, JSON.stringify({ id: `left-${i}`, ...entry })));
  const calls: string[] = [];
  let locked = false;
  let refuseKeep: Error | undefined;
  const elsewhere: { entry: OutboxEntry; line: string }[] = [];
  let adoptFails = false;
  const base = {
    where: '/unit/outbox.jsonl',
    keep: async (line: string) => {
      calls.push('keep');
      if (refuseKeep) throw refuseKeep;
      const { id } = JSON.parse(line) as { id: string };
      lines.set(id, line);
    },
    done: async (id: string) => {
      calls.push('done');
      lines.delete(id);
    },
    attempt: async () => undefined,
    back: async () => undefined,
    emitted: () => undefined,
  };
  // The shared log's own rounds (renew, write back, adopt) over a stand-in store.
  class SharedStandIn extends RedisOutboxLog {
    override readonly adoptEveryMs = 10;
    override keep = base.keep;
    override done = async (id: string) => {
      await base.done(id);
      return true;
    };
    // Every claim renewed in time: the store's own leases have their test against redis-server.
    override attempt = async () => 'go' as const;
    override async renew(ids: string[]) {
      calls.push(`renew ${ids.length}`);
      // What the store no longer holds (a flush): the copy writes it back.
      return { lost: ids.filter((id) => !lines.has(id)), taken: [] };
    }
    override async adoptable(known: (id: string) => boolean) {
      calls.push('adoptable');
      if (adoptFails) throw new Error('the store does not answer');
      return elsewhere.splice(0).filter(({ entry }) => !known(entry.id)) as unknown as LoggedEntry[];
    }
  }
  const log: OutboxLog = options.shared
    ? new SharedStandIn(() => undefined as never, 'unit:', 'copy-unit')
    : new FileOutboxLog({
        ...base,
        warn: () => undefined,
        get locked() {
          return locked;
        },
        lock() {
          calls.push('lock');
          if (held === 'broken') throw new Error('EACCES: the lock file');
          locked = held !== 'other' && held !== 'gone';
          return locked;
        },
        holderAlive: () => held === 'other',
        staleMs: 30_000,
        touchEveryMs: 5000,
        lost: () => undefined,
        exists: () => lines.size > 0,
        load: () => new Map([...lines].map(([id, line]) => [id, { entry: JSON.parse(line) as OutboxEntry, line }])),
        wantsCompaction: () => false,
        compact: async () => undefined,
        release: async () => {
          calls.push('release');
          locked = false;
        },
        close: async () => undefined,
      });
  return {
    log,
    calls,
    lines,
    refuse: (error: Error | undefined) => (refuseKeep = error),
    leftByAnother: (entry: OutboxEntry) => elsewhere.push({ entry, line: JSON.stringify(entry) }),
    failAdoption: (fails: boolean) => (adoptFails = fails),
    /** The other holder's lock: now stale ('free'), or seen touched ('other'). */
    holder: (now: 'free' | 'other') => (held = now),
  };
}

describe('the outbox and its log (unit, a stand-in log)', () => {
  it('what an earlier run left is sent; the log is given back when nothing waits any more', async () => {
    const { log, calls, lines } = memoryLog({ left: [newEntry(1), newEntry(2)] });
    const outbox = new Outbox(log, () => undefined);
    assert.equal(outbox.waiting, 2);
    assert.deepEqual(calls, ['lock']);
    const { worker, settled } = standIn(() => 'ok');
    outbox.attach(worker);
    try {
      await until('both settled', () => settled.length === 2);
      assert.deepEqual(
        settled.map((s) => s.seq),
        [1, 2],
      );
      await until('the log released', () => calls.includes('release'));
      assert.equal(lines.size, 0);
    } finally {
      await outbox.detach(worker);
    }
  });

  it('an empty log is not taken at the start; a log that holds nothing after loading is given back at once', () => {
    const empty = memoryLog();
    new Outbox(empty.log, () => undefined);
    assert.deepEqual(empty.calls, [], 'no lock taken for nothing');
    const spent = memoryLog({ left: [newEntry(1)] });
    (spent.log as FileOutboxLog).file.load = () => new Map();
    new Outbox(spent.log, () => undefined);
    assert.deepEqual(spent.calls, ['lock', 'release']);
  });

  it('a log another living Node-RED holds is left alone, with a warning; a keep is refused with outbox_locked and nothing waits', async () => {
    const { log } = memoryLog({ held: 'other', left: [newEntry(1)] });
    const warnings: [string, unknown][] = [];
    const outbox = new Outbox(log, (key, params) => warnings.push([key, params]));
    assert.deepEqual(warnings, [['outbox-locked', { path: '/unit/outbox.jsonl' }]]);
    assert.equal(outbox.waiting, 0);
    await assert.rejects(
      outbox.keep(newEntry(2), {}),
      (e: GatewayError) => e.code === 'outbox_locked' && e.message.includes('/unit/outbox.jsonl'),
    );
    assert.equal(outbox.waiting, 0);
  });

  describe('a log whose lock another holds that is not known to live (a Node-RED killed, come back under another host name), a fake clock', () => {
    let clock: ReturnType<typeof FakeTimers.install>;
    beforeEach(() => (clock = FakeTimers.install({ toFake: ['setInterval', 'clearInterval'] })));
    afterEach(() => clock.uninstall());
    const settledState = (promise: Promise<unknown>) => {
      const state = { value: 'pending' as string };
      promise.then(
        () => (state.value = 'kept'),
        (e: GatewayError) => (state.value = e.code),
      );
      return state;
    };

    it('at the start: a warning naming the bound; once the lock is stale, it is taken and what the file holds is adopted, with no keep to wait for', async () => {
      const stand = memoryLog({ held: 'gone', left: [newEntry(1)] });
      const warnings: [string, unknown][] = [];
      const outbox = new Outbox(stand.log, (key, params) => warnings.push([key, params]));
      assert.deepEqual(warnings, [['outbox-lock-waiting', { path: '/unit/outbox.jsonl', seconds: 30 }]]);
      assert.equal(outbox.waiting, 0);
      clock.tick(5000);
      assert.equal(outbox.waiting, 0, 'not stale yet');
      stand.holder('free');
      clock.tick(5000);
      assert.equal(outbox.waiting, 1, 'taken and adopted');
      const looks = stand.calls.length;
      clock.tick(50_000);
      assert.equal(stand.calls.length, looks, 'no more looks once it is held');
    });

    it('a keep meanwhile is held (not refused, not written) until the lock is stale, then written; within the outbox size', async () => {
      const stand = memoryLog({ held: 'gone', left: [newEntry(1)] });
      const outbox = new Outbox(stand.log, () => undefined);
      const keeps = [settledState(outbox.keep(newEntry(2), {})), settledState(outbox.keep(newEntry(3), {}))];
      await Promise.resolve();
      clock.tick(5000);
      await new Promise((r) => setImmediate(r));
      assert.deepEqual(
        keeps.map((k) => k.value),
        ['pending', 'pending'],
        'held',
      );
      assert.equal(stand.calls.filter((c) => c === 'keep').length, 0, "nothing written while the lock is another's");
      stand.holder('free');
      clock.tick(5000);
      await until('both kept', () => keeps.every((k) => k.value === 'kept'));
      assert.equal(outbox.waiting, 3, "the file's one and the two held");
      assert.deepEqual([...stand.lines.keys()].length, 3);
    });

    it('held msgs count toward the outbox size: past it, outbox_full', async () => {
      const stand = memoryLog({ held: 'gone', left: [newEntry(1)] });
      const outbox = new Outbox(stand.log, () => undefined);
      const { worker } = standIn(() => 'ok');
      const small = { ...worker, size: 2 };
      outbox.attach(small);
      try {
        const first = settledState(outbox.keep(newEntry(2), {}));
        const second = settledState(outbox.keep(newEntry(3), {}));
        const third = settledState(outbox.keep(newEntry(4), {}));
        await new Promise((r) => setImmediate(r));
        assert.deepEqual([first.value, second.value, third.value], ['pending', 'pending', 'outbox_full']);
      } finally {
        await outbox.detach(small);
      }
    });

    it('the lock taken over by another (this process did not touch it for the bound): a warning, and the entries are left to that one, not sent from here too', () => {
      const stand = memoryLog({ left: [newEntry(1), newEntry(2)] });
      const warnings: [string, unknown][] = [];
      const outbox = new Outbox(stand.log, (key, params) => warnings.push([key, params]));
      assert.equal(outbox.waiting, 2);
      stand.holder('other');
      (stand.log as FileOutboxLog).file.lost();
      assert.deepEqual(warnings, [['outbox-lock-lost', { path: '/unit/outbox.jsonl' }]]);
      assert.equal(outbox.waiting, 0);
    });

    it('a holder seen touching its lock lives (two Node-REDs on one directory): the held msgs are refused, outbox_locked, and so is the next at once', async () => {
      const stand = memoryLog({ held: 'gone', left: [newEntry(1)] });
      const outbox = new Outbox(stand.log, () => undefined);
      const held = settledState(outbox.keep(newEntry(2), {}));
      await new Promise((r) => setImmediate(r));
      stand.holder('other');
      clock.tick(5000);
      await until('refused', () => held.value !== 'pending');
      assert.equal(held.value, 'outbox_locked');
      await assert.rejects(outbox.keep(newEntry(3), {}), (e: GatewayError) => e.code === 'outbox_locked');
      assert.equal(outbox.waiting, 0);
    });
  });

  it('a log that cannot be read at the start: a warning with the reason, and the outbox still starts', () => {
    const { log } = memoryLog({ held: 'broken', left: [newEntry(1)] });
    const warnings: [string, unknown][] = [];
    const outbox = new Outbox(log, (key, params) => warnings.push([key, params]));
    // The cause itself: the line is worded where it is written, in the user's language.
    assert.deepEqual(warnings, [
      ['outbox-unreadable', { path: '/unit/outbox.jsonl', reason: new Error('EACCES: the lock file') }],
    ]);
    assert.equal(outbox.waiting, 0);
  });

  it('a keep the log refuses (a shared outbox full, a store gone) is not kept: the error is passed on, nothing waits, the watchers hear both changes', async () => {
    const stand = memoryLog();
    const outbox = new Outbox(stand.log, () => undefined);
    const heard: number[] = [];
    outbox.watch(() => heard.push(outbox.waiting));
    const refusal = new GatewayError({ type: 'outbox_full', retryable: false, message: 'full across the copies' });
    stand.refuse(refusal);
    await assert.rejects(outbox.keep(newEntry(1), {}), (e) => e === refusal);
    assert.equal(outbox.waiting, 0);
    assert.deepEqual(heard, [1, 0]);
    assert.equal(outbox.waitingFor('t'), 0);
    stand.refuse(undefined);
    await outbox.keep(newEntry(2), {});
    assert.equal(outbox.waiting, 1);
    assert.deepEqual([...stand.lines.keys()].length, 1, 'the log holds the one kept');
  });

  it('a shared log: this copy renews what it holds, takes what a gone copy left and sends it; a store that fails is asked again; nothing after detach', async () => {
    const stand = memoryLog({ shared: true });
    const outbox = new Outbox(stand.log, () => undefined);
    const { worker, settled } = standIn((entry) => (entry.msg.seq === 1 ? unreachable() : 'ok'));
    await outbox.keep(newEntry(1), {});
    stand.failAdoption(true);
    outbox.attach(worker);
    try {
      await until('asked while failing', () => stand.calls.filter((c) => c === 'adoptable').length >= 2);
      stand.failAdoption(false);
      stand.leftByAnother({ id: 'gone-copy-1', ...newEntry(7, { since: BASE - 1 }) } as OutboxEntry);
      await until('renewed', () => stand.calls.includes('renew 1'));
      await until('the adopted one sent', () => settled.some((s) => s.seq === 7));
    } finally {
      await outbox.detach(worker);
    }
    const asked = stand.calls.length;
    await new Promise((r) => setTimeout(r, 40)); // checks that the log is not asked again after detach
    assert.equal(stand.calls.length, asked, 'no look after detach');
  });

  it('an entry this copy ended, its done unanswered, given back as ended by another copy that died; the done then answers that the other copy ended it: its msg leaves once, from the end found', async () => {
    let holder: Parameters<OutboxLog['open']>[0] | undefined;
    let line = '';
    let answerDone: ((ours: boolean) => void) | undefined;
    const emitted: string[] = [];
    const log: OutboxLog = {
      where: 'a stand-in shared log',
      writable: true,
      open: (h) => void (holder = h),
      whenWritable: async () => undefined,
      keep: async (kept) => void (line = kept),
      done: () => new Promise<boolean>((resolve) => (answerDone = resolve)),
      emitted: (id) => void emitted.push(id),
      attempt: async () => 'go',
      back: () => undefined,
      spent: () => undefined,
      attach: () => undefined,
      detach: () => undefined,
    };
    const outbox = new Outbox(log, () => undefined);
    const { worker, settled } = standIn(() => 'ok');
    await outbox.keep(newEntry(1), {});
    outbox.attach(worker);
    try {
      await until('its done asked', () => answerDone !== undefined);
      const entry = JSON.parse(line) as LoggedEntry['entry'];
      holder?.adopt([{ entry, line, ended: { attempts: 1, result: { status: 'accepted' } } }]);
      answerDone?.(false);
      await until('its msg out once', () => settled.length === 1);
      await new Promise((r) => setTimeout(r, 50)); // checks that it does not leave again
      assert.deepEqual(
        settled.map((s) => s.seq),
        [1],
      );
      assert.deepEqual(emitted, [entry.id], 'its log hears that it left');
    } finally {
      answerDone?.(false);
      await outbox.detach(worker);
    }
  });

  it('a shared log that lost what this copy holds (a flush): written back at the next look, with one warning; one that ended meanwhile is not', async () => {
    const stand = memoryLog({ shared: true });
    const warned: string[] = [];
    const outbox = new Outbox(stand.log, (key, params) => warned.push(`${key} ${params.count}`));
    const { worker } = standIn(() => unreachable());
    for (const seq of [1, 2, 3]) await outbox.keep(newEntry(seq), {});
    const kept = [...stand.lines.keys()];
    outbox.attach(worker);
    try {
      stand.lines.clear();
      await until('written back', () => stand.lines.size === 3);
      assert.deepEqual([...stand.lines.keys()].sort(), kept.sort());
      assert.deepEqual(warned, ['store-entries-lost 3']);
      const looks = stand.calls.filter((c) => c.startsWith('renew')).length;
      await until('two more looks', () => stand.calls.filter((c) => c.startsWith('renew')).length >= looks + 2);
      assert.deepEqual(warned, ['store-entries-lost 3'], 'said once, not at every look');
    } finally {
      await outbox.detach(worker);
    }
  });
});

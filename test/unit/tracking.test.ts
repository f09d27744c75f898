/**
 * Delivery tracking's memory (unit): bounded in number and age, and empty while no events node
 * listens; the report timeout (output 3) on a fake clock, at both ends; the recent sms_ids that
 * tell a copy the gateway dropped; the user directory's file that keeps them across a restart.
 */
import assert from 'node:assert/strict';
import FakeTimers from '@sinonjs/fake-timers';
import {
  appendFileSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { RecentSends } from '../../nodes/account/recent-sends';
import {
  DeliveryTracker,
  SharedTrackingState,
  memoryTracking,
  numberKey,
  type SharedTrackingLike,
  type Tracked,
} from '../../nodes/account/tracking';
import { MAX_LINE, TrackingFile, trackingPath } from '../../nodes/account/tracking-file';

describe("delivery tracking: the account's memory is bounded", () => {
  const sent = (i: number) => ({ topic: `t${i}`, payload: i, node: 'n' });

  it('the 10,001st message forgets the first (its report and replies no longer match); the second is still known', async () => {
    const tracker = new DeliveryTracker(memoryTracking());
    tracker.listen({}, 0, () => undefined);
    for (let i = 0; i < 10_001; i++) tracker.track(`id-${i}`, `420777${String(i).padStart(6, '0')}`, sent(i));
    assert.equal(tracker.size, 10_000);
    assert.equal(await tracker.report('id-0', 'delivered'), undefined);
    assert.equal(await tracker.lastTo('420777000000'), undefined);
    assert.deepEqual((await tracker.report('id-1', 'delivered'))?.sent, sent(1));
    assert.equal((await tracker.lastTo('+420 777 000 001'))?.smsId, 'id-1');
  });

  it('over many turnovers (30,000 sends, a bound of 1,000): always the newest 1,000; one tracked again counts from its second send', async () => {
    const tracker = new DeliveryTracker(memoryTracking(), { count: 1_000, ageMs: 3600_000 });
    tracker.listen({}, 0, () => undefined);
    for (let i = 0; i < 30_000; i++) {
      tracker.track(`id-${i}`, '420777000001', sent(i));
      // Tracked again while its first send is still among the newest: the bound passes the first later.
      if (i === 28_990) tracker.track('again', '420777999999', sent(-1));
      if (i === 29_500) tracker.track('again', '420777999999', sent(-2));
      assert.ok(tracker.size <= 1_000);
    }
    assert.equal(tracker.size, 1_000);
    assert.equal(
      await tracker.report('id-29000', 'buffered'),
      undefined,
      "the 1,000th newest is forgotten: 'again' took its place",
    );
    assert.ok(await tracker.report('id-29001', 'buffered'), 'the 999th newest is kept');
    assert.deepEqual((await tracker.report('again', 'buffered'))?.sent, sent(-2));
  });

  it('a message older than 24 hours is forgotten', async () => {
    // Its age on the monotonic clock (a step of the wall clock forgets nothing: clock-steps.test.ts).
    const clock = FakeTimers.install({ toFake: ['Date', 'performance'] });
    try {
      const tracker = new DeliveryTracker(memoryTracking());
      tracker.listen({}, 0, () => undefined);
      tracker.track('old', '420777000001', sent(1));
      clock.tick(23 * 3600 * 1000);
      tracker.track('new', '420777000002', sent(2));
      assert.ok(await tracker.report('old', 'buffered'));
      clock.tick(3600 * 1000 + 1);
      assert.equal(await tracker.report('old', 'delivered'), undefined);
      assert.equal(await tracker.lastTo('420777000001'), undefined);
      assert.ok(await tracker.report('new', 'delivered'));
    } finally {
      clock.uninstall();
    }
  });

  it('nothing is remembered while no events node listens', () => {
    const tracker = new DeliveryTracker(memoryTracking());
    tracker.track('x', '420777000001', sent(1));
    assert.equal(tracker.size, 0);
  });
});

describe('delivery tracking: the report timeout (unit, fake clock)', () => {
  let clock: ReturnType<typeof FakeTimers.install>;
  beforeEach(() => {
    clock = FakeTimers.install({ toFake: ['setTimeout', 'clearTimeout', 'Date', 'performance'] });
  });
  afterEach(() => clock.uninstall());
  const sent = (i: number) => ({ topic: `t${i}`, payload: i, node: 'n' });
  const events = { node: 'events' };

  it('no final report within the timeout: output 3 once, not a moment before; a final report before it: none', async () => {
    const tracker = new DeliveryTracker(memoryTracking());
    const late: string[] = [];
    const owner = {};
    tracker.listen(owner, 60_000, (t: Tracked) => late.push(t.smsId));
    tracker.track('silent', '420777000998', sent(1));
    tracker.track('delivered', '420777000001', sent(2));
    clock.tick(30_000);
    assert.equal((await tracker.report('delivered', 'delivered'))?.final, true);
    assert.equal((await tracker.report('silent', 'buffered'))?.final, false, 'buffered is not final');
    clock.tick(29_999);
    assert.deepEqual(late, [], 'not before the timeout');
    clock.tick(1);
    assert.deepEqual(late, ['silent']);
    clock.tick(600_000);
    assert.deepEqual(late, ['silent'], 'once');
    tracker.unlisten(owner);
  });

  it('a scheduled message counts from its schedule; one sent at once after it, from its acceptance', () => {
    const tracker = new DeliveryTracker(memoryTracking());
    const late: string[] = [];
    tracker.listen(events, 10_000, (t: Tracked) => late.push(t.smsId));
    tracker.track('later', '420777000001', sent(1), Date.now() + 60_000);
    tracker.track('now', '420777000002', sent(2));
    clock.tick(10_000);
    assert.deepEqual(late, ['now']);
    clock.tick(59_999);
    assert.deepEqual(late, ['now'], 'the scheduled one: not before its schedule and the timeout');
    clock.tick(1);
    assert.deepEqual(late, ['now', 'later']);
    tracker.unlisten(events);
  });

  it('unlisten stops output 3 and leaves no timer; a forgotten message never fires', () => {
    const tracker = new DeliveryTracker(memoryTracking(), { count: 1, ageMs: 3_600_000 });
    const late: string[] = [];
    tracker.listen(events, 5_000, (t: Tracked) => late.push(t.smsId));
    tracker.track('first', '420777000001', sent(1));
    tracker.track('second', '420777000002', sent(2));
    clock.tick(5_000);
    assert.deepEqual(late, ['second'], 'the first was forgotten (the bound is one)');
    tracker.track('third', '420777000003', sent(3));
    tracker.unlisten(events);
    assert.equal(clock.countTimers(), 0);
    clock.tick(10_000);
    assert.deepEqual(late, ['second']);
  });

  it('with a shared store, the sends a stopped copy left: looked for every quarter of the timeout (1 to 30 s), fired once each; unlisten stops the look', async () => {
    clock.uninstall();
    clock = FakeTimers.install({
      toFake: ['setTimeout', 'clearTimeout', 'setInterval', 'clearInterval', 'Date', 'performance'],
    });
    const asked: [number, number][] = [];
    const orphan = { smsId: 'orphan', number: '420777000001', sent: sent(1), acceptedAt: 0, countsFrom: 0 };
    let left = [orphan];
    const shared = {
      record: async () => undefined,
      lookup: async () => undefined,
      lastTo: async () => undefined,
      markFinal: async () => undefined,
      claimLate: async () => true,
      overdue: async (timeoutMs: number, graceMs: number) => {
        asked.push([timeoutMs, graceMs]);
        const out = left;
        left = [];
        return out;
      },
    };
    const tracker = new DeliveryTracker(new SharedTrackingState(shared));
    const late: Tracked[] = [];
    tracker.listen(events, 60_000, (t: Tracked) => late.push(t));
    await clock.tickAsync(14_999);
    assert.deepEqual(asked, [], 'not before a quarter of the timeout');
    await clock.tickAsync(1);
    assert.deepEqual(asked, [[60_000, 15_000]]);
    assert.deepEqual(
      late.map((t) => [t.smsId, t.sent, t.final]),
      [['orphan', sent(1), false]],
    );
    await clock.tickAsync(15_000);
    assert.equal(late.length, 1, 'once');
    tracker.unlisten(events);
    assert.equal(clock.countTimers(), 0, 'no timer left');
    // The quarter is held between 1 s and 30 s.
    tracker.listen(events, 2_000, () => undefined);
    await clock.tickAsync(1_000);
    assert.deepEqual(asked.at(-1), [2_000, 1_000]);
    tracker.listen(events, 3_600_000, () => undefined);
    const before = asked.length;
    await clock.tickAsync(29_999);
    assert.equal(asked.length, before, 'a second listen replaced the first look');
    await clock.tickAsync(1);
    assert.deepEqual(asked.at(-1), [3_600_000, 30_000]);
    tracker.unlisten(events);
  });

  it("a number's digits are its key: +420 777 000 123, 420777000123 and 00420777000123 are one number", () => {
    assert.equal(numberKey('+420 777 000 123'), '420777000123');
    assert.equal(numberKey('00420777000123'), '420777000123');
    assert.equal(numberKey(420777000123), '420777000123');
    assert.equal(numberKey(undefined), '');
  });
});

describe('recent sms_ids (unit)', () => {
  it('an sms_id seen again within 5 minutes is a copy; after 5 minutes, not', () => {
    const recent = new RecentSends();
    const t0 = Date.parse('2026-11-23T12:00:00Z');
    assert.equal(recent.seenBefore('a', t0), false);
    assert.equal(recent.seenBefore('a', t0 + 299_999), true);
    assert.equal(recent.seenBefore('b', t0 + 300_000), false);
    assert.equal(recent.seenBefore('a', t0 + 300_001), false, 'the window has passed: a new message');
  });

  it('over many turnovers (50,000 ids, 30,000 of them past the window): the window and the bound both still hold', () => {
    const recent = new RecentSends();
    const t0 = Date.parse('2026-11-23T12:00:00Z');
    for (let i = 0; i < 30_000; i++) recent.seenBefore(`old-${i}`, t0 + i);
    const later = t0 + 29_999 + 300_000;
    assert.equal(
      recent.seenBefore('old-29999', later - 1),
      true,
      'the last old one, at the last millisecond of its window',
    );
    for (let i = 0; i < 20_000; i++) recent.seenBefore(`new-${i}`, later + i);
    assert.equal(recent.seenBefore('old-29999', later + 20_000), false, 'past the window');
    assert.equal(recent.seenBefore('new-19999', later + 20_000), true);
    assert.equal(recent.seenBefore('new-10001', later + 20_000), true, 'the newest 10,000 are kept');
    assert.equal(recent.seenBefore('new-9000', later + 20_000), false, 'beyond the bound');
  });

  it('at most 10,000 are kept: the oldest is forgotten first', () => {
    const recent = new RecentSends();
    const t0 = Date.parse('2026-11-23T12:00:00Z');
    for (let i = 0; i <= 10_000; i++) recent.seenBefore(`id-${i}`, t0);
    assert.equal(recent.seenBefore('id-10000', t0), true);
    assert.equal(recent.seenBefore('id-0', t0), false, 'the 10,001st pushed out the first');
  });
});

describe('delivery tracking kept in the user directory (unit, fake clock)', () => {
  let clock: ReturnType<typeof FakeTimers.install>;
  let dir = '';
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'bulkgate-tracking-'));
    clock = FakeTimers.install({ toFake: ['setTimeout', 'clearTimeout', 'Date', 'performance'] });
  });
  afterEach(() => {
    clock.uninstall();
    rmSync(dir, { recursive: true, force: true });
  });
  const sent = (i: number) => ({ topic: `t${i}`, payload: `alarm ${i}`, node: 'n' });
  /** Once what was appended is on disk (the file is written asynchronously, not on a timer). */
  const written = (log: TrackingFile) => log.close();

  it('a restart keeps what was sent: a report after it carries msg.sent; output 3 fires after it, at the timeout from the send, and not again for one that fired before', async () => {
    const path = trackingPath(dir, 'acc');
    const beforeLog = new TrackingFile(path);
    const before = new DeliveryTracker(beforeLog);
    const lateBefore: string[] = [];
    const events = {};
    before.listen(events, 60_000, (t: Tracked) => lateBefore.push(t.smsId));
    before.track('fired', '420777000003', sent(3));
    clock.tick(60_000);
    assert.deepEqual(lateBefore, ['fired']);
    clock.tick(1000);
    before.track('answered', '420777000001', sent(1));
    before.track('silent', '420777000002', sent(2));
    await written(beforeLog);
    before.unlisten(events);

    // The restart: a new tracker on the same file, an events node listening again.
    const afterLog = new TrackingFile(path);
    const after = new DeliveryTracker(afterLog);
    const lateAfter: string[] = [];
    after.listen({}, 60_000, (t: Tracked) => lateAfter.push(t.smsId));
    assert.deepEqual((await after.report('answered', 'delivered'))?.sent, sent(1));
    assert.equal((await after.lastTo('420777000002'))?.smsId, 'silent', 'a reply finds the alarm it answers');
    clock.tick(59_999);
    assert.deepEqual(lateAfter, [], 'not before the timeout from the send');
    clock.tick(1);
    assert.deepEqual(lateAfter, ['silent'], 'once, for the silent one only');
    await written(afterLog);
    // A second restart: the answered one is final and the silent one has fired; nothing fires again.
    const third = new DeliveryTracker(new TrackingFile(path));
    const lateThird: string[] = [];
    third.listen({}, 60_000, (t: Tracked) => lateThird.push(t.smsId));
    clock.tick(120_000);
    assert.deepEqual(lateThird, []);
  });

  it("a send whose line would pass 2 KB is kept without the msg's topic and payload: its report after a restart still matches", async () => {
    const path = trackingPath(dir, 'acc');
    const log = new TrackingFile(path);
    const before = new DeliveryTracker(log);
    before.listen({}, 0, () => undefined);
    before.track('big', '420777000001', { topic: 'camera', payload: 'x'.repeat(MAX_LINE), node: 'n' });
    before.track('small', '420777000002', sent(2));
    await written(log);
    assert.ok(
      readFileSync(path, 'utf8')
        .split('\n')
        .every((line) => line.length <= MAX_LINE),
    );
    const afterLog = new TrackingFile(path);
    const after = new DeliveryTracker(afterLog);
    after.listen({}, 0, () => undefined);
    assert.deepEqual((await after.report('big', 'delivered'))?.sent, { node: 'n' });
    assert.deepEqual((await after.report('small', 'delivered'))?.sent, sent(2));
    await written(afterLog);
  });

  it('nothing is written while no events node listens', async () => {
    const path = trackingPath(dir, 'acc');
    const log = new TrackingFile(path);
    const tracker = new DeliveryTracker(log);
    tracker.track('id', '420777000001', sent(1));
    await written(log);
    assert.equal(existsSync(path), false);
  });

  it('the file stays bounded: 30,000 sends leave at most 2 x 10,000 + 1,000 lines, and the last 10,000 load; a damaged line is skipped', async () => {
    const path = trackingPath(dir, 'acc');
    const log = new TrackingFile(path);
    const tracker = new DeliveryTracker(log);
    tracker.listen({}, 0, () => undefined);
    for (let i = 0; i < 30_000; i++) {
      tracker.track(`id-${i}`, `420777${String(i).padStart(6, '0')}`, sent(i));
      if (i % 1000 === 999) await written(log);
    }
    await written(log);
    const lines = readFileSync(path, 'utf8').split('\n').filter(Boolean);
    assert.ok(lines.length <= 21_000, `${lines.length} lines`);
    appendFileSync(path, '{"s": broken\n');
    const warnings: string[] = [];
    const loadedLog = new TrackingFile(path, (w) => warnings.push(w));
    const loaded = new DeliveryTracker(loadedLog);
    loaded.listen({}, 0, () => undefined);
    assert.equal(loaded.size, 10_000);
    assert.equal(await loaded.report('id-19999', 'delivered'), undefined);
    assert.deepEqual((await loaded.report('id-20000', 'delivered'))?.sent, sent(20_000));
    assert.match(warnings.join('\n'), /1 damaged line/);
    await written(loadedLog);
  });
});

describe('the tracking file: its lines, its bounds and its failures', () => {
  let dir: string;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'bulkgate-tracking-file-'));
  });
  afterEach(() => {
    rmSync(dir, { recursive: true, force: true });
  });
  const written = (file: TrackingFile) => file.close();
  const record = (id: string) => ({
    smsId: id,
    number: '420777000001',
    sent: { topic: 't', payload: id, node: 'n' },
    acceptedAt: 1000,
    countsFrom: 1000,
  });
  const tracked = (id: string, marks: Partial<Tracked> = {}): Tracked => ({
    ...record(id),
    final: false,
    forgotten: false,
    ...marks,
  });

  it('one line per event, appended once per turn; the file readable by its owner only, in a folder of its own', async () => {
    const path = trackingPath(dir, 'my acc/1');
    assert.equal(path, join(dir, 'bulkgate-tracking', 'my_acc_1.jsonl'), 'an account id is never a path');
    const file = new TrackingFile(path);
    file.sent(record('a'));
    file.final('a');
    file.late('b');
    assert.equal(existsSync(path), false, 'not before the turn ends');
    await written(file);
    assert.deepEqual(readFileSync(path, 'utf8').split('\n'), [
      JSON.stringify({ s: record('a') }),
      '{"f":"a"}',
      '{"l":"b"}',
      '',
    ]);
    assert.equal(statSync(path).mode & 0o777, 0o600);
    assert.equal(statSync(join(dir, 'bulkgate-tracking')).mode & 0o777, 0o700);
    const loaded = new TrackingFile(path).load();
    assert.deepEqual(loaded.records, [record('a')]);
    assert.deepEqual([...loaded.final, ...loaded.late], ['a', 'b']);
  });

  it('a line that is JSON but no event is skipped as damaged, and counted', () => {
    const path = join(dir, 'acc.jsonl');
    writeFileSync(
      path,
      [
        '{"x":1}',
        '[]',
        '{"s":{"smsId":1,"acceptedAt":1}}',
        '{"s":{"smsId":"a"}}',
        '{"f":true}',
        '',
        JSON.stringify({ s: record('ok') }),
      ].join('\n') + '\n',
    );
    const warnings: string[] = [];
    const loaded = new TrackingFile(path, (w) => warnings.push(w)).load();
    assert.deepEqual(
      loaded.records.map((r) => r.smsId),
      ['ok'],
    );
    assert.deepEqual(warnings, [`${path}: 5 damaged line(s) skipped`]);
  });

  it('a send JSON cannot write (a BigInt, a loop) is kept without its topic and payload', async () => {
    const path = join(dir, 'acc.jsonl');
    const file = new TrackingFile(path);
    const loop: Record<string, unknown> = {};
    loop.self = loop;
    file.sent({ ...record('big'), sent: { topic: 't', payload: 10n, node: 'n' } });
    file.sent({ ...record('loop'), sent: { topic: 't', payload: loop, node: 'n' } });
    await written(file);
    assert.deepEqual(
      new TrackingFile(path).load().records.map((r) => [r.smsId, r.sent]),
      [
        ['big', { node: 'n' }],
        ['loop', { node: 'n' }],
      ],
    );
  });

  it('rewritten when more than twice what is remembered plus 1,000 lines are spent, not at the bound; the marks kept on the send', async () => {
    const path = join(dir, 'acc.jsonl');
    const file = new TrackingFile(path);
    for (let i = 0; i < 1002; i++) file.sent(record(`s${i}`));
    const live = () => [tracked('s1000', { final: true }), tracked('s1001', { late: true }), tracked('s999')];
    file.compactIfSpent(1, live);
    await written(file);
    assert.equal(
      readFileSync(path, 'utf8').split('\n').filter(Boolean).length,
      1002,
      '1,002 lines = 2 x 1 + 1,000: not yet',
    );
    file.final('s1000');
    file.compactIfSpent(1, live);
    await written(file);
    assert.deepEqual(readFileSync(path, 'utf8').split('\n'), [
      JSON.stringify({ s: record('s1000'), f: true }),
      JSON.stringify({ s: record('s1001'), l: true }),
      JSON.stringify({ s: record('s999') }),
      '',
    ]);
    assert.equal(statSync(path).mode & 0o777, 0o600);
    const loaded = new TrackingFile(path).load();
    assert.deepEqual([[...loaded.final], [...loaded.late]], [['s1000'], ['s1001']]);
    // The count starts again from the rewrite: 3 lines now, so 999 more reach the bound, not beyond.
    for (let i = 0; i < 999; i++) file.late(`x${i}`);
    file.compactIfSpent(1, live);
    await written(file);
    assert.equal(readFileSync(path, 'utf8').split('\n').filter(Boolean).length, 1002);
    // A file loaded counts its lines too.
    const reloaded = new TrackingFile(path);
    reloaded.load();
    reloaded.compactIfSpent(1, live);
    await written(reloaded);
    assert.equal(readFileSync(path, 'utf8').split('\n').filter(Boolean).length, 1002, 'loaded 1,002 lines: the bound');
    reloaded.compactIfSpent(0, live);
    await written(reloaded);
    assert.equal(readFileSync(path, 'utf8').split('\n').filter(Boolean).length, 3);
  });

  it('a file that cannot be read, written or rewritten: a warning, once, and nothing thrown; no temporary file left', async () => {
    const unreadable = join(dir, 'folder.jsonl');
    mkdirSync(unreadable);
    const warnings: string[] = [];
    assert.deepEqual(new TrackingFile(unreadable, (w) => warnings.push(w)).load(), {
      records: [],
      final: new Set(),
      late: new Set(),
    });
    assert.match(warnings[0] ?? '', /^could not read .*folder\.jsonl: /);

    writeFileSync(join(dir, 'plain'), '');
    const unwritable = new TrackingFile(join(dir, 'plain', 'acc.jsonl'), (w) => warnings.push(w));
    unwritable.sent(record('a'));
    await written(unwritable);
    unwritable.final('a');
    await written(unwritable);
    assert.equal(warnings.length, 2, 'one warning per file');
    assert.match(warnings[1] ?? '', /^could not write .*plain\/acc\.jsonl: /);

    const path = join(dir, 'acc.jsonl');
    const file = new TrackingFile(path, (w) => warnings.push(w));
    for (let i = 0; i < 1001; i++) file.final(`f${i}`);
    await written(file);
    rmSync(path);
    mkdirSync(path);
    writeFileSync(join(path, 'inside'), '');
    file.compactIfSpent(0, () => [tracked('a')]);
    await written(file);
    assert.match(warnings[2] ?? '', /^could not rewrite .*acc\.jsonl: /);
    assert.deepEqual(readdirSync(dir).sort(), ['acc.jsonl', 'folder.jsonl', 'plain']);
  });
});

describe('delivery tracking with a shared store (unit, a stand-in store, fake clock)', () => {
  let clock: ReturnType<typeof FakeTimers.install>;
  beforeEach(() => {
    clock = FakeTimers.install({
      toFake: ['setTimeout', 'clearTimeout', 'setInterval', 'clearInterval', 'Date', 'performance'],
    });
  });
  afterEach(() => clock.uninstall());
  const sent = (i: number) => ({ topic: `t${i}`, payload: i, node: 'n' });
  const record = (id: string, number = '420777000009') => ({
    smsId: id,
    number,
    sent: sent(9),
    acceptedAt: 0,
    countsFrom: 0,
  });

  /** A stand-in for the shared store: each call recorded (its name and the sms_id or number); what it answers set per test. */
  function standInStore(answers: Partial<SharedTrackingLike> = {}) {
    const calls: string[] = [];
    const answering: SharedTrackingLike = {
      record: async () => undefined,
      lookup: async () => undefined,
      lastTo: async () => undefined,
      markFinal: async () => undefined,
      claimLate: async () => true,
      overdue: async () => [],
      ...answers,
    };
    const store = {} as Record<string, (...args: unknown[]) => unknown>;
    for (const [name, answer] of Object.entries(answering) as [string, (...args: unknown[]) => unknown][]) {
      store[name] = (first: unknown, ...rest: unknown[]) => {
        calls.push(`${name} ${typeof first === 'object' ? (first as { smsId: string }).smsId : String(first)}`);
        return answer(first, ...rest);
      };
    }
    return { store: store as unknown as SharedTrackingLike, calls };
  }

  it("a report for another copy's send is looked up in the store; final or not as its status says; a store that fails or knows nothing gives no msg.sent", async () => {
    const { store, calls } = standInStore({ lookup: async (id) => (id === 'theirs' ? record('theirs') : undefined) });
    const tracker = new DeliveryTracker(new SharedTrackingState(store));
    assert.equal(await tracker.report('theirs', 'delivered'), undefined, 'no events node listens: nothing is asked');
    assert.deepEqual(calls, ['markFinal theirs']);
    tracker.listen({}, 0, () => undefined);
    tracker.track('mine', '420777000001', sent(1));
    const mine = await tracker.report('mine', 'buffered');
    assert.ok(mine && !(mine instanceof Promise));
    assert.deepEqual([mine.sent, mine.final], [sent(1), false]);
    assert.deepEqual(await tracker.report('theirs', 'delivered'), {
      ...record('theirs'),
      final: true,
      forgotten: false,
    });
    assert.equal((await tracker.report('theirs', 'buffered'))?.final, false);
    assert.equal(await tracker.report('unknown', 'delivered'), undefined);
    assert.equal(await tracker.report(42, 'delivered'), undefined, 'an sms_id that is not a string is never looked up');
    assert.deepEqual(
      calls.filter((c) => c.startsWith('markFinal')),
      ['markFinal theirs', 'markFinal theirs', 'markFinal unknown'],
      'each final report is marked for every copy; buffered is not final',
    );
    const failing = new DeliveryTracker(
      new SharedTrackingState(
        standInStore({
          lookup: () => Promise.reject(new Error('down')),
          markFinal: () => Promise.reject(new Error('down')),
        }).store,
      ),
    );
    failing.listen({}, 0, () => undefined);
    assert.equal(await failing.report('theirs', 'delivered'), undefined);
  });

  it("a reply's alarm: this copy's own first, else the last the copies sent to that number; a store that fails gives none", async () => {
    const { store, calls } = standInStore({
      lastTo: async (n) => (n === '420777000009' ? record('theirs') : undefined),
    });
    const tracker = new DeliveryTracker(new SharedTrackingState(store));
    assert.equal(await tracker.lastTo('+420 777 000 009'), undefined, 'no events node listens');
    tracker.listen({}, 0, () => undefined);
    tracker.track('mine', '420777000001', sent(1));
    assert.equal(((await tracker.lastTo('420777000001')) as Tracked).smsId, 'mine');
    assert.deepEqual(await tracker.lastTo('00420 777 000 009'), {
      ...record('theirs'),
      final: false,
      forgotten: false,
    });
    assert.equal(await tracker.lastTo('420777000002'), undefined);
    assert.equal(await tracker.lastTo('no digits'), undefined);
    assert.deepEqual(
      calls.filter((c) => c.startsWith('lastTo')),
      ['lastTo 420777000009', 'lastTo 420777000002'],
    );
    const failing = new DeliveryTracker(
      new SharedTrackingState(standInStore({ lastTo: () => Promise.reject(new Error('down')) }).store),
    );
    failing.listen({}, 0, () => undefined);
    assert.equal(await failing.lastTo('420777000009'), undefined);
  });

  it('every send is recorded in the store; a store that refuses it stops nothing', async () => {
    const { store, calls } = standInStore({ record: () => Promise.reject(new Error('down')) });
    const tracker = new DeliveryTracker(new SharedTrackingState(store));
    tracker.listen({}, 0, () => undefined);
    tracker.track('a', '420777000001', sent(1));
    tracker.track('b', '420777000002', sent(2), Date.now() + 5000);
    await clock.tickAsync(0);
    assert.deepEqual(calls, ['record a', 'record b']);
    assert.equal(tracker.size, 2);
  });

  it('output 3 on one copy only: fired where the claim is won, not where it is lost, and not when the final report came meanwhile; a store that fails fires it here', async () => {
    const claims = new Map<string, () => Promise<boolean>>([
      ['won', async () => true],
      ['lost', async () => false],
      ['failed', () => Promise.reject(new Error('down'))],
    ]);
    let reportMeanwhile: (() => void) | undefined;
    claims.set('answered', () => new Promise((resolve) => (reportMeanwhile = () => resolve(true))));
    const { store } = standInStore({ claimLate: (id) => (claims.get(id) as () => Promise<boolean>)() });
    const tracker = new DeliveryTracker(new SharedTrackingState(store));
    const late: string[] = [];
    tracker.listen({}, 60_000, (t) => late.push(t.smsId));
    for (const id of claims.keys()) tracker.track(id, '420777000001', sent(1));
    await clock.tickAsync(60_000);
    await tracker.report('answered', 'delivered');
    reportMeanwhile?.();
    await clock.tickAsync(0);
    assert.deepEqual(late.sort(), ['failed', 'won']);
  });

  it('output 3 that throws, with a shared store: the others still fire, and no rejection is left unhandled', async () => {
    const unhandled: unknown[] = [];
    const note = (reason: unknown) => unhandled.push(reason);
    process.on('unhandledRejection', note);
    try {
      const tracker = new DeliveryTracker(new SharedTrackingState(standInStore().store));
      const late: string[] = [];
      tracker.listen({}, 60_000, (t) => {
        late.push(t.smsId);
        if (t.smsId === 'throws') throw new Error('an output that throws');
      });
      for (const id of ['throws', 'next']) tracker.track(id, '420777000001', sent(1));
      await clock.tickAsync(60_000);
      // Node reports an unhandled rejection after the microtasks, by the next turn of the loop.
      await new Promise((r) => setImmediate(r));
      assert.deepEqual(late, ['throws', 'next']);
      assert.deepEqual(unhandled, []);
    } finally {
      process.off('unhandledRejection', note);
    }
  });

  it("the look for a stopped copy's sends: skips what this copy knows is final or fired, never overlaps a look still running, and tries again after a failure; a node that throws stops none of the others", async () => {
    let answer: () => Promise<
      SharedTrackingLike extends { overdue(...a: never[]): Promise<infer R> } ? R : never
    > = async () => [];
    let looks = 0;
    const { store } = standInStore({
      overdue: () => {
        looks++;
        return answer();
      },
    });
    const tracker = new DeliveryTracker(new SharedTrackingState(store));
    const late: string[] = [];
    tracker.listen({}, 4_000, (t) => {
      late.push(t.smsId);
      if (t.smsId === 'throws') throw new Error('a broken flow');
    });
    tracker.track('final-here', '420777000001', sent(1));
    await tracker.report('final-here', 'delivered');
    answer = () => Promise.reject(new Error('down'));
    await clock.tickAsync(1_000);
    assert.equal(looks, 1);
    let finish: (records: ReturnType<typeof record>[]) => void = () => undefined;
    answer = () => new Promise((resolve) => (finish = resolve));
    await clock.tickAsync(1_000);
    assert.equal(looks, 2, 'looked again after the failure');
    await clock.tickAsync(3_000);
    assert.equal(looks, 2, 'no second look while one runs');
    finish([record('final-here'), record('throws'), record('other')]);
    await clock.tickAsync(0);
    assert.deepEqual(late, ['throws', 'other']);
    answer = async () => [record('other')];
    await clock.tickAsync(1_000);
    assert.equal(looks, 3);
    assert.deepEqual(
      late,
      ['throws', 'other', 'other'],
      'the store decides "once in all"; this copy fires what it is given',
    );
  });
});

describe('delivery tracking: scheduled sends, repeats and edges (unit, fake clock)', () => {
  let clock: ReturnType<typeof FakeTimers.install>;
  beforeEach(() => {
    clock = FakeTimers.install({
      toFake: ['setTimeout', 'clearTimeout', 'Date', 'performance'],
      now: Date.parse('2026-11-25T10:00:00Z'),
    });
  });
  afterEach(() => clock.uninstall());
  const sent = (i: number) => ({ topic: `t${i}`, payload: i, node: 'n' });

  it("a scheduled send's timeout counts from its schedule, in schedule order whatever the order sent; a schedule in the past counts from acceptance", () => {
    const tracker = new DeliveryTracker(memoryTracking());
    const late: [string, number][] = [];
    const start = Date.now();
    tracker.listen({}, 60_000, (t) => late.push([t.smsId, Date.now() - start]));
    tracker.track('later', '420777000001', sent(1), start + 20_000);
    tracker.track('sooner', '420777000002', sent(2), start + 10_000);
    tracker.track('past', '420777000003', sent(3), start - 5_000);
    tracker.track('now', '420777000004', sent(4), start);
    clock.tick(59_999);
    assert.deepEqual(late, []);
    clock.tick(1);
    assert.deepEqual(late, [
      ['past', 60_000],
      ['now', 60_000],
    ]);
    clock.tick(9_999);
    assert.equal(late.length, 2, 'the sooner schedule: not before 70 s');
    clock.tick(1);
    clock.tick(10_000);
    assert.deepEqual(late.slice(2), [
      ['sooner', 70_000],
      ['later', 80_000],
    ]);
  });

  it('the same sms_id tracked twice is one message: output 3 once, for the later send', () => {
    const tracker = new DeliveryTracker(memoryTracking());
    const late: unknown[] = [];
    tracker.listen({}, 1_000, (t) => late.push(t.sent.payload));
    tracker.track('x', '420777000001', sent(1));
    clock.tick(500);
    tracker.track('x', '420777000001', sent(2));
    assert.equal(tracker.size, 1);
    clock.tick(10_000);
    assert.deepEqual(late, [2]);
  });

  it('a listener without a timeout never fires output 3 and arms no timer; output 3 fired once does not fire again for the next listener', () => {
    const tracker = new DeliveryTracker(memoryTracking());
    const late: string[] = [];
    const events = {};
    tracker.listen(events, 0, (t) => late.push(t.smsId));
    tracker.track('quiet', '420777000001', sent(1));
    assert.equal(clock.countTimers(), 0);
    tracker.listen(events, 1_000, (t) => late.push(t.smsId));
    clock.tick(1_000);
    assert.deepEqual(late, ['quiet'], 'a redeploy with a timeout fires for what was sent before it');
    tracker.listen({}, 1_000, (t) => late.push(`again ${t.smsId}`));
    clock.tick(5_000);
    assert.deepEqual(late, ['quiet']);
  });

  it('not_delivered is final too; a report with an sms_id that is not a string matches nothing; a send without digits has no number to reply to', async () => {
    const tracker = new DeliveryTracker(memoryTracking());
    const late: string[] = [];
    tracker.listen({}, 1_000, (t) => late.push(t.smsId));
    tracker.track('failed', '420777000001', sent(1));
    tracker.track('nameless', 'no digits', sent(2));
    assert.equal((await tracker.report('failed', 'not_delivered'))?.final, true);
    assert.equal(await tracker.report(42 as unknown as string, 'delivered'), undefined);
    assert.equal(await tracker.lastTo(''), undefined);
    clock.tick(1_000);
    assert.deepEqual(late, ['nameless']);
  });

  it('24 hours is kept to the millisecond: a send exactly 24 h old still matches, one a millisecond older does not', async () => {
    const tracker = new DeliveryTracker(memoryTracking());
    tracker.listen({}, 0, () => undefined);
    tracker.track('a', '420777000001', sent(1));
    clock.tick(1);
    tracker.track('b', '420777000002', sent(2));
    clock.tick(24 * 3600 * 1000 - 1);
    assert.ok(await tracker.report('a', 'buffered'), 'exactly 24 h');
    clock.tick(1);
    assert.equal(await tracker.report('a', 'buffered'), undefined);
    assert.ok(await tracker.report('b', 'buffered'));
  });
});

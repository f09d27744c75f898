/**
 * This process's store (unit): where the outbox and the tracked sends are kept (the user
 * directory, one file per account, a name that cannot leave its folder), that they outlive a
 * redeploy (the same log and tracker for the same account), and the sliding window's edges.
 */
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { FileOutboxLog } from '../../nodes/account/outbox-journal';
import { MemoryWindow, localStore } from '../../nodes/account/store';
import { until } from '../support/wait';

/** One send of `messages` at `now`: 0 when it fits, else the ms until the oldest leaves (a run of one). */
const reserve = async (window: MemoryWindow, messages: number, now: number) =>
  (await window.reserveInOrder([messages], now)).wait;

describe("this process's store (unit)", () => {
  let userDir: string;
  beforeEach(() => {
    userDir = mkdtempSync(join(tmpdir(), 'bulkgate-store-'));
  });
  afterEach(() => rmSync(userDir, { recursive: true, force: true }));

  it('is the file store', () => {
    assert.ok(localStore(userDir).outboxLog('acc') instanceof FileOutboxLog);
  });

  it("the outbox: <userDir>/bulkgate-outbox/<account id>.jsonl, one log per file for the process's life; none without a user directory", () => {
    const store = localStore(userDir);
    const log = store.outboxLog('acc');
    assert.equal(log?.where, join(userDir, 'bulkgate-outbox', 'acc.jsonl'));
    assert.equal(localStore(userDir).outboxLog('acc'), log, 'a redeploy (a new store object) gets the same log');
    assert.notEqual(store.outboxLog('other'), log);
    assert.equal(
      store.outboxLog('../../etc/x')?.where,
      join(userDir, 'bulkgate-outbox', '.._.._etc_x.jsonl'),
      'an id cannot leave the folder',
    );
    assert.equal(localStore(undefined).outboxLog('acc'), undefined);
  });

  it("tracking: one tracker per account and user directory for the process's life, kept in <userDir>/bulkgate-tracking/ once an events node listens", async () => {
    const tracker = localStore(userDir).tracker('acc');
    assert.equal(localStore(userDir).tracker('acc'), tracker);
    assert.notEqual(localStore(userDir).tracker('acc2'), tracker);
    const elsewhere = mkdtempSync(join(tmpdir(), 'bulkgate-store-'));
    try {
      assert.notEqual(localStore(elsewhere).tracker('acc'), tracker, 'two runtimes in one process keep their own');
    } finally {
      rmSync(elsewhere, { recursive: true, force: true });
    }
    const owner = {};
    tracker.listen(owner, 0, () => undefined);
    tracker.track('sms-1', '420777000001', { topic: 't', payload: 'p', node: 'n' });
    tracker.unlisten(owner);
    // Written in one go after the current turn, without waiting on it.
    await until('the tracking file written', () => existsSync(join(userDir, 'bulkgate-tracking', 'acc.jsonl')));
    assert.equal(existsSync(join(userDir, 'bulkgate-tracking', 'acc.jsonl')), true);
    // Without a user directory: remembered in memory, nothing written anywhere.
    const memoryOnly = localStore(undefined).tracker('acc-memory');
    memoryOnly.listen(owner, 0, () => undefined);
    memoryOnly.track('sms-2', '420777000002', { topic: 't', payload: 'p', node: 'n' });
    assert.equal((await memoryOnly.report('sms-2', 'delivered'))?.smsId, 'sms-2');
    memoryOnly.unlisten(owner);
  });

  it('the window: its own per account, with the limit and length asked for', () => {
    const window = localStore(userDir).rateWindow('acc', 3, 2_000) as MemoryWindow;
    assert.deepEqual([window.limit, window.windowMs], [3, 2_000]);
    assert.notEqual(localStore(userDir).rateWindow('acc', 3, 2_000), window);
  });

  it('the window slides: a message exactly one window old has left it; several messages reserve together or not at all', async () => {
    const window = new MemoryWindow(3, 1_000);
    assert.equal(await reserve(window, 2, 5_000), 0);
    assert.equal(await reserve(window, 2, 5_100), 901, 'two do not fit beside two: wait until 6,000 (+1)');
    assert.equal(await reserve(window, 1, 5_100), 0, 'one does');
    assert.equal(await reserve(window, 1, 5_999), 2, 'full until the two of 5,000 leave');
    assert.equal(await reserve(window, 2, 6_000), 0, 'at 6,000 the two of 5,000 have left');
    assert.equal(await reserve(window, 1, 6_000), 101, 'the one of 5,100 leaves at 6,100');
    void window.refund(10); // counted at once; the promise only says so
    assert.equal(await reserve(window, 3, 6_000), 0, 'a refund of more than it holds empties it, no more');
    assert.equal(await reserve(window, 1, 6_000), 1_001, 'full: the oldest (now) leaves in a window (+1)');
  });

  it('a run of sends: as many as fit, from the first; a smaller one behind the first that does not fit never overtakes it', async () => {
    const window = new MemoryWindow(4, 1_000);
    assert.deepEqual(await window.reserveInOrder([1, 2, 2, 1], 5_000), { passed: 2, wait: 1_001 });
    assert.deepEqual(
      await window.reserveInOrder([1], 5_000),
      { passed: 1, wait: 0 },
      'the last place: the one behind the 2 did not take it',
    );
    assert.deepEqual(await window.reserveInOrder([], 5_000), { passed: 0, wait: 0 });
  });
});

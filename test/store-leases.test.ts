/**
 * The shared outbox's leases, done lists and attempts against a real redis-server: a copy sends an
 * entry only under a claim it renewed in time, checked and recorded by one script; the copy that
 * adopts an entry knows whether another's attempt had no answer, and how long ago by the server's
 * clock; a store rolled back to an older snapshot does not make what was ended go again.
 */
import assert from 'node:assert/strict';
import { createClient, RESP_TYPES, type RedisClientType } from '@redis/client';
import { GatewayError, sendOperation, type Operation } from '../gateway';
import { Outbox, type OutboxWorker } from '../nodes/account/outbox';
import { endsUnconfirmed, type OutboxLog } from '../nodes/account/outbox-log';
import { keyPrefix, openStoreCalls, RedisOutboxLog, SharedTracking } from '../nodes/account/redis-store';
import type { StoreCalls } from '../nodes/account/store-scripts';
import { startRedis, type TestRedis } from './support/redis';
import { until } from './support/wait';

const SIMPLE = sendOperation('transactional', { api: 'simple', version: '1.0' });
const ADVANCED = sendOperation('transactional', { api: 'advanced', version: '2.0' });

const line = (id: string, since = Date.now(), operation: Operation = ADVANCED) =>
  JSON.stringify({ id, since, node: 't', operation, body: {}, order: 0, attempts: 1, reason: '' });

/** The server's time, ms. */
async function serverNow(admin: RedisClientType): Promise<number> {
  const [seconds, micros] = (await admin.sendCommand(['TIME'])) as unknown as [string, string];
  return Number(seconds) * 1000 + Math.floor(Number(micros) / 1000);
}

/** A worker whose sends the gateway takes, each msg's `seq` noted where it settles. */
function worker(settled: unknown[]): OutboxWorker {
  return {
    minutes: 60,
    firstDelay: 20,
    size: 100,
    account: 'leases',
    concurrency: 4,
    report: () => undefined,
    transient: (error) => error instanceof GatewayError && error.retryable,
    send: async () => ({ record: { status: 'accepted', number: '420777123456' }, rejected: false }) as never,
    settle: (_entry, msg) => void settled.push((msg as { seq?: unknown }).seq),
  };
}

describe('the shared outbox under leases (redis-server)', function () {
  this.timeout(30_000);
  let redis: TestRedis;
  let admin: RedisClientType;
  let store: StoreCalls & { close(): void };
  before(async () => {
    redis = await startRedis();
    admin = createClient({ url: redis.url }) as RedisClientType;
    await admin.connect();
    store = await openStoreCalls(redis.url);
  });
  after(async () => {
    store?.close();
    admin?.destroy();
    await redis?.stop();
  });
  const lapsed = (key: string) =>
    until(`${key} to lapse`, async () => (await admin.exists(key)) === 0, 5000, { every: 20 });

  it("a copy attempts only under its lease (a claim renewed less than 4/5 of the claim time ago); a lapsed claim no copy took is taken back by a renewal; one another copy took is gone from it, and its done is that copy's", async () => {
    const prefix = keyPrefix('leases');
    const claim = `${prefix}outbox:claim:e1`;
    const [a, b] = [
      new RedisOutboxLog(() => store, prefix, 'copy-a', 600, 0),
      new RedisOutboxLog(() => store, prefix, 'copy-b', 600, 0),
    ];
    await a.keep(line('e1'), 100);
    assert.equal(await a.attempt('e1', true), 'go');
    // Waits for the clock itself: 500 ms after the attempt renewed it, 100 ms of the claim are left at the server, but not a fifth.
    await new Promise((r) => setTimeout(r, 500));
    assert.equal(await a.attempt('e1', true), 'wait', "the lease lapsed by the copy's own clock");
    assert.deepEqual(await a.renew(['e1']), { lost: [], taken: [] });
    assert.equal(await a.attempt('e1', true), 'go', 'renewed');
    await lapsed(claim);
    assert.deepEqual(await a.renew(['e1']), { lost: [], taken: [] });
    assert.equal(await admin.get(claim), 'copy-a', 'taken back: no copy took it meanwhile');
    await lapsed(claim);
    assert.deepEqual(
      (await b.adoptable(() => false)).map((found) => found.entry.id),
      ['e1'],
    );
    assert.equal(await a.attempt('e1', true), 'wait', "copy A's lease lapsed with its claim");
    assert.deepEqual(await a.renew(['e1']), { lost: [], taken: ['e1'] }, 'copy B holds it now');
    assert.equal(await a.done('e1'), false, "not copy A's to end: copy B's end is the msg's one end");
    assert.equal(await b.done('e1'), true);
    assert.deepEqual(await a.renew(['e1']), { lost: [], taken: ['e1'] }, 'ended by copy B: not written back by copy A');
    // A server whose clock ran fast: copy A's claim lapsed there early and copy B took the entry, while A's lease still holds.
    await a.keep(line('e2'), 100);
    await admin.set(`${prefix}outbox:claim:e2`, 'copy-b');
    assert.equal(await a.attempt('e2', true), 'gone', 'the script checks the claim again');
  });

  it("an attempt without an answer: the adopting copy is told its age by the server's clock; simple 1.0 ends unconfirmed, advanced goes again with duplicates_check only within the gateway's duplicate window (less two minutes)", async () => {
    const prefix = keyPrefix('attempts');
    const [a, b] = [
      new RedisOutboxLog(() => store, prefix, 'copy-a', 1000, 0),
      new RedisOutboxLog(() => store, prefix, 'copy-b', 1000, 0),
    ];
    await a.keep(line('simple', Date.now(), SIMPLE), 100);
    await a.keep(line('fresh'), 100);
    await a.keep(line('answered'), 100);
    await a.keep(line('stale'), 100);
    for (const id of ['simple', 'fresh', 'answered', 'stale']) assert.equal(await a.attempt(id, id !== 'simple'), 'go');
    // The request of `answered` did not reach the gateway: its record goes.
    a.back('answered');
    await until('the answered one back', async () => !(await admin.hExists(`${prefix}outbox:attempts`, 'answered')));
    // Copy A's attempt of `stale` was 4 minutes ago by the server's clock.
    await admin.hSet(`${prefix}outbox:attempts`, 'stale', `copy-a ${(await serverNow(admin)) - 240_000}`);
    for (const id of ['simple', 'fresh', 'answered', 'stale']) await lapsed(`${prefix}outbox:claim:${id}`);
    const found = new Map((await b.adoptable(() => false)).map((f) => [f.entry.id, f]));
    assert.deepEqual([...found.keys()].sort(), ['answered', 'fresh', 'simple', 'stale']);
    assert.equal(found.get('answered')?.attempted, undefined);
    for (const id of ['simple', 'fresh']) {
      assert.equal(found.get(id)?.attempted, true);
      assert.ok((found.get(id)?.attemptAgeMs as number) < 5000, `${id}: ${found.get(id)?.attemptAgeMs} ms ago`);
    }
    assert.ok((found.get('stale')?.attemptAgeMs as number) >= 240_000);
    assert.deepEqual(
      ['simple', 'fresh', 'stale'].map((id) => endsUnconfirmed(id !== 'simple', found.get(id)?.attemptAgeMs)),
      [true, false, true],
    );
    // Asked again at the attempt (the resend may have waited since): the earlier attempt is the one the gateway may have.
    assert.equal(await b.attempt('fresh', true), 'go');
    assert.equal(await b.attempt('stale', true), 'unconfirmed');
    assert.equal(await b.attempt('answered', true), 'go');
    b.back('fresh');
    // After the back on the one connection: the attempt waits for it.
    assert.equal(await b.attempt('answered', true), 'go');
    assert.match(
      (await admin.hGet(`${prefix}outbox:attempts`, 'fresh')) ?? '',
      /^copy-a /,
      "copy B's answer does not clear copy A's attempt",
    );
  });

  it("an attempt that may have reached the gateway (no answer that it did not), then the next: a store that lost the record has the first one's time again at the copy's renew, as the store kept it", async () => {
    const prefix = keyPrefix('unanswered-first');
    const a = new RedisOutboxLog(() => store, prefix, 'copy-a', 5000, 0);
    await a.keep(line('e1'), 100);
    assert.equal(await a.attempt('e1', true), 'go');
    const [, first] = ((await admin.hGet(`${prefix}outbox:attempts`, 'e1')) as string).split(' ');
    // Its request timed out (it may have reached the gateway): no `back`. It goes again 500 ms later.
    await new Promise((resolve) => setTimeout(resolve, 500));
    assert.equal(await a.attempt('e1', true), 'go');
    assert.equal(
      ((await admin.hGet(`${prefix}outbox:attempts`, 'e1')) as string).split(' ')[1],
      first,
      "the store keeps the first attempt's time",
    );
    // Restored from a snapshot without the record: the renew writes it again.
    await admin.hDel(`${prefix}outbox:attempts`, 'e1');
    await a.renew(['e1']);
    const [, again] = ((await admin.hGet(`${prefix}outbox:attempts`, 'e1')) as string).split(' ');
    assert.ok(
      Number(again) - Number(first) < 250,
      `recorded again ${Number(again) - Number(first)} ms after the first`,
    );
  });

  it('a store rolled back to an older snapshot: what a copy ended comes back and that copy ends it again; no copy adopts and sends it', async () => {
    const prefix = keyPrefix('rollback');
    const keys = [
      'outbox',
      'outbox:entries',
      'outbox:attempts',
      'outbox:ended',
      'outbox:ended-by',
      'outbox:orphans',
    ].map((k) => `${prefix}${k}`);
    const settledA: unknown[] = [];
    const settledB: unknown[] = [];
    const a = new Outbox(new RedisOutboxLog(() => store, prefix, 'copy-a', 600, 1500), () => undefined);
    const b = new Outbox(new RedisOutboxLog(() => store, prefix, 'copy-b', 600, 1500), () => undefined);
    for (let seq = 0; seq < 3; seq++)
      await a.keep(
        {
          node: 't',
          operation: ADVANCED,
          body: {},
          rejected: [],
          messages: 1,
          msg: { seq },
          since: Date.now(),
          order: seq,
          attempts: 1,
          reason: '',
        },
        {},
      );
    // The snapshot, taken while the three wait.
    const binary = admin.withTypeMapping({ [RESP_TYPES.BLOB_STRING]: Buffer });
    const snapshot = new Map<string, Buffer>();
    for (const key of keys) {
      const dumped = await binary.dump(key);
      if (dumped) snapshot.set(key, dumped);
    }
    const [workerA, workerB] = [worker(settledA), worker(settledB)];
    a.attach(workerA);
    b.attach(workerB);
    try {
      await until(
        'the three sent and ended by copy A',
        async () => settledA.length === 3 && (await admin.hLen(`${prefix}outbox:entries`)) === 0,
      );
      // Restored: the entries are back, their claims (set by copy A) lapsed meanwhile.
      for (const key of keys) await admin.del(key);
      for (const [key, value] of snapshot) await admin.restore(key, 0, value);
      assert.equal(await admin.hLen(`${prefix}outbox:entries`), 3);
      await until('the three ended again', async () => (await admin.hLen(`${prefix}outbox:entries`)) === 0, 10_000);
      // Waits for the clock itself: a claim and a grace more, in which copy B would adopt what is left.
      await new Promise((r) => setTimeout(r, 2500));
      assert.deepEqual(settledB, [], 'copy B adopted and sent none');
      assert.deepEqual([...settledA].sort(), [0, 1, 2], 'each ended once at copy A');
    } finally {
      await a.detach(workerA);
      await b.detach(workerB);
    }
  });

  it("a copy killed between an entry's done and its port: another copy hands that msg on once, marked afterRestart, from how it ended; one whose msg left is not handed on", async () => {
    const prefix = keyPrefix('emitted');
    const a: OutboxLog = new RedisOutboxLog(() => store, prefix, 'copy-a', 600, 0);
    const end = { attempts: 2, result: { status: 'accepted', number: '420777123456' } };
    for (const [id, seq] of [
      ['left', 1],
      ['cut', 2],
    ] as const) {
      await a.keep(JSON.stringify({ ...JSON.parse(line(id)), msg: { seq } }), 100);
      assert.equal(await a.attempt(id, true), 'go');
      assert.equal(await a.done(id, '', end), true);
    }
    // The msg of `left` came out of its port; copy A is killed before the port of `cut` (it never looks again).
    a.emitted('left', 0);
    await until(
      'the store told that the msg of left left',
      async () => !(await admin.zScore(`${prefix}outbox:handing`, 'left')),
    );
    const settled: { seq: unknown; afterRestart: boolean; outcome: unknown }[] = [];
    const b = new Outbox(new RedisOutboxLog(() => store, prefix, 'copy-b', 600, 0), () => undefined);
    const workerB: OutboxWorker = {
      ...worker([]),
      settle: (_entry, msg, outcome, afterRestart) =>
        void settled.push({ seq: (msg as { seq?: unknown }).seq, afterRestart, outcome }),
    };
    b.attach(workerB);
    try {
      await until('the msg of cut handed on by copy B', () => settled.length > 0, 10_000);
      await until(
        'its line gone from the store',
        async () =>
          (await admin.zCard(`${prefix}outbox:handing`)) === 0 && (await admin.keys(`${prefix}*claim*`)).length === 0,
      );
      // Waits for the clock itself: a claim and more, in which copy B would hand on anything left.
      await new Promise((r) => setTimeout(r, 1500));
      assert.deepEqual(settled, [{ seq: 2, afterRestart: true, outcome: { result: end.result } }]);
    } finally {
      await b.detach(workerB);
    }
  });

  it("the times of shared entries are the server's: an entry kept by a copy whose clock runs an hour ahead is adopted as just kept; a tracked send's time counts from the server's", async () => {
    const prefix = keyPrefix('server-time');
    const [a, b] = [
      new RedisOutboxLog(() => store, prefix, 'copy-a', 300, 0),
      new RedisOutboxLog(() => store, prefix, 'copy-b', 300, 0),
    ];
    const ahead = Date.now() + 3_600_000;
    await a.keep(JSON.stringify({ ...JSON.parse(line('e1', ahead)), deadline: ahead + 600_000 }), 100);
    const server = await serverNow(admin);
    assert.ok(
      Math.abs(Number(await admin.zScore(`${prefix}outbox`, 'e1')) - server) < 5000,
      "placed by the server's time",
    );
    await lapsed(`${prefix}outbox:claim:e1`);
    const [found] = await b.adoptable(() => false);
    const entry = found?.entry as unknown as { since: number; deadline: number };
    assert.ok(Math.abs(entry.since - Date.now()) < 5000, `adopted as just kept: ${Date.now() - entry.since} ms old`);
    assert.equal(entry.deadline - entry.since, 600_000, 'its give-up time still 10 minutes after it');
    // A send recorded by that copy, scheduled a minute on: by the server's time, the schedule's wait from it.
    const tracking = new SharedTracking(() => store, prefix);
    await tracking.record({
      smsId: 'id-1',
      number: '420777000001',
      sent: { node: 't' } as never,
      acceptedAt: ahead,
      countsFrom: Date.now() + 60_000,
    });
    assert.ok(
      Math.abs(Number(await admin.zScore(`${prefix}sent`, 'id-1')) - server) < 5000,
      "accepted at the server's time",
    );
    const waiting = Number(await admin.zScore(`${prefix}waiting`, 'id-1'));
    assert.ok(
      Math.abs(waiting - (server + 60_000)) < 5000,
      `its report time counts from the server's time, a minute on: ${waiting - server} ms`,
    );
  });
});

/**
 * The shared store's building blocks against a real redis-server: the settings' checks, the keys,
 * one rate window for several copies, and the claim that lets one copy send an alert that
 * several raised at once.
 */
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createServer, type Server, type Socket } from 'node:net';
import { createClient, type RedisClientType } from '@redis/client';
import { GatewayError } from '../gateway';
import { Outbox, type OutboxWorker } from '../nodes/account/outbox';
import {
  AlertClaims,
  checkStore,
  keyPrefix,
  openStoreCalls,
  RedisOutboxLog,
  RedisWindow,
  SharedTracking,
  redisStore,
} from '../nodes/account/redis-store';
import { storeUrlProblem } from '../nodes/plumbing/store-url';
import { localStore } from '../nodes/account/store';
import type { StoreCalls } from '../nodes/account/store-scripts';
import { freePort } from './support/node-red-process';
import { startRedis, type TestRedis } from './support/redis';
import { until } from './support/wait';

/**
 * A redis-server for the suite that calls it, and a client per copy of Node-RED (`copy`), all
 * closed after it. Each copy's calls are timed as the account's are.
 */
function useRedis(): {
  copy: (timeoutMs?: number, onHung?: (hung: boolean) => void) => Promise<StoreCalls>;
  raw: () => Promise<RedisClientType>;
  server: () => TestRedis;
} {
  let redis: TestRedis | undefined;
  const clients: { close(): unknown }[] = [];
  before(async () => {
    redis = await startRedis();
  });
  after(async () => {
    await Promise.all(clients.map(async (c) => c.close()).map((closed) => closed.catch(() => undefined)));
    await redis?.stop();
  });
  /** Another client, for what the test itself asks of the server. */
  const raw = async () => {
    const client = createClient({ url: (redis as TestRedis).url });
    clients.push(client);
    await client.connect();
    return client as RedisClientType;
  };
  /** The package's own calls, as a copy of Node-RED makes them. */
  const copy = async (timeoutMs?: number, onHung?: (hung: boolean) => void) => {
    const made = await openStoreCalls((redis as TestRedis).url, undefined, timeoutMs, onHung);
    clients.push(made);
    return made;
  };
  return { copy, raw, server: () => redis as TestRedis };
}

/** A fake store: `serve` gets each connection (its errors ignored); the URL it listens at. */
async function fakeServer(serve: (socket: Socket) => void): Promise<{ url: string; server: Server }> {
  const server = createServer((socket) => {
    socket.on('error', () => undefined);
    serve(socket);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { url: `redis://127.0.0.1:${(server.address() as { port: number }).port}`, server };
}

/** A copy's store at `url`, and the states it told. */
function storeAt(url: string, applicationId: string, password?: string) {
  const states: string[] = [];
  const store = redisStore({ url, password, applicationId }, localStore(undefined), {
    onState: (state, detail) => states.push(`${state}: ${detail}`),
  });
  return { store, states };
}

/** Waits until no key of the store matches `pattern` (a claim or a window that lapsed: Redis's clock, not the test's). */
const lapsed = (client: RedisClientType, pattern: string) =>
  until(`${pattern} to lapse`, async () => (await client.keys(pattern)).length === 0, 5000, { every: 20 });

/** The ms one send of `messages` waits (0: it fits), asked as a run of one. */
const reserve = async (window: RedisWindow, messages: number) => (await window.reserveInOrder([messages])).wait;

/** Whether this copy sends the alert (false: another copy does). */
const ours = async (claims: AlertClaims, nodeId: string, body: string) => (await claims.claim(nodeId, body)).ours;

describe('the shared store (redis-server)', function () {
  this.timeout(20_000);
  const { copy, raw } = useRedis();

  it('storeUrl: redis:// or rediss://, never with a password (it would sit in the flows file)', () => {
    assert.equal(storeUrlProblem('redis://127.0.0.1:6379'), undefined);
    assert.equal(storeUrlProblem('rediss://cache.example:6380/2'), undefined);
    assert.match(storeUrlProblem('redis://:secret@127.0.0.1:6379') ?? '', /must not carry a password/);
    assert.match(storeUrlProblem('redis://user:secret@127.0.0.1') ?? '', /must not carry a password/);
    assert.match(storeUrlProblem('http://127.0.0.1:6379') ?? '', /must start with redis:\/\//);
    assert.match(storeUrlProblem('') ?? '', /storeUrl is required/);
    assert.match(storeUrlProblem('not a url') ?? '', /not a URL/);
    assert.equal(storeUrlProblem('redis://alice@127.0.0.1:6379/'), undefined);
    assert.match(storeUrlProblem('redis://%E0@127.0.0.1') ?? '', /user name is not a well-formed escaped name/);
    assert.match(storeUrlProblem('redis://127.0.0.1/abc') ?? '', /database's number/);
    assert.match(storeUrlProblem('redis://127.0.0.1/1/') ?? '', /database's number/);
    // An unparseable URL is never echoed: it may hold a password.
    assert.doesNotMatch(storeUrlProblem('redis://:s3cret@[bad') ?? '', /s3cret/);
  });

  it("keys are per application: a hash of its id, never the id itself, in braces (Redis Cluster's hash tag: one slot per account)", () => {
    assert.notEqual(keyPrefix('10000'), keyPrefix('10001'));
    assert.match(keyPrefix('10000'), /^bulkgate:\{[0-9a-f]{16}\}:$/);
    assert.equal(keyPrefix('10000'), keyPrefix('10000'));
    assert.ok(!keyPrefix('10000').includes('10000'));
  });

  it('one window for two copies: 5 per 2 s holds across both; the 6th waits until the oldest leaves; a refund frees a place', async () => {
    const [a, b] = [await copy(), await copy()];
    const key = `${keyPrefix('window-test')}window`;
    const windows = [new RedisWindow(a, key, 5, 2000), new RedisWindow(b, key, 5, 2000)];
    const answers: number[] = [];
    for (let i = 0; i < 5; i++) answers.push(await reserve(windows[i % 2] as RedisWindow, 1));
    assert.deepEqual(answers, [0, 0, 0, 0, 0]);
    const wait = await reserve(windows[1] as RedisWindow, 1);
    assert.ok(wait > 0 && wait <= 2001, `waits ${wait} ms`);
    await (windows[0] as RedisWindow).refund(1);
    assert.equal(await reserve(windows[1] as RedisWindow, 1), 0);
    assert.ok((await reserve(windows[0] as RedisWindow, 2)) > 0, 'two more do not fit');
  });

  it('a run of sends in one question: as many as fit, from the first; the one behind the first that does not fit waits too', async () => {
    const window = new RedisWindow(await copy(), `${keyPrefix('window-run')}window`, 4, 2000);
    const first = await window.reserveInOrder([1, 2, 2, 1]);
    assert.equal(first.passed, 2);
    assert.ok(first.wait > 0 && first.wait <= 2001, `waits ${first.wait} ms`);
    assert.deepEqual(await window.reserveInOrder([1]), { passed: 1, wait: 0 }, 'the last place was left for it');
    assert.equal((await window.reserveInOrder([1])).passed, 0);
  });

  it('an alert raised by two copies at once: one claims it, the other is told it is a copy; a repeat by the holder is not affected; after the window, anyone', async () => {
    const [a, b] = [await copy(), await copy()];
    const prefix = keyPrefix('claim-test');
    const copyA = new AlertClaims(a, prefix, 'copy-a', 300);
    const copyB = new AlertClaims(b, prefix, 'copy-b', 300);
    const body = JSON.stringify({ number: '420777000001', text: 'Door open' });
    const raced = await Promise.all([ours(copyA, 't1', body), ours(copyB, 't1', body)]);
    assert.deepEqual([...raced].sort(), [false, true], 'exactly one copy sends it');
    const winner = raced[0] === true ? copyA : copyB;
    assert.equal(await ours(copyA, 't1', body), winner === copyA);
    assert.equal(await ours(winner, 't1', body), true, 'a repeat from the same copy');
    assert.equal(await ours(copyB, 't2', body), true, 'another node is another alert');
    assert.equal(await ours(copyB, 't1', `${body} `), true, 'another body is another alert');
    await lapsed(await raw(), `${prefix}claim:*`);
    const loser = winner === copyA ? copyB : copyA;
    assert.equal(await ours(loser, 't1', body), true, 'after the window');
  });

  it("the storm guard's window shared by two copies: the limit counts both copies' sends; the held count is collected once, with every copy's; a new window after it ends", async () => {
    const [a, b] = [await copy(), await copy()];
    const prefix = keyPrefix('storm-test');
    const copyA = new AlertClaims(a, prefix, 'copy-a', 300);
    const copyB = new AlertClaims(b, prefix, 'copy-b', 300);
    const storm = { limit: 3, windowMs: 400 };
    const body = (i: number) => JSON.stringify({ number: '420777000001', text: `Alarm ${i}` });
    // Seven different alerts, taken in turn by the two copies, all at once.
    const decisions = await Promise.all(
      Array.from({ length: 7 }, (_, i) => (i % 2 ? copyB : copyA).claim('t1', body(i), storm)),
    );
    assert.ok(
      decisions.every((d) => d.ours && d.storm),
      JSON.stringify(decisions),
    );
    assert.equal(decisions.filter((d) => d.storm?.admitted).length, 3, 'three in all, not three per copy');
    const windows = new Set(decisions.map((d) => d.storm?.window));
    assert.equal(windows.size, 1, 'one window for both copies');
    assert.ok(
      decisions.every((d) => (d.storm?.endsInMs ?? -1) > 0 && (d.storm?.endsInMs ?? 0) <= 400),
      'each told when it ends',
    );
    const window = [...windows][0] as string;
    assert.equal(await copyB.collectHeld('t1', window), 4, 'the count held at both copies');
    assert.equal(await copyA.collectHeld('t1', window), 0, 'collected once: the other copy sends no notice');
    assert.equal((await copyA.claim('t2', body(0), storm)).storm?.admitted, true, 'another node has its own window');
    assert.deepEqual(await copyA.claim('t3', body(0)), { ours: true }, 'the storm guard off: the claim only');
    const copyOf = await copyB.claim('t3', body(0), storm);
    assert.deepEqual(copyOf, { ours: false }, 'a copy of an alert another copy sends is not counted');
    await lapsed(await raw(), `${prefix}storm:t1`);
    const next = await copyA.claim('t1', body(20), storm);
    assert.equal(next.storm?.admitted, true, 'a new window after it ended');
    assert.notEqual(next.storm?.window, window);
  });
});

describe('shared delivery tracking (redis-server)', function () {
  this.timeout(20_000);
  const { copy, raw } = useRedis();
  const record = (i: number) => ({
    smsId: `id-${i}`,
    number: `420777${String(i).padStart(6, '0')}`,
    sent: { topic: `t${i}`, payload: i, node: 'n' },
    acceptedAt: 1000 + i,
    countsFrom: 1000 + i,
  });

  it('each call stands alone: a report whose id is a lone surrogate is looked up like any other (nothing found), beside calls made at once', async () => {
    const prefix = keyPrefix('tracking-surrogate');
    const client = await copy();
    const tracking = new SharedTracking(() => client, prefix);
    const [bad, recorded, good] = await Promise.allSettled([
      tracking.lookup('\ud800'),
      tracking.record(record(7)),
      tracking.lookup('id-9'),
    ]);
    assert.deepEqual(bad, { status: 'fulfilled', value: undefined });
    assert.equal(recorded.status, 'fulfilled');
    assert.deepEqual(good, { status: 'fulfilled', value: undefined });
    assert.deepEqual(await tracking.lookup('id-7'), record(7));
  });

  it('a send recorded by one copy is found by another, by sms_id and by number; a final report at either ends output 3 on both; output 3 fires on one copy only', async () => {
    const prefix = keyPrefix('tracking-test');
    const [clientA, clientB] = [await copy(), await copy()];
    const [a, b] = [new SharedTracking(() => clientA, prefix), new SharedTracking(() => clientB, prefix)];
    await a.record(record(1));
    await a.record(record(2));
    assert.deepEqual(await b.lookup('id-1'), record(1));
    assert.equal((await b.lastTo('420777000002'))?.smsId, 'id-2');
    assert.equal(await b.lookup('id-9'), undefined);
    await b.markFinal('id-1');
    assert.equal(await a.claimLate('id-1'), false, 'delivered: no output 3');
    const claims = await Promise.all([a.claimLate('id-2'), b.claimLate('id-2')]);
    assert.deepEqual([...claims].sort(), [false, true], 'output 3 on one copy');
  });

  it('the sends a stopped copy left: overdue ones are claimed for output 3 once in all, never one with a final report, one already fired, or one whose time has not run out', async () => {
    const prefix = keyPrefix('tracking-overdue');
    const [clientA, clientB] = [await copy(), await copy()];
    const [a, b] = [new SharedTracking(() => clientA, prefix), new SharedTracking(() => clientB, prefix)];
    const now = Date.now();
    const at = (i: number, countsFrom: number) => ({ ...record(i), acceptedAt: countsFrom, countsFrom });
    await a.record(at(1, now - 60_000)); // silent for a minute
    await a.record(at(2, now - 60_000)); // delivered
    await a.record(at(3, now - 60_000)); // its copy's own watch fired output 3
    await a.record(at(4, now - 9_000)); // its time (5 s) ran out, but less than a grace (5 s) ago
    await a.record(at(5, now + 3_600_000)); // scheduled in an hour
    await b.markFinal('id-2');
    assert.equal(await a.claimLate('id-3'), true);
    const [fromA, fromB] = await Promise.all([a.overdue(5000, 5000), b.overdue(5000, 5000)]);
    assert.deepEqual([...fromA, ...fromB], [at(1, now - 60_000)], 'once, on one copy');
    assert.deepEqual(await b.overdue(5000, 5000), [], 'never twice');
    assert.equal(await a.claimLate('id-1'), false, "the sender's own watch does not fire it again");
    assert.deepEqual(
      (await b.overdue(5000, 3000)).map((r) => r.smsId),
      ['id-4'],
      'past its time and the grace',
    );
  });

  it('at most 10,000 (here 3) are remembered: the oldest is forgotten first', async () => {
    const prefix = keyPrefix('tracking-bound');
    const client = await copy();
    const tracking = new SharedTracking(() => client, prefix, 3);
    for (let i = 0; i < 5; i++) await tracking.record(record(i));
    assert.equal(await tracking.lookup('id-0'), undefined);
    assert.equal(await tracking.lookup('id-1'), undefined);
    assert.deepEqual(await tracking.lookup('id-4'), record(4));
  });

  it('the bound holds after records made at once too: the newest stay, every key of the others goes', async () => {
    const prefix = keyPrefix('tracking-batch-bound');
    const client = await copy();
    const tracking = new SharedTracking(() => client, prefix, 3);
    await Promise.all(Array.from({ length: 8 }, (_, i) => tracking.record(record(i))));
    const kept = await Promise.all(Array.from({ length: 8 }, (_, i) => tracking.lookup(`id-${i}`)));
    assert.deepEqual(
      kept.map((found) => found?.smsId ?? null),
      [null, null, null, null, null, 'id-5', 'id-6', 'id-7'],
    );
    const redis = await raw();
    assert.equal(await redis.zCard(`${prefix}sent`), 3);
    assert.equal(await redis.zCard(`${prefix}waiting`), 3);
    assert.equal((await redis.keys(`${prefix}sent:*`)).length, 3);
  });
});

describe('the shared outbox (redis-server)', function () {
  this.timeout(20_000);
  const { copy, raw } = useRedis();
  let shared: StoreCalls;
  let admin: RedisClientType;
  before(async () => {
    shared = await copy();
    admin = await raw();
  });
  const line = (id: string, since: number) =>
    JSON.stringify({ id, since, node: 't', operation: {}, body: {}, order: 0, attempts: 1, reason: '' });

  it("the bound counts every copy's waiting messages: outbox_full at the size, room again when one leaves", async () => {
    const prefix = keyPrefix('outbox-bound');
    const [a, b] = [
      new RedisOutboxLog(() => shared, prefix, 'copy-a'),
      new RedisOutboxLog(() => shared, prefix, 'copy-b'),
    ];
    await a.keep(line('e1', 1), 2);
    await b.keep(line('e2', 2), 2);
    await assert.rejects(a.keep(line('e3', 3), 2), (e: GatewayError) => e.type === 'outbox_full');
    await b.done('e2');
    await a.keep(line('e3', 3), 2);
  });

  it("a copy's entries are another's only once its claim lapses, oldest first; a renewed claim keeps them", async () => {
    const prefix = keyPrefix('outbox-adopt');
    // No grace after a claim lapsed (its own test is below): adopted at the first look.
    const [a, b] = [
      new RedisOutboxLog(() => shared, prefix, 'copy-a', 300, 0),
      new RedisOutboxLog(() => shared, prefix, 'copy-b', 300, 0),
    ];
    // A second apart: the server places an entry by its own time less the entry's age, so two entries kept
    // a moment apart are ordered to within a request's latency (they were 1 ms apart, and came out swapped).
    const now = Date.now();
    await a.keep(line('second', now - 1000), 100);
    await a.keep(line('first', now - 2000), 100);
    await a.keep(line('renewed', now), 100);
    assert.deepEqual(await b.adoptable(() => false), [], 'claimed by copy A');
    // Renewed when two thirds of its 300 ms are gone: the renewal is what keeps it past the others.
    await until(
      'two thirds of the claim gone',
      async () => (await admin.pTTL(`${prefix}outbox:claim:renewed`)) <= 100,
      5000,
      { every: 10 },
    );
    await a.renew(['renewed']);
    await lapsed(admin, `${prefix}outbox:claim:first`);
    await lapsed(admin, `${prefix}outbox:claim:second`);
    const adopted = await b.adoptable(() => false);
    assert.deepEqual(
      adopted.map((e) => (e.entry as unknown as { id: string }).id),
      ['first', 'second'],
    );
    assert.deepEqual(await a.adoptable(() => false), [], 'now claimed by copy B');
  });
});

describe("the store's calls (redis-server)", function () {
  this.timeout(20_000);
  const { copy, raw, server } = useRedis();

  it('a call that fails fails alone; a server that forgot the scripts (SCRIPT FLUSH) gets them again', async () => {
    const client = await raw();
    const store = await copy();
    const prefix = keyPrefix('calls-fail');
    await client.set(`${prefix}window`, 'not a sorted set');
    const window = new RedisWindow(store, `${prefix}window`, 3, 5000);
    const claims = new AlertClaims(store, prefix, 'copy-a', 5000);
    const [reserved, claimed] = await Promise.allSettled([reserve(window, 1), ours(claims, 't', 'alert')]);
    assert.equal(reserved.status, 'rejected');
    assert.match(String((reserved as PromiseRejectedResult).reason), /WRONGTYPE/);
    assert.deepEqual(claimed, { status: 'fulfilled', value: true });
    await client.scriptFlush();
    assert.equal(await ours(claims, 't', 'another alert'), true);
    assert.equal(await store.run('get', [`${prefix}window`], []), 'not a sorted set');
  });

  it('a call the server does not answer in time fails (the copy falls back to its memory); the store serves again once the server does', async () => {
    const store = await copy(300);
    const claims = new AlertClaims(store, keyPrefix('calls-late'), 'copy-a', 5000);
    assert.equal(await ours(claims, 't', 'before'), true);
    const pid = server().pid() as number;
    process.kill(pid, 'SIGSTOP');
    try {
      const started = Date.now();
      await assert.rejects(ours(claims, 't', 'while it hangs'), /the store did not answer within 0.3 s/);
      assert.ok(Date.now() - started < 5000, 'failed at its own timeout');
    } finally {
      process.kill(pid, 'SIGCONT');
    }
    await until(
      'the late answer came',
      async () => (await ours(claims, 't', 'after').catch(() => false)) === true,
      5000,
      { every: 50 },
    );
  });
});

describe('a store that connects and then stops answering costs one timeout, once (redis-server, SIGSTOP)', function () {
  this.timeout(30_000);
  const { copy, server } = useRedis();

  it("the first call waits its time; the calls made beside it fail with it, and every new one at once (this copy's memory serves them); the first answer ends it", async () => {
    const told: boolean[] = [];
    const store = await copy(300, (hung) => told.push(hung));
    const claims = new AlertClaims(store, keyPrefix('calls-hung'), 'copy-a', 5000);
    assert.equal(await ours(claims, 't', 'before'), true);
    const pid = server().pid() as number;
    process.kill(pid, 'SIGSTOP');
    let after: PromiseSettledResult<boolean>[];
    let waited: number;
    try {
      // One call on the wire, 200 more a moment later.
      const started = Date.now();
      const first = ours(claims, 't', 'first');
      await new Promise((r) => setTimeout(r, 50));
      const beside = Array.from({ length: 200 }, (_, i) => ours(claims, 't', `beside ${i}`));
      const settled = await Promise.allSettled([first, ...beside]);
      waited = Date.now() - started;
      assert.deepEqual(
        [...new Set(settled.map((s) => String((s as PromiseRejectedResult).reason).replace(/^Error: /, '')))],
        ['the store did not answer within 0.3 s'],
      );
      assert.deepEqual(told, [true]);
      // New calls while it stays silent fail at once: the late one is the probe.
      after = await Promise.allSettled(Array.from({ length: 50 }, (_, i) => ours(claims, 't', `new ${i}`)));
    } finally {
      process.kill(pid, 'SIGCONT');
    }
    // One timeout for all 201, not one each after the other (a bound far from the 60 s that would be).
    assert.ok(waited < 3000, `the 201 calls ended after ${waited} ms`);
    assert.ok(after.every((s) => s.status === 'rejected' && /has not answered since/.test(String(s.reason))));
    await until('the first answer', () => told.length >= 2, 5000);
    assert.equal(await ours(claims, 't', 'after'), true);
    assert.deepEqual(told, [true, false], 'the first answer ends it');
  });
});

describe('the shared store with an ACL user (redis-server)', function () {
  this.timeout(20_000);
  let redis: TestRedis;
  before(async () => {
    // Only the ACL user may log in (the default user is off), and only to the package's keys, as docs/SECURITY.md says.
    redis = await startRedis([
      '--user',
      'default',
      'off',
      '--user',
      'alice',
      'on',
      '>alice-s3cret',
      '~bulkgate:*',
      '+@all',
      '-@dangerous',
    ]);
  });
  after(() => redis.stop());

  it("a user name in storeUrl and the password in the credential: the copy authenticates as that user, and its scripts may touch the account's keys", async () => {
    const { store, states } = storeAt(`redis://alice@127.0.0.1:${redis.port}`, 'acl-test', 'alice-s3cret');
    try {
      await until('a state', () => states.length > 0).catch(() => undefined);
      assert.deepEqual(states, [`connected: redis://alice@127.0.0.1:${redis.port}`]);
      assert.ok(!states.join().includes('alice-s3cret'), 'the password is in no log line');
      const log = store.outboxLog('acc') as RedisOutboxLog;
      const entry = JSON.stringify({
        id: 'acl-1',
        since: Date.now(),
        node: 't',
        operation: {},
        body: {},
        order: 0,
        attempts: 1,
        reason: '',
      });
      await log.keep(entry, 10);
      assert.deepEqual(await log.renew(['acl-1']), { lost: [], taken: [] }, 'kept in the store');
      await log.done('acl-1');
    } finally {
      await store.close();
    }
  });
});

describe('a store that never connects is loud (redis-server)', function () {
  this.timeout(30_000);
  let redis: TestRedis;
  before(async () => {
    redis = await startRedis(['--requirepass', 'the-right-one']);
  });
  after(() => redis.stop());

  /** The states a store told while `tried` came true (the client trying again meanwhile), then closed. */
  async function statesOf(url: string, password: string | undefined, tried: () => Promise<boolean>): Promise<string[]> {
    const { store, states } = storeAt(url, 'loud-test', password);
    await until('the client to try again', tried, 15_000);
    await store.close();
    return states;
  }

  it('a wrong password: one line, "authentication refused", however often the client tries again; the password in none', async () => {
    const admin = createClient({ url: redis.url, password: 'the-right-one' });
    await admin.connect();
    const connections = async () => Number(/total_connections_received:(\d+)/.exec(await admin.info('stats'))?.[1]);
    const before = await connections();
    try {
      const states = await statesOf(redis.url, 'a-wrong-one', async () => (await connections()) >= before + 3);
      assert.equal(states.length, 1, states.join('\n'));
      assert.match(states[0] as string, /^unreachable: authentication refused: /);
      assert.ok(!states.join().includes('a-wrong-one'));
    } finally {
      admin.destroy();
    }
  });

  it('a server that echoes the password in its answer to AUTH: the password is in no state and no Test connection answer', async () => {
    const { url, server } = await fakeServer((socket) =>
      socket.on('data', (data) => {
        const password = /AUTH\r\n\$\d+\r\n([^\r]*)/.exec(data.toString())?.[1];
        if (password) socket.write(`-ERR invalid password '${password}'\r\n`);
      }),
    );
    const { store, states } = storeAt(url, 'echo-test', 'hunter2-secret');
    try {
      await until('the store told unreachable', () => states.length > 0, 10_000);
      assert.match(states[0] as string, /^unreachable: authentication refused: /);
      const checked = (await checkStore(url, 'hunter2-secret', 2000)) ?? '';
      assert.match(checked, /^authentication refused: /);
      assert.ok(![...states, checked].join('\n').includes('hunter2-secret'), [...states, checked].join('\n'));
    } finally {
      await store.close();
      server.close();
    }
  });

  it('a server that answers garbage: told once, unreachable; the copy decides alone meanwhile (its claims and its window), nothing thrown', async () => {
    const { url, server } = await fakeServer((socket) => socket.on('data', () => socket.write('this is not RESP\r\n')));
    const { store, states } = storeAt(url, 'garbage-test');
    try {
      await until('the store told unreachable', () => states.length > 0, 10_000);
      assert.equal(
        await store.claims.claim('t', 'an alert', undefined).then((d) => d.ours),
        true,
        'this copy decides alone',
      );
      const window = store.rateWindow('acc', 1, 60_000);
      assert.deepEqual(
        await window.reserveInOrder([1, 1], Date.now()),
        { passed: 1, wait: 60_001 },
        "this copy's own window",
      );
      await new Promise((r) => setTimeout(r, 1000)); // checks that nothing more is said meanwhile
      assert.equal(states.length, 1, states.join('\n'));
      assert.match(states[0] as string, /^unreachable: /);
    } finally {
      await store.close();
      server.close();
    }
  });

  it("a listener of the store's states that throws does not escape into the client (it would stop its tries, or take Node-RED down); the tries go on", async () => {
    const port = await freePort();
    let told = 0;
    const store = redisStore(
      { url: `redis://127.0.0.1:${port}`, applicationId: 'throwing-listener' },
      localStore(undefined),
      {
        onState: () => {
          told++;
          throw new Error('a listener that throws');
        },
      },
    );
    const late = await startRedis([], port).catch(() => undefined);
    try {
      assert.ok(late, 'the server came up on the port the store tries');
      // Without the guard, the first throw ends the client's tries (or escapes as an uncaught exception): "connected" never comes.
      await until('unreachable, then connected', () => told >= 2, 10_000);
    } finally {
      await store.close();
      await late?.stop();
    }
  });

  it('nothing listening: one line, "nothing listening"', async () => {
    // Nothing to count tries at: the client's next tries come within the 2.5 s, and add no line.
    const waited = Date.now() + 2500;
    const states = await statesOf(`redis://127.0.0.1:${await freePort()}`, undefined, () =>
      Promise.resolve(Date.now() > waited),
    );
    assert.deepEqual(
      states.map((s) => s.replace(/: connect ECONNREFUSED .*$/, '')),
      ['unreachable: nothing listening'],
    );
  });
});

describe('the store against a fake server', function () {
  this.timeout(20_000);

  it('a server that trickles a byte now and then, never a whole answer: Test connection still times out; the store tells "no answer" and tries again', async () => {
    const timers = new Set<NodeJS.Timeout>();
    let connections = 0;
    const { url, server } = await fakeServer((socket) => {
      connections++;
      socket.write('$1000000\r\n');
      const timer = setInterval(() => socket.write('a'), 100);
      timers.add(timer);
      socket.on('close', () => clearInterval(timer));
    });
    const { store, states } = storeAt(url, 'trickle-test');
    try {
      // Without a timer of the package's own for the handshake, no answer comes: the suite's time fails it.
      assert.match(String(await checkStore(url, undefined, 500)), /^no answer: timeout/);
      await until('the store told it', () => states.length > 0, 10_000);
      assert.match(
        states[0] as string,
        /^unreachable: no answer: timeout: the store did not answer within 5 s of connecting/,
      );
      await until('a new try', () => connections >= 4, 10_000);
    } finally {
      await store.close();
      for (const timer of timers) clearInterval(timer);
      server.close();
    }
  });

  it("a user name that does not decode (past storeUrl's check, as a caller may): a failed try, not an unhandled rejection", async () => {
    const { url, server } = await fakeServer((socket) => socket.on('data', () => socket.write('+PONG\r\n')));
    try {
      assert.match((await checkStore(url.replace('redis://', 'redis://%E0@'), undefined, 2000)) ?? '', /URI malformed/);
    } finally {
      server.close();
    }
  });
});

describe('a store over TLS: rediss:// trusts the CA Node.js is given, and no other (redis-server, a CA of its own)', function () {
  this.timeout(60_000);
  let redis: TestRedis;
  let dir: string;
  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'store-tls-'));
    const openssl = (...args: string[]) => execFileSync('openssl', args, { cwd: dir, stdio: 'pipe' });
    openssl(
      'req',
      '-x509',
      '-newkey',
      'rsa:2048',
      '-nodes',
      '-keyout',
      'ca.key',
      '-out',
      'ca.crt',
      '-days',
      '2',
      '-subj',
      '/CN=store test CA',
    );
    openssl(
      'req',
      '-newkey',
      'rsa:2048',
      '-nodes',
      '-keyout',
      'server.key',
      '-out',
      'server.csr',
      '-subj',
      '/CN=localhost',
    );
    writeFileSync(join(dir, 'ext'), 'subjectAltName=DNS:localhost\n');
    openssl(
      'x509',
      '-req',
      '-in',
      'server.csr',
      '-CA',
      'ca.crt',
      '-CAkey',
      'ca.key',
      '-CAcreateserial',
      '-out',
      'server.crt',
      '-days',
      '2',
      '-extfile',
      'ext',
    );
    const port = await freePort();
    // TLS only: the plain port is off.
    const tls = ['--port', '0', '--tls-port', String(port), '--tls-auth-clients', 'no'];
    redis = await startRedis(
      [
        ...tls,
        '--tls-cert-file',
        join(dir, 'server.crt'),
        '--tls-key-file',
        join(dir, 'server.key'),
        '--tls-ca-cert-file',
        join(dir, 'ca.crt'),
      ],
      port,
    );
  });
  after(async () => {
    await redis?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  /** In a Node.js of its own (NODE_EXTRA_CA_CERTS is read at start): Test connection's answer, and a script's. */
  function fromProcess(url: string, trusted: boolean): { failure: string | null; script: unknown } {
    const code = `
      const { checkStore, openStoreCalls } = require(${JSON.stringify(require.resolve('../nodes/account/redis-store'))});
      (async () => {
        const failure = (await checkStore(process.argv[1], undefined)) ?? null;
        let script = null;
        if (!failure) {
          const calls = await openStoreCalls(process.argv[1], undefined);
          script = await calls.run('claim', ['tls-claim', 'tls-storm'], ['copy-a', '1000']);
          calls.close();
        }
        console.log(JSON.stringify({ failure, script }));
      })();`;
    const env = { ...process.env, NODE_EXTRA_CA_CERTS: trusted ? join(dir, 'ca.crt') : '' };
    return JSON.parse(execFileSync(process.execPath, ['-e', code, url], { env, encoding: 'utf8' })) as {
      failure: string | null;
      script: unknown;
    };
  }

  it('the CA given: connects, and a script runs; not given: "certificate refused"; a name the certificate does not hold: "certificate refused"', () => {
    const url = `rediss://localhost:${redis.port}`;
    assert.deepEqual(fromProcess(url, true), { failure: null, script: [1] });
    assert.match(
      fromProcess(url, false).failure ?? '',
      /^certificate refused: self-signed certificate in certificate chain/,
    );
    assert.match(
      fromProcess(`rediss://127.0.0.1:${redis.port}`, true).failure ?? '',
      /^certificate refused: .*altnames/,
    );
    assert.match(
      fromProcess(`redis://localhost:${redis.port}`, true).failure ?? '',
      /^(no connection|no answer): /,
      'plain RESP to a TLS port',
    );
  });
});

describe('a store that may evict keys is warned about when the copy connects (redis-server)', function () {
  this.timeout(20_000);
  for (const [policy, told] of [
    ['allkeys-lru', ['connected', 'eviction: allkeys-lru']],
    ['noeviction', ['connected']],
  ] as const) {
    it(`maxmemory-policy ${policy}: ${told.length > 1 ? 'one warning' : 'nothing said'}`, async () => {
      const redis = await startRedis(['--maxmemory-policy', policy]);
      const states: string[] = [];
      const store = redisStore({ url: redis.url, applicationId: 'eviction-test' }, localStore(undefined), {
        onState: (state, detail) => states.push(state === 'connected' ? state : `${state}: ${detail}`),
      });
      try {
        await until('what is told', () => states.length >= told.length).catch(() => undefined);
        await new Promise((r) => setTimeout(r, 300)); // checks that nothing more is said
        assert.deepEqual(states, told);
      } finally {
        await store.close();
        await redis.stop();
      }
    });
  }
});

describe('a store that loses data loses no alert silently (redis-server)', function () {
  this.timeout(30_000);
  const { copy, raw } = useRedis();

  it('FLUSHALL while a living copy holds 5 waiting alerts: it writes them back, warns once, and another copy can take them over after it is gone', async () => {
    const prefix = keyPrefix('flush-test');
    const [clientA, clientB, admin] = [await copy(), await copy(), await raw()];
    const warned: string[] = [];
    const a = new Outbox(new RedisOutboxLog(() => clientA, prefix, 'copy-a', 600), (key, params) =>
      warned.push(`${key} ${params.count ?? ''}`),
    );
    const failing = {
      ...flushWorker(),
      send: async () =>
        Promise.reject(new GatewayError({ type: 'unknown', status: 503, retryable: true, message: 'HTTP 503' })),
    };
    for (let i = 0; i < 5; i++)
      await a.keep(
        {
          node: 't',
          operation: { kind: 'transactional' } as never,
          body: { text: `Alert ${i}` },
          rejected: [],
          messages: 1,
          msg: { seq: i },
          since: Date.now(),
          order: i,
          attempts: 1,
          reason: 'HTTP 503',
        },
        {},
      );
    const held = async () => (await admin.hLen(`${prefix}outbox:entries`)) as number;
    assert.equal(await held(), 5);
    a.attach(failing);
    try {
      await admin.flushAll();
      assert.equal(await held(), 0, 'the store lost them');
      await until('written back', async () => (await held()) >= 5).catch(() => undefined);
      assert.equal(await held(), 5, 'written back');
      assert.deepEqual(warned, ['store-entries-lost 5']);
    } finally {
      await a.detach(failing);
    }
    // Copy A is gone: its claims lapse, and copy B takes the 5 over.
    const settled: unknown[] = [];
    const b = new Outbox(new RedisOutboxLog(() => clientB, prefix, 'copy-b', 600), () => undefined);
    const sending = { ...flushWorker(), settle: (_e: unknown, msg: { seq?: number }) => void settled.push(msg.seq) };
    b.attach(sending);
    try {
      await until('five settled', () => settled.length >= 5).catch(() => undefined);
      assert.deepEqual([...settled].sort(), [0, 1, 2, 3, 4]);
    } finally {
      await b.detach(sending);
    }
  });
});

describe('a keep the store did not answer in time is reconciled when it answers (redis-server, SIGSTOP)', function () {
  this.timeout(30_000);
  const { copy, raw, server } = useRedis();

  it('its msg went to Catch (store_unavailable); the server runs the keep late; the copy ends it there before its claim lapses, so no other copy sends it', async () => {
    const prefix = keyPrefix('late-keep');
    const admin = await raw();
    const clientA = await copy(300);
    const a = new Outbox(new RedisOutboxLog(() => clientA, prefix, 'copy-a', 600), () => undefined);
    const settledByA: unknown[] = [];
    const idle = { ...flushWorker(), settle: (_e: unknown, msg: { seq?: number }) => void settledByA.push(msg.seq) };
    a.attach(idle);
    const clientB = await copy();
    const settledByB: unknown[] = [];
    const b = new Outbox(new RedisOutboxLog(() => clientB, prefix, 'copy-b', 600), () => undefined);
    const sending = { ...flushWorker(), settle: (_e: unknown, msg: { seq?: number }) => void settledByB.push(msg.seq) };
    b.attach(sending);
    const held = async () => (await admin.hLen(`${prefix}outbox:entries`)) as number;
    try {
      const pid = server().pid() as number;
      process.kill(pid, 'SIGSTOP');
      let kept: PromiseSettledResult<unknown>;
      try {
        [kept] = (await Promise.allSettled([
          a.keep(
            {
              node: 't',
              operation: { kind: 'transactional' } as never,
              body: { text: 'Water on the floor' },
              rejected: [],
              messages: 1,
              msg: { seq: 1 },
              since: Date.now(),
              order: 1,
              attempts: 1,
              reason: 'HTTP 503',
            },
            {},
          ),
        ])) as [PromiseSettledResult<unknown>];
      } finally {
        process.kill(pid, 'SIGCONT');
      }
      assert.equal(kept.status, 'rejected');
      assert.match(String((kept as PromiseRejectedResult).reason), /the shared store does not answer/);
      // The server runs the keep it read before it stopped: the entry is there, claimed by copy A.
      // Copy A ends it at its next look; neither copy, looking for lapsed claims (600 ms), gets it.
      await new Promise((r) => setTimeout(r, 2500)); // longer than the claim: a copy would have taken it over by now
      assert.equal(await held(), 0, 'ended in the store');
      assert.deepEqual([settledByA, settledByB], [[], []], 'neither copy sent the msg that went to Catch');
    } finally {
      await a.detach(idle);
      await b.detach(sending);
    }
  });
});

/** A worker whose sends succeed at once. */
function flushWorker(): OutboxWorker {
  return {
    minutes: 60,
    firstDelay: 20,
    size: 100,
    account: 'flush',
    concurrency: 4,
    report: () => undefined,
    transient: (error) => error instanceof GatewayError && error.retryable,
    send: async () => ({ record: { status: 'accepted', number: '420777123456' }, rejected: false }) as never,
    settle: () => undefined,
  };
}

/**
 * The store's Lua scripts stand alone: each runs by itself with `redis-cli --eval` against a real
 * redis-server, called as the store calls it, and every key it touches is an account's key, all
 * in one Cluster slot (its hash tag), named from KEYS (or built from the account's prefix given
 * there), never from ARGV.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { RedisIncidents } from '../nodes/account/escalation-redis';
import { AlertClaims, keyPrefix, RedisOutboxLog, RedisWindow, SharedTracking } from '../nodes/account/redis-store';
import { SCRIPT_NAMES, scriptPath, type ScriptName, type StoreCalls } from '../nodes/account/store-scripts';
import { startRedis, type TestRedis } from './support/redis';

/** Redis Cluster's slot of a key: CRC16 (XMODEM) of its hash tag (the first `{...}` not empty), or of the whole key. */
function slotOf(key: string): number {
  const open = key.indexOf('{');
  const close = open < 0 ? -1 : key.indexOf('}', open + 1);
  const hashed = close > open + 1 ? key.slice(open + 1, close) : key;
  let crc = 0;
  for (const byte of Buffer.from(hashed)) {
    crc ^= byte << 8;
    for (let i = 0; i < 8; i++) crc = crc & 0x8000 ? ((crc << 1) ^ 0x1021) & 0xffff : (crc << 1) & 0xffff;
  }
  return crc % 16384;
}

/** Every script call the store makes for one account, as it makes them (answers faked: only the calls count). */
async function callsOf(prefix: string): Promise<[ScriptName, string[], string[]][]> {
  const calls: [ScriptName, string[], string[]][] = [];
  const now = Date.now();
  const body = JSON.stringify({ node: 't', topic: 'door', policy: {}, msg: { payload: 'Door open' } });
  const answers: Partial<Record<ScriptName, unknown>> = {
    reserve: [1, 0],
    claim: [1, 1, '1.2', 500],
    adopt: [[], [], []],
    renew: [[], []],
    attempt: [2],
    done: 1,
    overdue: [],
    get: null,
    escalationRaise: [1, '42', now],
    escalationStep: [1, now, 1, 1, 0, now + 1000, '420777000001'],
    escalationEnd: [1, '42', now, now, body],
    escalationLook: [now],
    escalationWanted: 1,
  };
  const recorder: StoreCalls = {
    run: async (name, keys, args) => {
      calls.push([name, keys, args]);
      return answers[name] ?? 0;
    },
  };
  const window = new RedisWindow(recorder, `${prefix}window`, 10, 1000);
  await window.reserveInOrder([1, 2]);
  await window.refund(1);
  const claims = new AlertClaims(recorder, prefix, 'copy-a');
  await claims.claim('t', JSON.stringify({ number: '420777000001', text: 'Door open' }), { limit: 3, windowMs: 1000 });
  await claims.collectHeld('t', '1.2');
  const tracking = new SharedTracking(() => recorder, prefix, 3);
  // Its time ran out a minute ago: overdue finds it, once output 3 is claimed for it here.
  await tracking.record({
    smsId: 'id-1',
    number: '420777000001',
    sent: { node: 't' } as never,
    acceptedAt: now,
    countsFrom: now - 60_000,
  });
  await tracking.lookup('id-1');
  await tracking.lastTo('420777000001');
  await tracking.claimLate('id-1');
  await tracking.overdue(5000, 5000);
  await tracking.markFinal('id-1');
  const log = new RedisOutboxLog(() => recorder, prefix, 'copy-a', 600);
  const line = JSON.stringify({
    id: 'e1',
    since: now,
    node: 't',
    operation: {},
    body: {},
    order: 0,
    attempts: 1,
    reason: '',
  });
  await log.keep(line, 100);
  await log.attempt('e1', true);
  // On the wire: renewed with its attempt's age.
  await log.renew(['e1']);
  log.back('e1');
  await log.adoptable(() => false);
  // Ended, with how: its line kept until its msg left.
  await log.done('e1', line, { attempts: 1, result: { status: 'accepted' } });
  log.emitted('e1');
  await log.flushEmitted();
  // An incident raised (its first step due at once), its step taken, an SMS answered, a look, a kept SMS still wanted, acknowledged, resolved.
  const incidents = new RedisIncidents(() => recorder, prefix, 'copy-a', 600);
  const policy = {
    steps: [{ numbers: ['420777000001'], wait: 1 }],
    repeat: 1,
    text: '',
    ackWords: ['OK'],
    sender_id: 'gSystem',
    sender_id_value: '',
  };
  await incidents.raise('t:door', { node: 't', topic: 'door', policy, msg: { payload: 'Door open' } });
  await incidents.step('42');
  await incidents.answered('42', { step: 1, round: 1, number: '420777000001', late: false }, '420777000001');
  await incidents.look(['42']);
  await incidents.wanted('t:door', '42');
  await incidents.end('acknowledge', 't:door', '420777000001');
  await incidents.end('resolve', 't:door', 'flow', '42');
  return calls;
}

describe("the store's scripts stand alone (redis-cli --eval, redis-server)", function () {
  this.timeout(30_000);
  let redis: TestRedis;
  before(async () => {
    redis = await startRedis();
  });
  after(() => redis?.stop());
  const cli = (...args: string[]) => spawnSync('redis-cli', ['-p', String(redis.port), ...args], { encoding: 'utf8' });

  it('the slot rule is Redis Cluster\'s: "foo" is in slot 12182, a hash tag decides alone', () => {
    assert.equal(slotOf('foo'), 12182);
    assert.equal(slotOf('{user1000}.following'), slotOf('{user1000}.followers'));
    assert.equal(slotOf('a{}b'), slotOf('a{}b'), 'an empty tag: the whole key');
  });

  it("each script runs alone, as the store calls it, and touches only its account's keys, all in one slot", async () => {
    const prefix = keyPrefix('slot-test');
    const slot = slotOf(prefix);
    const calls = await callsOf(prefix);
    assert.deepEqual(
      [...new Set(calls.map(([name]) => name))].sort(),
      [...SCRIPT_NAMES].sort(),
      'every script is called here',
    );
    const ran: string[] = [];
    const seen = new Set<string>();
    for (const [name, keys, args] of calls) {
      const run = cli('--eval', scriptPath(name), ...keys, ',', ...args);
      const said = `${run.stdout}${run.stderr}`;
      assert.ok(run.status === 0 && !/\(error\)|ERR/.test(said), `${name} alone: ${said.trim()}`);
      for (const key of keys) assert.equal(slotOf(key), slot, `${name}: its key ${key} is in the account's slot`);
      ran.push(name);
      const touched = cli('--scan').stdout.split('\n').filter(Boolean);
      for (const key of touched) seen.add(key.slice(prefix.length).replace(/:.*/, ':'));
      const elsewhere = touched.filter((key) => !key.startsWith(prefix) || slotOf(key) !== slot);
      assert.deepEqual(elsewhere, [], `after ${name}: every key the store holds is the account's, in slot ${slot}`);
    }
    assert.equal(ran.length, calls.length);
    // The keys built in the scripts from the prefix given in KEYS were among those checked.
    for (const kind of ['window', 'claim:', 'storm:', 'sent:', 'to:', 'final:', 'late:', 'outbox:', 'esc:'])
      assert.ok(seen.has(kind), `a ${kind} key was checked: ${[...seen]}`);
  });

  it("no script builds a key from ARGV: no argument the store sends holds the account's prefix or its hash tag", async () => {
    const prefix = keyPrefix('argv-test');
    const tag = /\{[^}]+\}/.exec(prefix)?.[0] as string;
    for (const [name, , args] of await callsOf(prefix)) {
      assert.deepEqual(
        args.filter((arg) => arg.includes(prefix) || arg.includes(tag)),
        [],
        `${name}: a key's name in ARGV`,
      );
    }
  });
});

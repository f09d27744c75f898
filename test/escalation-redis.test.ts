/**
 * The escalation's incidents on a real redis-server, as two copies of Node-RED share them: two
 * desks (one per copy, each with its own connection and copy id) on one account's keys. One
 * incident per key, each step on one copy, an acknowledgement at either stops both (output 2
 * once), codes unique across the copies and not given again while quarantined, and the SMS of a
 * copy gone mid-step adopted by the other once its claim lapsed. Then the node in the Node-RED
 * runtime on an account whose store is redis: its incidents in the store, none in the user
 * directory; the store unreachable at a raise, the raising msg to Catch.
 */
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createClient } from '@redis/client';
import {
  incidentKey,
  type Ended,
  type Fired,
  type Incident,
  type PendingSms,
  type Policy,
} from '../nodes/account/escalation';
import { RedisIncidents, SharedEscalationDesk } from '../nodes/account/escalation-redis';
import { forgetDesks } from '../nodes/account/escalation-desk';
import { keyPrefix, openStoreCalls } from '../nodes/account/redis-store';
import type { StoreCalls } from '../nodes/account/store-scripts';
import { freePort } from './support/node-red-process';
import { collect, helper, load, seen, statusOf, unload, type FlowNode, type TestNode } from './support/red';
import { startRedis, type TestRedis } from './support/redis';
import { ACCOUNT_ID, startTestSimulator, TOKEN, type TestSimulator } from './support/simulator';
import { until } from './support/wait';

const OWNER = '420777100001';
const NEIGHBOUR = '420777100002';
const CARETAKER = '420777100003';

const policy = (waits: [number, number] = [1, 1], repeat = 1): Policy => ({
  steps: [
    { numbers: [OWNER], wait: waits[0] },
    { numbers: [NEIGHBOUR], wait: waits[1] },
  ],
  repeat,
  text: '',
  ackWords: ['OK'],
  sender_id: 'gSystem',
  sender_id_value: '',
});

/** What one copy's node saw: the SMS it was handed (a step or adopted), and outputs 2 and 3. */
interface Seen {
  /** `at`: when the copy was handed it (Date.now()). */
  sms: { copy: string; step: number; round: number; number: string; late: boolean; at: number }[];
  ended: Ended[];
  /** `copy:topic` of each incident a copy was told to withdraw (acknowledged or ended at another copy). */
  withdrawn: string[];
  unacknowledged: Incident[];
  /** When each output 3 came (Date.now()). */
  ranOut: number[];
}

describe('escalation on the shared store: two copies, one redis-server', function () {
  this.timeout(20_000);
  let redis: TestRedis;
  const open: { close(): void }[] = [];
  let account = 0;

  before(async () => {
    redis = await startRedis();
  });
  afterEach(() => {
    for (const o of open.splice(0)) o.close();
  });
  after(() => redis?.stop());

  async function calls(): Promise<StoreCalls> {
    const c = await openStoreCalls(redis.url);
    open.push(c);
    return c;
  }

  /** Two copies of one account (a fresh one per test); `answer: false`: a copy that dies before it records its SMS's answers. */
  async function copies(claimMs = 600, quarantineMs = 60_000) {
    const prefix = keyPrefix(`escalation-${++account}`);
    const seen: Seen = { sms: [], ended: [], withdrawn: [], unacknowledged: [], ranOut: [] };
    /** `answer`: false, a copy that dies before it records its SMS's answers; a number, one whose sends take that many ms. */
    const make = async (copy: string, answer: boolean | number = true) => {
      const incidents = new RedisIncidents(await calls().then((c) => () => c), prefix, copy, claimMs, quarantineMs);
      const desk = new SharedEscalationDesk(incidents);
      open.push(desk);
      const text = (incident: Incident, sms: PendingSms) => {
        seen.sms.push({ copy, ...sms, at: Date.now() });
        // After a test its connection is closed: an answer recorded then fails, unheard.
        const record = () => desk.answered(incident, sms).catch(() => undefined);
        if (answer === true) void record();
        else if (answer !== false) setTimeout(record, answer);
      };
      desk.attach('x', {
        fired: (f: Fired) => {
          if (f.kind === 'step') return f.sms.forEach((s) => text(f.incident, s));
          seen.unacknowledged.push(f.incident);
          seen.ranOut.push(Date.now());
        },
        ended: (e) => seen.ended.push(e),
        resume: (incident, sms) => sms.forEach((s) => text(incident, s)),
        withdrawn: (incident) => seen.withdrawn.push(`${copy}:${incident.topic}`),
      });
      await desk.ready;
      return { desk, incidents };
    };
    return { prefix, seen, make };
  }

  it('the same key raised at both copies within 100 ms is one incident: each SMS once, on one copy; output 3 once', async () => {
    const { seen, make } = await copies();
    const [a, b] = await Promise.all([make('a'), make('b')]);
    const raisedAt = Date.now();
    const raised = await Promise.all([
      a.desk.raise('x', 'cellar', policy(), { payload: 'Water in the cellar' }),
      new Promise((r) => setTimeout(r, 50)).then(() =>
        b.desk.raise('x', 'cellar', policy(), { payload: 'Water in the cellar' }),
      ),
    ]);
    assert.equal(raised.filter(Boolean).length, 1, 'one copy made it; the other was told it is open');
    await until('output 3', () => seen.unacknowledged.length > 0, 8000);
    // Checks that no second output 3 and no further SMS come from the other copy: a look's time and more.
    await new Promise((r) => setTimeout(r, 700));
    assert.deepEqual(
      seen.sms.map((s) => [s.step, s.round, s.number]),
      [
        [1, 1, OWNER],
        [2, 1, NEIGHBOUR],
      ],
    );
    // Step 2 at its time, not before: the copy that learned of the incident late did not take it early.
    // Counted from the raise (step 1 is due at once, each wait 1 s): a step 1 handed on late on a
    // loaded machine does not move step 2, which is due 1 s after step 1 was due (seen: 847 ms between them).
    const [, two] = seen.sms;
    assert.ok((two?.at ?? 0) - raisedAt >= 950, `step 2 ${(two?.at ?? 0) - raisedAt} ms after the raise, due at 1 s`);
    // Both copies' timers come due for step 2 at once: the one the store refused did not take the chain's end early.
    const end = seen.ranOut[0] ?? 0;
    assert.ok(end - raisedAt >= 1950, `output 3 ${end - raisedAt} ms after the raise, due at 2 s`);
    assert.equal(seen.unacknowledged.length, 1);
    assert.deepEqual(
      [a.desk.counts(), b.desk.counts()],
      [
        { open: 0, acknowledged: 0 },
        { open: 0, acknowledged: 0 },
      ],
    );
  });

  it('an acknowledgement at the other copy stops the chain on both: no step after it, output 2 once', async () => {
    // Looks 10 s apart: copy A learns of the acknowledgement when the store refuses its step 2.
    const { seen, make } = await copies(30_000);
    const a = await make('a');
    const b = await make('b');
    await a.desk.raise('x', 'cellar', policy([1, 1], 2), { payload: 'Water in the cellar' });
    await until('step 1', () => seen.sms.length === 1, 5000);
    const ended = await b.desk.acknowledge('x\u0000cellar', 'flow');
    assert.equal(ended?.state, 'acknowledged');
    assert.equal(
      await a.desk.acknowledge('x\u0000cellar', 'flow'),
      undefined,
      'the first acknowledgement wins, at any copy',
    );
    // Checks that no step comes: past step 2's due time and a look.
    await new Promise((r) => setTimeout(r, 1800));
    assert.deepEqual(
      seen.sms.map((s) => s.number),
      [OWNER],
    );
    assert.deepEqual(
      seen.ended.map((e) => [e.state, e.by]),
      [['acknowledged', 'flow']],
    );
    assert.equal(seen.unacknowledged.length, 0);
    assert.deepEqual(a.desk.counts(), { open: 1, acknowledged: 1 }, 'copy A learned of it');
    assert.deepEqual(
      seen.withdrawn,
      ['a:cellar'],
      'copy A withdraws what it still has queued for it; copy B, where it was acknowledged, ended it with output 2',
    );
    // Resolved at A: gone at both, the next raise starts a new incident with another code.
    assert.equal((await a.desk.resolve('x\u0000cellar'))?.state, 'resolved');
    const again = await b.desk.raise('x', 'cellar', policy(), { payload: 'Water again' });
    assert.ok(again);
    assert.notEqual(again.code, ended?.incident.code);
  });

  it('a reply at either copy acknowledges by the code, only from a number the incident texted', async () => {
    const { seen, make } = await copies();
    const a = await make('a');
    const b = await make('b');
    const incident = await a.desk.raise('x', 'cellar', policy([5, 5]), { payload: 'Water in the cellar' });
    assert.ok(incident);
    await until('step 1', () => seen.sms.length === 1, 5000);
    assert.deepEqual(
      await b.desk.reply(NEIGHBOUR, incident.code),
      { ignored: 'stranger' },
      'the neighbour was not texted yet',
    );
    const outcome = await b.desk.reply(`+${OWNER}`, `${incident.code} on my way`);
    assert.ok('acknowledged' in outcome);
    assert.equal(outcome.acknowledged.by, OWNER);
    assert.deepEqual(await a.desk.reply(OWNER, incident.code), { ignored: 'already' });
    assert.equal(seen.ended.length, 1);
  });

  it("codes are unique across the copies, and an ended incident's code is not given again while quarantined", async () => {
    const { make } = await copies(600, 60_000);
    const a = await make('a');
    const b = await make('b');
    const raise = (n: number, tag: string) =>
      Promise.all(
        Array.from({ length: n }, (_, i) =>
          (i % 2 ? a : b).desk.raise('x', `${tag}${i}`, policy([60, 60]), { payload: tag }),
        ),
      );
    const first = (await raise(40, 'first')).map((i) => i?.code as string);
    assert.equal(new Set(first).size, 40, `40 different codes: ${first}`);
    for (const c of first) assert.match(c, /^\d{2,}$/);
    for (let i = 0; i < 40; i++) await (i % 2 ? b : a).desk.resolve(`x\u0000first${i}`);
    const second = (await raise(40, 'second')).map((i) => i?.code as string);
    assert.deepEqual(
      second.filter((c) => first.includes(c)),
      [],
      'none of the ended ones again',
    );
    assert.equal(new Set(second).size, 40);
  });

  it('a copy gone after taking a step: the other copy sends its SMS once the claim lapsed, and the next step as due', async () => {
    const { seen, make } = await copies(600);
    // Copy A takes step 1 and dies before it records the answer (its desk closed, its claim not renewed).
    const a = await make('a', false);
    await a.desk.raise('x', 'cellar', policy([2, 1]), { payload: 'Water in the cellar' });
    await until('step 1 at copy A', () => seen.sms.length === 1, 5000);
    await a.desk.close();
    const b = await make('b');
    await until('step 1 adopted by copy B', () => seen.sms.some((s) => s.copy === 'b' && s.step === 1), 3000);
    await until('output 3', () => seen.unacknowledged.length === 1, 6000);
    assert.deepEqual(
      seen.sms.map((s) => `${s.copy}:${s.step}:${s.number}`),
      [`a:1:${OWNER}`, `b:1:${OWNER}`, `b:2:${NEIGHBOUR}`],
    );
    assert.deepEqual(b.desk.counts(), { open: 0, acknowledged: 0 });
  });

  it('a copy whose sends take five claim times keeps its claim while it lives: nothing is adopted from it', async () => {
    const { seen, make } = await copies(300);
    const a = await make('a', 1500);
    await make('b');
    await a.desk.raise('x', 'cellar', policy([1, 1]), { payload: 'Water in the cellar' });
    await until('output 3', () => seen.unacknowledged.length === 1, 6000);
    // Checks that no SMS is adopted late: two claim times.
    await new Promise((r) => setTimeout(r, 600));
    assert.equal(seen.sms.length, 2, JSON.stringify(seen.sms));
  });

  it('keeps nothing when no incident is raised: an account whose escalation node never raised has no escalation key', async () => {
    const { prefix, make } = await copies();
    await make('a');
    const raw = createClient({ url: redis.url });
    await raw.connect();
    try {
      assert.deepEqual(await raw.keys(`${prefix}*`), []);
    } finally {
      await raw.close();
    }
  });
});

describe('bulkgate-escalation on an account whose store is redis (Node-RED runtime, the simulator)', function () {
  this.timeout(20_000);
  let redis: TestRedis;
  let sim: TestSimulator;
  let userDir = '';

  before(async () => {
    redis = await startRedis();
    sim = await startTestSimulator(1000, []);
  });
  beforeEach(async () => {
    userDir = mkdtempSync(join(tmpdir(), 'bulkgate-escalation-redis-'));
    helper.settings({ userDir });
    await forgetDesks();
    await sim.reset();
    const raw = createClient({ url: redis.url });
    await raw.connect();
    await raw.flushAll();
    await raw.close();
  });
  afterEach(async () => {
    await unload();
    await forgetDesks();
    helper.settings({});
    rmSync(userDir, { recursive: true, force: true });
  });
  after(async () => {
    await sim?.close();
    await redis?.stop();
  });

  const deploy = (storeUrl: string) =>
    load(
      [
        {
          id: 'acc',
          type: 'bulkgate-account',
          baseUrl: sim.url,
          retries: 0,
          store: 'redis',
          storeUrl,
          storeClaimSeconds: 1,
        },
        {
          id: 'x',
          type: 'bulkgate-escalation',
          account: 'acc',
          steps: [{ numbers: OWNER, wait: 60 }],
          repeat: 1,
          wires: [['sms'], [], []],
        },
        { id: 'c', type: 'catch', scope: ['x'], wires: [['caught']] },
        { id: 'sms', type: 'helper' },
        { id: 'caught', type: 'helper' },
      ] as FlowNode[],
      { acc: { application_id: ACCOUNT_ID, application_token: TOKEN } },
    );
  const receive = (msg: unknown) => (helper.getNode('x') as TestNode & { receive(m: unknown): void }).receive(msg);

  it('keeps the incident in the store, nothing in the user directory; its step goes out once', async () => {
    await deploy(redis.url);
    await until(
      'the store connected',
      () => seen.some((s) => JSON.stringify(s).includes('Shared store connected')),
      5000,
    );
    const sms = collect('sms', 1);
    receive({ topic: 'door', payload: 'Door open' });
    const [one] = await sms;
    assert.equal(one?.escalation.number, OWNER);
    assert.equal((await sim.outbox()).messages.length, 1);
    assert.equal(existsSync(join(userDir, 'bulkgate-escalation')), false, 'no file in the user directory');
    const raw = createClient({ url: redis.url });
    await raw.connect();
    try {
      assert.deepEqual(await raw.hVals(`${keyPrefix(ACCOUNT_ID)}esc:open`), [one?.escalation.code]);
    } finally {
      await raw.close();
    }
  });

  it('the store unreachable when an incident is raised: the raising msg goes to Catch with store_unavailable, and nothing is sent', async () => {
    await deploy(`redis://127.0.0.1:${await freePort()}`);
    const caught = collect('caught', 1);
    receive({ topic: 'door', payload: 'Door open' });
    const [msg] = await caught;
    assert.equal(msg?.bulkgate?.type, 'store_unavailable');
    assert.equal(msg?.payload, 'Door open');
    assert.deepEqual((await sim.outbox()).messages, []);
  });
});

describe("an acknowledgement at another copy, a chain SMS kept in this copy's outbox (Node-RED runtime, redis-server, the simulator)", function () {
  this.timeout(30_000);
  /** An account of its own: its store's incidents are made afresh, with this test's claim time. */
  const ACCOUNT = '20061';
  let redis: TestRedis;
  let sim: TestSimulator;
  let userDir = '';
  const open: { close(): unknown }[] = [];

  before(async () => {
    redis = await startRedis();
    sim = await startTestSimulator(1000, [], ACCOUNT);
    userDir = mkdtempSync(join(tmpdir(), 'bulkgate-escalation-ack-'));
    helper.settings({ userDir });
    await forgetDesks();
  });
  afterEach(async () => {
    await sim.fault({ offline: { seconds: 0 } });
    await unload();
    for (const o of open.splice(0)) await o.close();
    await forgetDesks();
    await sim.reset();
  });
  after(async () => {
    helper.settings({});
    rmSync(userDir, { recursive: true, force: true });
    await sim?.close();
    await redis?.stop();
  });

  /** Copy A: this process's Node-RED; x texts the owner (its step's wait given), x2 the caretaker. */
  async function deployCopyA(wait: number): Promise<void> {
    await load(
      [
        {
          id: 'acc',
          type: 'bulkgate-account',
          baseUrl: sim.url,
          retries: 0,
          outboxDelay: 200,
          store: 'redis',
          storeUrl: redis.url,
          // This copy looks at the store every 20 s: it does not learn of B's acknowledgement before the gateway is back.
          storeClaimSeconds: 60,
        },
        {
          id: 'x',
          type: 'bulkgate-escalation',
          account: 'acc',
          steps: [{ numbers: OWNER, wait }],
          wires: [['sms'], ['ended'], ['nobody']],
        },
        {
          id: 'x2',
          type: 'bulkgate-escalation',
          account: 'acc',
          steps: [{ numbers: CARETAKER, wait: 60 }],
          wires: [['sms'], [], []],
        },
        { id: 'c', type: 'catch', scope: ['x', 'x2'], wires: [['caught']] },
        ...['sms', 'ended', 'nobody', 'caught'].map((id) => ({ id, type: 'helper' })),
      ] as FlowNode[],
      { acc: { application_id: ACCOUNT, application_token: TOKEN } },
    );
    await until(
      'the store connected',
      () => seen.some((s) => JSON.stringify(s).includes('Shared store connected')),
      5000,
    );
    // Copy A's first look is tried again every 500 ms until the store answers: past it, its next look is 20 s away.
    await new Promise((r) => setTimeout(r, 1200));
  }
  const receive = (id: string, msg: unknown) =>
    (helper.getNode(id) as TestNode & { receive(m: unknown): void }).receive(msg);

  it('acknowledged at copy B while copy A keeps the SMS in its outbox: when the gateway is back it is never sent, and nothing comes out for it', async () => {
    await deployCopyA(60);
    const out: Record<string, unknown[]> = { sms: [], ended: [], caught: [] };
    for (const id of Object.keys(out)) (helper.getNode(id) as TestNode).on('input', (m: unknown) => out[id]?.push(m));
    const debug: string[] = [];
    (helper.getNode('x') as TestNode).on('call:debug', (call: { args: unknown[] }) => debug.push(String(call.args[0])));
    await sim.fault({ offline: { seconds: 3600, mode: '503' } });
    const waiting = statusOf('x', (s) => /waiting/.test(s.text ?? ''), 10_000);
    receive('x', { topic: 'door', payload: 'Door open' });
    await waiting;
    // Copy B: its own connection and copy id on the same account's keys.
    const calls = await openStoreCalls(redis.url);
    open.push(calls);
    const b = new SharedEscalationDesk(new RedisIncidents(() => calls, keyPrefix(ACCOUNT), 'copy-b', 60_000));
    open.push(b);
    await b.ready;
    assert.equal((await b.acknowledge(incidentKey('x', 'door'), 'flow'))?.state, 'acknowledged');
    await sim.fault({ offline: { seconds: 0 } });
    // The outbox sends in order: the owner's SMS, were it still kept, would go before the caretaker's.
    const next = collect('sms', 1, 20_000);
    receive('x2', { topic: 'smoke', payload: 'Smoke' });
    await next;
    assert.deepEqual(
      (await sim.outbox()).messages.map((m) => String(m.number)),
      [CARETAKER],
      "the owner's SMS of the incident acknowledged at copy B never reached the gateway",
    );
    assert.deepEqual(
      out.sms?.map((m) => (m as { topic: string }).topic),
      ['smoke'],
      'output 1 shows only the next incident',
    );
    assert.deepEqual([out.ended?.length, out.caught?.length], [0, 0], 'no output 2 at copy A (B had it), no Catch');
    assert.deepEqual(
      debug.filter((l) => /withdrawn/.test(l)),
      [`the SMS of incident door to ${OWNER} was withdrawn: the incident was acknowledged or resolved`],
    );
  });
  it("the chain runs out at copy A while its last step's SMS is kept in the outbox: nobody acknowledged, so it still goes when the gateway is back", async () => {
    await deployCopyA(1);
    await sim.fault({ offline: { seconds: 3600, mode: '503' } });
    const nobody = collect('nobody', 1, 10_000);
    const sms = collect('sms', 1, 20_000);
    receive('x', { topic: 'cellar', payload: 'Water in the cellar' });
    assert.equal((await nobody)[0]?.escalation.state, 'unacknowledged', 'output 3 while the SMS waits');
    await sim.fault({ offline: { seconds: 0 } });
    const [sent] = await sms;
    assert.deepEqual([sent?.escalation.step, sent?.escalation.number], [1, OWNER], 'output 1 once the gateway took it');
    assert.deepEqual(
      (await sim.outbox()).messages.map((m) => String(m.number)),
      [OWNER],
    );
  });
});

/**
 * The escalation node on two copies of Node-RED sharing one account's Redis store (a real
 * redis-server, the simulator as the gateway): the same alarm raised on both within 100 ms, an
 * acknowledgement at the copy that did not send, the copy that sent step 1 killed, and step 1 kept
 * in the outbox of a copy killed during an outage and acknowledged at the other. Each row counts
 * the SMS per number at the simulator, the outputs of both copies, what was lost and what went
 * twice; the table is printed when the suite ends. Run by `npm run test:faults`.
 */
import assert from 'node:assert/strict';
import { existsSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { createClient } from '@redis/client';
import { keyPrefix } from '../nodes/account/redis-store';
import { pressByApi } from './support/examples';
import { nodeRedProcess, type NodeRedProcess } from './support/node-red-process';
import { startRedis, type TestRedis } from './support/redis';
import { ACCOUNT_ID, startTestSimulator, TOKEN, type TestSimulator } from './support/simulator';
import { until } from './support/wait';

const OWNER = '420777100001';
const NEIGHBOUR = '420777100002';
/** Seconds: short, so the file stays well under two minutes. */
const WAIT = 2;
const CLAIM = 1.5;

interface Output {
  port: 1 | 2 | 3 | 'catch';
  step?: number;
  number?: string;
  state?: string;
  by?: string;
}

interface Row {
  fault: string;
  sms: Record<string, number>;
  outputs: string;
  lost: number;
  twice: number;
}
const rows: Row[] = [];

describe('escalation on two copies of Node-RED and one Redis store', function () {
  this.timeout(90_000);
  let redis: TestRedis;
  let sim: TestSimulator;
  const copies: [NodeRedProcess, NodeRedProcess] = [
    nodeRedProcess('bulkgate-esc-a-'),
    nodeRedProcess('bulkgate-esc-b-'),
  ];

  before(async () => {
    redis = await startRedis();
    sim = await startTestSimulator(1_000_000);
  });
  after(async () => {
    await Promise.all(copies.map((c) => c.remove()));
    await sim?.close();
    await redis?.stop();
    console.log(
      `\n| fault | SMS per number at the gateway | outputs (copy A; copy B) | lost | twice |\n|---|---|---|---|---|\n${rows
        .map((r) => `| ${r.fault} | ${JSON.stringify(r.sms)} | ${r.outputs} | ${r.lost} | ${r.twice} |`)
        .join('\n')}\n`,
    );
  });

  /** Both copies (re)started on the same flows and an empty store: the owner, then the neighbour, WAIT s apart. */
  async function deploy(): Promise<void> {
    await Promise.all(copies.map((c) => c.kill()));
    const store = createClient({ url: redis.url });
    await store.connect();
    await store.flushAll();
    await store.close();
    await sim.reset();
    for (const copy of copies) {
      const outputs = join(copy.userDir, 'outputs.jsonl');
      // Each row counts its own outputs, and starts with no incident of an earlier row's kept anywhere.
      rmSync(outputs, { force: true });
      rmSync(join(copy.userDir, 'bulkgate-escalation'), { recursive: true, force: true });
      const record = (port: string) =>
        `const e = msg.escalation || {}; msg.payload = JSON.stringify({ port: ${port}, step: e.step, number: e.number, state: e.state, by: e.by }); return msg;`;
      copy.flows(
        [
          { id: 'tab', type: 'tab', label: 'escalation' },
          {
            id: 'acc',
            type: 'bulkgate-account',
            name: 'home',
            baseUrl: sim.url,
            retries: 0,
            store: 'redis',
            storeUrl: redis.url,
            storeClaimSeconds: CLAIM,
          },
          {
            id: 'alarm',
            z: 'tab',
            type: 'inject',
            props: [{ p: 'payload' }, { p: 'topic', v: 'cellar', vt: 'str' }],
            payload: 'Water in the cellar',
            payloadType: 'str',
            wires: [['x']],
          },
          {
            id: 'ack',
            z: 'tab',
            type: 'inject',
            props: [
              { p: 'topic', v: 'cellar', vt: 'str' },
              { p: 'escalation', v: 'acknowledge', vt: 'str' },
            ],
            wires: [['x']],
          },
          {
            id: 'x',
            z: 'tab',
            type: 'bulkgate-escalation',
            account: 'acc',
            steps: [
              { numbers: OWNER, wait: WAIT },
              { numbers: NEIGHBOUR, wait: WAIT },
            ],
            repeat: 1,
            wires: [['o1'], ['o2'], ['o3']],
          },
          { id: 'c', z: 'tab', type: 'catch', scope: ['x'], wires: [['oc']] },
          ...[
            ['o1', '1'],
            ['o2', '2'],
            ['o3', '3'],
            ['oc', "'catch'"],
          ].map(([id, port]) => ({
            id,
            z: 'tab',
            type: 'function',
            func: record(port as string),
            outputs: 1,
            wires: [['log']],
          })),
          {
            id: 'log',
            z: 'tab',
            type: 'file',
            filename: outputs,
            appendNewline: true,
            createDir: true,
            overwriteFile: 'false',
            encoding: 'utf8',
            wires: [],
          },
        ],
        { acc: { application_id: ACCOUNT_ID, application_token: TOKEN } },
      );
    }
    await Promise.all(copies.map((c) => c.start()));
    await Promise.all(
      copies.map((c) => until('the store connected', () => /Shared store connected/.test(c.output()), 10_000)),
    );
  }

  const outputsOf = (copy: NodeRedProcess): Output[] => {
    const file = join(copy.userDir, 'outputs.jsonl');
    return existsSync(file)
      ? readFileSync(file, 'utf8')
          .split('\n')
          .filter(Boolean)
          .map((l) => JSON.parse(l) as Output)
      : [];
  };
  const smsAt = async (): Promise<Record<string, number>> => {
    const counts: Record<string, number> = { [OWNER]: 0, [NEIGHBOUR]: 0 };
    for (const m of (await sim.outbox()).messages) counts[String(m.number)] = (counts[String(m.number)] ?? 0) + 1;
    return counts;
  };
  const summary = (outputs: Output[]) => {
    const count = (port: Output['port']) => outputs.filter((o) => o.port === port).length;
    return `1:${count(1)} 2:${count(2)} 3:${count(3)} catch:${count('catch')}`;
  };

  /** Records the row, then asserts it: the SMS per number and every output of both copies as the contract says. */
  async function row(
    fault: string,
    expected: Record<string, number>,
    outputs: { 1: number; 2: number; 3: number },
  ): Promise<void> {
    const sms = await smsAt();
    let lost = 0;
    let twice = 0;
    for (const number of Object.keys(sms)) {
      lost += Math.max(0, (expected[number] ?? 0) - (sms[number] ?? 0));
      twice += Math.max(0, (sms[number] ?? 0) - (expected[number] ?? 0));
    }
    const seen = copies.map(outputsOf);
    rows.push({ fault, sms, outputs: seen.map(summary).join('; '), lost, twice });
    assert.deepEqual(sms, expected, `${fault}: SMS per number at the gateway`);
    const all = seen.flat();
    assert.deepEqual(
      [1, 2, 3, 'catch'].map((port) => all.filter((o) => o.port === port).length),
      [outputs[1], outputs[2], outputs[3], 0],
      `${fault}: outputs 1, 2, 3 and Catch of both copies: ${seen.map(summary).join('; ')}`,
    );
  }

  it('the same alarm raised on both copies within 100 ms: one incident, each SMS once, output 3 once', async () => {
    await deploy();
    const [a, b] = copies;
    await Promise.all([
      pressByApi(a.url)('alarm'),
      new Promise((r) => setTimeout(r, 50)).then(() => pressByApi(b.url)('alarm')),
    ]);
    // A wait that runs out still records the row: it shows what went wrong.
    await until(
      'output 3',
      () => copies.some((c) => outputsOf(c).some((o) => o.port === 3)),
      2 * WAIT * 1000 + 10_000,
    ).catch(() => undefined);
    // Checks that nothing more comes from either copy: a claim time and more after the chain ran out.
    await new Promise((r) => setTimeout(r, CLAIM * 1000 + 500));
    await row('two copies raise the same alarm within 100 ms', { [OWNER]: 1, [NEIGHBOUR]: 1 }, { 1: 2, 2: 0, 3: 1 });
  });

  it('an acknowledgement at the copy that did not send step 1: no step after it, output 2 once', async () => {
    await deploy();
    const [a] = copies;
    await pressByApi(a.url)('alarm');
    await until('step 1 at the gateway', async () => (await smsAt())[OWNER] === 1, 10_000);
    await until('output 1 of step 1', () => copies.some((c) => outputsOf(c).some((o) => o.port === 1)), 5000);
    const sender = copies.findIndex((c) => outputsOf(c).some((o) => o.port === 1));
    const other = copies[1 - sender] as NodeRedProcess;
    await pressByApi(other.url)('ack');
    await until('output 2', () => copies.some((c) => outputsOf(c).some((o) => o.port === 2)), 5000).catch(
      () => undefined,
    );
    // Checks that step 2 never comes: past its due time, a claim time and more.
    await new Promise((r) => setTimeout(r, WAIT * 1000 + CLAIM * 1000 + 500));
    await row('acknowledged at the other copy', { [OWNER]: 1, [NEIGHBOUR]: 0 }, { 1: 1, 2: 1, 3: 0 });
    assert.deepEqual(
      outputsOf(other)
        .filter((o) => o.port === 2)
        .map((o) => [o.state, o.by]),
      [['acknowledged', 'flow']],
      'output 2 at the copy where it was acknowledged',
    );
  });

  it('the copy that sent step 1 killed: step 2 still once, from the other copy, within the claim time of its due time', async () => {
    await deploy();
    const [a] = copies;
    await pressByApi(a.url)('alarm');
    await until('output 1 of step 1', () => copies.some((c) => outputsOf(c).some((o) => o.port === 1)), 10_000);
    const sender = copies.findIndex((c) => outputsOf(c).some((o) => o.port === 1));
    // Its answer recorded in the store (no pending SMS of step 1 left to adopt): the kill tests the chain, not a resend.
    const store = createClient({ url: redis.url });
    await store.connect();
    try {
      await until(
        'the answer of step 1 recorded',
        async () => (await store.keys(`${keyPrefix(ACCOUNT_ID)}esc:p:*`)).length === 0,
        5000,
      );
    } finally {
      await store.close();
    }
    const killedAt = Date.now();
    await (copies[sender] as NodeRedProcess).kill();
    const survivor = copies[1 - sender] as NodeRedProcess;
    // Step 2 is due WAIT s after step 1: the survivor sends it by then plus the claim time.
    await until(
      'step 2 at the gateway',
      async () => ((await smsAt())[NEIGHBOUR] ?? 0) >= 1,
      WAIT * 1000 + CLAIM * 1000 + 1000,
      { every: 50 },
    ).catch(() => undefined);
    const after = Date.now() - killedAt;
    await until(
      'output 3 at the survivor',
      () => outputsOf(survivor).some((o) => o.port === 3),
      WAIT * 1000 + 5000,
    ).catch(() => undefined);
    // Checks that nothing more comes: a claim time and more.
    await new Promise((r) => setTimeout(r, CLAIM * 1000 + 500));
    await row(
      `the copy that sent step 1 killed (step 2 ${after} ms after the kill)`,
      { [OWNER]: 1, [NEIGHBOUR]: 1 },
      { 1: 2, 2: 0, 3: 1 },
    );
    assert.deepEqual(
      outputsOf(survivor)
        .filter((o) => o.port === 1)
        .map((o) => [o.step, o.number]),
      [[2, NEIGHBOUR]],
      'step 2 from the survivor',
    );
  });
  it("step 1's SMS kept in one copy's outbox (gateway down), that copy killed, acknowledged at the other: the other takes the SMS over and withdraws it, never sent", async () => {
    await deploy();
    const [a] = copies;
    await sim.fault({ offline: { seconds: 3600, mode: '503' } });
    await pressByApi(a.url)('alarm');
    const waiting = async (copy: NodeRedProcess) =>
      ((await (await fetch(`${copy.url}/bulkgate/outbox/acc`)).json()) as { waiting: number }).waiting;
    let holder = -1;
    await until(
      "step 1's SMS kept in a copy's outbox",
      async () => {
        const counts = await Promise.all(copies.map(waiting));
        holder = counts.findIndex((n) => n === 1);
        return holder >= 0;
      },
      10_000,
    );
    await (copies[holder] as NodeRedProcess).kill();
    const other = copies[1 - holder] as NodeRedProcess;
    await pressByApi(other.url)('ack');
    await until('output 2', () => outputsOf(other).some((o) => o.port === 2), 5000).catch(() => undefined);
    await sim.fault({ offline: { seconds: 0 } });
    // The other copy takes the killed copy's kept SMS over once its claim lapsed and a grace passed
    // (the store's reconnect time and two looks), then attempts it: the store's outbox is empty then.
    const store = createClient({ url: redis.url });
    await store.connect();
    try {
      await until(
        'the kept SMS ended at the other copy',
        async () => (await store.zCard(`${keyPrefix(ACCOUNT_ID)}outbox`)) === 0,
        20_000,
      ).catch(() => undefined);
    } finally {
      await store.close();
    }
    // Checks that nothing more comes: a claim time and more.
    await new Promise((r) => setTimeout(r, CLAIM * 1000 + 500));
    await row(
      'step 1 kept by a copy that was killed, acknowledged at the other',
      { [OWNER]: 0, [NEIGHBOUR]: 0 },
      { 1: 0, 2: 1, 3: 0 },
    );
  });
});

/**
 * A promotional list longer than a step through the node in the Node-RED runtime,
 * against the simulator: prepared and routed in steps, it ends as a short list does (a msg per
 * recipient at its place, one summary, one request), and a refusal deep in it reaches Catch
 * naming the recipient. One kept through an outage is written to the outbox's file and sent from it
 * as it was received.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { LIST_STEP } from '../gateway/steps';
import { collect, helper, load, unload, type FlowNode, type TestNode } from './support/red';
import { ACCOUNT_ID, startTestSimulator, TOKEN, type TestSimulator } from './support/simulator';
import { until as waitUntil } from './support/wait';

describe('a long promotional list in steps (Node-RED runtime)', function () {
  this.timeout(60_000);
  let sim: TestSimulator;
  const SIZE = 2 * LIST_STEP + 500;
  const flow = (): FlowNode[] => [
    { id: 'acc', type: 'bulkgate-account', name: 'test', baseUrl: sim.url, retries: 0, outboxMinutes: 0 },
    {
      id: 'p',
      type: 'bulkgate-promotional',
      account: 'acc',
      text: 'Hi <first_name>',
      wires: [['ok'], ['bad'], ['sum']],
    },
    { id: 'ok', type: 'helper' },
    { id: 'bad', type: 'helper' },
    { id: 'sum', type: 'helper' },
  ];
  const credentials = { acc: { application_id: ACCOUNT_ID, application_token: TOKEN } };
  const list = () =>
    Array.from({ length: SIZE }, (_, i): unknown => ({
      number: `420777${String(i).padStart(6, '0')}`,
      variables: { first_name: `N${i}` },
    }));
  const receive = (msg: unknown) => (helper.getNode('p') as TestNode & { receive(m: unknown): void }).receive(msg);

  before(async () => {
    sim = await startTestSimulator(1_000_000);
  });
  beforeEach(() => sim.reset());
  afterEach(() => unload());
  after(() => sim.close());

  it(`${SIZE} recipients: a msg each at its place (an impossible one and one the gateway refuses on port 2), one summary, one request`, async () => {
    await load(flow(), credentials);
    const numbers = list();
    numbers[LIST_STEP + 70] = { number: '12ab' };
    numbers[2 * LIST_STEP + 30] = { number: '123', variables: { first_name: 'Short' } };
    const ok = collect('ok', SIZE - 2, 30_000);
    const bad = collect('bad', 2, 30_000);
    const sum = collect('sum', 1, 30_000);
    receive({ topic: 'campaign', payload: { number: numbers } });
    const [accepted, rejected, [summary]] = await Promise.all([ok, bad, sum]);
    assert.deepEqual(
      rejected.map((m) => [m.payload.number, m.parts.index, m.parts.count]),
      [
        ['12ab', LIST_STEP + 70, SIZE],
        ['123', 2 * LIST_STEP + 30, SIZE],
      ],
    );
    assert.deepEqual(accepted.at(-1)?.payload.number, `420777${String(SIZE - 1).padStart(6, '0')}`);
    assert.deepEqual(
      accepted.slice(0, 3).map((m) => [m.parts.index, m.topic]),
      [
        [0, 'campaign'],
        [1, 'campaign'],
        [2, 'campaign'],
      ],
    );
    assert.deepEqual(summary?.payload.total.status, { sent: 0, accepted: SIZE - 2, scheduled: 0, error: 2 });
    assert.equal((await sim.requests()).length, 1);
    const texts = (await sim.outbox()).messages.map((m) => m.text);
    assert.equal(texts.length, SIZE - 2);
    assert.equal(texts.at(-1), `Hi N${SIZE - 1}`);
  });

  it('a recipient the checks refuse deep in the list: the msg reaches Catch naming it; nothing is sent', async () => {
    await load(flow(), credentials);
    const numbers = list();
    numbers[2 * LIST_STEP + 100] = { number: '420777000001', colour: 'red' };
    const caught = new Promise<Error>((resolve) =>
      (helper.getNode('p') as TestNode).on('call:error', (call: { args: [Error] }) => resolve(call.args[0])),
    );
    receive({ payload: { number: numbers } });
    assert.match((await caught).message, new RegExp(`number\\[${2 * LIST_STEP + 100}\\]\\.colour`));
    assert.equal((await sim.requests()).length, 0);
  });
});

describe('a long promotional list kept in the outbox (Node-RED runtime)', function () {
  this.timeout(60_000);
  let sim: TestSimulator;
  let userDir: string;
  const SIZE = 4 * LIST_STEP + 10;
  const credentials = { acc: { application_id: ACCOUNT_ID, application_token: TOKEN } };

  before(async () => {
    sim = await startTestSimulator(1_000_000);
  });
  beforeEach(async () => {
    userDir = mkdtempSync(join(tmpdir(), 'bulkgate-list-kept-'));
    helper.settings({ userDir });
    await sim.reset();
  });
  afterEach(async () => {
    await unload();
    helper.settings({});
    rmSync(userDir, { recursive: true, force: true });
  });
  after(() => sim.close());

  it(`${SIZE} recipients kept through an outage: the file's line holds the body and the msg as they were (no credential, no req), then one request, a msg per recipient and one summary`, async () => {
    await load(
      [
        { id: 'acc', type: 'bulkgate-account', baseUrl: sim.url, retries: 0, timeout: 5000, outboxDelay: 300 },
        {
          id: 'p',
          type: 'bulkgate-promotional',
          account: 'acc',
          text: 'Hi <first_name>',
          wires: [['ok'], ['bad'], ['sum']],
        },
        { id: 'ok', type: 'helper' },
        { id: 'bad', type: 'helper' },
        { id: 'sum', type: 'helper' },
      ],
      credentials,
    );
    await sim.fault({ offline: { seconds: 600, mode: '503' } });
    const numbers = Array.from({ length: SIZE }, (_, i) => ({
      number: `420777${String(i).padStart(6, '0')}`,
      variables: { first_name: `N${i}` },
    }));
    const ok = collect('ok', SIZE, 30_000);
    const sum = collect('sum', 1, 30_000);
    const node = helper.getNode('p') as TestNode & { receive(m: unknown): void };
    node.receive({ topic: 'campaign', payload: { number: numbers }, req: { secret: 'a request' } });
    const file = join(userDir, 'bulkgate-outbox', 'acc.jsonl');
    const entryLine = () => {
      try {
        return readFileSync(file, 'utf8')
          .split('\n')
          .find((line) => line.startsWith('{"id"'));
      } catch {
        return undefined;
      }
    };
    await waitUntil('the list kept', () => entryLine() !== undefined, 10_000, { every: 25 });
    const line = entryLine() as string;
    assert.ok(
      !line.includes(TOKEN) && !line.includes('application_token') && !line.includes('a request'),
      'no credential, no req',
    );
    const entry = JSON.parse(line) as {
      body: { number: unknown[] };
      msg: { topic: string; payload: { number: unknown[] } };
    };
    assert.deepEqual(entry.body.number, numbers);
    assert.deepEqual(entry.msg.payload.number, numbers);
    assert.equal(entry.msg.topic, 'campaign');
    await sim.fault({ offline: { seconds: 0 } });
    const [accepted, [summary]] = await Promise.all([ok, sum]);
    assert.deepEqual(
      accepted.map((m) => m.payload.number),
      numbers.map((n) => n.number),
    );
    assert.ok(accepted.every((m) => m.topic === 'campaign'));
    assert.deepEqual(summary?.payload.total.status, { sent: 0, accepted: SIZE, scheduled: 0, error: 0 });
    assert.equal((await sim.outbox()).messages.length, SIZE, 'sent once');
  });
});

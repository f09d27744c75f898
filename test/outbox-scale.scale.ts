/**
 * The outbox at scale, in the Node-RED runtime against the simulator: an alarm storm during an
 * outage sends a handful of requests to the failing gateway, not one per alert and retry; the
 * backlog drains once each when it returns and the send node's status clears; the outbox is
 * bounded (outbox_full); a second Node-RED's lock is respected (outbox_locked) and a dead one's
 * taken over.
 */
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { hostname, tmpdir } from 'node:os';
import { join } from 'node:path';
import { collect, helper, load, unload, type FlowNode, type TestNode } from './support/red';
import { watchEscapes } from './support/escapes';
import { ACCOUNT_ID, startTestSimulator, TOKEN, type TestSimulator } from './support/simulator';
import { until as waitUntil } from './support/wait';

describe('outbox at scale: an alarm storm during an outage', function () {
  this.timeout(120_000);
  let sim: TestSimulator;
  let userDir: string;
  const { escaped, start, stop } = watchEscapes();
  const credentials = { acc: { application_id: ACCOUNT_ID, application_token: TOKEN } };
  let other: ChildProcess | undefined;

  before(async () => {
    start();
    sim = await startTestSimulator(1_000_000);
  });
  after(async () => {
    stop();
    await sim.close();
  });
  beforeEach(async () => {
    userDir = mkdtempSync(join(tmpdir(), 'bulkgate-outbox-scale-'));
    helper.settings({ userDir });
    await sim.reset();
  });
  afterEach(async () => {
    other?.kill();
    other = undefined;
    await unload();
    helper.settings({});
    await sim.fault({ offline: { seconds: 0 } });
    rmSync(userDir, { recursive: true, force: true });
    assert.deepEqual(escaped, [], 'no unhandled rejection or uncaught exception');
  });

  const outboxFile = () => join(userDir, 'bulkgate-outbox', 'acc.jsonl');

  const flow = (account: Record<string, unknown> = {}): FlowNode[] => [
    {
      id: 'acc',
      type: 'bulkgate-account',
      name: 'home',
      baseUrl: sim.url,
      retries: 3,
      retryDelay: 50,
      timeout: 2000,
      outboxDelay: 200,
      ...account,
    },
    { id: 't', type: 'bulkgate-transactional', account: 'acc', text: '', wires: [['ok'], ['bad']] },
    { id: 'c', type: 'catch', scope: null, uncaught: false, wires: [['caught']] },
    { id: 'ok', type: 'helper' },
    { id: 'bad', type: 'helper' },
    { id: 'caught', type: 'helper' },
  ];

  const until = (what: string, check: () => boolean | Promise<boolean>, ms = 60_000) => waitUntil(what, check, ms);

  /** An entry as another process wrote it to the outbox file. */
  const keptEntry = (id: string, text: string, topic?: string) => ({
    id,
    node: 't',
    operation: { kind: 'transactional', api: 'advanced', version: '2.0', method: 'POST', encoding: 'json' },
    body: { number: '420777123456', text },
    rejected: [],
    messages: 1,
    msg: { payload: text, topic },
    since: Date.now(),
    order: 1,
    attempts: 1,
    reason: 'HTTP 503',
  });

  const sends = async () => (await sim.requests()).filter((r) => r.path.endsWith('/transactional'));

  it('2,000 alerts while the gateway answers 503: a handful of requests reach it, then all 2,000 once each, in order; the status clears', async () => {
    await load(flow(), credentials);
    const statuses: string[] = [];
    (helper.getNode('t') as TestNode).on('call:status', (call: { args: [{ text?: string }] }) =>
      statuses.push(call.args[0]?.text ?? ''),
    );
    const caught: unknown[] = [];
    (helper.getNode('caught') as TestNode).on('input', (m: unknown) => caught.push(m));
    const outputs = collect('ok', 2000, 90_000);
    const back = Date.now() + 8000;
    await sim.fault({ offline: { seconds: 8, mode: '503' } });
    const node = helper.getNode('t') as TestNode;
    for (let i = 0; i < 2000; i++) node.receive({ payload: `Smoke ${i}`, number: '420777123456', seq: i } as never);
    const msgs = await outputs;
    const during = (await sends()).filter((r) => Date.parse(r.at) < back).length;
    // The first requests on the wire when the storm came (the pool's 32 connections), then one
    // probe at a time: not 2,000 alerts times 4 attempts.
    assert.ok(during <= 60, `${during} requests reached the failing gateway`);
    assert.ok(during >= 2, `${during} requests: the gateway was tried, and probed again`);
    assert.deepEqual(caught, [], 'nothing reached Catch');
    assert.deepEqual(
      msgs.map((m) => m.seq),
      Array.from({ length: 2000 }, (_, i) => i),
      'out of port 1 in the order they came',
    );
    const texts = (await sim.outbox()).messages.map((m) => m.text);
    assert.equal(texts.length, 2000, 'each delivered');
    assert.equal(new Set(texts).size, 2000, 'none twice');
    assert.ok(
      statuses.some((s) => /^\d+ waiting: HTTP 503$/.test(s)),
      'the status said they waited',
    );
    await until('the status to move on from waiting', () => /^sent \d+/.test(statuses.at(-1) ?? ''), 5000);
    await until('the outbox file removed', () => !existsSync(outboxFile()), 5000);
  });

  it('outboxSize 5: the sixth msg during an outage goes to Catch at once as outbox_full, naming the account and the setting', async () => {
    await load(flow({ outboxSize: 5 }), credentials);
    const caught = collect('caught', 3, 20_000);
    await sim.fault({ offline: { seconds: 60, mode: '503' } });
    const node = helper.getNode('t') as TestNode;
    for (let i = 0; i < 8; i++) node.receive({ payload: `Leak ${i}`, number: '420777123456', seq: i } as never);
    const errors = await caught;
    assert.deepEqual(
      errors.map((m) => m.bulkgate?.type),
      ['outbox_full', 'outbox_full', 'outbox_full'],
    );
    assert.match(errors[0]?.error.message, /outbox of the BulkGate account "home" already holds 5 messages/);
    assert.match(errors[0]?.error.message, /outbox size/);
    await sim.fault({ offline: { seconds: 0 } });
    const ok = await collect('ok', 5, 30_000);
    assert.equal(new Set(ok.map((m) => m.seq)).size, 5, 'the five kept were sent');
  });

  it("an alarm's give-up time: after it, Catch gets it as expired while a reminder on the same account waits on", async () => {
    await load(
      [
        ...flow(),
        {
          id: 'alarm',
          type: 'bulkgate-transactional',
          account: 'acc',
          text: '',
          giveUpAfter: 1,
          wires: [['ok'], ['bad']],
        },
      ],
      credentials,
    );
    const caught = collect('caught', 1, 20_000);
    await sim.fault({ offline: { seconds: 60, mode: '503' } });
    (helper.getNode('alarm') as TestNode).receive({
      payload: 'Burglar in the garage',
      number: '420777123456',
      seq: 'alarm',
    } as never);
    (helper.getNode('t') as TestNode).receive({
      payload: 'Take the bins out',
      number: '420777123456',
      seq: 'reminder',
    } as never);
    const [msg] = await caught;
    assert.equal(msg?.seq, 'alarm');
    assert.equal(msg?.bulkgate?.type, 'expired');
    assert.match(msg?.error.message, /Not sent within 1 s \(the node's "give up after"\)/);
    assert.equal(
      (helper.getNode('acc') as unknown as { account: { outbox: { waiting: number } } }).account.outbox.waiting,
      1,
      'the reminder still waits',
    );
    await sim.fault({ offline: { seconds: 0 } });
    const [sent] = await collect('ok', 1, 30_000);
    assert.equal(sent?.seq, 'reminder');
    assert.deepEqual(
      (await sim.outbox()).messages.map((m) => m.text),
      ['Take the bins out'],
      'the alarm that gave up was not sent later',
    );
  });

  it('another living Node-RED holds the outbox file: a msg that must wait goes to Catch as outbox_locked; its entries are not touched', async () => {
    other = spawn(process.execPath, ['-e', 'setTimeout(() => {}, 60000)'], { stdio: 'ignore' });
    mkdirSync(join(userDir, 'bulkgate-outbox'));
    const theirs = JSON.stringify(keptEntry('theirs-1', 'Kept by the other Node-RED'));
    writeFileSync(outboxFile(), `{"bulkgateOutbox":2}\n${theirs}\n`);
    writeFileSync(`${outboxFile()}.lock`, JSON.stringify({ pid: other.pid, host: hostname() }));
    await load(flow(), credentials);
    const caught = collect('caught', 1, 20_000);
    await sim.fault({ offline: { seconds: 60, mode: '503' } });
    (helper.getNode('t') as TestNode).receive({ payload: 'Gas', number: '420777123456' } as never);
    const [msg] = await caught;
    assert.equal(msg?.bulkgate?.type, 'outbox_locked');
    assert.match(msg?.error.message, /another Node-RED process holds the outbox file/);
    assert.equal(
      readFileSync(outboxFile(), 'utf8'),
      `{"bulkgateOutbox":2}\n${theirs}\n`,
      'the other process keeps its file as it was',
    );
    await sim.fault({ offline: { seconds: 0 } });
    await new Promise((r) => setTimeout(r, 1000)); // checks that no probe sends the other's messages once the gateway is back
    assert.deepEqual((await sim.outbox()).messages, [], "the other's messages are not sent from here");
  });

  it('a lock left by a process that is gone is taken over, and what it kept is sent', async () => {
    const gone = spawn(process.execPath, ['-e', '0'], { stdio: 'ignore' });
    await new Promise((r) => gone.once('exit', r));
    mkdirSync(join(userDir, 'bulkgate-outbox'));
    const entry = keptEntry('left-1', 'Kept before the crash', 'left');
    writeFileSync(outboxFile(), `{"bulkgateOutbox":2}\n${JSON.stringify(entry)}\n`);
    writeFileSync(`${outboxFile()}.lock`, JSON.stringify({ pid: gone.pid, host: hostname() }));
    await load(flow(), credentials);
    const [msg] = await collect('ok', 1, 20_000);
    assert.equal(msg?.topic, 'left');
    assert.deepEqual(
      (await sim.outbox()).messages.map((m) => m.text),
      ['Kept before the crash'],
    );
    await until('the lock given back', () => !existsSync(`${outboxFile()}.lock`), 5000);
  });
});

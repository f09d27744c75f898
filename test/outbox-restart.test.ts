/**
 * The outbox across a crash: a Node-RED process of its own sends alerts while the
 * gateway is away, is killed with SIGKILL, and is started again on the same user directory with
 * the gateway back: every alert is delivered, once.
 */
import assert from 'node:assert/strict';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { nodeRedProcess, type NodeRedProcess } from './support/node-red-process';
import { ACCOUNT_ID, startTestSimulator, TOKEN, type TestSimulator } from './support/simulator';
import { until as waitUntil } from './support/wait';

describe('outbox: a restart after SIGKILL', function () {
  this.timeout(120_000);
  let sim: TestSimulator;
  let copy: NodeRedProcess;
  let userDir: string;
  const output = () => copy.output();

  before(async () => {
    sim = await startTestSimulator(1_000_000);
    copy = nodeRedProcess('bulkgate-restart-');
    userDir = copy.userDir;
  });
  after(async () => {
    await copy.remove();
    await sim.close();
  });

  const startNodeRed = () => copy.start();

  const until = (what: string, check: () => boolean | Promise<boolean>, ms = 30_000) =>
    waitUntil(what, check, ms, { detail: output });

  const outboxFile = () => join(userDir, 'bulkgate-outbox', 'acc.jsonl');
  const kept = () =>
    existsSync(outboxFile())
      ? readFileSync(outboxFile(), 'utf8')
          .split('\n')
          .filter((l) => l.includes('"node"')).length
      : 0;

  it('alerts sent during an outage, Node-RED killed, started again with the gateway back: all delivered once', async () => {
    writeFileSync(
      join(userDir, 'flows.json'),
      JSON.stringify([
        { id: 'tab', type: 'tab', label: 'alarms' },
        {
          id: 'acc',
          type: 'bulkgate-account',
          name: 'home',
          baseUrl: sim.url,
          retries: 0,
          timeout: 2000,
          outboxDelay: 300,
        },
        ...[0, 1, 2, 3, 4].map((i) => ({
          id: `alarm${i}`,
          z: 'tab',
          type: 'inject',
          props: [{ p: 'payload' }, { p: 'number', v: '420777123456', vt: 'str' }],
          payload: `Alarm ${i}: water on the floor`,
          payloadType: 'str',
          wires: [['t']],
        })),
        { id: 't', z: 'tab', type: 'bulkgate-transactional', account: 'acc', text: '', wires: [[], []] },
      ]),
    );
    writeFileSync(
      join(userDir, 'flows_cred.json'),
      JSON.stringify({ acc: { application_id: ACCOUNT_ID, application_token: TOKEN } }),
    );

    let editor = await startNodeRed();
    // The gateway answers 503 (away) until the test clears it.
    await sim.fault({ offline: { seconds: 600, mode: '503' } });
    for (let i = 0; i < 5; i++) {
      const res = await fetch(`${editor}/inject/alarm${i}`, { method: 'POST' });
      assert.equal(res.status, 200);
    }
    await until('five alerts kept in the outbox file', () => kept() === 5);
    assert.ok(!readFileSync(outboxFile(), 'utf8').includes(TOKEN), 'the token is in no outbox file');
    await copy.kill();
    assert.deepEqual((await sim.outbox()).messages, [], 'nothing was delivered before the crash');

    await sim.fault({ offline: { seconds: 0 } });
    editor = await startNodeRed();
    await until('five delivered', async () => (await sim.outbox()).messages.length >= 5);
    // An entry leaves the file once its send ended: with the file empty, none is left to go twice.
    await until('the outbox file emptied', () => kept() === 0);
    const texts = (await sim.outbox()).messages.map((m) => m.text);
    assert.deepEqual(
      texts,
      [0, 1, 2, 3, 4].map((i) => `Alarm ${i}: water on the floor`),
    );
    assert.ok(editor);
  });

  it('delivery tracking with the default store survives a restart: a report after it carries msg.sent; output 3 fires after it for the silent one', async () => {
    await copy.kill();
    await sim.reset();
    const events = join(userDir, 'events.jsonl');
    /** What the events node's outputs wrote (a file node after each), one JSON line each. */
    const emitted = (): { port: string; status?: string; sent?: { topic: string } }[] =>
      existsSync(events)
        ? readFileSync(events, 'utf8')
            .split('\n')
            .filter(Boolean)
            .map((l) => JSON.parse(l) as { port: string })
        : [];
    const describeOutput = (port: string) =>
      `msg.payload = JSON.stringify({ port: '${port}', status: msg.payload.status, sent: msg.sent }); return msg;`;
    writeFileSync(
      join(userDir, 'flows.json'),
      JSON.stringify([
        { id: 'tab', type: 'tab', label: 'tracked alarms' },
        { id: 'tacc', type: 'bulkgate-account', name: 'home', baseUrl: sim.url, retries: 0 },
        ...['answered', 'silent'].map((name, i) => ({
          id: `inject-${name}`,
          z: 'tab',
          type: 'inject',
          topic: name,
          props: [{ p: 'payload' }, { p: 'topic', vt: 'str' }, { p: 'number', v: `42077712345${i}`, vt: 'str' }],
          payload: `Alarm: ${name}`,
          payloadType: 'str',
          wires: [['tt']],
        })),
        { id: 'tt', z: 'tab', type: 'bulkgate-transactional', account: 'tacc', text: '', wires: [[], []] },
        {
          id: 'ev',
          z: 'tab',
          type: 'bulkgate-events',
          path: '/bulkgate/events',
          account: 'tacc',
          reportTimeout: 12,
          wires: [['f1'], [], ['f3']],
        },
        { id: 'f1', z: 'tab', type: 'function', func: describeOutput('report'), outputs: 1, wires: [['out']] },
        { id: 'f3', z: 'tab', type: 'function', func: describeOutput('late'), outputs: 1, wires: [['out']] },
        {
          id: 'out',
          z: 'tab',
          type: 'file',
          filename: events,
          appendNewline: true,
          createDir: true,
          overwriteFile: 'false',
          encoding: 'utf8',
          wires: [],
        },
      ]),
    );
    writeFileSync(
      join(userDir, 'flows_cred.json'),
      JSON.stringify({
        tacc: { application_id: ACCOUNT_ID, application_token: TOKEN },
        ev: { secret: 'restart-secret' },
      }),
    );
    let editor = await startNodeRed();
    for (const name of ['answered', 'silent'])
      assert.equal((await fetch(`${editor}/inject/inject-${name}`, { method: 'POST' })).status, 200, output());
    await until('both accepted', async () => (await sim.outbox()).messages.length === 2);
    const answered = (await sim.outbox()).messages.find((m) => m.text === 'Alarm: answered');
    const trackingFile = join(userDir, 'bulkgate-tracking', 'tacc.jsonl');
    await until(
      'both tracked in the user directory',
      () => existsSync(trackingFile) && readFileSync(trackingFile, 'utf8').split('\n').filter(Boolean).length === 2,
    );
    assert.ok(!readFileSync(trackingFile, 'utf8').includes(TOKEN), 'the token is in no tracking file');
    await copy.kill();

    editor = await startNodeRed();
    const report = await fetch(`${editor}/bulkgate/events?token=restart-secret&status=1&smsID=${answered?.sms_id}`);
    assert.equal(report.status, 200);
    await until('the report after the restart', () => emitted().some((e) => e.port === 'report'));
    assert.deepEqual(
      emitted().filter((e) => e.port === 'report'),
      [{ port: 'report', status: 'delivered', sent: { topic: 'answered', payload: 'Alarm: answered', node: 'tt' } }],
    );
    await until('output 3 for the silent one', () => emitted().some((e) => e.port === 'late'), 20_000);
    await new Promise((r) => setTimeout(r, 500)); // checks that output 3 does not fire a second time for it
    assert.deepEqual(
      emitted().filter((e) => e.port === 'late'),
      [{ port: 'late', status: 'no_report', sent: { topic: 'silent', payload: 'Alarm: silent', node: 'tt' } }],
    );
  });
});

/**
 * bulkgate-events in the runtime: the simulator calls its webhook with delivery reports and an
 * incoming message; the node checks the secret, answers at once and emits one msg per report.
 */
import assert from 'node:assert/strict';
import { createServer, request, type Server } from 'node:http';
import { collect, helper, httpNode, load, unload, type FlowNode, type TestNode } from './support/red';
import { ACCOUNT_ID, startTestSimulator, TOKEN, type TestSimulator } from './support/simulator';
import { until } from './support/wait';

const SECRET = 'webhook-secret-4f3a';

/** Posts `bytes` of body and resolves with the answer's status, even when the server closes while the body is still going. */
function postLarge(url: string, bytes: number): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = request(url, { method: 'POST', headers: { 'content-length': bytes } }, (res) => {
      res.resume();
      resolve(res.statusCode as number);
    });
    req.on('error', reject);
    req.end('x'.repeat(bytes));
  });
}

describe('bulkgate-events: delivery reports and incoming messages', function () {
  this.timeout(20_000);
  let sim: TestSimulator;
  let server: Server;
  let base = '';

  before(async () => {
    sim = await startTestSimulator(1000, ['420777000001']);
    server = createServer((req, res) => (httpNode ? httpNode(req, res) : res.end()));
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
    base = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
  });
  beforeEach(async () => {
    await sim.reset();
    await load(
      [
        { id: 'acc', type: 'bulkgate-account', baseUrl: sim.url, retries: 0, outboxMinutes: 0 },
        { id: 'p', type: 'bulkgate-promotional', account: 'acc', text: 'Alarm', wires: [['sent'], [], []] },
        { id: 'e', type: 'bulkgate-events', path: '/bulkgate/events', wires: [['reports'], ['incoming']] },
        { id: 'sent', type: 'helper' },
        { id: 'reports', type: 'helper' },
        { id: 'incoming', type: 'helper' },
      ] as FlowNode[],
      { acc: { application_id: ACCOUNT_ID, application_token: TOKEN }, e: { secret: SECRET } },
    );
    await fetch(`${sim.url}/simulator/webhook`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ url: `${base}/bulkgate/events?token=${SECRET}`, delay: 50 }),
    });
  });
  afterEach(() => unload());
  after(async () => {
    server.close();
    await sim.close();
  });

  const receive = (id: string, msg: unknown) =>
    (helper.getNode(id) as TestNode & { receive(m: unknown): void }).receive(msg);

  it('reports delivered, not delivered and Viber seen, matched to the send by smsId', async () => {
    const sent = collect('sent', 3);
    const reports = collect('reports', 4);
    await fetch(`${sim.url}/simulator/accounts`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        id: ACCOUNT_ID,
        token: TOKEN,
        credit: 1000,
        viber: ['420777000001'],
        unreachable: ['420777000999'],
      }),
    });
    receive('p', {
      payload: {
        number: ['420777000001', '420777111222', '420777000999'],
        channel: { viber: { sender: 'Alarm', button: { caption: 'OK', url: '#' } }, sms: {} },
      },
    });
    const ids = new Map((await sent).map((m) => [m.payload.sms_id as string, m.payload.number as string]));
    const got = await reports;
    const byNumber = got
      .map((m) => [ids.get(m.smsId), m.payload.status, m.payload.statusCode, m.payload.channel])
      .sort();
    assert.deepEqual(byNumber, [
      ['420777000001', 'delivered', 1, 'viber'],
      ['420777000001', 'seen', 13, 'viber'],
      ['420777000999', 'not_delivered', 3, 'sms'],
      ['420777111222', 'delivered', 1, 'sms'],
    ]);
  });

  it('an incoming message comes out of output 2', async () => {
    const incoming = collect('incoming', 1);
    await fetch(`${sim.url}/simulator/incoming`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ from: '420777123456', message: 'ARM' }),
    });
    const [msg] = await incoming;
    assert.equal(msg?.payload.status, 'incoming');
    assert.equal(msg?.payload.statusCode, 10);
    assert.equal(msg?.payload.from, '420777123456');
    assert.equal(msg?.payload.message, 'ARM');
  });

  it('bulk reports as a POST of a JSON array: one msg each', async () => {
    const reports = collect('reports', 2);
    const res = await fetch(`${base}/bulkgate/events?token=${SECRET}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify([
        { status: 1, smsID: 'a' },
        { status: '2', smsID: 'b' },
      ]),
    });
    assert.equal(res.status, 200);
    assert.deepEqual(
      (await reports).map((m) => [m.smsId, m.payload.status]),
      [
        ['a', 'delivered'],
        ['b', 'buffered'],
      ],
    );
  });

  it('without the secret: 403 and nothing emitted; a malformed body: 400 and a warning', async () => {
    const emitted: unknown[] = [];
    for (const id of ['reports', 'incoming'])
      (helper.getNode(id) as TestNode).on('input', (m: unknown) => emitted.push(m));
    const warned: unknown[] = [];
    (helper.getNode('e') as TestNode).on('call:warn', (c: { args: unknown[] }) => warned.push(c.args[0]));
    assert.equal((await fetch(`${base}/bulkgate/events?status=1&smsID=x`)).status, 403);
    assert.equal((await fetch(`${base}/bulkgate/events?token=wrong&status=1&smsID=x`)).status, 403);
    assert.equal(
      (await fetch(`${base}/bulkgate/events?token=${SECRET}`, { method: 'POST', body: '{"status": 1,' })).status,
      400,
    );
    assert.equal(
      (await fetch(`${base}/bulkgate/events?token=${SECRET}`, { method: 'POST', body: '[{"nothing": true}]' })).status,
      400,
    );
    // The node answers 413 before it has read the whole body, and closes the connection after the
    // answer; a client still sending may see the close first. Node's own http client reads the answer.
    assert.equal(await postLarge(`${base}/bulkgate/events?token=${SECRET}`, 2 * 1024 * 1024), 413);
    // A good call after them: the node emits in the order it answered, so a refused call's reports
    // would come out before this one's.
    assert.equal((await fetch(`${base}/bulkgate/events?token=${SECRET}&status=1&smsID=after`)).status, 200);
    await until('the good call emitted', () => emitted.length > 0);
    assert.deepEqual(
      emitted.map((m) => (m as { smsId: string }).smsId),
      ['after'],
    );
    assert.equal(warned.length, 2);
  });

  it('the secret is the whole secret: its prefix, suffix, an empty one, a repeated one and an array form get 403', async () => {
    const emitted: unknown[] = [];
    for (const id of ['reports', 'incoming'])
      (helper.getNode(id) as TestNode).on('input', (m: unknown) => emitted.push(m));
    const enc = encodeURIComponent;
    for (const query of [
      `token=${enc(SECRET.slice(0, -1))}`,
      `token=${enc(SECRET.slice(1))}`,
      `token=${enc(SECRET)}x`,
      `token=${enc(SECRET.toUpperCase())}`,
      'token=',
      `token=${enc(SECRET)}&token=${enc(SECRET)}`,
      `token[]=${enc(SECRET)}`,
      `token[0]=${enc(SECRET)}`,
      `token[a]=${enc(SECRET)}`,
    ]) {
      assert.equal((await fetch(`${base}/bulkgate/events?${query}&status=1&smsID=x`)).status, 403, query);
    }
    assert.equal(
      (await fetch(`${base}/bulkgate/events?token=${enc(SECRET)}&status=1&smsID=x`)).status,
      200,
      'the secret itself is let in',
    );
    // The node emits in the order it answered: a refused call's report would come out before this one's.
    await until('the call with the secret emitted', () => emitted.length > 0);
    assert.equal(emitted.length, 1, 'only the call with the secret was emitted');
  });

  it('a report nested 100,000 deep, output 1 wired to two nodes: 400, nothing emitted, Node-RED up', async () => {
    await unload();
    await load(
      [
        { id: 'e', type: 'bulkgate-events', path: '/bulkgate/events', wires: [['reports', 'reports2'], ['incoming']] },
        { id: 'reports', type: 'helper' },
        { id: 'reports2', type: 'helper' },
        { id: 'incoming', type: 'helper' },
      ] as FlowNode[],
      { e: { secret: SECRET } },
    );
    const emitted: unknown[] = [];
    for (const id of ['reports', 'reports2', 'incoming'])
      (helper.getNode(id) as TestNode).on('input', (m: unknown) => emitted.push(m));
    const uncaught: unknown[] = [];
    const onUncaught = (error: unknown) => uncaught.push(error);
    process.on('uncaughtException', onUncaught);
    try {
      const deep = `${'['.repeat(100_000)}${']'.repeat(100_000)}`;
      const res = await fetch(`${base}/bulkgate/events?token=${SECRET}`, {
        method: 'POST',
        body: `[{"status":1,"smsID":"deep","extra":${deep}}]`,
      });
      assert.equal(res.status, 400);
      assert.match(await res.text(), /Nested deeper than 32 levels/);
      // 32 levels is still a report.
      const ok = collect('reports2', 1);
      const fine = await fetch(`${base}/bulkgate/events?token=${SECRET}`, {
        method: 'POST',
        body: `[{"status":1,"smsID":"fine","extra":${'['.repeat(30)}${']'.repeat(30)}}]`,
      });
      assert.equal(fine.status, 200);
      assert.equal((await ok)[0]?.smsId, 'fine');
      assert.deepEqual(
        emitted.map((m) => (m as { smsId: string }).smsId),
        ['fine', 'fine'],
        'only the sane report, once per wire',
      );
      assert.deepEqual(uncaught, []);
    } finally {
      process.off('uncaughtException', onUncaught);
    }
  });
});

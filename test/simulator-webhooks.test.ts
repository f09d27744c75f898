/**
 * The simulator calls every webhook set: two examples in one Node-RED (the demo's
 * tabs) each with an events node on its own path, each setting its webhook as an example does
 * (`POST /simulator/webhook`), both get every delivery report and reply; one removed
 * (`DELETE /simulator/webhook`), the other still gets them; a URL set twice is called once per
 * report; an empty URL turns every webhook off.
 */
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import { collect, helper, httpNode, load, unload, type FlowNode, type TestNode } from './support/red';
import { ACCOUNT_ID, startTestSimulator, TOKEN, type TestSimulator } from './support/simulator';

const SECRET = 'webhooks-secret-7c2e';

describe('the simulator calls every webhook set', function () {
  this.timeout(20_000);
  let sim: TestSimulator;
  let server: Server;
  let base = '';
  /** What reached Node-RED's HTTP node server, by path. */
  const calls: string[] = [];

  before(async () => {
    sim = await startTestSimulator(1000);
    server = createServer((req, res) => {
      calls.push(new URL(req.url ?? '/', 'http://x').pathname);
      return httpNode ? httpNode(req, res) : res.end();
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
    base = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
  });
  beforeEach(async () => {
    calls.length = 0;
    await sim.reset();
    await webhook('POST', { url: '' });
    // Two examples' events nodes, on their own paths, both tracking the account.
    await load(
      [
        { id: 'acc', type: 'bulkgate-account', baseUrl: sim.url, retries: 0, outboxMinutes: 0 },
        { id: 't', type: 'bulkgate-transactional', account: 'acc', text: '', wires: [['accepted'], []] },
        {
          id: 'e1',
          type: 'bulkgate-events',
          path: '/example-a/events',
          account: 'acc',
          wires: [['a-reports'], ['a-replies'], []],
        },
        {
          id: 'e2',
          type: 'bulkgate-events',
          path: '/example-b/events',
          account: 'acc',
          wires: [['b-reports'], ['b-replies'], []],
        },
        ...['accepted', 'a-reports', 'a-replies', 'b-reports', 'b-replies'].map((id) => ({ id, type: 'helper' })),
      ] as FlowNode[],
      { acc: { application_id: ACCOUNT_ID, application_token: TOKEN }, e1: { secret: SECRET }, e2: { secret: SECRET } },
    );
  });
  afterEach(() => unload());
  after(async () => {
    await webhook('POST', { url: '' });
    server.close();
    await sim.close();
  });

  const hook = (example: 'a' | 'b') => `${base}/example-${example}/events?token=${SECRET}`;
  async function webhook(method: 'POST' | 'DELETE' | 'GET', body?: unknown): Promise<Response> {
    return fetch(`${sim.url}/simulator/webhook`, {
      method,
      headers: method === 'GET' ? undefined : { 'content-type': 'application/json' },
      body: method === 'GET' ? undefined : JSON.stringify(body),
    });
  }
  const send = (number: string) =>
    (helper.getNode('t') as TestNode & { receive(m: unknown): void }).receive({
      payload: 'Alarm',
      number,
      topic: 'alarm/a',
    });
  /** Waits past the simulator's report delay (50 ms here) and the webhook's answer: checks that no report came. */
  const quiet = () => new Promise((r) => setTimeout(r, 600));

  it('two examples set their webhook: both get the delivery report and the reply, each once', async () => {
    for (const example of ['a', 'b'] as const)
      assert.equal((await webhook('POST', { url: hook(example), delay: 50 })).status, 200);
    const [aReport, bReport] = [collect('a-reports', 1), collect('b-reports', 1)];
    send('420777000123');
    for (const report of await Promise.all([aReport, bReport])) {
      assert.equal(report[0]?.payload.status, 'delivered');
      assert.equal(report[0]?.sent.topic, 'alarm/a');
    }
    const [aReply, bReply] = [collect('a-replies', 1), collect('b-replies', 1)];
    await fetch(`${sim.url}/simulator/incoming`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ from: '420777000123', message: 'OK' }),
    });
    for (const reply of await Promise.all([aReply, bReply])) assert.equal(reply[0]?.payload.message, 'OK');
    await quiet();
    assert.deepEqual(
      calls.sort(),
      ['/example-a/events', '/example-a/events', '/example-b/events', '/example-b/events'],
      'each webhook called once per event',
    );
    // Each says it was answered: a report and a reply each.
    const listed = (await (await webhook('GET')).json()) as { webhooks: { url: string; bulk: boolean }[] };
    assert.deepEqual(listed.webhooks, [
      { url: hook('a'), bulk: false, answered: 2, failed: 0 },
      { url: hook('b'), bulk: false, answered: 2, failed: 0 },
    ]);
  });

  it('the same URL set twice is one webhook; a removed one is called no more, the other still is', async () => {
    await webhook('POST', { url: hook('a'), delay: 50 });
    await webhook('POST', { url: hook('a') });
    await webhook('POST', { url: hook('b') });
    assert.equal((await webhook('DELETE', { url: hook('a') })).status, 200);
    const listed = (await (await webhook('GET')).json()) as { webhooks: { url: string }[] };
    assert.deepEqual(
      listed.webhooks.map((w) => w.url),
      [hook('b')],
    );
    const b = collect('b-reports', 1);
    send('420777000124');
    await b;
    await quiet();
    assert.deepEqual(calls, ['/example-b/events']);
  });

  it('an empty URL, or DELETE without one, turns every webhook off', async () => {
    await webhook('POST', { url: hook('a'), delay: 50 });
    await webhook('POST', { url: hook('b') });
    await webhook('POST', { url: '' });
    assert.deepEqual(((await (await webhook('GET')).json()) as { webhooks: unknown[] }).webhooks, []);
    await webhook('POST', { url: hook('a') });
    await webhook('DELETE', {});
    assert.deepEqual(((await (await webhook('GET')).json()) as { webhooks: unknown[] }).webhooks, []);
    send('420777000125');
    await collect('accepted', 1);
    await quiet();
    assert.deepEqual(calls, []);
  });

  it('DELETE of a URL that is not set: 404 naming it, the others stay', async () => {
    await webhook('POST', { url: hook('a') });
    const res = await webhook('DELETE', { url: hook('b') });
    assert.equal(res.status, 404);
    assert.match(((await res.json()) as { error: string }).error, /no webhook .*example-b/);
    assert.equal(((await (await webhook('GET')).json()) as { webhooks: unknown[] }).webhooks.length, 1);
  });
});

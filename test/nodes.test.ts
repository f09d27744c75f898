/** The four nodes in the Node-RED runtime (node-red-node-test-helper) against the simulator. */
import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import {
  collect,
  ERROR_CODE_IN_CATCH,
  helper,
  load,
  logs,
  seen,
  statusOf,
  unload,
  type FlowNode,
  type TestNode,
} from './support/red';
import { ACCOUNT_ID, startTestSimulator, TOKEN, type TestSimulator } from './support/simulator';

describe('nodes in the Node-RED runtime', function () {
  let sim: TestSimulator;
  const credentials = () => ({ acc: { application_id: ACCOUNT_ID, application_token: TOKEN } });
  const account = (extra: Record<string, unknown> = {}): FlowNode => ({
    id: 'acc',
    type: 'bulkgate-account',
    name: 'test',
    baseUrl: sim.url,
    retries: 0,
    // These tests are of the live path: a failed send reaches Catch at once (the outbox has its own tests).
    outboxMinutes: 0,
    ...extra,
  });
  const helpers = (...ids: string[]): FlowNode[] => ids.map((id) => ({ id, type: 'helper' }));
  const receive = (id: string, msg: Record<string, unknown>) =>
    (helper.getNode(id) as TestNode & { receive(m: unknown): void }).receive(msg);

  before(async () => {
    sim = await startTestSimulator(1000, ['420777000001']);
  });
  // Each test's own msgs, statuses, warnings, errors and log lines carry no application token:
  // checked after every test, whatever ran before it (or alone, with --grep).
  let seenFrom = 0;
  beforeEach(async () => {
    seenFrom = seen.length;
    await sim.reset();
  });
  afterEach(function () {
    const all = JSON.stringify(seen.slice(seenFrom)) + logs().join('\n');
    assert.equal(all.includes(TOKEN), false, `the token in what "${this.currentTest?.title}" saw`);
  });
  afterEach(() => unload());
  after(() => sim.close());

  describe('bulkgate-account', () => {
    it('keeps the credentials in the credential store, not in the flow', async () => {
      await load(
        [account(), { id: 'b', type: 'bulkgate-balance', account: 'acc', wires: [['out'], []] }, ...helpers('out')],
        credentials(),
      );
      const flows = JSON.stringify(helper.getNode('acc') ? (helper as any)._redNodes.getFlows().flows : []);
      assert.equal(flows.includes(TOKEN), false);
      const got = collect('out', 1);
      receive('b', { payload: 'go' });
      assert.equal((await got)[0]?.payload.credit, 1000);
    });

    it('shares one client (one connection pool) between the nodes that use it', async () => {
      // A gateway that notes the client port each request came from: one pool keeps one connection.
      const ports: number[] = [];
      const gateway = createServer((req, res) => {
        ports.push(req.socket.remotePort as number);
        req.resume().on('end', () => {
          res.setHeader('content-type', 'application/json');
          res.end(
            req.url?.includes('info')
              ? '{"data":{"wallet":"w","credit":10,"currency":"credits","free_messages":0,"datetime":"2026-01-01T00:00:00+00:00"}}'
              : '{"data":{"status":"accepted","sms_id":"s-1","price":1,"credit":9,"number":"420777111222"}}',
          );
        });
      });
      await new Promise<void>((r) => gateway.listen(0, '127.0.0.1', () => r()));
      try {
        await load(
          [
            account({ baseUrl: `http://127.0.0.1:${(gateway.address() as { port: number }).port}` }),
            { id: 't1', type: 'bulkgate-transactional', account: 'acc', text: 'x', wires: [['out'], []] },
            { id: 't2', type: 'bulkgate-balance', account: 'acc', wires: [['out'], []] },
            ...helpers('out'),
          ],
          credentials(),
        );
        const first = collect('out', 1);
        receive('t1', { number: '420777111222' });
        await first;
        const second = collect('out', 1);
        receive('t2', {});
        await second;
        assert.equal(ports.length, 2);
        assert.equal(ports[0], ports[1], 'the balance read went over the connection the send opened');
      } finally {
        gateway.close();
      }
    });

    it('"test connection" reads the balance with the deployed token, and never answers with it', async () => {
      await load([account(), { id: 'b', type: 'bulkgate-balance', account: 'acc', wires: [[], []] }], credentials());
      // The panel sends the placeholder Node-RED shows for a stored password.
      const stored = await helper
        .request()
        .post('/bulkgate/test-connection')
        .send({ id: 'acc', baseUrl: sim.url, application_id: '', application_token: '__PWRD__' });
      assert.deepEqual(stored.body, { ok: true, credit: 1000, currency: 'credits' });
      const typed = await helper
        .request()
        .post('/bulkgate/test-connection')
        .send({ baseUrl: sim.url, application_id: ACCOUNT_ID, application_token: 'typed-but-wrong' });
      assert.equal(typed.body.ok, false);
      assert.equal(typed.body.type, 'authentication_failed', 'info is a 1.0 operation: the 1.0 shape of 401');
      assert.equal(JSON.stringify([stored.body, typed.body]).includes(TOKEN), false);
    });

    it('a property missing from the flow file takes its default', async () => {
      await load(
        [
          { id: 'acc', type: 'bulkgate-account', baseUrl: sim.url, outboxMinutes: 0 },
          { id: 't', type: 'bulkgate-transactional', account: 'acc', wires: [['ok'], []] },
          ...helpers('ok'),
        ],
        credentials(),
      );
      const client = (helper.getNode('acc') as any).account.gateway();
      assert.equal(client.timeout, 15000);
      assert.equal(client.retries, 3);
      const got = collect('ok', 1);
      receive('t', { payload: 'hello', number: '420777111222' });
      assert.equal((await got)[0]?.payload.status, 'accepted');
      assert.equal(
        (await sim.lastRequest()).path,
        '/api/2.0/advanced/transactional',
        'api advanced and version 2.0 by default',
      );
    });
  });

  describe('bulkgate-promotional', () => {
    const flow = (node: Record<string, unknown>): FlowNode[] => [
      account(),
      { id: 'p', type: 'bulkgate-promotional', account: 'acc', wires: [['ok'], ['bad'], ['sum']], ...node },
      ...helpers('ok', 'bad', 'sum'),
    ];

    it('advanced 2.0: one msg per accepted and per rejected recipient, and a summary', async () => {
      await load(flow({ api: 'advanced', version: '2.0', text: 'Hi <first_name>' }), credentials());
      const ok = collect('ok', 2);
      const bad = collect('bad', 1);
      const sum = collect('sum', 1);
      const status = statusOf('p', (s) => s.fill === 'yellow');
      receive('p', {
        topic: 'campaign',
        payload: {
          number: [
            { number: '420777111222', variables: { first_name: 'Ann' } },
            { number: '123', variables: { first_name: 'Bad' } },
            { number: '+420 777 111 223', variables: { first_name: 'Bob' } },
          ],
        },
      });
      const [accepted, rejected, [summary]] = await Promise.all([ok, bad, sum]);
      assert.deepEqual(
        accepted.map((m) => [m.payload.status, m.payload.number, m.topic, m.parts.index, m.parts.count]),
        [
          ['accepted', '420777111222', 'campaign', 0, 3],
          ['accepted', '420777111223', 'campaign', 2, 3],
        ],
      );
      assert.deepEqual(
        rejected.map((m) => [m.payload.status, m.payload.code, m.payload.number, m.parts.index]),
        [['error', 9, '123', 1]],
      );
      assert.deepEqual(summary?.payload.total.status, { sent: 0, accepted: 2, scheduled: 0, error: 1 });
      assert.equal(summary?.payload.response.length, 3);
      assert.deepEqual(await status, {
        fill: 'yellow',
        shape: 'dot',
        text: 'sent 2 / rejected 1 (last: invalid number)',
      });
      assert.deepEqual(
        (await sim.outbox()).messages.map((m) => m.text),
        ['Hi Ann', 'Hi Bob'],
      );
    });

    it("an impossible number (12ab) comes out of port 2 like the gateway's own refusals; the others are sent; the summary counts it", async () => {
      await load(flow({ text: 'Hi' }), credentials());
      const ok = collect('ok', 2);
      const bad = collect('bad', 2);
      const sum = collect('sum', 1);
      receive('p', { payload: { number: ['420777111222', '12ab', '420777111223', '123'] } });
      const [accepted, rejected, [summary]] = await Promise.all([ok, bad, sum]);
      assert.deepEqual(
        accepted.map((m) => [m.payload.number, m.parts.index, m.parts.count]),
        [
          ['420777111222', 0, 4],
          ['420777111223', 2, 4],
        ],
      );
      // One refused by the node's checks, one by the gateway: the same port, the same record shape.
      assert.deepEqual(
        rejected.map((m) => [m.payload.status, m.payload.code, m.payload.number, m.parts.index]),
        [
          ['error', 9, '12ab', 1],
          ['error', 9, '123', 3],
        ],
      );
      assert.equal(rejected[0]?.payload.type, 'invalid_phone_number');
      assert.deepEqual(summary?.payload.total.status, { sent: 0, accepted: 2, scheduled: 0, error: 2 });
      assert.equal((await sim.requests()).length, 1, 'one request for the others');
    });

    it('with every number impossible: no request, each out of port 2, and the summary says so', async () => {
      await load(flow({ text: 'Hi' }), credentials());
      const bad = collect('bad', 2);
      const sum = collect('sum', 1);
      const caught: unknown[] = [];
      (helper.getNode('p') as TestNode).on('call:error', (call: unknown) => caught.push(call));
      receive('p', { payload: { number: '12ab;x1' } });
      const [rejected, [summary]] = await Promise.all([bad, sum]);
      assert.deepEqual(
        rejected.map((m) => m.payload.number),
        ['12ab', 'x1'],
      );
      assert.deepEqual(summary?.payload.total, { price: 0, status: { sent: 0, accepted: 0, scheduled: 0, error: 2 } });
      assert.equal((await sim.requests()).length, 0);
      assert.deepEqual(caught, [], 'not an error');
    });

    it('a join node in automatic mode after ports 1 and 2 rebuilds the whole set', async () => {
      await load(
        [
          account(),
          { id: 'p', type: 'bulkgate-promotional', account: 'acc', text: 'x', wires: [['j'], ['j'], []] },
          { id: 'j', type: 'join', mode: 'auto', wires: [['joined']] },
          ...helpers('joined'),
        ],
        credentials(),
      );
      const joined = collect('joined', 1);
      receive('p', { payload: { number: '420777111222;123;420777111223;4567' } });
      const [msg] = await joined;
      assert.deepEqual(
        msg?.payload.map((r: { number: string; status: string }) => [r.number, r.status]),
        [
          ['420777111222', 'accepted'],
          ['123', 'error'],
          ['420777111223', 'accepted'],
          ['4567', 'error'],
        ],
      );
    });

    it('advanced 1.0 and simple 1.0 send their own body shapes', async () => {
      await load(
        flow({
          api: 'advanced',
          version: '1.0',
          text: 'Ahoj',
          unicode: 'auto',
          flash: true,
          sender_id: 'gText',
          sender_id_value: 'Shop',
          sender_id_valueType: 'str',
        }),
        credentials(),
      );
      let sum = collect('sum', 1);
      receive('p', { number: ['420777111222'] });
      await sum;
      assert.deepEqual((await sim.lastRequest()).body, {
        application_id: ACCOUNT_ID,
        application_token: TOKEN,
        number: ['420777111222'],
        text: 'Ahoj',
        flash: true,
        sender_id: 'gText',
        sender_id_value: 'Shop',
      });
      await unload();
      await load(flow({ api: 'simple', version: '1.0', encoding: 'form', text: 'Ahoj' }), credentials());
      sum = collect('sum', 1);
      receive('p', { number: '420777111222, 420777111223' });
      await sum;
      const last = await sim.lastRequest();
      assert.equal(last.path, '/api/1.0/simple/promotional');
      assert.equal(
        last.raw,
        `application_id=${ACCOUNT_ID}&application_token=${TOKEN}&number=420777111222%3B420777111223&text=Ahoj`,
      );
    });

    it('the channel cascade from the node: viber to viber users, SMS to the rest', async () => {
      await load(
        flow({
          text: 'Sale today',
          channel: [
            { type: 'viber', sender: 'Shop', expiration: 60, button: { caption: 'Open', url: 'https://shop.example' } },
            { type: 'sms', sender_id: 'gText', sender_id_value: 'Shop', unicode: 'auto' },
          ],
        }),
        credentials(),
      );
      const sum = collect('sum', 1);
      receive('p', { number: ['420777000001', '420777111222'] });
      await sum;
      assert.deepEqual((await sim.lastRequest()).body.channel, {
        viber: { sender: 'Shop', expiration: 60, button: { caption: 'Open', url: 'https://shop.example' } },
        sms: { sender_id: 'gText', sender_id_value: 'Shop' },
      });
      assert.deepEqual(
        (await sim.outbox()).messages.map((m) => [m.number, m.channel, m.sender]),
        [
          ['420777000001', 'viber', 'Shop'],
          ['420777111222', 'sms', 'gText:Shop'],
        ],
      );
    });

    it('TypedInputs read the msg, flow context, env and JSONata', async () => {
      process.env.BULKGATE_TEST_COUNTRY = 'cz';
      await load(
        flow({
          text: 'x',
          number: 'payload.to',
          numberType: 'msg',
          groups: '$string(1)',
          groupsType: 'jsonata',
          country: 'BULKGATE_TEST_COUNTRY',
          countryType: 'env',
          schedule: 'when',
          scheduleType: 'flow',
        }),
        credentials(),
      );
      (helper.getNode('p') as any).context().flow.set('when', 4102444800);
      const sum = collect('sum', 1);
      receive('p', { payload: { to: ['777111222'] } });
      await sum;
      const { body } = await sim.lastRequest();
      assert.deepEqual(
        [body.number, body.groups, body.country, body.schedule],
        [['777111222'], [1], 'cz', '4102444800'],
      );
    });

    it("what the panel sets wins; msg.payload keys in the reference's names fill only what it leaves empty or at its default", async () => {
      await load(
        flow({ text: 'from node', duplicates_check: 'same_number', number: '420777111222', numberType: 'str' }),
        credentials(),
      );
      const warned: unknown[] = [];
      (helper.getNode('p') as TestNode).on('call:warn', (call: { args: unknown[] }) => warned.push(call.args[0]));
      const sum = collect('sum', 1);
      receive('p', {
        payload: {
          text: 'from payload',
          number: ['420777111223'],
          duplicates_check: null,
          application_token: 'stolen',
          unrelated: 1,
        },
      });
      await sum;
      const { body } = await sim.lastRequest();
      assert.deepEqual(body, {
        application_id: ACCOUNT_ID,
        application_token: TOKEN,
        number: ['420777111222'],
        text: 'from node',
        duplicates_check: 'same_number',
      });
      assert.equal(warned.length, 3, 'text, number and duplicates_check ignored, each named once');
      await unload();
      // A node that leaves them empty: the payload fills them.
      await load(flow({}), credentials());
      const filled = collect('sum', 1);
      receive('p', {
        payload: {
          text: 'from payload',
          number: ['420777111223'],
          duplicates_check: 'same_text',
          application_token: 'stolen',
        },
      });
      await filled;
      assert.deepEqual((await sim.lastRequest()).body, {
        application_id: ACCOUNT_ID,
        application_token: TOKEN,
        number: ['420777111223'],
        text: 'from payload',
        duplicates_check: 'same_text',
      });
    });

    it('a recipients field pointed at msg.payload.to wins over msg.payload.number', async () => {
      await load(flow({ number: 'payload.to', numberType: 'msg' }), credentials());
      const sum = collect('sum', 1);
      receive('p', { payload: { to: '420777111224', number: '420777111225', text: 'Door' } });
      await sum;
      assert.deepEqual((await sim.lastRequest()).body.number, ['420777111224']);
    });

    it('a <name> with no variable for some recipient warns once, and the request still goes', async () => {
      await load(flow({ text: 'Hi <first_name>' }), credentials());
      const warned: unknown[] = [];
      (helper.getNode('p') as TestNode).on('call:warn', (call: { args: unknown[] }) => warned.push(call.args[0]));
      const sum = collect('sum', 1);
      receive('p', {
        payload: {
          number: [{ number: '420777111222', variables: { first_name: 'A' } }, '420777111223', '420777111224'],
        },
      });
      await sum;
      await new Promise((r) => setImmediate(r));
      assert.deepEqual(warned, [
        'Some recipients have no variable for <first_name>; the gateway sends those placeholders as they are',
      ]);
      assert.equal((await sim.outbox()).messages.length, 3);
    });
  });

  describe('text: mustache and Unicode', () => {
    const flow = (node: Record<string, unknown>): FlowNode[] => [
      account(),
      { id: 't', type: 'bulkgate-transactional', account: 'acc', wires: [['ok'], ['bad']], ...node },
      ...helpers('ok', 'bad'),
    ];

    it('fills {{payload.temp}}, keeps & unescaped and <first_name> for the gateway to fill', async () => {
      await load(
        flow({
          text: 'Temp {{payload.temp}} °C & rising, <first_name>! {{flow.site}}',
          number: '420777111222',
          numberType: 'str',
          variables: '{"first_name":"Eva"}',
          variablesType: 'json',
        }),
        credentials(),
      );
      (helper.getNode('t') as any).context().flow.set('site', 'Garage');
      const ok = collect('ok', 1);
      receive('t', { payload: { temp: 31.5 } });
      await ok;
      assert.equal((await sim.lastRequest()).body.text, 'Temp 31.5 °C & rising, <first_name>! Garage');
      assert.equal((await sim.outbox()).messages[0]?.text, 'Temp 31.5 °C & rising, Eva! Garage');
    });

    it('a Czech or emoji text goes with unicode on, a plain one with it off, and the limit follows', async () => {
      await load(flow({ number: '420777111222', numberType: 'str' }), credentials());
      for (const [payload, unicode] of [
        ['Dveře otevřeny', true],
        ['Alarm 🚨', true],
        ['Door open', false],
      ] as const) {
        const ok = collect('ok', 1);
        receive('t', { payload });
        await ok;
        const { body } = await sim.lastRequest();
        assert.equal((body.channel as any)?.sms?.unicode === true, unicode, payload);
      }
      const caught = new Promise<Error>((resolve) =>
        (helper.getNode('t') as TestNode).on('call:error', (call: { args: [Error] }) => resolve(call.args[0])),
      );
      receive('t', { payload: 'č'.repeat(269) });
      assert.equal((await caught).message, 'text is 269 characters; the limit is 612 (268 with Unicode)');
    });
  });

  describe('bulkgate-transactional', () => {
    const flow = (node: Record<string, unknown>): FlowNode[] => [
      account(),
      { id: 't', type: 'bulkgate-transactional', account: 'acc', wires: [['ok'], ['bad']], ...node },
      ...helpers('ok', 'bad'),
    ];
    const variants: [Record<string, unknown>, string][] = [
      [{ api: 'advanced', version: '2.0' }, '/api/2.0/advanced/transactional'],
      [{ api: 'advanced', version: '1.0' }, '/api/1.0/advanced/transactional'],
      [{ api: 'simple', version: '1.0' }, '/api/1.0/simple/transactional'],
      [{ api: 'simple', version: '2.0' }, '/api/2.0/simple/transactional'],
    ];
    for (const [settings, path] of variants) {
      it(`${String(settings.api)} ${String(settings.version)}: the accepted message on port 1`, async () => {
        await load(flow({ ...settings, text: 'Door {{payload}}' }), credentials());
        const ok = collect('ok', 1);
        const status = statusOf('t', (s) => s.fill === 'green');
        receive('t', { payload: 'opened', number: '420777111222', _msgid: 'm1' });
        const [msg] = await ok;
        assert.equal(msg?.payload.status, 'accepted');
        assert.equal(msg?.payload.number, '420777111222');
        assert.equal(typeof msg?.payload.sms_id, 'string');
        assert.deepEqual(await status, { fill: 'green', shape: 'dot', text: 'sent 1 / rejected 0' });
        const last = await sim.lastRequest();
        assert.equal(last.path, path);
        assert.equal(last.body.text, 'Door opened');
      });
    }

    it('an impossible number (12) goes to port 2 as the rejected recipient too, without a request, not to Catch', async () => {
      await load(flow({ text: 'x' }), credentials());
      const bad = collect('bad', 1);
      const caught: unknown[] = [];
      (helper.getNode('t') as TestNode).on('call:error', (call: unknown) => caught.push(call));
      receive('t', { number: '12', topic: 'door' });
      const [msg] = await bad;
      assert.deepEqual(msg?.payload, {
        status: 'error',
        code: 9,
        type: 'invalid_phone_number',
        error: 'Invalid phone number',
        number: '12',
      });
      assert.equal(msg?.topic, 'door');
      assert.equal((await sim.requests()).length, 0);
      assert.deepEqual(caught, []);
    });

    it('2.0 invalid_phone_number goes to port 2 as the rejected recipient, not to Catch', async () => {
      await load(
        [...flow({ text: 'x' }), { id: 'c', type: 'catch', scope: null, wires: [['caught']] }, ...helpers('caught')],
        credentials(),
      );
      const bad = collect('bad', 1);
      const caught: unknown[] = [];
      (helper.getNode('caught') as TestNode).on('input', (m: unknown) => caught.push(m));
      receive('t', { number: '123' });
      const [msg] = await bad;
      assert.deepEqual(msg?.payload, {
        status: 'error',
        code: 9,
        type: 'invalid_phone_number',
        error: 'Invalid phone number',
        number: '123',
      });
      await new Promise((r) => setTimeout(r, 50)); // checks that the refusal on port 2 does not reach Catch too
      assert.equal(caught.length, 0);
    });

    it('a copy the gateway drops (duplicates_check, same text within its window) is not "sent": port 1 marks it, and so does the status', async () => {
      await load(flow({ text: 'Door opened', duplicates_check: 'on' }), credentials());
      const ok = collect('ok', 2);
      receive('t', { number: '420777111222', seq: 1 });
      receive('t', { number: '420777111222', seq: 2 });
      const [first, second] = await ok;
      assert.equal(first?.bulkgate?.duplicate, undefined);
      assert.equal(second?.bulkgate?.duplicate, 'gateway');
      assert.equal(second?.payload.duplicate, 'gateway');
      assert.equal(second?.payload.sms_id, first?.payload.sms_id, 'the gateway answered with the first one');
      assert.equal((await sim.outbox()).messages.length, 1, 'one SMS');
      await statusOf('t', (s) => s.text === 'sent 1 / rejected 0 / 1 dropped as a copy');
    });

    it('no number where the node reads it: Catch names the Recipients field and where the msg holds one', async () => {
      await load(
        [
          ...flow({ text: 'Door opened' }),
          { id: 'c', type: 'catch', scope: null, wires: [['caught']] },
          ...helpers('caught'),
        ],
        credentials(),
      );
      const caught = collect('caught', 2);
      receive('t', { payload: '+420 777 111 222' });
      receive('t', { topic: '420777111222' });
      const [payload, topic] = await caught;
      assert.equal(
        payload?.error.message,
        'no number: the Recipients field reads msg.number (set it, or choose another property in the node); msg.payload holds a phone number: to send to it, set Recipients to msg.payload',
      );
      assert.match(
        topic?.error.message,
        /msg\.topic holds a phone number: to send to it, set Recipients to msg\.topic$/,
      );
      assert.equal(payload?.bulkgate.type, 'invalid_request');
      await statusOf('t', (s) => s.text === 'no recipient');
      assert.deepEqual(await sim.requests(), []);
    });

    it('a schedule in the past is sent at once, with a warning in the log and in msg.bulkgate.warning', async () => {
      await load(flow({ text: 'Reminder' }), credentials());
      const warned: unknown[] = [];
      (helper.getNode('t') as TestNode).on('call:warn', (call: { args: unknown[] }) => warned.push(call.args[0]));
      const ok = collect('ok', 2);
      const past = new Date(Date.now() - 3600_000);
      receive('t', { number: '420777111222', schedule: past });
      receive('t', { number: '420777111223', schedule: new Date(Date.now() - 10_000) });
      const [late, now] = await ok;
      const warning = `schedule ${new Date(Math.floor(past.getTime() / 1000) * 1000).toISOString()} is in the past: the message goes out at once`;
      assert.equal(late?.bulkgate?.warning, warning);
      assert.deepEqual(warned, [warning]);
      assert.equal(now?.bulkgate?.warning, undefined, 'a schedule a few seconds old is "now", not a mistake');
    });

    it('1.0 admin from a TypedInput', async () => {
      await load(
        flow({ version: '1.0', text: 'x', admin: '2', adminType: 'num', number: '', numberType: 'str' }),
        credentials(),
      );
      const ok = collect('ok', 1);
      receive('t', {});
      await ok;
      assert.equal((await sim.lastRequest()).body.admin, 2);
    });
  });

  describe('bulkgate-balance', () => {
    const variants: [Record<string, unknown>, string, string][] = [
      [{}, 'POST', '/api/1.0/advanced/info'],
      [{ api: 'simple', method: 'GET' }, 'GET', '/api/1.0/simple/info'],
      [{ api: 'simple', method: 'POST' }, 'POST', '/api/1.0/simple/info'],
    ];
    for (const [settings, method, path] of variants) {
      it(`${method} ${path}: the balance on port 1, and on port 2 only below the threshold`, async () => {
        await load(
          [
            account(),
            {
              id: 'b',
              type: 'bulkgate-balance',
              account: 'acc',
              threshold: 500,
              ...settings,
              wires: [['one'], ['two']],
            },
            ...helpers('one', 'two'),
          ],
          credentials(),
        );
        const one = collect('one', 1);
        const status = statusOf('b', (s) => s.fill === 'green');
        receive('b', { payload: '' });
        const [msg] = await one;
        assert.equal(msg?.payload.credit, 1000);
        assert.equal(msg?.payload.currency, 'credits');
        assert.deepEqual(await status, { fill: 'green', shape: 'dot', text: '1000 credits' });
        const last = await sim.lastRequest();
        assert.deepEqual([last.method, last.path], [method, path]);
      });
    }

    it('port 2 fires when credit is below the threshold', async () => {
      await load(
        [
          account(),
          { id: 'b', type: 'bulkgate-balance', account: 'acc', threshold: 5000, wires: [['one'], ['two']] },
          ...helpers('one', 'two'),
        ],
        credentials(),
      );
      const both = Promise.all([collect('one', 1), collect('two', 1)]);
      receive('b', {});
      const [[a], [b]] = await both;
      assert.equal(a?.payload.credit, 1000);
      assert.equal(b?.payload.credit, 1000);
    });
  });

  describe('errors reach a Catch node', () => {
    const flow = (acc: Record<string, unknown>, node: Record<string, unknown>): FlowNode[] => [
      account(acc),
      {
        id: 't',
        type: 'bulkgate-transactional',
        account: 'acc',
        text: 'x',
        number: '420777111222',
        numberType: 'str',
        wires: [['ok'], ['bad']],
        ...node,
      },
      { id: 'c', type: 'catch', scope: null, wires: [['caught']] },
      ...helpers('ok', 'bad', 'caught'),
    ];
    // The status names the problem in a few words; the error carries the whole sentence.
    const cases: [
      string,
      Record<string, unknown>,
      Record<string, unknown>,
      Record<string, unknown>,
      Record<string, unknown>,
      string,
      RegExp,
      string,
    ][] = [
      [
        '401 in the 2.0 shape',
        {},
        {},
        { acc: { application_id: ACCOUNT_ID, application_token: 'wrong-token' } },
        {},
        'unknown_identity',
        /does not accept this application id and token: check them in the BulkGate account node/,
        'wrong token',
      ],
      [
        '401 in the 1.0 shape',
        {},
        { version: '1.0' },
        { acc: { application_id: 'nobody', application_token: 'x' } },
        {},
        'authentication_failed',
        /does not accept this application id and token: check them in the BulkGate account node/,
        'wrong token',
      ],
      [
        'a text too long',
        {},
        { text: 'x'.repeat(2000) },
        {},
        {},
        'invalid_request',
        /^text is 2000 characters; the limit is 612/,
        'text too long (2000/612)',
      ],
      [
        'a network failure',
        { baseUrl: 'http://127.0.0.1:1' },
        {},
        {},
        {},
        'network',
        /Could not reach the gateway/,
        'gateway unreachable',
      ],
      [
        'a missing token',
        {},
        {},
        { acc: { application_id: ACCOUNT_ID } },
        {},
        'invalid_request',
        /the account has no application_token/,
        'account not set up',
      ],
      [
        'no account',
        {},
        { account: '' },
        {},
        {},
        'invalid_request',
        /^No BulkGate account is selected in this node/,
        'no account',
      ],
      [
        'an inject timestamp as the text',
        {},
        { text: '' },
        {},
        { payload: 1795356264731 },
        'invalid_request',
        /^text is empty in the node, so msg.payload is the text, and it is a number \(an inject node's timestamp\?\)/,
        'no text',
      ],
      ['an empty text', {}, { text: '' }, {}, { payload: '' }, 'invalid_request', /^text/, 'no text'],
    ];
    for (const [name, acc, node, creds, input, code, message, brief] of cases) {
      it(`${name}: msg.error.code ${code}, msg.bulkgate, a red status "${brief}", nothing on the ports`, async () => {
        await load(flow(acc, node), { ...credentials(), ...creds });
        const caught = collect('caught', 1);
        const status = statusOf('t', (s) => s.fill === 'red');
        const outputs: unknown[] = [];
        for (const id of ['ok', 'bad']) (helper.getNode(id) as TestNode).on('input', (m: unknown) => outputs.push(m));
        receive('t', { payload: 'x', topic: 'door', ...input });
        const [msg] = await caught;
        // Node-RED copies the Error's code into msg.error since 4.1; before, msg.bulkgate.type alone carries it.
        if (ERROR_CODE_IN_CATCH) assert.equal(msg?.error.code, code);
        assert.match(msg?.error.message, message);
        // An Error's stack: copied by every version (a String object has none).
        assert.match(msg?.error.stack, /^GatewayError: [^\n]+\n\s+at /);
        assert.equal(msg?.error.source.id, 't');
        assert.equal(msg?.bulkgate.type, code);
        assert.equal(msg?.topic, 'door');
        assert.deepEqual(await status, { fill: 'red', shape: 'ring', text: brief });
        assert.equal(outputs.length, 0);
        const refusedByGateway = code === 'unknown_identity' || code === 'authentication_failed';
        assert.equal((await sim.requests()).length, refusedByGateway ? 1 : 0, 'a failed check sends nothing');
      });
    }

    it('without a Catch node, the debug sidebar gets an Error: the sentence as its message, its stack, a readable cause', async () => {
      await load(
        flow({ baseUrl: 'http://127.0.0.1:1' }, {}).filter((n) => n.type !== 'catch'),
        credentials(),
      );
      const logged = new Promise<unknown>((resolve) =>
        (helper.getNode('t') as TestNode).on('call:error', (call: { args: unknown[] }) => resolve(call.args[0])),
      );
      receive('t', { payload: 'x' });
      const error = await logged;
      // What Node-RED sends to the sidebar (its own encoder): an error, its message the sentence.
      const { util } = require(require.resolve('@node-red/util', { paths: [require.resolve('node-red')] })) as {
        util: { encodeObject(m: unknown): { msg: string; format: string } };
      };
      const encoded = util.encodeObject({ msg: error });
      assert.equal(encoded.format, 'error');
      assert.match(
        (JSON.parse(encoded.msg) as { data: { message: string } }).data.message,
        /^Could not reach the gateway/,
      );
      assert.ok(error instanceof Error);
      assert.match(
        String(error),
        /^Could not reach the gateway/,
        'its text (a log line, a Catch node) is the sentence alone',
      );
      assert.match(error.stack ?? '', /^GatewayError: Could not reach the gateway[^\n]*\n\s+at /);
      assert.match(String((error as { cause?: unknown }).cause), /^connect ECONNREFUSED 127\.0\.0\.1:1$/);
      assert.equal((error as { code?: string }).code, 'network');
    });

    it('low_credit', async () => {
      await fetch(`${sim.url}/simulator/accounts`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ id: 'poor', token: 'poor-token-1', credit: 0 }),
      });
      await load(flow({}, {}), { acc: { application_id: 'poor', application_token: 'poor-token-1' } });
      const caught = collect('caught', 1);
      receive('t', {});
      const [msg] = await caught;
      if (ERROR_CODE_IN_CATCH) assert.equal(msg?.error.code, 'low_credit');
      assert.deepEqual(msg?.bulkgate, {
        type: 'low_credit',
        status: 400,
        detail: 'This needs 0.05 credits; 0 left',
        retryable: false,
      });
      assert.equal((await sim.outbox()).messages.length, 0);
    });

    it('a failed check sends nothing', async () => {
      await load(flow({}, { text: '' }), credentials());
      const caught = collect('caught', 1);
      receive('t', { payload: { number: '420777111222', text: 'x', schedule: 'tomorrow' } });
      const [msg] = await caught;
      assert.match(msg?.error.message, /^schedule must be a Date/);
      assert.equal((await sim.requests()).length, 0);
    });
  });
});

/**
 * Delivery tracking in the runtime, against the simulator and its webhook: the three
 * one-wire patterns (escalate when not delivered in time, log the delivery against the alarm,
 * a reply ACK matched to the alarm), the outbox's sends, redeploys, two events nodes on one
 * account. The bounds of the account's memory: test/unit/tracking.test.ts.
 */
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import { collect, helper, httpNode, load, logs, unload, type FlowNode, type TestNode } from './support/red';
import { ACCOUNT_ID, startTestSimulator, TOKEN, type TestSimulator } from './support/simulator';
import { until } from './support/wait';

const SECRET = 'tracking-secret-77aa';
const SILENT = '420777000998';
const LATE = '420777000997';
const OWNER = '420777000123';

describe('delivery tracking: reports and replies matched to what was sent', function () {
  this.timeout(30_000);
  let sim: TestSimulator;
  let server: Server;
  let base = '';
  // The account's memory outlives redeploys (per account id, for the process): each test has its own account.
  let run = 0;
  let acc = '';

  before(async () => {
    sim = await startTestSimulator(1000);
    server = createServer((req, res) => (httpNode ? httpNode(req, res) : res.end()));
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
    base = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
  });
  beforeEach(async () => {
    acc = `track-acc-${++run}`;
    await sim.reset();
    await fetch(`${sim.url}/simulator/accounts`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        id: ACCOUNT_ID,
        token: TOKEN,
        credit: 1000,
        silent: [SILENT],
        reportDelay: { [LATE]: 1500 },
      }),
    });
    await webhook('/bulkgate/events');
  });
  afterEach(() => unload());
  after(async () => {
    server.close();
    await sim.close();
  });

  // Reports 300 ms after the send (a gateway's come seconds after): at 50 ms a loaded machine let a
  // report overtake the node's record of the send it answers (a promotional one's, 1 run in 4), and
  // it came out without msg.sent.
  const webhook = (path: string) =>
    fetch(`${sim.url}/simulator/webhook`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ url: `${base}${path}?token=${SECRET}`, delay: 300 }),
    });

  /** An account, a transactional and a promotional node, and events nodes (default: one with the account). */
  function flow(
    events: Record<string, unknown>[] = [{ id: 'e', reportTimeout: 1 }],
    account: Record<string, unknown> = {},
  ): FlowNode[] {
    return [
      { id: acc, type: 'bulkgate-account', baseUrl: sim.url, retries: 0, outboxDelay: 200, ...account },
      { id: 't', type: 'bulkgate-transactional', account: acc, text: '', wires: [['accepted'], []] },
      {
        id: 'p',
        type: 'bulkgate-promotional',
        account: acc,
        text: 'Hi <name>, the gate is open',
        wires: [['accepted'], [], []],
      },
      ...events.map((e) => ({
        type: 'bulkgate-events',
        path: `/bulkgate/${e.id === 'e' ? 'events' : e.id}`,
        account: acc,
        wires: [[`${e.id}-reports`], [`${e.id}-replies`], [`${e.id}-late`]],
        ...e,
      })),
      { id: 'accepted', type: 'helper' },
      ...events.flatMap((e) =>
        ['reports', 'replies', 'late'].map((port) => ({ id: `${e.id}-${port}`, type: 'helper' })),
      ),
    ] as FlowNode[];
  }
  const credentials = (events: string[] = ['e']) => ({
    [acc]: { application_id: ACCOUNT_ID, application_token: TOKEN },
    ...Object.fromEntries(events.map((id) => [id, { secret: SECRET }])),
  });
  const receive = (id: string, msg: unknown) =>
    (helper.getNode(id) as TestNode & { receive(m: unknown): void }).receive(msg);
  /** Msgs arriving at a helper node from now on. */
  const watch = (id: string) => {
    const got: Record<string, any>[] = [];
    (helper.getNode(id) as TestNode).on('input', (m: Record<string, any>) => got.push(m));
    return got;
  };

  it('"not delivered in time": output 3 once for the message with no final report, with msg.sent; none for the delivered one', async () => {
    await load(flow(), credentials());
    const late = watch('e-late');
    const reports = collect('e-reports', 1, 10_000);
    receive('t', { topic: 'garage', payload: 'Motion in the garage', number: SILENT });
    receive('t', { topic: 'door', payload: 'Door opened', number: '420777000555' });
    const [report] = await reports;
    await until('output 3 for the silent one', () => late.length > 0, 10_000);
    await new Promise((r) => setTimeout(r, 300)); // checks that output 3 fires once, and not for the delivered one (its deadline is the same)
    assert.equal(late.length, 1, 'one no_report');
    const [noReport] = late;
    assert.equal(noReport?.payload.status, 'no_report');
    assert.deepEqual(noReport?.sent, { topic: 'garage', payload: 'Motion in the garage', node: 't' });
    assert.equal(noReport?.topic, 'garage');
    assert.equal(noReport?.payload.to, SILENT);
    // The delivered one: its report carries what was sent, and output 3 stayed quiet for it.
    assert.equal(report?.payload.status, 'delivered');
    assert.deepEqual(report?.sent, { topic: 'door', payload: 'Door opened', node: 't' });
    assert.equal(report?.topic, 'door');
  });

  it('a final report that comes after output 3 still comes out of output 1 with msg.sent; a buffered one does not stop output 3', async () => {
    await load(flow(), credentials());
    const late = collect('e-late', 2, 10_000);
    const reports = watch('e-reports');
    const accepted = collect('accepted', 2);
    receive('t', { topic: 'late', payload: 'Motion in the hall', number: LATE });
    receive('t', { topic: 'buffered', payload: 'Water on the floor', number: SILENT });
    const buffered = (await accepted).find((m) => m.topic === 'buffered');
    // A buffered report (status 2) is not final: the message is still awaited.
    await fetch(`${base}/bulkgate/events?token=${SECRET}&status=2&smsID=${buffered?.payload.sms_id}`);
    const noReports = await late;
    assert.deepEqual(noReports.map((m) => m.topic).sort(), ['buffered', 'late']);
    await until('the buffered and the late final report', () =>
      ['buffered:buffered', 'late:delivered'].every((k) => reports.some((m) => `${m.topic}:${m.payload.status}` === k)),
    );
    const byTopic = Object.fromEntries(reports.map((m) => [`${m.topic}:${m.payload.status}`, m.sent]));
    assert.deepEqual(byTopic['buffered:buffered'], { topic: 'buffered', payload: 'Water on the floor', node: 't' });
    assert.deepEqual(byTopic['late:delivered'], { topic: 'late', payload: 'Motion in the hall', node: 't' });
  });

  it('a scheduled message counts from its schedule: its no_report comes after the one of a message sent at once', async () => {
    await load(flow(), credentials());
    const late = collect('e-late', 2, 15_000);
    const accepted = collect('accepted', 2);
    // The simulator reports a scheduled message only when it goes out; the silent number never gets one.
    receive('t', {
      topic: 'scheduled',
      payload: 'Check the boiler',
      number: SILENT,
      schedule: new Date(Date.now() + 2500),
    });
    receive('t', { topic: 'now', payload: 'Check the boiler now', number: SILENT });
    const statuses = Object.fromEntries((await accepted).map((m) => [m.topic, m.payload.status]));
    assert.deepEqual(statuses, { scheduled: 'scheduled', now: 'accepted' });
    assert.deepEqual(
      (await late).map((m) => m.topic),
      ['now', 'scheduled'],
    );
  });

  it('a reply from a number the account texted carries msg.inReplyTo (the last message to it); from another number, none', async () => {
    await load(flow([{ id: 'e', reportTimeout: 0 }]), credentials());
    // One after the other: the second is the last message to the owner.
    const first = collect('accepted', 1);
    receive('t', { topic: 'alarm-1', payload: 'Alarm: smoke in the kitchen', number: OWNER });
    await first;
    const accepted = collect('accepted', 1);
    receive('t', { topic: 'alarm-2', payload: 'Alarm: smoke in the hall', number: '+420 777 000 123' });
    const [second] = await accepted;
    const replies = collect('e-replies', 2);
    for (const from of ['+420777000123', '420777000444']) {
      await fetch(`${sim.url}/simulator/incoming`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ from, message: 'ACK' }),
      });
    }
    const got = await replies;
    const fromOwner = got.find((m) => m.payload.from === '+420777000123');
    const fromOther = got.find((m) => m.payload.from === '420777000444');
    assert.deepEqual(fromOwner?.inReplyTo, {
      sent: { topic: 'alarm-2', payload: 'Alarm: smoke in the hall', node: 't' },
      sms_id: second?.payload.sms_id,
    });
    assert.equal(fromOther?.inReplyTo, undefined);
  });

  it("a promotional send: each recipient's report carries that recipient's entry as msg.sent.payload", async () => {
    await load(flow([{ id: 'e', reportTimeout: 0 }]), credentials());
    const reports = collect('e-reports', 2, 10_000);
    receive('p', {
      topic: 'gate',
      payload: {
        number: [
          { number: '+420 777 000 601', variables: { name: 'Jana' } },
          { number: '420777000602', variables: { name: 'Petr' } },
        ],
      },
    });
    const got = await reports;
    const sent = got
      .map((m) => m.sent)
      .sort((a, b) => a.payload.variables.name.localeCompare(b.payload.variables.name));
    assert.deepEqual(sent, [
      { topic: 'gate', payload: { number: '420777000601', variables: { name: 'Jana' } }, node: 'p' },
      { topic: 'gate', payload: { number: '420777000602', variables: { name: 'Petr' } }, node: 'p' },
    ]);
  });

  it('a flood of reports: a final report read but still waiting to be emitted ends the wait; output 3 stays quiet for all 30', async () => {
    // reportTimeout 1 s; the flow takes 0.2 ms a report, so 10,000 reports ahead of the 30 take about 2 s to emit.
    await load(flow(), credentials());
    const accepted = collect('accepted', 30);
    for (let i = 0; i < 30; i++) receive('t', { topic: `alarm ${i}`, payload: `Alarm ${i}`, number: SILENT });
    const ids = (await accepted).map((m) => String(m.payload.sms_id));
    const late = watch('e-late');
    const reports = watch('e-reports');
    (helper.getNode('e-reports') as TestNode).on('input', () => {
      for (const end = performance.now() + 0.2; performance.now() < end;);
    });
    const flood = Array.from({ length: 9970 }, (_, i) => ({ status: 1, smsID: `unknown-${i}` }));
    const res = await fetch(`${base}/bulkgate/events?token=${SECRET}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify([...flood, ...ids.map((smsID) => ({ status: 1, smsID }))]),
    });
    assert.equal(res.status, 200);
    await until('every report emitted', () => reports.length >= 10_000, 20_000).catch(() => undefined);
    assert.equal(reports.length, 10_000, 'every report emitted');
    assert.ok(reports.findIndex((m) => m.smsId === ids[0]) >= 9970, 'the 30 came last');
    // A message sent now, with no report: its output 3 comes after the 30's deadlines have all passed.
    receive('t', { topic: 'after', payload: 'After the flood', number: SILENT });
    await until('output 3 for the message sent after the flood', () => late.length > 0, 10_000);
    assert.deepEqual(
      late.map((m) => m.topic),
      ['after'],
      'no no_report for a message whose report was read in time',
    );
    assert.deepEqual(
      reports.filter((m) => m.sent).map((m) => m.topic),
      ids.map((_, i) => `alarm ${i}`),
    );
  });

  it('a flood beyond the bound: a call waits, unread, while reports wait to be emitted; one that waited too long gets 503 and the log counts it', async () => {
    // At most 100 reports waiting to be emitted, a call waits 300 ms for room; 10,000 reports take about 2 s to emit here.
    await load(flow([{ id: 'e', reportTimeout: 0, pendingLimit: 100, busyWaitMs: 300 }]), credentials());
    const reports = watch('e-reports');
    (helper.getNode('e-reports') as TestNode).on('input', () => {
      for (const end = performance.now() + 0.2; performance.now() < end;);
    });
    const post = (call: string, count: number) =>
      fetch(`${base}/bulkgate/events?token=${SECRET}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(Array.from({ length: count }, (_, i) => ({ status: 1, smsID: `${call}-${i}` }))),
      });
    assert.equal((await post('first', 10_000)).status, 200);
    const refused = await post('refused', 10);
    assert.equal(refused.status, 503);
    assert.ok(
      logs().some((line) => /a webhook call waited 0\.3 s and was refused with HTTP 503 \(1 refused so far/.test(line)),
      'the log says a call was refused, and counts it',
    );
    await until('the first call emitted', () => reports.length >= 10_000, 20_000).catch(() => undefined);
    assert.equal((await post('later', 10)).status, 200, 'with room again, a call goes in');
    await until('the later call emitted', () => reports.length >= 10_010, 5000).catch(() => undefined);
    assert.equal(reports.length, 10_010);
    assert.ok(!reports.some((m) => m.smsId.startsWith('refused-')), "the refused call's reports were not emitted");
  });

  it('a message sent from the outbox is tracked too', async () => {
    await load(flow([{ id: 'e', reportTimeout: 0 }]), credentials());
    await sim.fault({ offline: { seconds: 1, mode: '503' } });
    const reports = collect('e-reports', 1, 15_000);
    receive('t', { topic: 'kept', payload: 'Freezer warm', number: '420777000556' });
    const [report] = await reports;
    assert.deepEqual(report?.sent, { topic: 'kept', payload: 'Freezer warm', node: 't' });
  });

  it('the memory lives with the account: a report after a redeploy of every node is still matched', async () => {
    await load(flow([{ id: 'e', reportTimeout: 0 }]), credentials());
    const accepted = collect('accepted', 1);
    receive('t', { topic: 'before-redeploy', payload: 'Gate open', number: SILENT });
    const [msg] = await accepted;
    await unload();
    await load(flow([{ id: 'e', reportTimeout: 0 }]), credentials());
    const reports = collect('e-reports', 1);
    await fetch(`${base}/bulkgate/events?token=${SECRET}&status=1&smsID=${msg?.payload.sms_id}`);
    const [report] = await reports;
    assert.deepEqual(report?.sent, { topic: 'before-redeploy', payload: 'Gate open', node: 't' });
  });

  it('two events nodes on one account: each emits each report it gets once, with msg.sent; a final report at one stops output 3 at both', async () => {
    await load(
      flow([
        { id: 'e', reportTimeout: 1 },
        { id: 'e2', reportTimeout: 1 },
      ]),
      credentials(['e', 'e2']),
    );
    const first = watch('e-reports');
    const second = watch('e2-reports');
    const lateFirst = watch('e-late');
    const lateSecond = watch('e2-late');
    const accepted = collect('accepted', 2);
    receive('t', { topic: 'a', payload: 'Alarm A', number: SILENT });
    receive('t', { topic: 'b', payload: 'Alarm B', number: '420777000557' });
    const ids = Object.fromEntries((await accepted).map((m) => [m.topic, m.payload.sms_id]));
    // The gateway calls e's webhook (the simulator's); a copy of A's final report goes to e2's.
    await fetch(`${base}/bulkgate/e2?token=${SECRET}&status=1&smsID=${ids.a}`);
    await until('the two reports', () => first.length > 0 && second.length > 0);
    // A message sent now, with no report: its output 3 comes after A's and B's deadlines have passed.
    receive('t', { topic: 'c', payload: 'Alarm C', number: SILENT });
    await until('output 3 for C at both', () => lateFirst.length > 0 && lateSecond.length > 0, 10_000);
    assert.deepEqual(
      first.map((m) => m.sent.topic),
      ['b'],
    );
    assert.deepEqual(
      second.map((m) => m.sent.topic),
      ['a'],
    );
    assert.deepEqual(
      lateFirst.map((m) => m.sent.topic),
      ['c'],
      'both reached a final report',
    );
    assert.deepEqual(
      lateSecond.map((m) => m.sent.topic),
      ['c'],
    );
  });

  it('an events node without an account emits reports as before: no msg.sent, no output 3', async () => {
    await load(flow([{ id: 'e', account: '', reportTimeout: 1 }]), credentials());
    const reports = collect('e-reports', 1);
    const late = watch('e-late');
    receive('t', { topic: 'plain', payload: 'Door opened', number: '420777000558' });
    receive('t', { topic: 'silent', payload: 'Door opened', number: SILENT });
    const [report] = await reports;
    await new Promise((r) => setTimeout(r, 1500)); // checks that output 3 stays quiet past the 1 s report timeout of the silent one
    assert.equal(report?.sent, undefined);
    assert.equal(report?.topic, 'delivered');
    assert.deepEqual(late, []);
  });
});

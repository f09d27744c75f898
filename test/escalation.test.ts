/**
 * The escalation node in the Node-RED runtime against the simulator: the chain's SMS step by step,
 * a second raise that starts nothing, acknowledged by a reply through a wired-in events node (the
 * simulator sends it to the webhook), by the flow, resolved, two incidents texting one phone, a
 * chain that cannot run refused at Catch, and a restart after a step came due (sent once, late).
 */
import assert from 'node:assert/strict';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { forgetDesks } from '../nodes/account/escalation-desk';
import { collect, helper, httpNode, load, logs, statusOf, unload, type FlowNode, type TestNode } from './support/red';
import { ACCOUNT_ID, startTestSimulator, TOKEN, type TestSimulator } from './support/simulator';
import { until } from './support/wait';

const OWNER = '420777100001';
const NEIGHBOUR = '420777100002';
const CARETAKER = '420777100003';
const STRANGER = '420777199999';
const SECRET = 'escalation-secret-61';

describe('bulkgate-escalation: a chain of SMS until someone acknowledges', function () {
  this.timeout(30_000);
  let sim: TestSimulator;
  let server: Server;
  let base = '';
  let userDir = '';

  before(async () => {
    sim = await startTestSimulator(1000, []);
    server = createServer((req, res) => (httpNode ? httpNode(req, res) : res.end()));
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
    base = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
  });
  beforeEach(async () => {
    userDir = mkdtempSync(join(tmpdir(), 'bulkgate-escalation-'));
    helper.settings({ userDir });
    await forgetDesks();
    await sim.reset();
  });
  afterEach(async () => {
    await sim.fault({ offline: { seconds: 0 } });
    await unload();
    await forgetDesks();
    helper.settings({});
    rmSync(userDir, { recursive: true, force: true });
  });
  after(async () => {
    server.close();
    await sim.close();
  });

  const receive = (id: string, msg: unknown) =>
    (helper.getNode(id) as TestNode & { receive(m: unknown): void }).receive(msg);
  const steps = (...s: [string, number][]) => s.map(([numbers, wait]) => ({ numbers, wait }));

  async function deploy(
    node: Record<string, unknown>,
    extra: FlowNode[] = [],
    accountSettings: Record<string, unknown> = {},
  ): Promise<void> {
    await load(
      [
        { id: 'acc', type: 'bulkgate-account', baseUrl: sim.url, retries: 0, ...accountSettings },
        { id: 'x', type: 'bulkgate-escalation', account: 'acc', wires: [['sms'], ['ended'], ['nobody']], ...node },
        { id: 'e', type: 'bulkgate-events', path: '/bulkgate/events', wires: [[], ['x']] },
        { id: 'c', type: 'catch', scope: ['x'], wires: [['caught']] },
        ...['sms', 'ended', 'nobody', 'caught'].map((id) => ({ id, type: 'helper' })),
        ...extra,
      ] as FlowNode[],
      { acc: { application_id: ACCOUNT_ID, application_token: TOKEN }, e: { secret: SECRET } },
    );
    await fetch(`${sim.url}/simulator/webhook`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ url: `${base}/bulkgate/events?token=${SECRET}`, delay: 10 }),
    });
  }

  /** What the simulator took: the number and text of each SMS, in order. */
  const texted = async () =>
    (await sim.outbox()).messages.map((m) => ({
      number: String((m as { number?: unknown }).number),
      text: String((m as { text?: unknown }).text),
    }));

  const replyFrom = (from: string, message: string) =>
    fetch(`${sim.url}/simulator/incoming`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ from, message }),
    });

  it('texts the owner, then the neighbour one wait later; a second raise starts nothing; nobody acknowledged: output 3', async () => {
    await deploy({ steps: steps([OWNER, 1], [NEIGHBOUR, 1]), repeat: 1 });
    const sms = collect('sms', 2, 8000);
    const nobody = collect('nobody', 1, 8000);
    receive('x', { topic: 'door', payload: 'Door open' });
    receive('x', { topic: 'door', payload: 'Door open' });
    const got = await sms;
    assert.deepEqual(
      got.map((m) => [
        m.escalation.step,
        m.escalation.round,
        m.escalation.number,
        m.escalation.late,
        m.topic,
        m.payload.status,
      ]),
      [
        [1, 1, OWNER, false, 'door', 'accepted'],
        [2, 1, NEIGHBOUR, false, 'door', 'accepted'],
      ],
    );
    const code = got[0]?.escalation.code as string;
    assert.match(code, /^\d{2,}$/);
    const [end] = await nobody;
    assert.equal(end?.escalation.state, 'unacknowledged');
    assert.equal(end?.payload, 'Door open', "the raising msg's payload");
    const seen = await texted();
    assert.deepEqual(seen, [
      { number: OWNER, text: `Door open Reply ${code} to acknowledge.` },
      { number: NEIGHBOUR, text: `Door open (step 2, round 1) Reply ${code} to acknowledge.` },
    ]);
  });

  it("a reply with the code through the events node acknowledges: output 2 by the owner's number, no further step; a stranger's reply changes nothing", async () => {
    await deploy({ steps: steps([OWNER, 2], [NEIGHBOUR, 2]), repeat: 1 });
    const first = collect('sms', 1);
    receive('x', { topic: 'door', payload: 'Door open' });
    const [sent] = await first;
    const code = sent?.escalation.code as string;
    await replyFrom(STRANGER, code);
    // Nothing must happen: a fixed wait for the webhook's 10 ms delay and the node's answer.
    await new Promise((r) => setTimeout(r, 300));
    const ended = collect('ended', 1);
    await replyFrom(OWNER, `${code} coming`);
    const [ack] = await ended;
    assert.equal(ack?.escalation.state, 'acknowledged');
    assert.equal(ack?.escalation.by, OWNER);
    assert.equal(ack?.escalation.code, code);
    assert.ok(ack?.escalation.after >= 0 && ack?.escalation.after < 2000);
    await new Promise((r) => setTimeout(r, 2500));
    assert.deepEqual(
      (await texted()).map((m) => m.number),
      [OWNER],
      'the neighbour is not texted after the acknowledgement',
    );
  });

  it('the flow acknowledges and resolves by topic; resolved, the next raise is a new incident with another code', async () => {
    await deploy({ steps: steps([OWNER, 60]), repeat: 1 });
    const first = collect('sms', 1);
    receive('x', { topic: 'water', payload: 'Water' });
    const [one] = await first;
    const ended = collect('ended', 2);
    receive('x', { topic: 'water', escalation: 'acknowledge' });
    receive('x', { topic: 'water', escalation: 'acknowledge' });
    receive('x', { topic: 'water', escalation: 'resolve' });
    const [ack, resolved] = await ended;
    assert.deepEqual(
      [ack?.escalation.state, ack?.escalation.by, resolved?.escalation.state, resolved?.escalation.by],
      ['acknowledged', 'flow', 'resolved', 'flow'],
    );
    const second = collect('sms', 1);
    receive('x', { topic: 'water', payload: 'Water again' });
    const [two] = await second;
    assert.notEqual(two?.escalation.code, one?.escalation.code, 'a code is not given again within 24 hours');
  });

  it('two incidents texting one phone: "OK" is ambiguous and changes nothing; the code acknowledges the one it names', async () => {
    await deploy({ steps: steps([OWNER, 60]), repeat: 1 });
    const sms = collect('sms', 2);
    receive('x', { topic: 'door', payload: 'Door' });
    receive('x', { topic: 'smoke', payload: 'Smoke' });
    const got = await sms;
    const smoke = got.find((m) => m.topic === 'smoke');
    await replyFrom(OWNER, 'OK');
    await new Promise((r) => setTimeout(r, 300));
    const ended = collect('ended', 1);
    await replyFrom(OWNER, `ok ${smoke?.escalation.code}`);
    const [ack] = await ended;
    assert.equal(ack?.topic, 'smoke');
    const again = collect('ended', 1);
    // Now one incident that texted the owner is unacknowledged: the ack word alone is enough.
    await replyFrom(OWNER, 'Ack!');
    assert.equal((await again)[0]?.topic, 'door');
  });

  it('a chain that cannot run goes to Catch naming the field, and nothing is sent', async () => {
    await deploy({ steps: steps([`${OWNER}; 12`, 60]), repeat: 1 });
    const caught = collect('caught', 2);
    receive('x', { topic: 'door', payload: 'Door' });
    receive('x', { topic: 'x', escalation: 'silence' });
    const [bad, command] = await caught;
    assert.equal(bad?.error.message, 'steps: step 1 has an impossible number, 12');
    assert.equal(command?.error.message, 'msg.escalation must be "acknowledge" or "resolve", not "silence"');
    assert.deepEqual(await texted(), []);
  });

  it('stored before done; a restart after a step came due sends that step once, late, and not the one before it again', async () => {
    await deploy({ steps: steps([OWNER, 1], [NEIGHBOUR, 1], [CARETAKER, 30]), repeat: 1 });
    const first = collect('sms', 1);
    receive('x', { topic: 'door', payload: 'Door' });
    const [one] = await first;
    const file = join(userDir, 'bulkgate-escalation', 'acc.json');
    const stored = JSON.parse(readFileSync(file, 'utf8')) as { incidents: { code: string; position: number }[] };
    assert.deepEqual(
      stored.incidents.map((i) => [i.code, i.position]),
      [[one?.escalation.code, 1]],
    );
    await unload();
    await forgetDesks();
    // Down for longer than step 2's wait, shorter than step 3's: step 3 is due; step 2 is missed.
    await new Promise((r) => setTimeout(r, 2300));
    await deploy({ steps: steps([OWNER, 1], [NEIGHBOUR, 1], [CARETAKER, 30]), repeat: 1 });
    const after = collect('sms', 1);
    const [late] = await after;
    assert.deepEqual(
      [late?.escalation.step, late?.escalation.number, late?.escalation.late, late?.escalation.code],
      [3, CARETAKER, true, one?.escalation.code],
    );
    await new Promise((r) => setTimeout(r, 300));
    assert.deepEqual(
      (await texted()).map((m) => m.number),
      [OWNER, CARETAKER],
    );
  });

  it("example 10: the owner is texted, then replies OK through the simulator and the events node: acknowledged by the owner's number", async () => {
    const example = JSON.parse(
      readFileSync(join(__dirname, '..', '..', 'examples', '10 - Escalation until someone acknowledges.json'), 'utf8'),
    ) as (FlowNode & {
      credentials?: Record<string, unknown>;
    })[];
    const pick = (id: string) =>
      example.find((n) => n.id === id) as FlowNode & { credentials?: Record<string, unknown> };
    const [acc, escalation, events] = ['ex10-acc', 'ex10-x1', 'ex10-e1'].map(pick) as (FlowNode & {
      credentials?: Record<string, unknown>;
    })[];
    await load(
      [
        { ...acc!, baseUrl: sim.url, credentials: undefined },
        { ...escalation!, wires: [['sms'], ['ended'], ['nobody']] },
        { ...events!, credentials: undefined },
        ...['sms', 'ended', 'nobody'].map((id) => ({ id, type: 'helper' })),
      ] as FlowNode[],
      { 'ex10-acc': acc!.credentials, 'ex10-e1': events!.credentials },
    );
    await fetch(`${sim.url}/simulator/webhook`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        url: `${base}/bulkgate/events?token=${events!.credentials?.secret as string}`,
        delay: 10,
      }),
    });
    const first = collect('sms', 1);
    receive('ex10-x1', { topic: 'alarm/cellar', payload: 'Alarm: water in the cellar' });
    const [sent] = await first;
    assert.equal(sent?.escalation.number, '420777000101');
    const ended = collect('ended', 1);
    await replyFrom('420777000101', 'OK');
    const [ack] = await ended;
    assert.deepEqual(
      [ack?.escalation.state, ack?.escalation.by, ack?.topic],
      ['acknowledged', '420777000101', 'alarm/cellar'],
    );
  });

  it('the gateway down when a step is due: its SMS waits in the outbox (the status says so) and is sent once after, on output 1', async () => {
    await deploy({ steps: steps([OWNER, 60]), repeat: 1 }, [], { outboxDelay: 200 });
    await sim.fault({ offline: { seconds: 2, mode: '503' } });
    const waiting = statusOf('x', (s) => /waiting/.test(s.text ?? ''));
    const sms = collect('sms', 1, 15_000);
    receive('x', { topic: 'door', payload: 'Door' });
    await waiting;
    const [sent] = await sms;
    assert.deepEqual([sent?.escalation.step, sent?.escalation.number, sent?.payload.status], [1, OWNER, 'accepted']);
    await new Promise((r) => setTimeout(r, 500));
    assert.deepEqual(
      (await texted()).map((m) => m.number),
      [OWNER],
      'sent once',
    );
  });

  it('an acknowledgement withdraws the chain SMS still waiting for the rate limit', async () => {
    await deploy({ steps: steps([`${OWNER}; ${NEIGHBOUR}`, 60]), repeat: 1 }, [], { rateLimit: 1, rateWindow: 60 });
    const first = collect('sms', 1);
    receive('x', { topic: 'door', payload: 'Door' });
    const [sent] = await first;
    const ended = collect('ended', 1);
    receive('x', { topic: 'door', escalation: 'acknowledge' });
    await ended;
    // Nothing must happen: the second SMS waited for the rate limit and is gone.
    await new Promise((r) => setTimeout(r, 300));
    assert.equal(
      (helper.getNode('acc') as unknown as { account: { limiter: { queued: number } } }).account.limiter.queued,
      0,
    );
    assert.deepEqual(
      (await texted()).map((m) => m.number),
      [sent?.escalation.number],
    );
  });

  /** A second escalation node on the account, texting the caretaker. */
  const caretakerNode: FlowNode = {
    id: 'x2',
    type: 'bulkgate-escalation',
    account: 'acc',
    steps: [{ numbers: CARETAKER, wait: 60 }],
    wires: [['sms'], [], []],
  };

  /** Raises an incident at the caretaker's node and waits for its SMS: the outbox sends in order, so one still kept would go first. */
  async function nextIncidentTexted(): Promise<void> {
    const next = collect('sms', 1, 20_000);
    receive('x2', { topic: 'smoke', payload: 'Smoke' });
    const [sent] = await next;
    assert.deepEqual(
      [sent?.topic, sent?.escalation.number],
      ['smoke', CARETAKER],
      'output 1 shows only the next incident',
    );
  }

  /** The node's debug log lines from now on. */
  function debugLines(): string[] {
    const lines: string[] = [];
    (helper.getNode('x') as TestNode).on('call:debug', (call: { args: unknown[] }) => lines.push(String(call.args[0])));
    return lines;
  }
  const WITHDRAWN = `the SMS of incident door to ${OWNER} was withdrawn: the incident was acknowledged or resolved`;

  it('an acknowledgement withdraws the chain SMS kept in the outbox during an outage: when the gateway is back, it is never sent and nothing comes out for it', async () => {
    await deploy({ steps: steps([OWNER, 60]), repeat: 1 }, [caretakerNode], { outboxDelay: 200 });
    await sim.fault({ offline: { seconds: 3600, mode: '503' } });
    const waiting = statusOf('x', (s) => /waiting/.test(s.text ?? ''));
    receive('x', { topic: 'door', payload: 'Door open' });
    await waiting;
    const debug = debugLines();
    const ended = collect('ended', 1);
    receive('x', { topic: 'door', escalation: 'acknowledge' });
    assert.equal((await ended)[0]?.escalation.state, 'acknowledged');
    await sim.fault({ offline: { seconds: 0 } });
    await nextIncidentTexted();
    assert.deepEqual(
      (await texted()).map((m) => m.number),
      [CARETAKER],
      "the owner's SMS of the acknowledged incident never reached the gateway",
    );
    assert.deepEqual(
      debug.filter((l) => /withdrawn/.test(l)),
      [WITHDRAWN],
    );
  });

  it('an acknowledgement while the kept SMS is on the wire as a probe that fails: it ends withdrawn instead of waiting again', async () => {
    await deploy({ steps: steps([OWNER, 60]), repeat: 1 }, [caretakerNode], { outboxDelay: 200 });
    // Each answer 1.5 s late: the probe is on the wire long enough to acknowledge meanwhile.
    await sim.fault({ offline: { seconds: 3600, mode: '503' }, latency: 1500 });
    const waiting = statusOf('x', (s) => /waiting/.test(s.text ?? ''), 10_000);
    receive('x', { topic: 'door', payload: 'Door open' });
    await waiting;
    const before = (await sim.requests()).length;
    await until('a probe on the wire', async () => (await sim.requests()).length > before, 10_000);
    const debug = debugLines();
    const ended = collect('ended', 1);
    receive('x', { topic: 'door', escalation: 'acknowledge' });
    await ended;
    await sim.fault({ offline: { seconds: 0 }, latency: 0 });
    await nextIncidentTexted();
    assert.deepEqual(
      (await texted()).map((m) => m.number),
      [CARETAKER],
    );
    assert.deepEqual(
      debug.filter((l) => /withdrawn/.test(l)),
      [WITHDRAWN],
    );
  });

  it("the chain runs out while its last step's SMS is kept in the outbox: nobody acknowledged, so it is still sent when the gateway is back", async () => {
    await deploy({ steps: steps([OWNER, 1]), repeat: 1 }, [], { outboxDelay: 200 });
    await sim.fault({ offline: { seconds: 3600, mode: '503' } });
    const nobody = collect('nobody', 1, 8000);
    const sms = collect('sms', 1, 20_000);
    receive('x', { topic: 'door', payload: 'Door open' });
    assert.equal((await nobody)[0]?.escalation.state, 'unacknowledged', 'output 3 while the SMS waits');
    await sim.fault({ offline: { seconds: 0 } });
    const [sent] = await sms;
    assert.deepEqual([sent?.escalation.step, sent?.escalation.number], [1, OWNER], 'output 1 once the gateway took it');
    assert.deepEqual(
      (await texted()).map((m) => m.number),
      [OWNER],
    );
  });

  /** The flow of the deletion tests, on a tab as a deploy gives it; `withX: false` is the next deploy, without the node. */
  const deletionFlow = (withX: boolean, numbers: string, accountSettings: Record<string, unknown>): FlowNode[] => [
    { id: 'tab', type: 'tab', label: 'test' },
    { id: 'acc', type: 'bulkgate-account', baseUrl: sim.url, retries: 0, ...accountSettings },
    ...(withX
      ? [
          {
            id: 'x',
            z: 'tab',
            type: 'bulkgate-escalation',
            account: 'acc',
            steps: steps([numbers, 60]),
            wires: [['sms'], [], []],
          },
        ]
      : []),
    { ...caretakerNode, z: 'tab' },
    { id: 'c', z: 'tab', type: 'catch', scope: ['x'], wires: [['caught']] },
    ...['sms', 'caught'].map((id) => ({ id, z: 'tab', type: 'helper' })),
  ];
  const credentials = { acc: { application_id: ACCOUNT_ID, application_token: TOKEN } };

  it('a deploy without the node: its open incident ends with a log line, and its chain SMS kept in the outbox is withdrawn, never sent', async () => {
    const settings = { outboxDelay: 200 };
    await load(deletionFlow(true, OWNER, settings).slice(1), credentials);
    await sim.fault({ offline: { seconds: 3600, mode: '503' } });
    const waiting = statusOf('x', (s) => /waiting/.test(s.text ?? ''));
    receive('x', { topic: 'door', payload: 'Door open' });
    await waiting;
    const caught: unknown[] = [];
    (helper.getNode('caught') as TestNode).on('input', (m: unknown) => caught.push(m));
    await helper.setFlows(deletionFlow(false, OWNER, settings), 'nodes', credentials);
    await until('x deleted', () => helper.getNode('x') === null);
    await sim.fault({ offline: { seconds: 0 } });
    await nextIncidentTexted();
    assert.deepEqual(
      (await texted()).map((m) => m.number),
      [CARETAKER],
      "the deleted node's SMS never reached the gateway",
    );
    const said = logs();
    assert.equal(
      said.filter((l) => l.includes('incident door') && l.includes('ended, nothing more is sent')).length,
      1,
    );
    assert.deepEqual(
      said.filter((l) => /no longer exists/.test(l)),
      [],
      'no warning of a message whose node is gone',
    );
    assert.deepEqual(caught, []);
  });

  it('a deploy without the node: its chain SMS waiting for the rate limit is withdrawn, never sent, and nothing goes to Catch', async () => {
    const settings = { rateLimit: 1, rateWindow: 60 };
    await load(deletionFlow(true, `${OWNER}; ${NEIGHBOUR}`, settings).slice(1), credentials);
    const first = collect('sms', 1);
    receive('x', { topic: 'door', payload: 'Door' });
    const [sent] = await first;
    const caught: unknown[] = [];
    (helper.getNode('caught') as TestNode).on('input', (m: unknown) => caught.push(m));
    const limiter = () =>
      (helper.getNode('acc') as unknown as { account: { limiter: { queued: number } } }).account.limiter;
    assert.equal(limiter().queued, 1, 'the second SMS waits for the rate limit');
    await helper.setFlows(deletionFlow(false, `${OWNER}; ${NEIGHBOUR}`, settings), 'nodes', credentials);
    await until('x deleted', () => helper.getNode('x') === null);
    await until('the rate limit empty', () => limiter().queued === 0);
    // Checks that nothing more happens: what waited is gone, not sent, and not at Catch.
    await new Promise((r) => setTimeout(r, 300));
    assert.deepEqual(
      (await texted()).map((m) => m.number),
      [sent?.escalation.number],
    );
    assert.deepEqual(caught, []);
    assert.deepEqual(
      logs().filter((l) => /no longer exists|error/i.test(l)),
      [],
    );
  });

  it('an account with no escalation node writes nothing of the escalation: a live send, one kept in an outage and sent after, a redeploy', async () => {
    const flow: FlowNode[] = [
      { id: 'acc', type: 'bulkgate-account', baseUrl: sim.url, retries: 0, outboxDelay: 200 },
      { id: 't', type: 'bulkgate-transactional', account: 'acc', text: '', wires: [['sms'], []] },
      { id: 'sms', type: 'helper' },
    ];
    const credentials = { acc: { application_id: ACCOUNT_ID, application_token: TOKEN } };
    await load(flow, credentials);
    const live = collect('sms', 1);
    receive('t', { payload: 'Live', number: OWNER });
    await live;
    await sim.fault({ offline: { seconds: 1, mode: '503' } });
    const kept = collect('sms', 1, 15_000);
    receive('t', { payload: 'Kept', number: OWNER });
    assert.equal((await kept)[0]?.bulkgate?.deferred?.attempts > 0, true, 'it waited in the outbox');
    await unload();
    await load(flow, credentials);
    assert.deepEqual(
      readdirSync(userDir).filter((name) => /escalation/.test(name)),
      [],
      `the user directory holds ${readdirSync(userDir).join(', ')}`,
    );
  });
});

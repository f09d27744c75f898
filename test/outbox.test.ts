/**
 * The outbox, in the Node-RED runtime against the simulator, with real files: an alert
 * raised while the gateway is away is delivered once when it is back; across a redeploy; after
 * its time, Catch with `expired`; a damaged file loses only its damaged lines; the token is in
 * no file. (A restart after SIGKILL is test/outbox-restart.test.ts: a Node-RED process of its own.)
 */
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { hostname, tmpdir } from 'node:os';
import { spawn, type ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import { collect, helper, load, statusOf, unload, type FlowNode, type TestNode } from './support/red';
import { watchEscapes } from './support/escapes';
import { ACCOUNT_ID, startTestSimulator, TOKEN, type TestSimulator } from './support/simulator';
import { until as waitUntil } from './support/wait';

describe('outbox: no alert lost to an outage or a redeploy', function () {
  this.timeout(90_000);
  let sim: TestSimulator;
  let userDir: string;
  const { escaped, start, stop } = watchEscapes();
  const credentials = { acc: { application_id: ACCOUNT_ID, application_token: TOKEN } };

  before(async () => {
    start();
    sim = await startTestSimulator(1_000_000);
  });
  after(async () => {
    stop();
    await sim.close();
  });
  beforeEach(async () => {
    userDir = mkdtempSync(join(tmpdir(), 'bulkgate-outbox-'));
    helper.settings({ userDir });
    await sim.reset();
  });
  afterEach(async () => {
    await unload();
    helper.settings({});
    rmSync(userDir, { recursive: true, force: true });
    assert.deepEqual(escaped, [], 'no unhandled rejection or uncaught exception');
  });

  const outboxFile = () => join(userDir, 'bulkgate-outbox', 'acc.jsonl');
  /** The entries waiting in the outbox file: a journal of entries and `done` lines (its header left out). */
  const fileEntries = (): Record<string, unknown>[] => {
    let text: string;
    try {
      text = readFileSync(outboxFile(), 'utf8');
    } catch (err) {
      // The outbox removes its file once nothing waits, possibly between two looks.
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return [];
      throw err;
    }
    const lines = text
      .split('\n')
      .filter((l) => l.trim())
      .map((l) => JSON.parse(l) as Record<string, unknown>);
    const done = new Set(lines.map((l) => l.done as string | undefined).filter((id) => id !== undefined));
    return lines.filter((e) => e.bulkgateOutbox === undefined && e.done === undefined && !done.has(e.id as string));
  };

  const flow = (account: Record<string, unknown> = {}, extra: FlowNode[] = []): FlowNode[] => [
    { id: 'acc', type: 'bulkgate-account', baseUrl: sim.url, retries: 0, timeout: 2000, outboxDelay: 300, ...account },
    { id: 't', type: 'bulkgate-transactional', account: 'acc', text: '', wires: [['ok'], ['bad']] },
    { id: 'c', type: 'catch', scope: null, uncaught: false, wires: [['caught']] },
    { id: 'ok', type: 'helper' },
    { id: 'bad', type: 'helper' },
    { id: 'caught', type: 'helper' },
    ...extra,
  ];

  const until = (what: string, check: () => boolean | Promise<boolean>, ms = 30_000) =>
    waitUntil(what, check, ms, { every: 25 });

  /** Texts of the messages the simulator accepted, in the order it accepted them. */
  const delivered = async (): Promise<string[]> => (await sim.outbox()).messages.map((m) => m.text);

  it('each msg kept is done once: the one that tried the gateway and the ones that went behind it without trying (a complete node sees each once)', async () => {
    await load(
      flow({}, [
        { id: 'doneWatch', type: 'complete', scope: ['t'], uncaught: false, wires: [['completed']] },
        { id: 'completed', type: 'helper' },
      ]),
      credentials,
    );
    const completed: string[] = [];
    (helper.getNode('completed') as TestNode).on('input', (m: { topic?: string }) => completed.push(m.topic ?? ''));
    await sim.fault({ offline: { seconds: 600, mode: '503' } });
    const node = helper.getNode('t') as TestNode;
    node.receive({ payload: 'Alarm first', number: '420777123456', topic: 'first' } as never);
    await until('the first kept', () => fileEntries().length === 1);
    // Older messages wait now: these go behind them without trying the gateway.
    for (const topic of ['second', 'third'])
      node.receive({ payload: `Alarm ${topic}`, number: '420777123456', topic } as never);
    await until('three kept', () => fileEntries().length === 3);
    await until(`three completions (${completed.join()})`, () => completed.length >= 3, 10_000);
    assert.deepEqual(completed.sort(), ['first', 'second', 'third']);
    assert.equal((await sim.requests()).length, 1, 'only the first tried the gateway');
    await sim.fault({ offline: { seconds: 0 } });
    await until('all three delivered', async () => (await delivered()).length === 3);
  });

  it('the gateway refuses connections for 4 s while 20 alerts are sent: all 20 reach it once, out of port 1 with deferred', async () => {
    await load(flow(), credentials);
    const caught: unknown[] = [];
    (helper.getNode('caught') as TestNode).on('input', (m: unknown) => caught.push(m));
    const outputs = collect('ok', 20, 60_000);
    const waiting = statusOf('t', (s) => /^\d+ waiting: connection refused$/.test(s.text ?? ''), 10_000);
    // 4 s: the probes of the 300 ms backoff (at 0.3, 0.9, 2.1 s) fail, the one at 4.5 s gets through.
    await sim.fault({ offline: { seconds: 4, mode: 'refuse' } });
    // The simulator stops listening just after it answered the control request.
    await until('the gateway is away', () =>
      fetch(sim.url).then(
        () => false,
        () => true,
      ),
    );
    const t0 = Date.now();
    const node = helper.getNode('t') as TestNode;
    for (let i = 0; i < 20; i++)
      node.receive({ payload: `Water on the floor ${i}`, number: '420777123456', topic: `alarm-${i}` } as never);
    await waiting;
    await until('20 kept in the outbox file', () => fileEntries().length === 20, 10_000);
    const file = readFileSync(outboxFile(), 'utf8');
    assert.ok(!file.includes(TOKEN), 'the token is in no outbox file');
    assert.ok(!file.includes('application_token'), 'no credential field either');
    const msgs = await outputs;
    assert.ok(Date.now() - t0 >= 3_000, 'nothing went out while the gateway was away');
    assert.deepEqual(caught, [], 'nothing reached Catch');
    assert.equal(msgs.length, 20);
    for (const msg of msgs) {
      assert.equal(msg.payload.status, 'accepted');
      assert.ok(msg.bulkgate?.deferred, 'msg.bulkgate.deferred is set');
      assert.ok(msg.bulkgate.deferred.attempts >= 2, `attempts ${msg.bulkgate.deferred.attempts}`);
      assert.ok(Date.parse(msg.bulkgate.deferred.since) >= t0 - 1000);
    }
    assert.deepEqual(
      msgs.map((m) => m.topic),
      Array.from({ length: 20 }, (_, i) => `alarm-${i}`),
      'each msg came out with its own properties, in order',
    );
    const texts = await delivered();
    assert.deepEqual(
      texts,
      Array.from({ length: 20 }, (_, i) => `Water on the floor ${i}`),
      'each delivered exactly once, in order',
    );
    await until('the outbox file emptied', () => fileEntries().length === 0, 5_000);
    // Every resend carried duplicates_check, so a copy that did reach the gateway is dropped there.
    const sends = (await sim.requests()).filter((r) => r.path.endsWith('/transactional'));
    assert.equal(sends.length, 20);
    assert.ok(sends.every((r) => r.body.duplicates_check === 'on'));
  });

  it('a send that reached the gateway first (accepted, not answered) is not sent twice: duplicates_check drops the copy', async () => {
    await load(flow(), credentials);
    const outputs = collect('ok', 1, 30_000);
    // Processed, then the connection is dropped before the answer: the client cannot know.
    await sim.fault({ drop: 'after' });
    (helper.getNode('t') as TestNode).receive({ payload: 'Door opened', number: '420777123456' } as never);
    const [msg] = await outputs;
    assert.ok(msg?.bulkgate?.deferred, 'it went through the outbox');
    assert.equal(
      msg?.bulkgate?.duplicate,
      'resend',
      'its resend was dropped as a copy of the first attempt, which got through',
    );
    assert.deepEqual(await delivered(), ['Door opened'], 'the gateway has it once');
    const sends = (await sim.requests()).filter((r) => r.path.endsWith('/transactional'));
    assert.deepEqual(
      sends.map((r) => r.body.duplicates_check),
      [undefined, 'on'],
      'the resend of a copy that may have arrived carried duplicates_check',
    );
  });

  it('two nodes on one account, during an outage: none sent twice, none skipped, the order kept', async () => {
    await load(
      flow({}, [{ id: 't2', type: 'bulkgate-transactional', account: 'acc', text: '', wires: [['ok'], ['bad']] }]),
      credentials,
    );
    const outputs = collect('ok', 20, 60_000);
    await sim.fault({ offline: { seconds: 3, mode: '503' } });
    const a = helper.getNode('t') as TestNode;
    const b = helper.getNode('t2') as TestNode;
    const order: string[] = [];
    for (let i = 0; i < 10; i++) {
      for (const [node, name] of [
        [a, 'A'],
        [b, 'B'],
      ] as const) {
        const text = `${name}${i}`;
        order.push(text);
        node.receive({ payload: text, number: '420777123456' } as never);
        // The sends are handled in the order they arrive, and the outbox keeps that order: the next
        // arrives once this one is kept (the first probe after the 3 s outage is at 4.5 s).
        await until(`${text} kept`, () => fileEntries().length === order.length, 10_000);
      }
    }
    await outputs;
    assert.deepEqual(await delivered(), order);
  });

  it('a redeploy with 50 queued behind the rate limit: none closed, all delivered after it', async () => {
    const account = { rateLimit: 10, rateWindow: 1, queueSize: 100 };
    await load(flow(account), credentials);
    const caught: unknown[] = [];
    (helper.getNode('caught') as TestNode).on('input', (m: unknown) => caught.push(m));
    const node = helper.getNode('t') as TestNode;
    for (let i = 0; i < 50; i++) node.receive({ payload: `Queued ${i}`, number: '420777123456' } as never);
    await until('some queued', async () => (await delivered()).length >= 10);
    // A full redeploy of the same flow: the account and the node are closed and started again.
    const before = helper.getNode('t');
    const deployed = [
      { id: 'tab', type: 'tab', label: 'test' },
      ...flow(account).map((n) => (n.type === 'bulkgate-account' ? n : { z: 'tab', ...n })),
    ];
    await helper.setFlows(deployed, 'full', credentials);
    await until('the flow restarted', () => helper.getNode('t') !== before && helper.getNode('ok') !== null);
    const caughtAfter: unknown[] = [];
    (helper.getNode('caught') as TestNode).on('input', (m: unknown) => caughtAfter.push(m));
    await until('all 50 delivered', async () => (await delivered()).length === 50, 30_000);
    const texts = await delivered();
    assert.equal(new Set(texts).size, 50, 'none twice');
    assert.deepEqual([...texts].sort(), Array.from({ length: 50 }, (_, i) => `Queued ${i}`).sort());
    assert.deepEqual([...caught, ...caughtAfter], [], 'none ended as closed (or any error)');
  });

  it('a redeploy during a drain (simple 1.0, which cannot be sent twice): the resends on the wire get the grace a live send gets, and each msg ends once, through the redeployed node', async () => {
    const v1 = flow({ timeout: 3000 }).map((n) => (n.id === 't' ? { ...n, api: 'simple', version: '1.0' } : n));
    await load(v1, credentials);
    const endings = new Map<string, string[]>();
    for (const id of ['ok', 'bad', 'caught']) {
      (helper.getNode(id) as TestNode).on('input', (m: { topic?: string }) =>
        endings.set(m.topic ?? '', [...(endings.get(m.topic ?? '') ?? []), id]),
      );
    }
    await sim.fault({ offline: { seconds: 600, mode: '503' } });
    const node = helper.getNode('t') as TestNode;
    for (let i = 0; i < 12; i++)
      node.receive({ payload: `Gas ${i}`, number: '420777123456', topic: `gas-${i}` } as never);
    await until('12 kept', () => fileEntries().length === 12);
    // Back, each answer 1 s late: the probe, then the rest on the wire together.
    await sim.fault({ latency: 1000, offline: { seconds: 0 } });
    const sentBefore = (await sim.requests()).length;
    await until(
      'resends on the wire after the probe',
      async () => (await sim.requests()).length >= sentBefore + 4,
      10_000,
    );
    // Only the account and the node restart; the helpers and the Catch node stay.
    const v2 = [
      { id: 'tab', type: 'tab', label: 'test' },
      ...v1.map((n) =>
        n.type === 'bulkgate-account'
          ? { ...n, name: 'v2' }
          : { z: 'tab', ...n, ...(n.id === 't' ? { name: 'v2' } : {}) },
      ),
    ];
    await helper.setFlows(v2, 'nodes', credentials);
    await until(`12 ended (${endings.size})`, () => endings.size === 12, 30_000);
    await new Promise((r) => setTimeout(r, 500)); // checks that none ends twice
    assert.deepEqual(
      [...endings.entries()].filter(([, ports]) => ports.length !== 1),
      [],
      'each ended once',
    );
    assert.deepEqual(
      [...endings.values()].map(([port]) => port),
      Array.from({ length: 12 }, () => 'ok'),
      'each sent (the gateway answered within the grace)',
    );
    const texts = await delivered();
    assert.equal(texts.length, 12);
    assert.equal(new Set(texts).size, 12, 'none delivered twice');
  });

  it('outboxMinutes past, the gateway still away: Catch with code expired and the reason', async () => {
    await load(flow({ outboxMinutes: 0.05 }), credentials);
    const caught = collect('caught', 1, 20_000);
    await sim.fault({ offline: { seconds: 60, mode: '503' } });
    (helper.getNode('t') as TestNode).receive({ payload: 'Freezer warm', number: '420777123456' } as never);
    const [msg] = await caught;
    assert.equal(msg?.error.code, 'expired');
    assert.match(msg?.error.message, /could not be reached for 0\.05 minutes/);
    assert.match(msg?.error.message, /HTTP 503/);
    assert.ok(msg?.bulkgate?.deferred, 'msg.bulkgate.deferred is set on the expired msg too');
    await sim.fault({ offline: { seconds: 0 } });
    assert.deepEqual(await delivered(), []);
    await until('the outbox file emptied', () => fileEntries().length === 0, 5_000);
  });

  it('outboxMinutes 0: a failed send goes to Catch at once, and nothing is written', async () => {
    await load(flow({ outboxMinutes: 0 }), credentials);
    const caught = collect('caught', 1, 10_000);
    await sim.fault({ offline: { seconds: 60, mode: '503' } });
    (helper.getNode('t') as TestNode).receive({ payload: 'Smoke', number: '420777123456' } as never);
    const [msg] = await caught;
    assert.equal(msg?.error.code, 'unknown');
    assert.equal(msg?.bulkgate?.status, 503);
    assert.equal(existsSync(join(userDir, 'bulkgate-outbox')), false);
  });

  const cannotKeep: [string, string, () => void][] = [
    // The outbox's directory cannot be made (as a full disk or a permission): every keep fails.
    [
      'its directory is a file',
      'outbox_unavailable',
      () => writeFileSync(join(userDir, 'bulkgate-outbox'), 'not a directory'),
    ],
    [
      // Another living Node-RED on this directory (a process of this host that runs): refused, not
      // held (a lock of another host is held for until it goes stale: the lock fault test).
      'a lock another living process holds',
      'outbox_locked',
      () => {
        const holder = spawn(process.execPath, ['-e', 'setTimeout(() => {}, 120000)'], { stdio: 'ignore' });
        lockHolders.push(holder);
        mkdirSync(join(userDir, 'bulkgate-outbox'), { recursive: true });
        writeFileSync(`${outboxFile()}.lock`, JSON.stringify({ pid: holder.pid, host: hostname() }));
      },
    ],
  ];
  const lockHolders: ChildProcess[] = [];
  after(() => lockHolders.forEach((holder) => holder.kill()));
  for (const [why, code, plant] of cannotKeep)
    it(`an outbox that cannot keep (${why}): the gateway failure goes to Catch, and once the gateway is back the next alerts are sent, not refused`, async () => {
      plant();
      await load(flow(), credentials);
      const caught: { error: { code: string } }[] = [];
      (helper.getNode('caught') as TestNode).on('input', (m: unknown) => caught.push(m as never));
      const outputs: unknown[] = [];
      (helper.getNode('ok') as TestNode).on('input', (m: unknown) => outputs.push(m));
      await sim.fault({ offline: { seconds: 600, mode: '503' } });
      const node = helper.getNode('t') as TestNode;
      node.receive({ payload: 'Alarm during the outage', number: '420777123456' } as never);
      await until('the failure in Catch', () => caught.length === 1, 10_000);
      assert.equal(caught[0]?.error.code, code);
      await sim.fault({ offline: { seconds: 0 } });
      // A few probe intervals (300 ms, doubling) after the failure: the door is open again.
      await new Promise((r) => setTimeout(r, 1_500));
      for (const seq of [1, 2, 3])
        node.receive({ payload: `Alarm ${seq} after the outage`, number: '420777123456' } as never);
      await until(
        `three sent (${outputs.length} sent, ${caught.length - 1} more in Catch)`,
        () => outputs.length + caught.length === 4,
        10_000,
      );
      assert.deepEqual(
        caught.map((m) => m.error.code),
        [code],
        'nothing more refused while the gateway is up',
      );
      assert.deepEqual(await delivered(), [
        'Alarm 1 after the outage',
        'Alarm 2 after the outage',
        'Alarm 3 after the outage',
      ]);
    });

  it('a storm notice during an outage is an alert like any other: it waits behind the older alerts and is sent once when the gateway is back, after them', async () => {
    await load(
      [
        { id: 'acc', type: 'bulkgate-account', baseUrl: sim.url, retries: 0, timeout: 2000, outboxDelay: 300 },
        {
          id: 't',
          type: 'bulkgate-transactional',
          account: 'acc',
          text: '',
          stormLimit: 2,
          stormWindow: 1,
          wires: [['ok'], ['bad']],
        },
        { id: 'c', type: 'catch', scope: null, uncaught: false, wires: [['caught']] },
        { id: 'ok', type: 'helper' },
        { id: 'bad', type: 'helper' },
        { id: 'caught', type: 'helper' },
      ],
      credentials,
    );
    const caught: unknown[] = [];
    (helper.getNode('caught') as TestNode).on('input', (m: unknown) => caught.push(m));
    const outputs: Record<string, unknown>[] = [];
    (helper.getNode('ok') as TestNode).on('input', (m: unknown) => outputs.push(m as never));
    await sim.fault({ offline: { seconds: 600, mode: '503' } });
    const node = helper.getNode('t') as TestNode;
    for (let seq = 0; seq < 5; seq++) node.receive({ seq, payload: `Water ${seq}`, number: '420777123456' } as never);
    // Two let through (kept), three held; the window's end (1 s) sends the notice, which waits behind them.
    await until(
      `three kept (${fileEntries().length}; ${caught.length} in Catch)`,
      () => fileEntries().length === 3 || caught.length > 0,
      10_000,
    );
    assert.deepEqual(caught, [], 'the notice did not go to Catch');
    await sim.fault({ offline: { seconds: 0 } });
    await until('three out of port 1', () => outputs.length === 3, 20_000);
    await new Promise((r) => setTimeout(r, 500)); // checks that nothing more comes
    const texts = await delivered();
    assert.deepEqual(texts, [
      'Water 0',
      'Water 1',
      'Storm protection: 3 more alerts were held back in the last 1 s. The last one: Water 4',
    ]);
    assert.deepEqual(
      outputs.map((m) => [m.seq, m.held]),
      [
        [0, undefined],
        [1, undefined],
        [4, 3],
      ],
      'the notice ends once, after the older alerts',
    );
    assert.deepEqual(caught, []);
  });

  it('errors a repeat cannot fix never go in: a wrong token and a failed check reach Catch at once', async () => {
    await load(flow(), { acc: { application_id: ACCOUNT_ID, application_token: 'wrong-token' } });
    const caught = collect('caught', 2, 10_000);
    const node = helper.getNode('t') as TestNode;
    node.receive({ payload: 'Hello', number: '420777123456' } as never);
    node.receive({ payload: 'Hello', number: '420777123456', schedule: 'tomorrow' } as never);
    const codes = (await caught).map((m) => m.error.code).sort();
    assert.deepEqual(codes, ['invalid_request', 'unknown_identity']);
    assert.equal(existsSync(join(userDir, 'bulkgate-outbox')), false);
  });

  it('a damaged outbox file: a warning, the good entries kept and sent, Node-RED up', async () => {
    mkdirSync(join(userDir, 'bulkgate-outbox'));
    const entry = (i: number) => ({
      id: `kept-${i}`,
      node: 't',
      operation: { kind: 'transactional', api: 'advanced', version: '2.0', method: 'POST', encoding: 'json' },
      body: { number: '420777123456', text: `Kept before the crash ${i}` },
      rejected: [],
      messages: 1,
      msg: { payload: `Kept before the crash ${i}`, topic: `kept-${i}` },
      since: Date.now(),
      order: i,
      attempts: 1,
      reason: 'Could not reach the gateway',
    });
    writeFileSync(
      outboxFile(),
      [
        JSON.stringify({ bulkgateOutbox: 2 }),
        JSON.stringify(entry(1)),
        '{"id": "broken", "node": ',
        'not json at all',
        JSON.stringify(entry(2)),
        '{"id":"trunc',
      ].join('\n'),
    );
    // The account's first round starts outboxDelay (300 ms) after it does.
    await load(flow(), credentials);
    const msgs = await collect('ok', 2, 20_000);
    assert.deepEqual(
      msgs.map((m) => m.topic),
      ['kept-1', 'kept-2'],
    );
    assert.deepEqual(await delivered(), ['Kept before the crash 1', 'Kept before the crash 2']);
    const warnings = (helper.getNode('acc') as unknown as { warn: { args: unknown[][] } }).warn.args.map((a) =>
      String(a[0]),
    );
    // Two damaged lines inside the file; the last, without its newline, is a torn tail: cut back.
    assert.ok(
      warnings.some((w) => /2 damaged line/.test(w)),
      warnings.join('\n'),
    );
    assert.ok(
      warnings.some((w) => /ended in a line written in part \(12 bytes/.test(w)),
      warnings.join('\n'),
    );
  });

  it('a start after a stop between a done line and the port: the msg comes out once, marked afterRestart, with the answer its done line records; a simple 1.0 entry whose attempt had no answer ends in Catch unconfirmed, counted in the status and the account panel; nothing is sent', async () => {
    mkdirSync(join(userDir, 'bulkgate-outbox'));
    const entry = (id: string, operation: Record<string, unknown>) => ({
      id,
      node: 't',
      operation,
      body: { number: '420777123456', text: `Alarm ${id}` },
      rejected: [],
      messages: 1,
      msg: { payload: `Alarm ${id}`, topic: id },
      since: Date.now() - 60_000,
      order: 1,
      attempts: 1,
      reason: 'HTTP 503',
    });
    const record = { status: 'accepted', sms_id: 'sms-before-the-stop', number: '420777123456', price: 1, credit: 99 };
    writeFileSync(
      outboxFile(),
      [
        JSON.stringify({ bulkgateOutbox: 2 }),
        JSON.stringify(
          entry('sent', { kind: 'transactional', api: 'advanced', version: '2.0', method: 'POST', encoding: 'json' }),
        ),
        JSON.stringify(
          entry('cut', { kind: 'transactional', api: 'simple', version: '1.0', method: 'POST', encoding: 'form' }),
        ),
        JSON.stringify({ done: 'sent', end: { attempts: 2, result: { record, rejected: false } } }),
        JSON.stringify({ attempt: 'cut' }),
        '',
      ].join('\n'),
    );
    // The account hands on what ended before the start after its first delay (300 ms): by then these listen.
    await load(flow(), credentials);
    const ok = collect('ok', 1, 10_000);
    const caught = collect('caught', 1, 10_000);
    const counted = statusOf('t', (s) => /1 unconfirmed/.test(s.text ?? ''), 10_000);
    const [[out], [unconfirmed], status] = await Promise.all([ok, caught, counted]);
    assert.deepEqual(out?.payload, record, 'port 1, with the record the gateway gave before the stop');
    assert.equal(out?.topic, 'sent');
    assert.deepEqual(out?.bulkgate.deferred.afterRestart, true);
    assert.deepEqual(out?.bulkgate.deferred.attempts, 2);
    assert.equal(unconfirmed?.bulkgate.type, 'unconfirmed');
    assert.equal(unconfirmed?.topic, 'cut');
    assert.equal(status.fill, 'yellow');
    assert.equal(
      (await helper.request().get('/bulkgate/outbox/acc')).body.unconfirmed,
      1,
      'the account panel counts it',
    );
    await until('the outbox file removed once both msgs left', () => !existsSync(outboxFile()));
    assert.equal((await sim.requests()).length, 0, 'nothing was sent again');
  });

  it('the outbox is written only when a message is kept: a Node-RED whose sends succeed writes nothing', async () => {
    await load(flow(), credentials);
    const outputs = collect('ok', 5, 10_000);
    const node = helper.getNode('t') as TestNode;
    for (let i = 0; i < 5; i++) node.receive({ payload: `Fine ${i}`, number: '420777123456' } as never);
    const msgs = await outputs;
    assert.ok(msgs.every((m) => m.bulkgate === undefined));
    assert.deepEqual(readdirSync(userDir), []);
  });
});

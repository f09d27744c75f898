/**
 * Protection, proven against the simulator's fault controls in the Node-RED runtime: retries by
 * the policy, no duplicate on the wire, every msg ended exactly once, the rate limit and its
 * queue, a clean close, and nothing escaping as an unhandled rejection.
 */
import assert from 'node:assert/strict';
import { collect, helper, load, statusOf, unload, type FlowNode, type TestNode } from './support/red';
import { startSimulator } from '../simulator/server';
import { watchEscapes } from './support/escapes';
import { ACCOUNT_ID, startTestSimulator, TOKEN, type TestSimulator } from './support/simulator';
import { until as waitUntil } from './support/wait';

type Ending = { kind: 'accepted' | 'rejected' | 'error'; code?: string; retryable?: boolean; status?: number };

describe('protection', function () {
  this.timeout(120_000);
  let sim: TestSimulator;
  const { escaped, start, stop } = watchEscapes();

  before(async () => {
    start();
    sim = await startTestSimulator(1_000_000);
  });
  after(async () => {
    stop();
    await sim.close();
  });
  afterEach(async () => {
    await unload();
    assert.deepEqual(escaped, [], 'no unhandled rejection or uncaught exception');
  });

  const flow = (account: Record<string, unknown>, node: Record<string, unknown> = {}): FlowNode[] => [
    {
      id: 'acc',
      type: 'bulkgate-account',
      baseUrl: sim.url,
      retries: 3,
      retryDelay: 5,
      timeout: 2000,
      outboxMinutes: 0,
      ...account,
    },
    { id: 't', type: 'bulkgate-transactional', account: 'acc', text: '', wires: [['ok'], ['bad']], ...node },
    { id: 'c', type: 'catch', scope: ['t', 'p'], wires: [['caught']] },
    { id: 'ok', type: 'helper' },
    { id: 'bad', type: 'helper' },
    { id: 'caught', type: 'helper' },
  ];

  /** Follows every msg to its one ending (port 1, port 2 or Catch); counts endings per msg. */
  function track(): { endings: Map<number, Ending[]>; total: () => number } {
    const endings = new Map<number, Ending[]>();
    const add = (msg: any, ending: Ending) => {
      const list = endings.get(msg.seq) ?? [];
      list.push(ending);
      endings.set(msg.seq, list);
    };
    (helper.getNode('ok') as TestNode).on('input', (m: any) => add(m, { kind: 'accepted' }));
    (helper.getNode('bad') as TestNode).on('input', (m: any) => add(m, { kind: 'rejected' }));
    (helper.getNode('caught') as TestNode).on('input', (m: any) =>
      add(m, { kind: 'error', code: m.bulkgate?.type, retryable: m.bulkgate?.retryable, status: m.bulkgate?.status }),
    );
    return { endings, total: () => [...endings.values()].reduce((n, l) => n + l.length, 0) };
  }

  const until = (what: string, check: () => boolean | Promise<boolean>, ms = 30_000) =>
    waitUntil(what, check, ms, { every: 20 });

  interface Run {
    endings: Map<number, Ending[]>;
    /** Requests the simulator received per msg (by its text). */
    attempts: number[];
    outbox: string[];
  }

  async function burst(
    fault: Record<string, unknown>,
    options: {
      count?: number;
      duplicates?: boolean;
      account?: Record<string, unknown>;
      credentials?: Record<string, string>;
    } = {},
  ): Promise<Run> {
    const count = options.count ?? 200;
    await sim.reset();
    await load(flow(options.account ?? {}, options.duplicates ? { duplicates_check: 'on' } : {}), {
      acc: options.credentials ?? { application_id: ACCOUNT_ID, application_token: TOKEN },
    });
    await sim.fault(fault);
    const { endings, total } = track();
    const t = helper.getNode('t') as TestNode & { receive(m: unknown): void };
    for (let seq = 0; seq < count; seq++)
      t.receive({ seq, payload: `alert ${seq}`, number: `420777${String(seq).padStart(6, '0')}` });
    await until(`${count} endings`, () => total() >= count);
    await new Promise((r) => setTimeout(r, 150)); // checks that no msg ends twice: a second ending would show up here
    const requests = await sim.requests();
    const attempts = Array.from({ length: count }, () => 0);
    for (const r of requests) {
      const m = /^alert (\d+)$/.exec(String(r.body.text ?? ''));
      if (m) attempts[Number(m[1])]! += 1;
      else if (r.fault === 'drop before') attempts.push(NaN); // a request closed before its body was read
    }
    const outbox = (await sim.outbox()).messages.map((m) => m.text);
    return { endings, attempts, outbox };
  }

  function assertOnce(run: Run, count = 200): Ending[] {
    assert.equal(run.endings.size, count, 'every msg ended');
    for (const [seq, list] of run.endings) assert.equal(list.length, 1, `msg ${seq} ended ${list.length} times`);
    assert.equal(new Set(run.outbox).size, run.outbox.length, 'the outbox holds no duplicate');
    return [...run.endings.values()].map((l) => l[0] as Ending);
  }

  const tally = (endings: Ending[]) =>
    endings.reduce<Record<string, number>>((t, e) => {
      const key = e.kind === 'error' ? `${e.code}${e.status ? ` ${e.status}` : ''}` : e.kind;
      t[key] = (t[key] ?? 0) + 1;
      return t;
    }, {});

  describe('fault matrix (200 msgs each)', () => {
    for (const [name, status, retryAfter] of [
      ['HTTP 503', 503, undefined],
      ['HTTP 429 without Retry-After', 429, undefined],
      ['HTTP 429 with Retry-After: 1', 429, 1],
    ] as const) {
      it(`${name}: not taken by the gateway, so retried with backoff; a msg fails only after 4 faulted attempts`, async () => {
        const run = await burst({ status, retryAfter, count: 150 });
        const endings = assertOnce(run);
        const faulted = run.attempts.reduce((n, a) => n + a, 0) - run.outbox.length;
        assert.equal(faulted, 150, 'every fault was one attempt');
        run.attempts.forEach((a, seq) => {
          const ending = run.endings.get(seq)?.[0];
          assert.ok(a >= 1 && a <= 4, `msg ${seq}: ${a} attempts`);
          if (ending?.kind === 'error') {
            assert.equal(a, 4, `a failed msg had all its attempts (${seq})`);
            assert.equal(ending.retryable, true);
          }
        });
        assert.equal(run.outbox.length, endings.filter((e) => e.kind === 'accepted').length);
        console.log(
          `      ${name}: ${JSON.stringify(tally(endings))}, attempts ${run.attempts.reduce((n, a) => n + a, 0)}`,
        );
      });
    }

    it('HTTP 500 without duplicates_check: never repeated (it may have been taken); retryable error', async () => {
      const run = await burst({ status: 500, count: 100 });
      const endings = assertOnce(run);
      assert.deepEqual(tally(endings), { accepted: 100, 'unknown 500': 100 });
      assert.ok(run.attempts.every((a) => a === 1));
      assert.ok(endings.filter((e) => e.kind === 'error').every((e) => e.retryable === true));
    });

    it('HTTP 500 with duplicates_check on: repeated safely, all delivered once', async () => {
      const run = await burst({ status: 500, count: 100 }, { duplicates: true });
      const endings = assertOnce(run);
      assert.equal(
        run.attempts.reduce((n, a) => n + a, 0),
        300,
        '100 faulted attempts, then each msg went through',
      );
      assert.deepEqual(tally(endings), { accepted: 200 });
      assert.equal(run.outbox.length, 200);
    });

    it('connection dropped before the request body: network error, retryable, nothing sent twice', async () => {
      const run = await burst({ drop: 'before', count: 100 });
      const endings = assertOnce(run);
      assert.deepEqual(tally(endings), { accepted: 100, network: 100 });
      assert.equal(run.outbox.length, 100);
    });

    it('connection dropped after the request body: not repeated without duplicates_check', async () => {
      const run = await burst({ drop: 'after', count: 100 });
      const endings = assertOnce(run);
      assert.deepEqual(tally(endings), { accepted: 100, network: 100 });
      assert.ok(run.attempts.every((a) => a === 1));
      assert.equal(
        run.outbox.length,
        200,
        'the dropped ones were taken by the gateway: that is why they are not repeated',
      );
    });

    it('connection dropped after the request body, with duplicates_check: repeated, and the gateway drops the copy', async () => {
      const run = await burst({ drop: 'after', count: 100 }, { duplicates: true });
      const endings = assertOnce(run);
      assert.deepEqual(tally(endings), { accepted: 200 });
      assert.equal(run.outbox.length, 200);
      assert.ok(run.attempts.filter((a) => a > 1).length >= 90, 'the dropped ones were repeated');
    });

    it('no answer until the timeout: timeout, retryable, not repeated', async () => {
      const run = await burst({ hang: true, count: 100 }, { account: { timeout: 300 } });
      const endings = assertOnce(run);
      assert.deepEqual(tally(endings), { accepted: 100, timeout: 100 });
      assert.ok(run.attempts.every((a) => a === 1));
    });

    it('an HTML body: bad_response, not repeated', async () => {
      const run = await burst({ body: 'html', count: 100 });
      const endings = assertOnce(run);
      assert.deepEqual(tally(endings), { accepted: 100, 'bad_response 502': 100 });
      assert.ok(run.attempts.every((a) => a === 1));
    });

    it('truncated JSON: bad_response, not repeated', async () => {
      const run = await burst({ body: 'truncated', count: 100 });
      const endings = assertOnce(run);
      assert.deepEqual(tally(endings), { accepted: 100, 'bad_response 200': 100 });
      assert.ok(run.attempts.every((a) => a === 1));
    });

    it('401: never retried', async () => {
      const run = await burst({}, { credentials: { application_id: ACCOUNT_ID, application_token: 'wrong-token' } });
      const endings = assertOnce(run);
      assert.deepEqual(tally(endings), { 'unknown_identity 401': 200 });
      assert.ok(run.attempts.every((a) => a === 1));
    });
  });

  describe('rate limit and queue', () => {
    it('a burst of 100 against 5 per second: 5 on the wire per window, the queue drains in order, the overflow is refused', async () => {
      await sim.reset();
      await load(
        [
          ...flow({ rateLimit: 5, rateWindow: 1, queueSize: 20 }),
          { id: 'p', type: 'bulkgate-promotional', account: 'acc', text: '', wires: [['ok'], ['bad'], []] },
        ],
        { acc: { application_id: ACCOUNT_ID, application_token: TOKEN } },
      );
      const { endings, total } = track();
      // The queue shows in the status alone ('queued 12') or beside the totals ('sent 5 / rejected 0 / queued 12'):
      // which of the two depends on what changed last before the status throttle's flush (an answer, or the queue).
      const queued = statusOf('t', (s) => /(^|\/ )queued \d+$/.test(s.text));
      // Both nodes share the account's limit.
      for (let seq = 0; seq < 100; seq++) {
        const node = helper.getNode(seq % 2 ? 'p' : 't') as TestNode & { receive(m: unknown): void };
        node.receive({ seq, payload: `alert ${seq}`, number: `420777${String(seq).padStart(6, '0')}` });
      }
      await queued;
      await until('100 endings', () => total() >= 100, 20_000);
      const list = [...endings.values()].map((l) => l[0] as Ending);
      assert.deepEqual(tally(list), { accepted: 25, rate_limited: 75 });
      const requests = await sim.requests();
      const times = requests.map((r) => Date.parse(r.at));
      const order = requests.map((r) => Number(/\d+/.exec(String(r.body.text ?? ''))?.[0]));
      assert.equal(new Set(order).size, 25);
      // Each node's msgs reach the limit in the order they came; the first to come are the ones taken.
      for (const parity of [0, 1]) {
        const mine = order.filter((seq) => seq % 2 === parity);
        assert.deepEqual(
          mine,
          [...mine].sort((a, b) => a - b),
          'the queue drained in order',
        );
        assert.deepEqual(
          mine,
          Array.from({ length: mine.length }, (_, i) => i * 2 + parity),
          'the first msgs were taken, the later refused',
        );
      }
      // Measured where the requests arrive, not where they were let go: a window's first requests
      // open their connections and arrive up to ~200 ms late on a loaded machine (seen: 780-880 ms
      // between requests 0 and 5), while the sixth reuses one. 750 ms still fails a limit that lets
      // 10 through in a second (its sixth arrives with the first five).
      for (let i = 0; i + 5 < times.length; i++) {
        assert.ok(
          (times[i + 5] as number) - (times[i] as number) >= 750,
          `at most 5 in any second (requests ${i} and ${i + 5}: ${(times[i + 5] as number) - (times[i] as number)} ms)`,
        );
      }
      // The wire shows 5 requests, a pause until the window frees, 5 more, and so on.
      const groups: number[] = [];
      times.forEach((t, i) =>
        i > 0 && t - (times[i - 1] as number) < 500 ? (groups[groups.length - 1] as number)++ : groups.push(1),
      );
      assert.deepEqual(groups, [5, 5, 5, 5, 5]);
    });
  });

  describe('storm protection', () => {
    it('after 3 alerts in a 1 s window the rest are held back, and one notice says how many', async () => {
      await sim.reset();
      await load(flow({}, { stormLimit: 3, stormWindow: 1 }), {
        acc: { application_id: ACCOUNT_ID, application_token: TOKEN },
      });
      const { endings } = track();
      const ok = collect('ok', 4, 5000);
      const t = helper.getNode('t') as TestNode & { receive(m: unknown): void };
      for (let seq = 0; seq < 10; seq++) t.receive({ seq, payload: `Door opened (${seq})`, number: '420777000500' });
      const outputs = await ok;
      assert.deepEqual(
        outputs.slice(0, 3).map((m) => m.seq),
        [0, 1, 2],
      );
      const notice = outputs[3] as Record<string, any>;
      assert.equal(notice.held, 7);
      assert.equal(notice.seq, 9, 'the notice carries the last held msg');
      const texts = (await sim.outbox()).messages.map((m) => m.text);
      assert.equal(texts.length, 4);
      assert.equal(
        texts[3],
        'Storm protection: 7 more alerts were held back in the last 1 s. The last one: Door opened (9)',
        'the notice text comes from the catalog',
      );
      assert.equal([...endings.values()].filter((l) => l[0]?.kind === 'error').length, 0, 'held alerts are not errors');
    });
  });

  describe('close', () => {
    it('a redeploy with 50 msgs in flight and queued: every one ends, nothing stays open', async () => {
      // Its own simulator, driven in-process, so no other socket or timer of the test is counted.
      const own = await startSimulator({ accounts: [{ id: ACCOUNT_ID, token: TOKEN, credit: 1000 }] });
      const timers = () => process.getActiveResourcesInfo().filter((r) => r === 'Timeout').length;
      const baseline = timers();
      own.setFault({ latency: 300 });
      const v1 = flow({ baseUrl: own.url, rateLimit: 5, rateWindow: 10, queueSize: 100 });
      await load(v1, { acc: { application_id: ACCOUNT_ID, application_token: TOKEN } });
      const { endings, total } = track();
      const t = helper.getNode('t') as TestNode & { receive(m: unknown): void };
      for (let seq = 0; seq < 50; seq++)
        t.receive({ seq, payload: `alert ${seq}`, number: `420777${String(seq).padStart(6, '0')}` });
      // Five in flight (the window's 5, each answered 300 ms late), 45 queued behind them.
      await until('five requests at the gateway', () => own.requests.length >= 5, 10_000);
      // Redeploy: the account and the node change; the helpers and the Catch node stay.
      const v2 = [
        { id: 'tab', type: 'tab', label: 'test' },
        ...v1.map((n) =>
          n.type === 'bulkgate-account'
            ? { ...n, name: 'v2' }
            : { z: 'tab', ...n, ...(n.id === 't' ? { name: 'v2' } : {}) },
        ),
      ];
      await helper.setFlows(v2, 'nodes', { acc: { application_id: ACCOUNT_ID, application_token: TOKEN } });
      await until('50 endings', () => total() >= 50, 10_000);
      await new Promise((r) => setTimeout(r, 150)); // checks that no msg ends twice
      const list = [...endings.values()].map((l) => {
        assert.equal(l.length, 1);
        return l[0] as Ending;
      });
      assert.deepEqual(
        tally(list),
        { accepted: 5, closed: 45 },
        'the 5 in flight finished; the 45 queued were refused with a reason',
      );
      assert.equal(own.requests.length, 5, 'nothing queued went out after the close');
      await unload();
      const connections = () => new Promise<number>((resolve) => own.server.getConnections((_e, n) => resolve(n)));
      await until('the sockets closed', async () => (await connections()) === 0, 1000).catch(() => undefined);
      assert.equal(await connections(), 0, 'no socket stays open');
      // undici keeps one shared timer for up to a second after its last request.
      await until('timers to be released', () => timers() <= baseline, 3000).catch(() => undefined);
      assert.ok(timers() <= baseline, `timers left: ${timers()}, before: ${baseline}`);
      await own.close();
    });
  });
});

/**
 * Two copies of Node-RED on one account and one Redis store (a real redis-server): one alert raised
 * by both reaches the gateway once; the account's rate limit holds across both.
 */
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { createClient } from '@redis/client';
import { keyPrefix } from '../nodes/account/redis-store';
import { nodeRedProcess, type NodeRedProcess } from './support/node-red-process';
import { startRedis, type TestRedis } from './support/redis';
import { ACCOUNT_ID, startTestSimulator, TOKEN, type TestSimulator } from './support/simulator';
import { pressByApi, until } from './support/examples';

const SECRET = 'copies-secret';

describe('several copies of Node-RED on one Redis store', function () {
  this.timeout(120_000);
  let redis: TestRedis;
  let sim: TestSimulator;
  const copies: NodeRedProcess[] = [];

  before(async () => {
    redis = await startRedis();
    sim = await startTestSimulator(1_000_000);
    copies.push(nodeRedProcess(), nodeRedProcess());
  });
  after(async () => {
    await Promise.all(copies.map((c) => c.remove()));
    await sim?.close();
    await redis?.stop();
  });

  /** The same flows in both copies: an account on the store, injects into one transactional node. */
  async function deploy(
    account: Record<string, unknown>,
    alerts: number,
    label: string,
    extra: (copy: NodeRedProcess) => Record<string, unknown>[] = () => [],
    sendWires: string[][] = [[], []],
    sendSettings: Record<string, unknown> = {},
  ): Promise<void> {
    const flows = [
      { id: 'tab', type: 'tab', label: 'alarms' },
      { id: 'acc', type: 'bulkgate-account', name: 'home', baseUrl: sim.url, retries: 0, ...account },
      ...Array.from({ length: alerts }, (_, i) => ({
        id: `alarm${i}`,
        z: 'tab',
        type: 'inject',
        props: [{ p: 'payload' }, { p: 'number', v: '420777123456', vt: 'str' }],
        payload: `Alarm ${i}: water on the floor (${label})`,
        payloadType: 'str',
        wires: [['t']],
      })),
      {
        id: 't',
        z: 'tab',
        type: 'bulkgate-transactional',
        account: 'acc',
        text: '',
        wires: sendWires,
        ...sendSettings,
      },
    ];
    await Promise.all(copies.map((c) => c.kill()));
    // Each test starts from an empty store: the simulator's sms_ids start again after its reset,
    // and an earlier test's report marks for them must not apply to this one's sends.
    const store = createClient({ url: redis.url });
    await store.connect();
    await store.flushAll();
    await store.close();
    for (const c of copies)
      c.flows([...flows, ...extra(c)], {
        acc: { application_id: ACCOUNT_ID, application_token: TOKEN },
        ev: { secret: SECRET },
      });
    await Promise.all(copies.map((c) => c.start()));
    if (account.store === 'redis')
      await Promise.all(
        copies.map((c) => until('the store connected', () => /Shared store connected/.test(c.output()), 10_000)),
      );
  }

  /** A short-lived client of the test's Redis, for one look at the store. */
  async function onStore<T>(
    look: (store: { exists(key: string): Promise<number>; hLen(key: string): Promise<number> }) => Promise<T>,
  ): Promise<T> {
    const store = createClient({ url: redis.url });
    await store.connect();
    try {
      return await look(store);
    } finally {
      await store.close();
    }
  }
  /** Whether a copy recorded the send with this sms_id in the shared tracking (any copy matches its report then). */
  const recorded = (smsId: string) =>
    onStore(async (store) => (await store.exists(`${keyPrefix(ACCOUNT_ID)}sent:${smsId}`)) === 1);
  /** How many entries a hash of the store holds (the shared outbox: `outbox:entries`). */
  const entriesIn = (key: string) => onStore((store) => store.hLen(key));

  /** Lines a copy's file node appended to `name`.jsonl in its user directory. */
  const written = (copy: NodeRedProcess, name: string): Record<string, any>[] =>
    existsSync(join(copy.userDir, `${name}.jsonl`))
      ? readFileSync(join(copy.userDir, `${name}.jsonl`), 'utf8')
          .split('\n')
          .filter(Boolean)
          .map((l) => JSON.parse(l) as Record<string, any>)
      : [];
  /** A function node that writes `expression` (of msg) as JSON, and the file node it feeds. */
  const recorder = (copy: NodeRedProcess, id: string, expression: string): Record<string, unknown>[] => [
    {
      id,
      z: 'tab',
      type: 'function',
      func: `msg.payload = JSON.stringify(${expression}); return msg;`,
      outputs: 1,
      wires: [[`${id}-file`]],
    },
    {
      id: `${id}-file`,
      z: 'tab',
      type: 'file',
      filename: join(copy.userDir, `${id}.jsonl`),
      appendNewline: true,
      createDir: true,
      overwriteFile: 'false',
      encoding: 'utf8',
      wires: [],
    },
  ];

  it('one alert injected into both copies at once (as an MQTT fan-out does) reaches the gateway once; the other copy ends its msg on port 1 as a copy, and says so', async () => {
    await sim.reset();
    await deploy(
      { store: 'redis', storeUrl: redis.url },
      1,
      'fan-out',
      (copy) => [
        ...recorder(copy, 'port1', '{ status: msg.payload.status, duplicate: msg.bulkgate && msg.bulkgate.duplicate }'),
        { id: 'st', z: 'tab', type: 'status', scope: ['t'], wires: [['statuses']] },
        ...recorder(copy, 'statuses', 'msg.status.text'),
      ],
      [['port1'], []],
    );
    await Promise.all(copies.map((c) => pressByApi(c.url)('alarm0')));
    await until('the alert at the gateway', async () => (await sim.outbox()).messages.length >= 1);
    // Each copy ended its one msg (port 1 fires after the gateway's answer, or as a copy at once):
    // no send of it is left to come.
    await until('a msg on port 1 of each copy', () => copies.every((c) => written(c, 'port1').length === 1));
    assert.deepEqual(
      (await sim.outbox()).messages.map((m) => m.text),
      ['Alarm 0: water on the floor (fan-out)'],
    );
    const ends = copies.map((c) => written(c, 'port1')[0]);
    const sender = ends.findIndex((m) => m?.duplicate === undefined);
    assert.notEqual(sender, -1, `one copy sent it: ${JSON.stringify(ends)}`);
    assert.equal(ends[sender]?.status, 'accepted');
    assert.deepEqual(
      ends[1 - sender],
      { duplicate: 'copy' },
      'the other copy: port 1, marked as a copy, no answer of its own',
    );
    const other = copies[1 - sender] as NodeRedProcess;
    await until("the other copy's status", () =>
      (written(other, 'statuses') as unknown[]).includes('sent 0 / rejected 0 / 1 dropped as a copy'),
    );
  });

  it('a limit of 5 per 2 s holds across both copies: at most 5 requests in any 2 s', async () => {
    await sim.reset();
    await deploy({ store: 'redis', storeUrl: redis.url, rateLimit: 5, rateWindow: 2 }, 12, 'limit');
    // Twelve different alerts, six into each copy.
    await Promise.all(
      Array.from({ length: 12 }, (_, i) => pressByApi((copies[i % 2] as NodeRedProcess).url)(`alarm${i}`)),
    );
    await until('all twelve at the gateway', async () => (await sim.outbox()).messages.length >= 12, 20_000);
    const times = (await sim.requests()).filter((r) => r.path.includes('transactional')).map((r) => Date.parse(r.at));
    assert.equal(times.length, 12);
    // Counted where the gateway sees them, less 150 ms: the window is kept when a send is let go, and
    // the first request of a copy also opens its connection (it arrives ~40 ms later than it left, and
    // past 100 ms on a loaded CI machine). Each copy deciding alone would let 10 through: still caught.
    const first = Math.min(...times);
    for (const t of times) {
      const inWindow = times.filter((u) => u >= t && u < t + 1850).length;
      assert.ok(
        inWindow <= 5,
        `${inWindow} requests in the 2 s from ${new Date(t).toISOString()} (at ms ${times.map((u) => u - first).sort((a, b) => a - b)})`,
      );
    }
  });

  it("the storm guard counts both copies' alerts in one window: 3 per window in all, and one notice with every copy's held count", async () => {
    await sim.reset();
    await deploy({ store: 'redis', storeUrl: redis.url }, 8, 'storm', () => [], [[], []], {
      stormLimit: 3,
      stormWindow: 3,
    });
    // Eight different alerts, four into each copy, at once.
    await Promise.all(
      Array.from({ length: 8 }, (_, i) => pressByApi((copies[i % 2] as NodeRedProcess).url)(`alarm${i}`)),
    );
    // The notice comes when the 3 s window ends, after every alert the window let through.
    await until(
      'the notice',
      async () => (await sim.outbox()).messages.some((m) => m.text.startsWith('Storm protection')),
      15_000,
    );
    // checks that no second notice (the other copy's window ends at the same moment) and no fourth alert come
    await new Promise((r) => setTimeout(r, 1000));
    const texts = (await sim.outbox()).messages.map((m) => m.text);
    assert.equal(
      texts.filter((t) => t.startsWith('Alarm')).length,
      3,
      `three in all, not three per copy: ${JSON.stringify(texts)}`,
    );
    assert.equal(texts.length, 4, `one notice, from one copy: ${JSON.stringify(texts)}`);
    assert.match(
      texts[3] as string,
      /^Storm protection: 5 more alerts were held back in the last 3 s\. The last one: Alarm \d: water on the floor \(storm\)$/,
    );
  });

  it('a report posted to copy B for a send of copy A carries msg.sent; output 3 fires for the silent one on one copy only, for the delivered one on none', async () => {
    await sim.reset();
    /** Each copy's events node writes what its outputs emit to a file in its user directory. */
    const events = (copy: NodeRedProcess) => join(copy.userDir, 'events.jsonl');
    const describeOutput = (port: string) =>
      `msg.payload = JSON.stringify({ port: '${port}', status: msg.payload.status, sent: msg.sent }); return msg;`;
    await deploy({ store: 'redis', storeUrl: redis.url }, 2, 'tracking', (copy) => [
      {
        id: 'ev',
        z: 'tab',
        type: 'bulkgate-events',
        path: '/bulkgate/events',
        account: 'acc',
        reportTimeout: 4,
        wires: [['f1'], [], ['f3']],
      },
      { id: 'f1', z: 'tab', type: 'function', func: describeOutput('report'), outputs: 1, wires: [['out']] },
      { id: 'f3', z: 'tab', type: 'function', func: describeOutput('late'), outputs: 1, wires: [['out']] },
      {
        id: 'out',
        z: 'tab',
        type: 'file',
        filename: events(copy),
        appendNewline: true,
        createDir: true,
        overwriteFile: 'false',
        encoding: 'utf8',
        wires: [],
      },
    ]);
    const emitted = (copy: NodeRedProcess): { port: string; status?: string; sent?: { payload: string } }[] =>
      existsSync(events(copy))
        ? readFileSync(events(copy), 'utf8')
            .split('\n')
            .filter(Boolean)
            .map((l) => JSON.parse(l) as { port: string })
        : [];
    const [a, b] = copies as [NodeRedProcess, NodeRedProcess];
    await pressByApi(a.url)('alarm0');
    await pressByApi(a.url)('alarm1');
    await until('both at the gateway', async () => (await sim.outbox()).messages.length === 2);
    const delivered = (await sim.outbox()).messages.find((m) => m.text.startsWith('Alarm 0'));
    await until('copy A to record the send in the store', () => recorded(String(delivered?.sms_id)));
    const res = await fetch(`${b.url}/bulkgate/events?token=${SECRET}&status=1&smsID=${delivered?.sms_id}`);
    assert.equal(res.status, 200);
    await until('the report at copy B', () => emitted(b).some((e) => e.port === 'report'));
    assert.deepEqual(
      emitted(b)
        .filter((e) => e.port === 'report')
        .map((e) => [e.status, e.sent?.payload]),
      [['delivered', 'Alarm 0: water on the floor (tracking)']],
    );
    const lateOnes = () => [...emitted(a), ...emitted(b)].filter((e) => e.port === 'late');
    await until('output 3 for the silent one', () => lateOnes().length > 0, 15_000);
    // checks that output 3 does not fire again: for the delivered one (the same deadline, on copy A),
    // nor on copy B, whose look for overdue sends (every 1 s) takes those 1 s past their deadline
    await new Promise((r) => setTimeout(r, 2500));
    const late = lateOnes().map((e) => e.sent?.payload);
    assert.deepEqual(late, ['Alarm 1: water on the floor (tracking)'], 'output 3 once, for the silent one');
  });

  it('copy A stopped after a send that gets no report: output 3 fires for it on copy B, once', async () => {
    await sim.reset();
    await deploy({ store: 'redis', storeUrl: redis.url }, 1, 'orphan', (copy) => [
      {
        id: 'ev',
        z: 'tab',
        type: 'bulkgate-events',
        path: '/bulkgate/events',
        account: 'acc',
        reportTimeout: 2,
        wires: [[], [], ['orphan-late']],
      },
      ...recorder(copy, 'orphan-late', '{ status: msg.payload.status, sent: msg.sent && msg.sent.payload }'),
    ]);
    const [a, b] = copies as [NodeRedProcess, NodeRedProcess];
    await pressByApi(a.url)('alarm0');
    await until('the alert at the gateway', async () => (await sim.outbox()).messages.length === 1);
    const [sent] = (await sim.outbox()).messages;
    await until('copy A to record the send in the store', () => recorded(String(sent?.sms_id)));
    await a.kill();
    await until('output 3 at copy B', () => written(b, 'orphan-late').length > 0, 15_000);
    // checks that copy B's next looks for overdue sends (every 1 s) do not fire it again
    await new Promise((r) => setTimeout(r, 1500));
    assert.deepEqual(written(b, 'orphan-late'), [
      { status: 'no_report', sent: 'Alarm 0: water on the floor (orphan)' },
    ]);
    assert.deepEqual(written(a, 'orphan-late'), []);
  });

  it('copy A killed during an outage with 50 alerts waiting: copy B sends all 50, once each, when the gateway returns', async () => {
    await sim.reset();
    await deploy({ store: 'redis', storeUrl: redis.url, storeClaimSeconds: 1, outboxDelay: 200 }, 50, 'outage');
    const [a, b] = copies as [NodeRedProcess, NodeRedProcess];
    await sim.fault({ offline: { seconds: 600, mode: '503' } });
    for (let i = 0; i < 50; i++) await pressByApi(a.url)(`alarm${i}`);
    const store = createClient({ url: redis.url });
    await store.connect();
    try {
      const prefix = keyPrefix(ACCOUNT_ID);
      await until('50 kept in the shared outbox', async () => (await store.zCard(`${prefix}outbox`)) === 50);
      await a.kill();
      await sim.fault({ offline: { seconds: 0 } });
      await until('50 at the gateway', async () => (await sim.outbox()).messages.length >= 50, 30_000);
      // An entry leaves the shared outbox once its send ended: with it empty, none is left to go twice.
      await until('the shared outbox emptied', async () => (await store.zCard(`${prefix}outbox`)) === 0);
      const texts = (await sim.outbox()).messages.map((m) => m.text).sort();
      assert.deepEqual(texts, Array.from({ length: 50 }, (_, i) => `Alarm ${i}: water on the floor (outage)`).sort());
      assert.match(b.output(), /Started flows/);
    } finally {
      await store.close();
    }
  });

  for (const fault of ['FLUSHALL', 'a restart without persistence'] as const) {
    it(`${fault} while both copies hold 100 waiting alerts: each writes back what it holds and warns; when the gateway returns all 100 go, once each`, async () => {
      await sim.reset();
      await deploy({ store: 'redis', storeUrl: redis.url, storeClaimSeconds: 1, outboxDelay: 200 }, 100, fault);
      const [a, b] = copies as [NodeRedProcess, NodeRedProcess];
      await sim.fault({ offline: { seconds: 600, mode: '503' } });
      for (let i = 0; i < 100; i++) await pressByApi((i < 50 ? a : b).url)(`alarm${i}`);
      const prefix = keyPrefix(ACCOUNT_ID);
      const held = async () => {
        const store = createClient({ url: redis.url });
        await store.connect();
        try {
          return await store.hLen(`${prefix}outbox:entries`);
        } finally {
          await store.close();
        }
      };
      await until('100 kept in the shared outbox', async () => (await held()) === 100);
      if (fault === 'FLUSHALL') {
        const store = createClient({ url: redis.url });
        await store.connect();
        await store.flushAll();
        await store.close();
      } else {
        await redis.stop();
        await redis.start();
      }
      assert.equal(await held(), 0, 'the store lost them');
      const lost = (copy: NodeRedProcess) =>
        [...copy.output().matchAll(/The shared store lost (\d+) messages? this instance keeps/g)].map((m) =>
          Number(m[1]),
        );
      await until('both copies to write back what they hold', async () => (await held()) === 100, 20_000);
      assert.deepEqual([lost(a), lost(b)], [[50], [50]], 'each warned once, of its own');
      await sim.fault({ offline: { seconds: 0 } });
      await until('100 at the gateway', async () => (await sim.outbox()).messages.length >= 100, 30_000);
      await until('the shared outbox emptied', async () => (await held()) === 0);
      const texts = (await sim.outbox()).messages.map((m) => m.text).sort();
      assert.deepEqual(
        texts,
        Array.from({ length: 100 }, (_, i) => `Alarm ${i}: water on the floor (${fault})`).sort(),
        'lost 0, sent twice 0',
      );
    });
  }

  it('Redis stopped mid-run: a live send still goes out, a msg that must wait goes to Catch with store_unavailable; when Redis is back the account recovers without a redeploy', async () => {
    await sim.reset();
    const caught = (copy: NodeRedProcess) => join(copy.userDir, 'caught.jsonl');
    await deploy({ store: 'redis', storeUrl: redis.url, outboxDelay: 200 }, 3, 'redis-down', (copy) => [
      { id: 'c1', z: 'tab', type: 'catch', scope: ['t'], wires: [['f4']] },
      {
        id: 'f4',
        z: 'tab',
        type: 'function',
        func: 'msg.payload = msg.error.code || msg.error.type || msg.error.message; return msg;',
        outputs: 1,
        wires: [['out2']],
      },
      {
        id: 'out2',
        z: 'tab',
        type: 'file',
        filename: caught(copy),
        appendNewline: true,
        createDir: true,
        overwriteFile: 'false',
        encoding: 'utf8',
        wires: [],
      },
    ]);
    const [a] = copies as [NodeRedProcess, NodeRedProcess];
    const codes = () => (existsSync(caught(a)) ? readFileSync(caught(a), 'utf8').split('\n').filter(Boolean) : []);
    await redis.stop();
    await until('the copy to say the store is lost', () => /shared store does not answer/.test(a.output()), 15_000);
    await pressByApi(a.url)('alarm0');
    await until('the live send at the gateway', async () => (await sim.outbox()).messages.length === 1);
    await sim.fault({ offline: { seconds: 600, mode: '503' } });
    await pressByApi(a.url)('alarm1');
    await until('Catch to hear of it', () => codes().length === 1);
    assert.deepEqual(codes(), ['store_unavailable']);
    await redis.start();
    await until('the copy to say the store answers again', () => /shared store answers again/.test(a.output()), 20_000);
    await pressByApi(a.url)('alarm2');
    await until(
      'the alert kept in the shared outbox',
      async () => (await entriesIn(`${keyPrefix(ACCOUNT_ID)}outbox:entries`)) === 1,
    );
    await sim.fault({ offline: { seconds: 0 } });
    await until(
      'the kept alert at the gateway',
      async () => (await sim.outbox()).messages.some((m) => m.text.startsWith('Alarm 2')),
      20_000,
    );
    assert.deepEqual(codes(), ['store_unavailable'], 'nothing else at Catch');
  });
});

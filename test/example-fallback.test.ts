/**
 * Example 09's fallback as its file wires it, on the Node-RED under test (the matrix runs this on
 * 3.1 and 4.0, `npm test` on the project's own): the gateway taken away through the example's own
 * inject and HTTP request, the alarm sent, and after its "give up after" (5 s) the Catch node's
 * switch sends it to the siren, not to "other failure". Node-RED before 4.1 copies no `code`
 * into a Catch node's msg.error, so the switch must read what every version carries.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ALL_NODES, coreNode, helper, NODE_RED_VERSION, unload, type FlowNode, type TestNode } from './support/red';
import { watchEscapes } from './support/escapes';
import { ACCOUNT_ID, startTestSimulator, TOKEN, type TestSimulator } from './support/simulator';
import { until } from './support/wait';

const EXAMPLE = join(__dirname, '..', '..', 'examples', '09 - Alarm with a fallback.json');
const CORE = [
  'common/20-inject.js',
  'common/90-comment.js',
  'function/10-switch.js',
  'function/15-change.js',
  'network/21-httprequest.js',
];

describe(`example 09 on Node-RED ${NODE_RED_VERSION}: the siren after the alarm's "give up after"`, function () {
  this.timeout(60_000);
  let sim: TestSimulator;
  let userDir: string;
  const { escaped, start, stop } = watchEscapes();

  before(async () => {
    start();
    sim = await startTestSimulator();
  });
  after(async () => {
    stop();
    await sim.close();
  });
  beforeEach(() => {
    userDir = mkdtempSync(join(tmpdir(), 'bulkgate-example-09-'));
    helper.settings({ userDir });
  });
  afterEach(async () => {
    await unload();
    helper.settings({});
    rmSync(userDir, { recursive: true, force: true });
    assert.deepEqual(escaped, [], 'no unhandled rejection or uncaught exception');
  });

  it('gateway away, the alarm: the siren goes with the alarm and the reason; nothing to "alarm: sent" or "alarm: other failure"', async () => {
    const file = JSON.parse(readFileSync(EXAMPLE, 'utf8')) as FlowNode[];
    const account = file.find((n) => n.type === 'bulkgate-account') as FlowNode;
    // The file as imported, on one tab; its debug nodes are helpers here (same ids, same names), the simulator's address ours.
    const flow: FlowNode[] = [
      { id: 'tab', type: 'tab', label: 'example 09' },
      ...file.map((n) => {
        if (n.type === 'bulkgate-account') return { ...n, baseUrl: sim.url, credentials: undefined };
        const copy: FlowNode = { ...n, z: 'tab' };
        if (n.type === 'debug') Object.assign(copy, { type: 'helper' });
        if (typeof n.url === 'string') copy.url = n.url.replace('http://127.0.0.1:1881', sim.url);
        return copy;
      }),
    ];
    await helper.load([...ALL_NODES, ...CORE.map(coreNode)] as never, flow, {
      [account.id]: { application_id: ACCOUNT_ID, application_token: TOKEN },
    });
    const byName = (name: string) => {
      const id = file.find((n) => n.type === 'debug' && n.name === name)?.id;
      assert.ok(id, `the example's debug node "${name}"`);
      const got: Record<string, unknown>[] = [];
      (helper.getNode(id) as TestNode).on('input', (msg: Record<string, unknown>) => got.push(msg));
      return got;
    };
    const [simulator, siren, sent, other] = ['simulator', 'fallback: siren', 'alarm: sent', 'alarm: other failure'].map(
      byName,
    ) as Record<string, unknown>[][];
    const press = (name: string) => {
      const inject = file.find((n) => n.type === 'inject' && n.name === name);
      assert.ok(inject, `the example's inject "${name}"`);
      (helper.getNode(inject.id) as TestNode & { receive(m: unknown): void }).receive({});
    };

    press('gateway away (60 s)');
    await until(
      'the simulator took the outage',
      () => simulator.some((m) => (m.payload as { ok?: boolean })?.ok === true),
      10_000,
    );
    press('door alarm');
    await until(
      `the siren, or another way out (other failure: ${JSON.stringify(other.map((m) => m.error))})`,
      () => siren.length > 0 || other.length > 0,
      20_000,
    );
    await new Promise((r) => setTimeout(r, 300)); // checks that nothing more comes
    assert.deepEqual(
      other.map((m) => m.error),
      [],
      'not "other failure"',
    );
    assert.equal(siren.length, 1);
    assert.match(
      String(siren[0]?.payload),
      /^Siren on: Alarm: the front door opened \(Not sent within 5 s \(the node's "give up after"\)/,
    );
    assert.equal(sent.length, 0);
    press('gateway back');
    await until(
      'the gateway back',
      () => simulator.filter((m) => (m.payload as { ok?: boolean })?.ok === true).length === 2,
      10_000,
    );
    assert.equal((await sim.outbox()).messages.length, 0, 'the alarm that gave up is not sent later');
  });
});

/**
 * Every msg handed to a send node ends exactly once (the package's promise): `done()` once, seen by a
 * Complete node scoped to the node, or `done(err)` once, seen by a Catch node; never both, never
 * twice, never neither. Counted per msg on each path: sent, rejected, refused by the checks, held
 * by the storm guard, kept in the outbox (its done when it is on disk; leaving the outbox later
 * is not a second ending), and the account missing.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { collect, helper, load, unload, type FlowNode, type TestNode } from './support/red';
import { watchEscapes } from './support/escapes';
import { until } from './support/wait';
import { ACCOUNT_ID, startTestSimulator, TOKEN, type TestSimulator } from './support/simulator';

describe('every msg ends once: completions and catches counted per msg', function () {
  this.timeout(60_000);
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
    userDir = mkdtempSync(join(tmpdir(), 'bulkgate-endings-'));
    helper.settings({ userDir });
    await sim.reset();
  });
  afterEach(async () => {
    await unload();
    helper.settings({});
    await sim.fault({ offline: { seconds: 0 } });
    rmSync(userDir, { recursive: true, force: true });
    assert.deepEqual(escaped, [], 'no unhandled rejection or uncaught exception');
  });

  /** The flow, and a count of each msg's endings by its `seq`: completions and catches. */
  async function deploy(node: Record<string, unknown>, account: Record<string, unknown> = {}) {
    const flow: FlowNode[] = [
      {
        id: 'acc',
        type: 'bulkgate-account',
        baseUrl: sim.url,
        retries: 0,
        timeout: 2000,
        outboxDelay: 200,
        ...account,
      },
      { id: 't', type: 'bulkgate-transactional', account: 'acc', wires: [['ok'], ['bad']], ...node },
      { id: 'done', type: 'complete', scope: ['t'], uncaught: false, wires: [['completed']] },
      { id: 'c', type: 'catch', scope: ['t'], uncaught: false, wires: [['caught']] },
      { id: 'ok', type: 'helper' },
      { id: 'bad', type: 'helper' },
      { id: 'completed', type: 'helper' },
      { id: 'caught', type: 'helper' },
    ];
    await load(flow, credentials);
    const endings = new Map<number, string[]>();
    const add = (kind: string) => (m: { seq: number }) => endings.set(m.seq, [...(endings.get(m.seq) ?? []), kind]);
    (helper.getNode('completed') as TestNode).on('input', add('done'));
    (helper.getNode('caught') as TestNode).on('input', add('error'));
    return endings;
  }

  const receive = (msg: Record<string, unknown>) =>
    (helper.getNode('t') as TestNode & { receive(m: unknown): void }).receive(msg);
  const ended = (endings: Map<number, string[]>, n: number) => () => [...endings.values()].flat().length >= n;

  it('sent, rejected, refused by the checks, held by the storm guard: each ends once, the right way', async () => {
    const endings = await deploy({ text: 'Door {{seq}}', stormLimit: 2, stormWindow: 60 });
    const sent = collect('ok', 2);
    receive({ seq: 1, number: '420777111222' });
    receive({ seq: 2, number: '420777111223' });
    await sent;
    receive({ seq: 3, number: '420777111224' }); // over the storm limit: held, not an error
    receive({ seq: 4, number: '12' }); // an impossible number: port 2
    receive({ seq: 5, number: '420777111225', schedule: 'tomorrow' }); // refused by the checks
    await until('five endings', ended(endings, 5));
    assert.deepEqual(Object.fromEntries(endings), { 1: ['done'], 2: ['done'], 3: ['done'], 4: ['done'], 5: ['error'] });
  });

  it('kept in the outbox: done once it is kept; sent later from the outbox, it ends no second time', async () => {
    const endings = await deploy({ text: 'Smoke {{seq}}' });
    await sim.fault({ offline: { seconds: 2, mode: '503' } });
    const later = collect('ok', 3, 30_000);
    for (const seq of [1, 2, 3]) receive({ seq, number: '420777111222' });
    await until('three kept', ended(endings, 3));
    assert.deepEqual(
      Object.fromEntries(endings),
      { 1: ['done'], 2: ['done'], 3: ['done'] },
      'each done as it was kept',
    );
    const out = await later;
    assert.ok(out.every((m) => m.bulkgate?.deferred));
    await new Promise((r) => setTimeout(r, 300)); // checks that leaving the outbox adds no ending
    assert.deepEqual(
      Object.fromEntries(endings),
      { 1: ['done'], 2: ['done'], 3: ['done'] },
      'leaving the outbox is not a second ending',
    );
  });

  it('the outbox full: the msg it cannot keep goes to Catch once, with no completion', async () => {
    const endings = await deploy({ text: 'Gas {{seq}}' }, { outboxSize: 1 });
    await sim.fault({ offline: { seconds: 60, mode: '503' } });
    for (const seq of [1, 2]) receive({ seq, number: '420777111222' });
    await until('two endings', ended(endings, 2));
    assert.deepEqual(Object.fromEntries(endings), { 1: ['done'], 2: ['error'] });
  });

  it('outboxMinutes 0 with the gateway away: Catch once, no completion', async () => {
    const endings = await deploy({ text: 'Gas {{seq}}' }, { outboxMinutes: 0 });
    await sim.fault({ offline: { seconds: 60, mode: '503' } });
    receive({ seq: 3, number: '420777111222' });
    await until('one ending', ended(endings, 1));
    assert.deepEqual(Object.fromEntries(endings), { 3: ['error'] });
  });
});

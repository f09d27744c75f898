/**
 * The nine examples imported one after another into one Node-RED, as a user does: no two define
 * a config node of the same id with different settings (the editor would keep the first and the
 * second example would run on the first's settings), and each keeps the account settings it
 * documents at work: example 02's rate limit (5 per 10 minutes) holds after example 01 was imported.
 */
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { helper, load, statusOf, unload, type FlowNode, type TestNode } from './support/red';
import { ACCOUNT_ID, startTestSimulator, TOKEN, type TestSimulator } from './support/simulator';

const EXAMPLES = join(__dirname, '..', '..', 'examples');
const files = readdirSync(EXAMPLES)
  .filter((f) => f.endsWith('.json'))
  .sort();
const read = (file: string) => JSON.parse(readFileSync(join(EXAMPLES, file), 'utf8')) as FlowNode[];
/** A config node's settings as the editor compares them on import (without its place). */
const settings = (n: FlowNode) => JSON.stringify({ ...n, x: undefined, y: undefined, z: undefined, credentials: undefined });

describe('the examples imported one after another into one Node-RED', function () {
  this.timeout(60_000);
  let sim: TestSimulator;
  before(async () => {
    sim = await startTestSimulator(1000);
  });
  after(() => sim.close());
  afterEach(() => unload());

  it('no config node id is shared by two examples with different settings', () => {
    const seen = new Map<string, { file: string; settings: string }>();
    const collisions: string[] = [];
    for (const file of files) {
      for (const node of read(file)) {
        if (node.z !== undefined || node.type === 'tab' || node.wires !== undefined) continue;
        const before = seen.get(node.id);
        if (before && before.settings !== settings(node)) collisions.push(`${node.id} (${node.type}): ${before.file} and ${file}`);
        if (!before) seen.set(node.id, { file, settings: settings(node) });
      }
    }
    assert.equal(files.length, 9);
    assert.deepEqual(collisions, []);
  });

  it("example 02's rate limit holds after example 01 was imported: 7 door alerts, 5 sent, 2 queued", async () => {
    // Their BulkGate nodes and config nodes, as imported one after the other (01 first).
    const flow: FlowNode[] = [];
    const ids = new Set<string>();
    for (const file of files.filter((f) => /^0[12] /.test(f))) {
      for (const node of read(file)) {
        if (!/^bulkgate-/.test(node.type)) continue;
        // A config node of the same id imported again is the one already there (the first test shows they match).
        if (node.type === 'bulkgate-account' && ids.has(node.id)) continue;
        ids.add(node.id);
        const copy: FlowNode = { ...node, id: `${file.slice(0, 2)}-${node.id}`, wires: node.wires ? (node.wires as unknown[]).map(() => []) : undefined };
        if (node.type === 'bulkgate-account') Object.assign(copy, { id: node.id, baseUrl: sim.url, credentials: undefined });
        flow.push(copy);
      }
    }
    const accounts = flow.filter((n) => n.type === 'bulkgate-account');
    const door = flow.find((n) => n.id === '02-t1') as FlowNode;
    assert.ok(door, 'the door alert node of example 02');
    await load(flow, Object.fromEntries(accounts.map((a) => [a.id, { application_id: ACCOUNT_ID, application_token: TOKEN }])));
    const node = helper.getNode('02-t1') as TestNode & { receive(m: unknown): void };
    const queued = statusOf('02-t1', (s) => /queued 2/.test(s.text ?? ''), 10_000);
    for (let i = 0; i < 7; i++) node.receive({ payload: 'open', time: `12:0${i}`, topic: 'home/door/front' });
    await queued;
    const texts = () => sim.sim.gateway.state.outbox.map((m) => m.text).filter((t) => t.startsWith('Front door opened'));
    await new Promise((r) => setTimeout(r, 500)); // checks that the two queued ones stay queued
    assert.equal(texts().length, 5, texts().join('\n'));
  });
});

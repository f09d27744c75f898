/**
 * The ten examples imported one after another into one Node-RED, as a user does: no node id is
 * in two example files (the editor asks "nodes already exist" for any id it has, config nodes
 * too, and imports a copy or keeps the first), so each example brings its own nodes and its own
 * account node, and keeps the account settings it documents at work: example 02's rate limit (5
 * per 10 minutes) holds after example 01 was imported. In Chromium: example 01 dropped onto the
 * editor, then example 09, with no conflict dialog.
 */
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Page } from 'playwright-core';
import { openBrowser, type Browser } from './support/browser';
import { startDemo, type DemoProcess } from './support/demo-process';
import { helper, load, statusOf, unload, type FlowNode, type TestNode } from './support/red';
import { ACCOUNT_ID, startTestSimulator, TOKEN, type TestSimulator } from './support/simulator';

const EXAMPLES = join(__dirname, '..', '..', 'examples');
const files = readdirSync(EXAMPLES)
  .filter((f) => f.endsWith('.json'))
  .sort();
const read = (file: string) => JSON.parse(readFileSync(join(EXAMPLES, file), 'utf8')) as FlowNode[];
/** An account node's settings, without its id, place and credentials. */
const settings = (n: FlowNode) =>
  JSON.stringify({ ...n, id: undefined, x: undefined, y: undefined, z: undefined, credentials: undefined });

describe('the examples imported one after another into one Node-RED', function () {
  this.timeout(60_000);
  let sim: TestSimulator;
  before(async () => {
    sim = await startTestSimulator(1000);
  });
  after(() => sim.close());
  afterEach(() => unload());

  it('no node id is in two example files, config nodes included', () => {
    const seen = new Map<string, string>();
    const shared: string[] = [];
    for (const file of files) {
      for (const node of read(file)) {
        const before = seen.get(node.id);
        if (before !== undefined && before !== file) shared.push(`${node.id} (${node.type}): ${before} and ${file}`);
        seen.set(node.id, file);
      }
    }
    assert.equal(files.length, 10);
    assert.deepEqual(shared, []);
  });

  it('each example carries its own account node, with the settings of the others (02 its own rate limit)', () => {
    const accounts = files.map((file) => read(file).filter((n) => n.type === 'bulkgate-account'));
    assert.deepEqual(
      accounts.map((a) => a.length),
      files.map(() => 1),
    );
    const kinds = new Set(accounts.map(([a]) => settings(a as FlowNode)));
    assert.equal(kinds.size, 2, [...kinds].join('\n'));
  });

  it("example 02's rate limit holds after example 01 was imported: 7 door alerts, 5 sent, 2 queued", async () => {
    // Their BulkGate nodes, as imported one after the other (01 first), with their own ids.
    const flow: FlowNode[] = files
      .filter((f) => /^0[12] /.test(f))
      .flatMap(read)
      .filter((node) => /^bulkgate-/.test(node.type))
      .map((node) => {
        const copy: FlowNode = { ...node, wires: node.wires ? (node.wires as unknown[]).map(() => []) : undefined };
        if (node.type === 'bulkgate-account') Object.assign(copy, { baseUrl: sim.url, credentials: undefined });
        return copy;
      });
    const accounts = flow.filter((n) => n.type === 'bulkgate-account');
    const door = flow.find((n) => n.id === 'ex02-t1') as FlowNode;
    assert.ok(door, 'the door alert node of example 02');
    await load(
      flow,
      Object.fromEntries(accounts.map((a) => [a.id, { application_id: ACCOUNT_ID, application_token: TOKEN }])),
    );
    const node = helper.getNode('ex02-t1') as TestNode & { receive(m: unknown): void };
    const queued = statusOf('ex02-t1', (s) => /queued 2/.test(s.text ?? ''), 10_000);
    for (let i = 0; i < 7; i++) node.receive({ payload: 'open', time: `12:0${i}`, topic: 'home/door/front' });
    await queued;
    const texts = () =>
      sim.sim.gateway.state.outbox.map((m) => m.text).filter((t) => t.startsWith('Front door opened'));
    await new Promise((r) => setTimeout(r, 500)); // checks that the two queued ones stay queued
    assert.equal(texts().length, 5, texts().join('\n'));
  });
});

describe('in Chromium: example 01, then example 09, dropped onto the editor', function () {
  this.timeout(120_000);
  let demo: DemoProcess;
  let browser: Browser;
  let page: Page;
  before(async () => {
    demo = await startDemo(['--no-flows']);
    browser = await openBrowser();
    page = browser.page;
    await page.goto(`${demo.editorUrl}/`);
    await page.waitForFunction(
      () => (window as any).RED?.nodes?.getType?.('bulkgate-transactional') && (window as any).BulkGateEditor,
      undefined,
      {
        timeout: 30_000,
      },
    );
    await page.waitForSelector('#red-ui-workspace-chart');
  });
  after(async () => {
    await browser?.close();
    await demo?.stop();
  });

  /** The file's text dropped onto the workspace (the editor imports it as Import > Examples does), then placed with a click. */
  const drop = async (file: string) => {
    const text = readFileSync(join(EXAMPLES, file), 'utf8');
    await page.evaluate((flow) => {
      const data = new DataTransfer();
      data.setData('text/plain', flow);
      const chart = document.getElementById('red-ui-workspace-chart') as HTMLElement;
      chart.dispatchEvent(new DragEvent('dragenter', { dataTransfer: data, bubbles: true }));
      (document.getElementById('red-ui-drop-target') as HTMLElement).dispatchEvent(
        new DragEvent('drop', { dataTransfer: data, bubbles: true, cancelable: true }),
      );
    }, text);
    await page.mouse.move(700, 300, { steps: 5 });
    await page.mouse.click(700, 300);
  };
  const conflict = () =>
    page.evaluate(() =>
      [...document.querySelectorAll('.red-ui-notification')]
        .map((n) => n.textContent ?? '')
        .filter((t) => /already exist/.test(t)),
    );
  const present = (ids: string[]) =>
    page.evaluate((list) => list.filter((id) => (window as any).RED.nodes.node(id)), ids);

  it('both imported whole, each with its own account node; no "nodes already exist" dialog', async () => {
    const [first, second] = ['01', '09'].map((prefix) => files.find((f) => f.startsWith(prefix)) as string) as [
      string,
      string,
    ];
    await drop(first);
    const firstIds = read(first).map((n) => n.id);
    await page.waitForFunction((ids) => ids.every((id) => (window as any).RED.nodes.node(id)), firstIds, {
      timeout: 10_000,
    });
    await drop(second);
    const secondIds = read(second).map((n) => n.id);
    await page
      .waitForFunction((ids) => ids.every((id) => (window as any).RED.nodes.node(id)), secondIds, { timeout: 10_000 })
      .catch(() => undefined);
    assert.deepEqual(await conflict(), [], 'no conflict dialog');
    assert.deepEqual(await present(secondIds), secondIds, 'example 09 imported whole, with its own ids');
    assert.deepEqual(await present(firstIds), firstIds, 'example 01 still whole');
    const accounts = await page.evaluate(() => {
      const found: string[] = [];
      (window as any).RED.nodes.eachConfig((n: { type: string; id: string }) => {
        if (n.type === 'bulkgate-account') found.push(n.id);
      });
      return found.sort();
    });
    assert.equal(accounts.length, 2, `an account node each: ${accounts.join(', ')}`);
    assert.deepEqual(browser.errors, [], 'no console error');
  });
});

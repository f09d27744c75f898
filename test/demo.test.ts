/**
 * The demo as a newcomer runs it: `npm start` on free ports, the inject nodes clicked through
 * Node-RED's admin API, results read from the debug sidebar's websocket and the simulator's
 * outbox, the outbox page live in Chromium, and Ctrl-C leaving nothing behind.
 */
import assert from 'node:assert/strict';
import { join } from 'node:path';
import WebSocket from 'ws';
import { openBrowser, type Browser } from './support/browser';
import { startDemo, type DemoProcess } from './support/demo-process';

const DOCS = join(__dirname, '..', '..', 'docs');

interface DebugMessage {
  id: string;
  name?: string;
  msg: string;
  format: string;
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

describe('the demo (npm start)', function () {
  this.timeout(180_000);
  let demo: DemoProcess;
  let socket: WebSocket;
  const debug: DebugMessage[] = [];
  const outbox = async () => (await (await fetch(`${demo.simulatorUrl}/simulator/outbox`)).json()) as { messages: { number: string; text: string; channel: string }[] };
  const inject = async (id: string) => {
    const res = await fetch(`${demo.editorUrl}/inject/demo-tab-1-${id}`, { method: 'POST' });
    assert.equal(res.status, 200, `inject ${id}`);
  };
  const until = async (what: string, check: () => boolean | Promise<boolean>, ms = 10_000) => {
    const end = Date.now() + ms;
    while (!(await check())) {
      if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
      await new Promise((r) => setTimeout(r, 100));
    }
  };

  before(async () => {
    demo = await startDemo([], ['npm', 'start', '--silent'], 150_000);
    socket = new WebSocket(`${demo.editorUrl.replace(/^http/, 'ws')}/comms`);
    await new Promise((resolve, reject) => {
      socket.once('open', resolve);
      socket.once('error', reject);
    });
    socket.send(JSON.stringify({ subscribe: 'debug' }));
    socket.on('message', (data) => {
      const frames = JSON.parse(String(data)) as { topic: string; data: DebugMessage }[];
      for (const frame of [frames].flat()) if (frame.topic === 'debug') debug.push(frame.data);
    });
  });

  after(async () => {
    socket?.close();
    if (demo && demo.child.exitCode === null) demo.child.kill('SIGKILL');
  });

  it('deploys the example flows with the demo account\'s credentials in the credential store', async () => {
    const flows = (await (await fetch(`${demo.editorUrl}/flows`)).json()) as { type: string; credentials?: unknown }[];
    const types = new Set(flows.map((n) => n.type));
    for (const type of ['bulkgate-account', 'bulkgate-promotional', 'bulkgate-transactional', 'bulkgate-balance', 'catch', 'comment']) assert.ok(types.has(type), type);
    assert.equal(JSON.stringify(flows).includes('demo-simulator-token'), false);
  });

  it('"door opened" sends the transactional alert', async () => {
    await inject('i1');
    await until('the alert in the outbox', async () => (await outbox()).messages.some((m) => m.text === 'Alarm: the front door was opened.'));
    await until('the accepted record in the debug sidebar', () => debug.some((d) => d.name === 'accepted' && /"status":"accepted"/.test(d.msg)));
  });

  it('"campaign" reaches two recipients with their variables, and the invalid one comes out of port 2', async () => {
    await inject('i2');
    await until('both campaign texts', async () => (await outbox()).messages.filter((m) => /10% off this week/.test(m.text)).length === 2);
    const texts = (await outbox()).messages.map((m) => m.text);
    assert.ok(texts.includes('Hi Jana, 10% off this week with code JANA10.'));
    await until('the rejected recipient', () => debug.some((d) => d.name === 'per recipient: rejected' && /"code":9/.test(d.msg)));
    await until('the summary', () => debug.some((d) => d.name === 'summary' && /"accepted":2/.test(d.msg) && /"error":1/.test(d.msg)));
  });

  it('the cascade goes by Viber to a Viber user and by SMS to the other number', async () => {
    await inject('i3');
    await until('both cascade messages', async () => (await outbox()).messages.filter((m) => m.text === 'Your parcel is ready for pickup.').length === 2);
    const channels = (await outbox()).messages.filter((m) => m.text === 'Your parcel is ready for pickup.').map((m) => [m.number, m.channel]);
    assert.deepEqual(channels, [['420777000001', 'viber'], ['420777000301', 'sms']]);
  });

  it('the balance check reports the credit, and the low-credit port fires below the threshold', async () => {
    await inject('i4');
    await until('the credit', () => debug.some((d) => d.name === 'credit' && /"credit":/.test(d.msg)));
    await until('the low-credit warning', () => debug.some((d) => d.name === 'credit is low!'));
  });

  it('the Catch node shows the refused request', async () => {
    await inject('i5');
    await until('the caught error', () => debug.some((d) => d.name === 'caught error' && /invalid_request/.test(d.msg) && /number must be a phone number/.test(d.msg)));
  });

  it('delivery reports and replies: an unreachable owner\'s alarm goes to the backup number; a reply ARM arms', async () => {
    const flows = (await (await fetch(`${demo.editorUrl}/flows`)).json()) as { id: string; type: string; z?: string }[];
    const tab = flows.find((n) => n.type === 'bulkgate-events')?.z;
    assert.ok(tab, 'the events example is deployed');
    const res = await fetch(`${demo.editorUrl}/inject/${tab}-i1`, { method: 'POST' });
    assert.equal(res.status, 200);
    await until('the backup SMS', async () => (await outbox()).messages.some((m) => m.number === '420777000456' && /owner unreachable/.test(m.text)));
    assert.equal((await fetch(`${demo.editorUrl}/inject/${tab}-i3`, { method: 'POST' })).status, 200);
    await until('the armed confirmation', async () => (await outbox()).messages.some((m) => m.number === '420777000123' && m.text === 'Alarm armed.'));
  });

  describe('in Chromium', () => {
    let browser: Browser;
    before(async () => {
      browser = await openBrowser();
    });
    after(() => browser?.close());

    it('the outbox page shows new bubbles without a reload, and the editor has no console error', async () => {
      const { page } = browser;
      await page.setViewportSize({ width: 900, height: 640 });
      await page.goto(`${demo.simulatorUrl}/`);
      await page.waitForSelector('.bubble');
      const before = await page.locator('.bubble').count();
      const navigations: string[] = [];
      page.on('framenavigated', (f) => navigations.push(f.url()));
      await inject('i1');
      await page.waitForFunction((n) => document.querySelectorAll('.bubble').length > n, before, { timeout: 10_000 });
      assert.deepEqual(navigations, [], 'no reload');
      assert.match(await page.locator('.credit').first().innerText(), /account 10000: [\d.]+ credits/);
      await page.screenshot({ path: join(DOCS, 'outbox.png') });
      await page.setViewportSize({ width: 390, height: 760 });
      const overflow = await page.evaluate(() => document.documentElement.scrollWidth > window.innerWidth);
      assert.equal(overflow, false, 'readable on a phone-sized window without sideways scrolling');

      await page.setViewportSize({ width: 1280, height: 720 });
      await page.goto(`${demo.editorUrl}/`);
      await page.waitForFunction(() => (window as any).BulkGateEditor && document.querySelector('.red-ui-flow-node'), undefined, { timeout: 30_000 });
      await page.waitForTimeout(1500);
      await page.screenshot({ path: join(DOCS, 'editor.png') });
      assert.deepEqual(browser.errors, []);
    });
  });

  describe('stopping', () => it('Ctrl-C stops Node-RED and the simulator and leaves no process behind', async () => {
    const pid = demo.child.pid as number;
    // Ctrl-C in a terminal signals the whole foreground process group: npm and the demo under it.
    process.kill(-pid, 'SIGINT');
    const code = await demo.stop();
    assert.ok(code === 0 || code === null || code === 130, `exit code ${code}`);
    await until('the process group to end', () => {
      try {
        process.kill(-pid, 0);
        return false;
      } catch {
        return true;
      }
    });
    assert.equal(alive(pid), false);
    await assert.rejects(fetch(`${demo.editorUrl}/`), 'Node-RED no longer answers');
    await assert.rejects(fetch(`${demo.simulatorUrl}/`), 'the simulator no longer answers');
  }));
});

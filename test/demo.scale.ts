/**
 * The demo as a newcomer runs it: `npm start` on free ports, every inject button of every tab
 * clicked in Chromium, results read from the debug sidebar's websocket and the simulator's
 * outbox, the outbox page live, the tabs laid out without overlaps, and Ctrl-C leaving nothing
 * behind.
 */
import assert from 'node:assert/strict';
import { mkdirSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { connectAsync } from 'mqtt';
import type { Page } from 'playwright-core';
import { DEMO_ACCOUNT } from '../simulator/accounts';
import { openBrowser, type Browser } from './support/browser';
import { startDemo, type DemoProcess } from './support/demo-process';
import { click, type Click, DOOR_ALERT_FAILED, EXAMPLE_CLICKS, pressByApi, Sidebar, until } from './support/examples';

const ROOT = join(__dirname, '..', '..');
const DOCS = join(ROOT, 'docs');
const EXAMPLES = join(ROOT, 'examples');
const OUTPUT = join(ROOT, 'test-output', 'screenshots');
mkdirSync(OUTPUT, { recursive: true });

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
  const sidebar = new Sidebar();
  let flows: { id: string; type: string; z?: string; label?: string; name?: string }[] = [];
  const outbox = async () =>
    (await (await fetch(`${demo.simulatorUrl}/simulator/outbox`)).json()) as {
      messages: { number: string; text: string; channel: string }[];
    };
  /** The deployed tab of an example file, by the label the demo gives it. */
  const tabOf = (file: string) =>
    flows.find((n) => n.type === 'tab' && n.label === file.replace(/\.json$/, '').replace(/^\d+\s*-?\s*/, ''))?.id;

  before(async () => {
    demo = await startDemo([], ['npm', 'start', '--silent'], 150_000);
    await sidebar.open(demo.editorUrl);
    flows = (await (await fetch(`${demo.editorUrl}/flows`)).json()) as typeof flows;
  });

  after(async () => {
    sidebar.close();
    if (demo && demo.child.exitCode === null) demo.child.kill('SIGKILL');
  });

  it('prints no warning, says where the flows are kept and where its MQTT broker is, and deploys every example, each with its account set', async () => {
    assert.doesNotMatch(demo.output(), /\[warn\]|\[error\]/, demo.output());
    assert.match(
      demo.output(),
      /Your flows: +kept in .+ between runs \(the examples were deployed; `npm start -- --fresh` starts over\)/,
    );
    assert.match(demo.output(), /MQTT broker: +mqtt:\/\/127\.0\.0\.1:\d+ /);
    const tabs = flows.filter((n) => n.type === 'tab').map((n) => n.label);
    assert.deepEqual(tabs, [
      'Getting started with the simulator',
      'MQTT door alarm with a rate limit',
      'Scheduled promotional campaign',
      'Daily balance check',
      'Viber, WhatsApp and SMS cascades',
      'Delivery reports and replies',
      'One-time password for a door keypad',
      'Check a customer list and keep the address book',
      'Alarm with a fallback',
      'Escalation until someone acknowledges',
    ]);
    // One demo account per set of settings the examples document: example 02 keeps its rate limit.
    const accounts = flows.filter((n) => n.type === 'bulkgate-account') as {
      id: string;
      rateLimit?: number;
      rateWindow?: number;
      queueSize?: number;
    }[];
    assert.deepEqual(
      accounts.map((a) => [a.id, a.rateLimit, a.rateWindow, a.queueSize]),
      [
        ['bulkgate-demo-account', 0, 60, 100],
        ['bulkgate-demo-account-2', 5, 600, 10],
      ],
    );
    const users = flows.filter((n) => /^bulkgate-(promotional|transactional|balance)$/.test(n.type)) as {
      z?: string;
      account?: string;
    }[];
    const doorTab = flows.find((n) => n.type === 'tab' && n.label === 'MQTT door alarm with a rate limit')?.id;
    assert.ok(users.length >= 10, `${users.length} BulkGate nodes`);
    for (const user of users)
      assert.equal(user.account, user.z === doorTab ? 'bulkgate-demo-account-2' : 'bulkgate-demo-account');
    // The simulator's public demo token is written in the examples' first comment (how to run them
    // installed); no other node carries it, and no node carries credentials (they are in the store).
    assert.deepEqual(
      flows.filter((n) => n.type !== 'comment' && JSON.stringify(n).includes(DEMO_ACCOUNT.token)).map((n) => n.id),
      [],
    );
    assert.deepEqual(
      flows.filter((n) => 'credentials' in n).map((n) => n.id),
      [],
    );
  });

  it("a door contact publishing to the demo's MQTT broker sends the door alarm's SMS", async () => {
    const port = Number(/MQTT broker: +mqtt:\/\/127\.0\.0\.1:(\d+)/.exec(demo.output())?.[1]);
    const doors = async () => (await outbox()).messages.filter((m) => m.text.startsWith('Front door opened')).length;
    const before = await doors();
    // The door contact (mqtt in) subscribes once it is connected: publish only then.
    await until(
      'the door contact connected',
      () => sidebar.statuses.some((st) => /-m1$/.test(st.id) && st.fill === 'green'),
      20_000,
    );
    const sensor = await connectAsync(`mqtt://127.0.0.1:${port}`);
    try {
      // Retained: the mqtt in node subscribes just after it shows connected (the broker does not
      // tell when), and a retained msg reaches it whenever it does. Cleared once it has.
      await sensor.publishAsync('home/door/front', 'open', { qos: 1, retain: true });
      await until('the door SMS', async () => (await doors()) === before + 1, 15_000);
      await sensor.publishAsync('home/door/front', '', { qos: 1, retain: true });
    } finally {
      await sensor.endAsync();
    }
  });

  describe('in Chromium, as a user clicks', () => {
    let browser: Browser;
    let page: Page;
    before(async () => {
      browser = await openBrowser();
      page = browser.page;
      await page.setViewportSize({ width: 1400, height: 900 });
      await page.goto(`${demo.editorUrl}/`);
      await page.waitForFunction(
        () => (window as any).BulkGateEditor && document.querySelector('.red-ui-flow-node'),
        undefined,
        { timeout: 30_000 },
      );
    });
    after(() => browser?.close());

    /** Shows a tab and clicks an inject node's button, as a user does. */
    const pressButton = async (injectId: string) => {
      const tab = flows.find((n) => n.id === injectId)?.z;
      await page.evaluate((z) => (window as any).RED.workspaces.show(z), tab);
      const button = page.locator(`[id="${injectId}"] .red-ui-flow-node-button`);
      await button.waitFor({ state: 'visible' });
      await button.click();
    };

    /**
     * What the demo adds to an example's tab: example 02's sensor button publishes to the demo's
     * broker (the next click waits for the next second: the gateway drops the same text within
     * its duplicate window, and the example's text carries the time to the second).
     */
    const DEMO_CLICKS: Record<string, Click[]> = {
      '02': [
        {
          inject: 'sensor-open',
          expect: [{ name: 'door alarm: sent', match: /"status":"accepted"/ }],
          absent: [DOOR_ALERT_FAILED],
          settle: 1100,
        },
      ],
    };

    for (const [prefix, exampleClicks] of Object.entries(EXAMPLE_CLICKS)) {
      const clicks = [...(DEMO_CLICKS[prefix] ?? []), ...exampleClicks];
      it(`example ${prefix}: every inject button of its tab brings its output, and no error but the ones it shows on purpose`, async () => {
        const file = readdirSync(EXAMPLES).find((f) => f.startsWith(prefix)) as string;
        const tab = tabOf(file);
        assert.ok(tab, `${file} is deployed`);
        const injects = flows
          .filter((n) => n.z === tab && n.type === 'inject')
          .map((n) => n.id.slice(tab.length + 1))
          .sort();
        assert.deepEqual(clicks.map((c) => c.inject).sort(), injects, 'every inject of the tab is clicked');
        for (const c of clicks) await click(pressButton, sidebar, c, (id) => `${tab}-${id}`);
        await page.evaluate((z) => (window as any).RED.workspaces.show(z), tab);
        await page.waitForTimeout(500);
        await page.screenshot({ path: join(OUTPUT, `demo-tab-${prefix}.png`) });
        // Laid out to read at a glance: no node, label or status over another.
        const overlaps = await page.evaluate(() => {
          const boxes = Array.from(document.querySelectorAll('#red-ui-workspace-chart g.red-ui-flow-node-group')).map(
            (g) => ({
              id: g.id,
              r: (g as SVGGElement).getBoundingClientRect(),
            }),
          );
          const hits: string[] = [];
          for (let i = 0; i < boxes.length; i++) {
            for (let j = i + 1; j < boxes.length; j++) {
              const a = boxes[i]!.r;
              const b = boxes[j]!.r;
              if (a.left < b.right - 2 && b.left < a.right - 2 && a.top < b.bottom - 2 && b.top < a.bottom - 2)
                hits.push(`${boxes[i]!.id} / ${boxes[j]!.id}`);
            }
          }
          return hits;
        });
        assert.deepEqual(overlaps, [], 'no overlapping nodes');
      });
    }

    it('the cascade went by Viber to the Viber user and by SMS to the other number', async () => {
      const channels = (await outbox()).messages
        .filter((m) => m.text === 'Your parcel is ready for pickup.')
        .map((m) => [m.number, m.channel]);
      assert.deepEqual(channels, [
        ['420777000001', 'viber'],
        ['420777000301', 'sms'],
      ]);
    });

    it('the low-credit output fires once the credit is below the threshold', async () => {
      await fetch(`${demo.simulatorUrl}/simulator/accounts`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ ...DEMO_ACCOUNT, credit: 10 }),
      });
      const tab = tabOf(readdirSync(EXAMPLES).find((f) => f.startsWith('01')) as string) as string;
      await click(
        pressButton,
        sidebar,
        {
          inject: 'ex01-i4',
          expect: [
            { name: 'credit', match: /"credit":10\b/ },
            { name: 'credit is low!', match: /"credit":10\b/ },
          ],
        },
        (id) => `${tab}-${id}`,
      );
    });

    it('the outbox page shows new bubbles without a reload, and the editor has no console error', async () => {
      await page.setViewportSize({ width: 900, height: 640 });
      await page.goto(`${demo.simulatorUrl}/`);
      await page.waitForSelector('.bubble');
      const before = await page.locator('.bubble').count();
      const navigations: string[] = [];
      page.on('framenavigated', (f) => navigations.push(f.url()));
      const tab = tabOf(readdirSync(EXAMPLES).find((f) => f.startsWith('01')) as string) as string;
      await pressByApi(demo.editorUrl)(`${tab}-ex01-i1`);
      await page.waitForFunction((n) => document.querySelectorAll('.bubble').length > n, before, { timeout: 10_000 });
      assert.deepEqual(navigations, [], 'no reload');
      assert.match(await page.locator('.credit').first().innerText(), /account 10000: [\d.]+ credits/);
      // The examples clicked before: 05's alarm went on WhatsApp, 07's code is an OTP; each has its own label.
      assert.equal(await page.locator('.tag.whatsapp').first().innerText(), 'WHATSAPP');
      assert.ok((await page.locator('.bubble.whatsapp').count()) > 0, 'a WhatsApp bubble');
      assert.equal(await page.locator('.tag.otp').first().innerText(), 'OTP');
      await page.screenshot({ path: join(DOCS, 'outbox.png') });
      await page.setViewportSize({ width: 390, height: 760 });
      const overflow = await page.evaluate(() => document.documentElement.scrollWidth > window.innerWidth);
      assert.equal(overflow, false, 'readable on a phone-sized window without sideways scrolling');

      await page.setViewportSize({ width: 1280, height: 720 });
      await page.goto(`${demo.editorUrl}/`);
      await page.waitForFunction(
        () => (window as any).BulkGateEditor && document.querySelector('.red-ui-flow-node'),
        undefined,
        { timeout: 30_000 },
      );
      await page.waitForTimeout(1500);
      await page.screenshot({ path: join(DOCS, 'editor.png') });
      // No red triangle anywhere: every node and config node is properly configured, so a
      // Deploy asks no "Are you sure?".
      const invalid = await page.evaluate(() => {
        const RED = (window as any).RED;
        const bad: string[] = [];
        RED.nodes.eachNode((n: { id: string; valid?: boolean }) => {
          if (n.valid === false) bad.push(n.id);
        });
        RED.nodes.eachConfig((n: { id: string; valid?: boolean }) => {
          if (n.valid === false) bad.push(n.id);
        });
        return bad;
      });
      assert.deepEqual(invalid, []);
      assert.deepEqual(browser.errors, []);
    });

    it("the README's outage step: the simulator page takes the gateway offline, the alert waits in the outbox, and arrives when it is back", async () => {
      await page.goto(`${demo.simulatorUrl}/`);
      await page.waitForSelector('#gateway-toggle');
      assert.equal(await page.locator('#gateway-toggle').innerText(), 'Go offline for a minute');
      await page.click('#gateway-toggle');
      await page.waitForFunction(() =>
        /offline \(HTTP 503\) until/.test(document.getElementById('gateway-state')?.textContent ?? ''),
      );
      const tab = tabOf(readdirSync(EXAMPLES).find((f) => f.startsWith('01')) as string) as string;
      const sender = flows.find((n) => n.z === tab && n.type === 'bulkgate-transactional') as unknown as {
        account: string;
      };
      const waiting = async () =>
        ((await (await fetch(`${demo.editorUrl}/bulkgate/outbox/${sender.account}`)).json()) as { waiting: number })
          .waiting;
      const before = (await outbox()).messages.length;
      await pressByApi(demo.editorUrl)(`${tab}-ex01-i1`);
      await until('the alert in the outbox', async () => (await waiting()) === 1, 20_000).catch(() => undefined);
      assert.equal(await waiting(), 1, 'the alert waits in the outbox');
      assert.equal((await outbox()).messages.length, before, 'nothing was delivered while the gateway was away');
      await page.screenshot({ path: join(OUTPUT, 'demo-gateway-offline.png') });
      assert.equal(await page.locator('#gateway-toggle').innerText(), 'Back online now');
      await page.click('#gateway-toggle');
      await page.waitForFunction(() =>
        /gateway online/.test(document.getElementById('gateway-state')?.textContent ?? ''),
      );
      await until('the outbox emptied', async () => (await waiting()) === 0, 30_000).catch(() => undefined);
      assert.equal(await waiting(), 0, 'the outbox emptied');
      await page.waitForFunction((n) => document.querySelectorAll('.bubble').length > n, before, { timeout: 10_000 });
      assert.equal((await outbox()).messages.length, before + 1, 'the alert arrived, once');
    });
  });

  describe('stopping', () =>
    it('Ctrl-C stops Node-RED and the simulator and leaves no process behind', async () => {
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

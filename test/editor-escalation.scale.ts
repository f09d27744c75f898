/**
 * The escalation panel in a real Chromium against a running Node-RED: steps added, dragged into
 * another order by their handle and removed, renumbered after each change; a step without numbers
 * marked; the cost line (the most SMS one incident can send: the numbers of all steps times the
 * rounds) follows each change; the warning for a sender that takes no replies shows for every type
 * but the system number and a short code; what is saved is the list as edited.
 */
import assert from 'node:assert/strict';
import type { Page } from 'playwright-core';
import { openBrowser, type Browser } from './support/browser';
import { cancel, edit } from './support/panel';
import { startDemo, type DemoProcess } from './support/demo-process';

/* The page's globals (RED) are reached inside page.evaluate only. */
declare const RED: any;

const A = '420777100001';
const B = '420777100002';
const C = '420777100003';
const D = '420777100004';

describe('the escalation panel in Chromium', function () {
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
      () => (window as any).RED?.nodes?.getType?.('bulkgate-escalation') && (window as any).BulkGateEditor,
      undefined,
      {
        timeout: 30_000,
      },
    );
    await page.waitForSelector('#red-ui-workspace-chart');
    await page.evaluate(
      ({ url, owner }) => {
        const z = RED.workspaces.active();
        RED.view.importNodes(
          [
            { id: 'acc1', type: 'bulkgate-account', name: 'sim', baseUrl: url },
            {
              id: 'esc1',
              type: 'bulkgate-escalation',
              z,
              x: 300,
              y: 100,
              account: 'acc1',
              steps: [{ numbers: owner, wait: 60 }],
              repeat: 1,
              sender_id: 'gSystem',
            },
          ],
          { generateIds: false },
        );
      },
      { url: demo.simulatorUrl, owner: A },
    );
  });
  after(async () => {
    await browser?.close();
    await demo?.stop();
  });

  const cost = () => page.locator('#bulkgate-escalation-cost').innerText();
  const items = () => page.locator('#node-input-bulkgate-steps > li');
  /** Each step row as shown: its label, numbers, wait, and which of its fields are marked. */
  const rows = () =>
    items().evaluateAll((els) =>
      els.map((el) => [
        el.querySelector('.bulkgate-step-index')?.textContent,
        (el.querySelector('.bulkgate-step-numbers') as HTMLInputElement).value,
        Number((el.querySelector('.bulkgate-step-wait') as HTMLInputElement).value),
        [...el.querySelectorAll('.input-error')].map((e) =>
          e.className.split(' ').find((c) => c.startsWith('bulkgate-')),
        ),
      ]),
    );

  /** Drags step `from` by its handle to just above (`to` before it) or below step `to`. */
  async function drag(from: number, to: number): Promise<void> {
    const handle = await items().nth(from).locator('.red-ui-editableList-item-handle').boundingBox();
    const target = await items().nth(to).boundingBox();
    assert.ok(handle && target);
    const x = handle.x + handle.width / 2;
    const y0 = handle.y + handle.height / 2;
    const y1 = to < from ? target.y - 10 : target.y + target.height + 10;
    await page.mouse.move(x, y0);
    await page.mouse.down();
    for (let step = 1; step <= 10; step++) await page.mouse.move(x, y0 + ((y1 - y0) * step) / 10);
    await page.mouse.up();
    await page.waitForTimeout(300);
  }

  it('steps added, dragged into another order and removed: renumbered, the cost line follows each change, and the list is saved as edited', async () => {
    await edit(page, 'esc1');
    assert.deepEqual(await rows(), [['Step 1', A, 60, []]]);
    assert.equal(await cost(), 'At most 1 SMS per incident (steps: 1, rounds: 1)');

    await page.click('.node-input-bulkgate-steps-row .red-ui-editableList-addButton');
    assert.deepEqual(
      await rows(),
      [
        ['Step 1', A, 60, []],
        ['Step 2', '', 300, ['bulkgate-step-numbers']],
      ],
      'a new step waits 300 s and is marked until it has numbers',
    );
    assert.equal(await cost(), 'At most 1 SMS per incident (steps: 2, rounds: 1)');
    await items().nth(1).locator('.bulkgate-step-numbers').fill(`${B}; ${C}`);
    assert.deepEqual((await rows())[1], ['Step 2', `${B}; ${C}`, 300, []]);
    assert.equal(await cost(), 'At most 3 SMS per incident (steps: 2, rounds: 1)');
    await page.fill('#node-input-repeat', '2');
    assert.equal(await cost(), 'At most 6 SMS per incident (steps: 2, rounds: 2)');

    await drag(1, 0);
    assert.deepEqual(
      await rows(),
      [
        ['Step 1', `${B}; ${C}`, 300, []],
        ['Step 2', A, 60, []],
      ],
      'the moved step is step 1 now',
    );
    assert.equal(await cost(), 'At most 6 SMS per incident (steps: 2, rounds: 2)');

    await page.click('.node-input-bulkgate-steps-row .red-ui-editableList-addButton');
    await items().nth(2).locator('.bulkgate-step-numbers').fill(D);
    await items().nth(2).locator('.bulkgate-step-wait').fill('30');
    assert.equal(await cost(), 'At most 8 SMS per incident (steps: 3, rounds: 2)');
    await items().nth(0).locator('.red-ui-editableList-item-remove').click();
    // The list removes a row after a short animation.
    await page.waitForFunction(() => document.querySelectorAll('#node-input-bulkgate-steps > li').length === 2);
    assert.deepEqual(await rows(), [
      ['Step 1', A, 60, []],
      ['Step 2', D, 30, []],
    ]);
    assert.equal(await cost(), 'At most 4 SMS per incident (steps: 2, rounds: 2)');

    await page.click('#node-dialog-ok');
    await page.waitForSelector('#node-dialog-ok', { state: 'detached' });
    const saved = await page.evaluate(() => {
      const node = RED.nodes.node('esc1');
      return { steps: node.steps, repeat: Number(node.repeat), valid: node.valid };
    });
    assert.deepEqual(saved, {
      steps: [
        { numbers: A, wait: 60 },
        { numbers: D, wait: 30 },
      ],
      repeat: 2,
      valid: true,
    });
    assert.deepEqual(browser.errors, []);
  });

  it('the sender warning shows for every type but the system number and a short code (replies come back only to those), and the sender is saved', async () => {
    await edit(page, 'esc1');
    const warning = page.locator('#bulkgate-escalation-sender-warning');
    const senders = await page.$$eval('#node-input-sender_id option', (os) =>
      (os as HTMLOptionElement[]).map((o) => o.value),
    );
    assert.ok(senders.includes('gText') && senders.includes('gShort'), senders.join());
    const shown: Record<string, boolean> = {};
    for (const sender of senders) {
      await page.selectOption('#node-input-sender_id', sender);
      shown[sender || 'default'] = await warning.isVisible();
    }
    assert.deepEqual(
      Object.entries(shown)
        .filter(([, visible]) => !visible)
        .map(([sender]) => sender)
        .sort(),
      ['default', 'gShort', 'gSystem'],
      `warned for ${JSON.stringify(shown)}`,
    );
    await page.selectOption('#node-input-sender_id', 'gText');
    assert.match(
      await warning.innerText(),
      /^Replies come back only to an SMS from the system number \(gSystem\) or a short code \(gShort\)/,
    );
    await page.selectOption('#node-input-sender_id', 'gShort');
    await page.click('#node-dialog-ok');
    await page.waitForSelector('#node-dialog-ok', { state: 'detached' });
    assert.equal(await page.evaluate(() => RED.nodes.node('esc1').sender_id), 'gShort');
    await edit(page, 'esc1');
    assert.equal(await warning.isVisible(), false, 'a short code takes replies');
    await cancel(page);
    assert.deepEqual(browser.errors, []);
  });
});

/**
 * The editor in Czech, as a Czech user's browser shows it (BulkGate's home market): the palette,
 * a send node's panel and its help in the node set's cs catalogs.
 */
import assert from 'node:assert/strict';
import type { Page } from 'playwright-core';
import { openBrowser, type Browser } from './support/browser';
import { startDemo, type DemoProcess } from './support/demo-process';

/* The page's globals (RED) are reached inside page.evaluate only. */
declare const RED: any;
declare const $: any;

describe('the editor in Czech', function () {
  this.timeout(120_000);
  let demo: DemoProcess;
  let browser: Browser;
  let page: Page;

  before(async () => {
    demo = await startDemo(['--no-flows']);
    browser = await openBrowser({ locale: 'cs-CZ' });
    page = browser.page;
    await page.goto(`${demo.editorUrl}/`);
    await page.waitForFunction(() => (window as any).RED?.nodes?.getType?.('bulkgate-transactional'), undefined, {
      timeout: 30_000,
    });
    await page.waitForSelector('#red-ui-workspace-chart');
  });
  after(async () => {
    await browser?.close();
    await demo?.stop();
  });

  it('the palette, the transactional panel and its help speak Czech', async () => {
    const palette = await page
      .locator('.red-ui-palette-node[data-palette-type="bulkgate-transactional"] .red-ui-palette-label')
      .innerText();
    assert.equal(palette.replace(/\s+/g, ' ').trim(), 'Transakční SMS');
    await page.evaluate(() => {
      const z = RED.workspaces.active();
      RED.view.importNodes([{ id: 'cs-t', type: 'bulkgate-transactional', z, x: 300, y: 100 }], { generateIds: false });
      RED.editor.edit(RED.nodes.node('cs-t'));
    });
    await page.waitForSelector('.red-ui-tray-body #node-input-name', { state: 'visible' });
    const labels = await page.$$eval('.red-ui-tray-body label span', (spans) =>
      spans.map((s) => s.textContent?.trim()),
    );
    for (const label of ['Příjemci', 'Text', 'Duplicity', 'Max. čekání', 'Proti zahlcení'])
      assert.ok(labels.includes(label), `${label} in ${labels.join(', ')}`);
    // The panel says why a recipient is not a number, in Czech.
    await page.evaluate(() => {
      $('#node-input-number').typedInput('type', 'str');
      $('#node-input-number').typedInput('value', '12ab');
      $('#node-input-number').trigger('change');
    });
    await page.waitForSelector('.bulkgate-number-invalid', { state: 'visible' });
    assert.equal(
      await page.locator('.bulkgate-number-invalid').innerText(),
      'Není telefonní číslo: 12ab (3 až 20 číslic; mezery, pomlčky, závorky a úvodní + nebo 00 nevadí)',
    );
    await page.evaluate(() => RED.sidebar.help.show('bulkgate-transactional'));
    const helpText = () =>
      page.evaluate(() => [...document.querySelectorAll('.red-ui-help')].map((e) => e.textContent ?? '').join('\n'));
    await page.waitForFunction(
      () =>
        [...document.querySelectorAll('.red-ui-help')].some((e) =>
          e.textContent?.includes('Pošle upozornění jednomu příjemci'),
        ),
      undefined,
      {
        timeout: 10_000,
      },
    );
    assert.match(await helpText(), /Max\. čekání/);
    assert.deepEqual(browser.errors, [], 'no console error');
  });
});

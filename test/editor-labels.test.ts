/**
 * Every panel in English, German and Czech at Node-RED's default tray width (500 px): each form label fits
 * on its one line beside its icon, and each option of a select shows whole when the select is
 * closed (a closed select clips its text without an overflow a script could read). Rows a panel
 * hides until a choice shows them (another API, action, channel or store) are measured too.
 * Screenshots of each panel go to PANEL_SCREENSHOTS (default test-output/screenshots/panels).
 */
import assert from 'node:assert/strict';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import type { Page } from 'playwright-core';
import { openBrowser, SCREENSHOTS, type Browser } from './support/browser';
import { cancel, edit } from './support/panel';
import { startDemo, type DemoProcess } from './support/demo-process';

/* The page's globals (RED) are reached inside page.evaluate only. */
declare const RED: any;

const OUT = process.env.PANEL_SCREENSHOTS ?? join(SCREENSHOTS, 'panels');

/** Every channel type, so that each channel's fields are laid out and measured. */
const CHANNELS = [{ type: 'viber' }, { type: 'whatsapp' }, { type: 'rcs' }, { type: 'sms' }];

/** One node of each type; the file name of its screenshot is the type without the prefix. */
const NODES: Record<string, unknown>[] = [
  { id: 'acc', type: 'bulkgate-account', name: 'sim', store: 'redis' },
  {
    id: 'trans',
    type: 'bulkgate-transactional',
    account: 'acc',
    api: 'advanced',
    version: '2.0',
    channel: CHANNELS,
    text: '',
  },
  {
    id: 'promo',
    type: 'bulkgate-promotional',
    account: 'acc',
    api: 'advanced',
    version: '2.0',
    channel: CHANNELS,
    text: '',
  },
  { id: 'events', type: 'bulkgate-events', path: '/bulkgate/events', account: 'acc' },
  { id: 'balance', type: 'bulkgate-balance', account: 'acc', api: 'advanced', method: 'POST' },
  { id: 'otp', type: 'bulkgate-otp', account: 'acc', action: 'send', channel: [{ type: 'viber' }, { type: 'sms' }] },
  { id: 'check', type: 'bulkgate-number-check', account: 'acc' },
  { id: 'blacklist', type: 'bulkgate-blacklist', account: 'acc', action: 'add' },
  { id: 'contacts', type: 'bulkgate-contacts', account: 'acc', action: 'add' },
  // Two steps and a sender that takes no replies: the steps' rows, the cost line, the warning and the sender's value laid out.
  {
    id: 'escalation',
    type: 'bulkgate-escalation',
    account: 'acc',
    steps: [
      { numbers: '420777100001', wait: 300 },
      { numbers: '420777100002; 420777100003', wait: 600 },
    ],
    repeat: 2,
    sender_id: 'gText',
    sender_id_value: 'Home',
  },
];

/** What does not fit in the open panel: "label: text" and "option: text (select)" lines. */
function misfits(page: Page): Promise<string[]> {
  return page.evaluate(() => {
    const tray = [...document.querySelectorAll<HTMLElement>('.red-ui-tray-body')].pop();
    if (!tray) return ['no panel open'];
    const found: string[] = [];
    const text = (el: Element) => (el.textContent ?? '').replace(/\s+/g, ' ').trim();
    for (const label of tray.querySelectorAll<HTMLElement>('.form-row label')) {
      if (!text(label) || label.offsetParent === null) continue;
      const height = label.offsetHeight;
      const white = label.style.whiteSpace;
      label.style.whiteSpace = 'nowrap';
      // On one line it is wider than its box (a fixed-width label that wraps or is cut), or it was
      // taller than its one line (an auto-width label wrapped by its row).
      const needed = label.scrollWidth;
      const wide = needed > label.clientWidth + 1;
      const tall = height > label.offsetHeight + 2;
      label.style.whiteSpace = white;
      if (wide || tall)
        found.push(`label: ${text(label)} (${wide ? `${needed} > ${label.clientWidth} px` : 'wraps in its row'})`);
    }
    for (const select of tray.querySelectorAll<HTMLSelectElement>('select')) {
      if (select.offsetParent === null) continue;
      // Chromium sizes a select of width auto to its longest option, its padding and its arrow:
      // an option shows whole in the real select when a copy holding only it is no wider.
      for (const option of select.options) {
        const probe = select.cloneNode(false) as HTMLSelectElement;
        probe.removeAttribute('id');
        probe.style.width = 'auto';
        probe.style.minWidth = '0';
        probe.style.maxWidth = 'none';
        probe.style.position = 'absolute';
        probe.style.visibility = 'hidden';
        probe.add(new Option(option.text));
        select.parentElement?.append(probe);
        const needed = probe.offsetWidth;
        probe.remove();
        if (needed > select.offsetWidth + 1)
          found.push(`option: ${option.text} (${select.id || select.className}, ${needed} > ${select.offsetWidth} px)`);
      }
    }
    return found;
  });
}

/** Shows the rows the panel hides until another choice is made, so that their labels are laid out. */
async function showHiddenRows(page: Page): Promise<void> {
  await page.evaluate(() => {
    const tray = [...document.querySelectorAll<HTMLElement>('.red-ui-tray-body')].pop();
    for (const el of tray?.querySelectorAll<HTMLElement>('[style*="display"]') ?? []) {
      if (el.style.display === 'none' && el.querySelector('label, select')) el.style.display = '';
    }
  });
}

for (const [lang, locale] of [
  ['en', 'en-US'],
  ['de', 'de-DE'],
  ['cs', 'cs-CZ'],
] as const) {
  describe(`the panels' labels and options in ${lang}`, function () {
    this.timeout(180_000);
    let demo: DemoProcess;
    let browser: Browser;
    let page: Page;

    before(async () => {
      demo = await startDemo(['--no-flows']);
      browser = await openBrowser({ locale });
      page = browser.page;
      // Tall enough that a whole panel shows in its screenshot; the tray keeps its default width.
      await page.setViewportSize({ width: 1400, height: 2600 });
      await page.goto(`${demo.editorUrl}/`);
      await page.waitForFunction(
        () => (window as any).RED?.nodes?.getType?.('bulkgate-transactional') && (window as any).BulkGateEditor,
        undefined,
        {
          timeout: 30_000,
        },
      );
      await page.waitForSelector('#red-ui-workspace-chart');
      await page.evaluate((list) => {
        const z = RED.workspaces.active();
        RED.view.importNodes(
          list.map((n: Record<string, unknown>, i: number) =>
            n.type === 'bulkgate-account' ? n : { z, x: 300, y: 60 + 60 * i, ...n },
          ),
          { generateIds: false },
        );
      }, NODES);
      mkdirSync(OUT, { recursive: true });
    });
    after(async () => {
      await browser?.close();
      await demo?.stop();
    });

    it('every label fits on one line and every option of a select shows whole', async () => {
      const found: string[] = [];
      for (const node of NODES) {
        const name = String(node.type).replace(/^bulkgate-/, '');
        await edit(page, String(node.id));
        // The panel's form: as tall as its rows, not the whole tray.
        const tray = page.locator('.red-ui-tray').last().locator('form').first();
        await tray.screenshot({ path: join(OUT, `${lang}-${name}.png`) });
        await showHiddenRows(page);
        await tray.screenshot({ path: join(OUT, `${lang}-${name}-all.png`) });
        for (const misfit of await misfits(page)) found.push(`${name}: ${misfit}`);
        await cancel(page);
      }
      if (found.length) console.log(`      ${lang}:\n${found.map((f) => `        ${f}`).join('\n')}`);
      assert.deepEqual(found, [], `${lang}: what does not fit`);
      assert.deepEqual(browser.errors, [], 'no console error');
    });
  });
}

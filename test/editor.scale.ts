/** The editor panels in a real Chromium against a running Node-RED with the package and the simulator. */
import assert from 'node:assert/strict';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Page } from 'playwright-core';
import { DEMO_ACCOUNT } from '../simulator/accounts';
import { openBrowser, type Browser } from './support/browser';
import { cancel, edit } from './support/panel';
import { startDemo, type DemoProcess } from './support/demo-process';
import { pressByApi, Sidebar, until } from './support/examples';
import { freePort } from './support/node-red-process';

/* The page's globals (RED) are reached inside page.evaluate only. */
declare const RED: any;

async function openEditor(page: Page, url: string): Promise<void> {
  await page.goto(`${url}/`);
  await page.waitForFunction(
    () => (window as any).RED?.nodes?.getType?.('bulkgate-promotional') && (window as any).BulkGateEditor,
    undefined,
    {
      timeout: 30_000,
    },
  );
  await page.waitForSelector('#red-ui-workspace-chart');
}

async function importNodes(page: Page, nodes: Record<string, unknown>[]): Promise<void> {
  await page.evaluate((list) => {
    const z = RED.workspaces.active();
    RED.view.importNodes(
      list.map((n: Record<string, unknown>) => (n.type === 'bulkgate-account' ? n : { z, x: 300, y: 100, ...n })),
      { generateIds: false },
    );
  }, nodes);
}

async function done(page: Page): Promise<void> {
  await page.click('#node-dialog-ok');
  await page.waitForSelector('#node-dialog-ok', { state: 'detached' });
}

const visible = (page: Page, field: string) => page.locator(`[data-field="${field}"]`).isVisible();
const options = (page: Page, selector: string) =>
  page.$$eval(`${selector} option`, (os) => (os as HTMLOptionElement[]).map((o) => o.value));

describe('editor panels in Chromium', function () {
  this.timeout(120_000);
  let demo: DemoProcess;
  let browser: Browser;
  let page: Page;
  /** An account node on the demo's simulator, with the account panel's defaults. */
  const simulatorAccount = (id: string, name: string) => ({
    id,
    type: 'bulkgate-account',
    name,
    baseUrl: demo.simulatorUrl,
    timeout: 15000,
    retries: 3,
    rateLimit: 0,
    rateWindow: 60,
    queueSize: 100,
  });

  before(async () => {
    demo = await startDemo(['--no-flows']);
    browser = await openBrowser();
    page = browser.page;
    await openEditor(page, demo.editorUrl);
    await importNodes(page, [
      simulatorAccount('acc1', 'sim'),
      {
        id: 'promo1',
        type: 'bulkgate-promotional',
        account: 'acc1',
        api: 'advanced',
        version: '2.0',
        channel: [{ type: 'sms' }],
        number: 'number',
        numberType: 'msg',
        text: '',
        unicode: 'auto',
        y: 100,
      },
      {
        id: 'trans1',
        type: 'bulkgate-transactional',
        account: 'acc1',
        api: 'advanced',
        version: '2.0',
        channel: [{ type: 'sms' }],
        text: '',
        unicode: 'auto',
        y: 200,
      },
      { id: 'bal1', type: 'bulkgate-balance', account: 'acc1', api: 'advanced', method: 'POST', threshold: '', y: 300 },
      { id: 'ev1', type: 'bulkgate-events', path: '/bulkgate/events', y: 400 },
      { id: 'otp1', type: 'bulkgate-otp', account: 'acc1', action: 'send', y: 500 },
      { id: 'nc1', type: 'bulkgate-number-check', account: 'acc1', y: 560 },
      { id: 'bl1', type: 'bulkgate-blacklist', account: 'acc1', action: 'check', y: 620 },
      { id: 'ct1', type: 'bulkgate-contacts', account: 'acc1', action: 'get', y: 680 },
    ]);
  });

  after(async () => {
    await browser?.close();
    await demo?.stop();
  });

  it('each panel opens without a console error, in English and with its help', async () => {
    for (const id of ['promo1', 'trans1', 'bal1', 'ev1', 'acc1', 'otp1', 'nc1', 'bl1', 'ct1']) {
      await edit(page, id);
      await browser.screenshot(`panel-${id}`);
      const labels = await page.locator('.red-ui-tray-body label:visible').allInnerTexts();
      assert.ok(
        labels.some((l) => /Name/.test(l)),
        `${id} shows its labels`,
      );
      assert.equal(
        labels.some((l) => /\w+\.\w+\.\w+/.test(l)),
        false,
        `${id} shows no untranslated catalog key: ${labels.join('|')}`,
      );
      await cancel(page);
    }
    const help = await page.evaluate(
      () =>
        RED.nodes.getNodeHelp?.('bulkgate-promotional') ?? $("script[data-help-name='bulkgate-promotional']").html(),
    );
    assert.match(String(help), /Accepted \/ scheduled/);
    for (const [type, words] of [
      ['bulkgate-otp', /door keypad/],
      ['bulkgate-number-check', /check-phone-numbers/],
      ['bulkgate-blacklist', /replied STOP/],
      ['bulkgate-contacts', /opt-in consent/],
    ] as const) {
      const text = await page.evaluate(
        (t) => RED.nodes.getNodeHelp?.(t) ?? $(`script[data-help-name='${t}']`).html(),
        type,
      );
      assert.match(String(text), words, `${type} has its help`);
    }
    assert.deepEqual(browser.errors, []);
  });

  it('the events panel generates a secret and shows the full webhook URL with it', async () => {
    await edit(page, 'ev1');
    const secret = await page.inputValue('#node-input-secret');
    assert.match(secret, /^[0-9a-f]{48}$/);
    assert.equal(
      await page.locator('#bulkgate-events-url').innerText(),
      `${demo.editorUrl}/bulkgate/events?token=${secret}`,
    );
    await page.click('#bulkgate-events-generate');
    const next = await page.inputValue('#node-input-secret');
    assert.notEqual(next, secret);
    assert.match(await page.locator('#bulkgate-events-url').innerText(), new RegExp(`token=${next}$`));
    assert.equal(await page.getAttribute('#node-input-secret', 'type'), 'password', 'the secret is masked');
    await page.click('#bulkgate-events-reveal');
    assert.equal(await page.getAttribute('#node-input-secret', 'type'), 'text', 'reveal shows it');
    // A deployed secret comes back from Node-RED as its placeholder: the URL cannot be shown, nor copied.
    await page.fill('#node-input-secret', '__PWRD__');
    assert.match(await page.locator('#bulkgate-events-url').innerText(), /the stored secret is not shown again/);
    assert.equal(await page.isDisabled('#bulkgate-events-copy'), true);
    await cancel(page);
  });

  it('the events panel: an account to track (none by default), the report timeout, three outputs; saved as chosen', async () => {
    await edit(page, 'ev1');
    assert.ok(['', '_ADD_'].includes(await page.inputValue('#node-input-account')), 'no account by default');
    assert.ok((await options(page, '#node-input-account')).includes('acc1'), 'the deployed account is offered');
    assert.equal(await page.isVisible('#node-input-reportTimeout'), false, 'no timeout without an account to track');
    await page.selectOption('#node-input-account', 'acc1');
    assert.equal(await page.isVisible('#node-input-reportTimeout'), true, 'the timeout shows with an account');
    assert.equal(await page.getAttribute('#node-input-reportTimeout', 'placeholder'), '0');
    await page.fill('#node-input-reportTimeout', '120');
    await browser.screenshot('panel-events-tracking');
    await done(page);
    const saved = await page.evaluate(() => {
      const n = RED.nodes.node('ev1');
      return {
        account: n.account,
        reportTimeout: n.reportTimeout,
        outputs: n.outputs,
        labels: n._def.outputLabels?.call(n, 2),
      };
    });
    assert.deepEqual(
      { account: saved.account, reportTimeout: saved.reportTimeout, outputs: saved.outputs },
      { account: 'acc1', reportTimeout: '120', outputs: 3 },
    );
    assert.equal(saved.labels, 'no report in time');
  });

  it('API and version pickers show only the fields that API and version take', async () => {
    await edit(page, 'promo1');
    assert.deepEqual(await options(page, '#node-input-version'), ['2.0', '1.0']);
    assert.deepEqual(
      [
        await visible(page, 'channel'),
        await visible(page, 'flash'),
        await visible(page, 'sender_id'),
        await visible(page, 'groups'),
      ],
      [true, false, false, true],
    );
    await page.selectOption('#node-input-version', '1.0');
    assert.deepEqual(
      [
        await visible(page, 'channel'),
        await visible(page, 'flash'),
        await visible(page, 'sender_id'),
        await visible(page, 'unicode'),
      ],
      [false, true, true, true],
    );
    await page.selectOption('#node-input-api', 'simple');
    assert.deepEqual(await options(page, '#node-input-version'), ['1.0'], 'simple promotional is 1.0 only');
    assert.deepEqual(
      [
        await visible(page, 'groups'),
        await visible(page, 'admins'),
        await visible(page, 'duplicates_check'),
        await page.locator('.bulkgate-encoding').isVisible(),
      ],
      [false, false, false, true],
    );
    await cancel(page);

    await edit(page, 'trans1');
    assert.deepEqual(
      [await visible(page, 'admin'), await visible(page, 'variables'), await visible(page, 'channel')],
      [false, true, true],
    );
    await page.selectOption('#node-input-version', '1.0');
    assert.deepEqual(
      [await visible(page, 'admin'), await visible(page, 'channel'), await visible(page, 'flash')],
      [true, false, true],
    );
    await page.selectOption('#node-input-api', 'simple');
    assert.deepEqual(
      await options(page, '#node-input-version'),
      ['2.0', '1.0'],
      'simple transactional offers 1.0 and 2.0',
    );
    assert.deepEqual(
      [await visible(page, 'admin'), await visible(page, 'variables'), await visible(page, 'schedule')],
      [false, false, false],
    );
    await page.selectOption('#node-input-version', '2.0');
    assert.deepEqual(
      [await visible(page, 'channel'), await page.locator('.bulkgate-encoding').isVisible()],
      [true, false],
    );
    await cancel(page);
  });

  it("the sender picker offers the chosen version's types and labels the value field for the type", async () => {
    await edit(page, 'trans1');
    await page.selectOption('#node-input-version', '1.0');
    assert.deepEqual(await options(page, '#node-input-sender_id'), [
      '',
      'gSystem',
      'gShort',
      'gText',
      'gOwn',
      'profile_id',
    ]);
    assert.equal(await visible(page, 'sender_id_value'), false);
    await page.selectOption('#node-input-sender_id', 'gOwn');
    assert.equal(await visible(page, 'sender_id_value'), true);
    assert.equal(await page.locator('#bulkgate-sender-value-label').innerText(), 'Verified number');
    await page.selectOption('#node-input-sender_id', 'gText');
    assert.equal(await page.locator('#bulkgate-sender-value-label').innerText(), 'Text sender');
    await page.selectOption('#node-input-version', '2.0');
    assert.deepEqual(await options(page, '.bulkgate-sms-sender'), [
      '',
      'gSystem',
      'gShort',
      'gText',
      'gOwn',
      'gMobile',
      'gPush',
      'gProfile',
      'profile_id',
    ]);
    await page.selectOption('.bulkgate-sms-sender', 'gPush');
    assert.equal(await page.locator('.bulkgate-sms-sender-value').isVisible(), true);
    assert.match(
      await page.locator('.bulkgate-channel-field:has(.bulkgate-sms-sender-value) label').innerText(),
      /Key/,
    );
    await cancel(page);
  });

  it('the palette finds every node by "sms", with labels that say what they are; the account is a "BulkGate account"', async () => {
    const search = page.locator('#red-ui-palette-search input');
    await search.fill('sms');
    await page.waitForTimeout(500);
    const shown = await page.$$eval('.red-ui-palette-node[data-palette-type^="bulkgate-"]', (els) =>
      els
        .filter((e) => (e as HTMLElement).offsetParent !== null)
        .map((e) => [e.getAttribute('data-palette-type'), (e.textContent ?? '').replace(/\s+/g, ' ').trim()]),
    );
    assert.deepEqual(shown.sort(), [
      ['bulkgate-balance', 'SMS credit'],
      ['bulkgate-blacklist', 'SMS blacklist'],
      ['bulkgate-contacts', 'SMS contacts'],
      ['bulkgate-escalation', 'SMS escalation'],
      ['bulkgate-events', 'SMS events'],
      ['bulkgate-number-check', 'SMS number check'],
      ['bulkgate-otp', 'SMS code (OTP)'],
      ['bulkgate-promotional', 'promotional SMS'],
      ['bulkgate-transactional', 'transactional SMS'],
    ]);
    await browser.screenshot('palette-search-sms');
    await search.fill('');
    await page.waitForTimeout(300);

    await edit(page, 'acc1');
    assert.equal(await page.locator('.red-ui-tray-titlebar').last().innerText(), 'Edit BulkGate account node');
    // No token is stored for this account: no "leave it to keep the stored one".
    assert.equal(await page.locator('#bulkgate-token-stored').isVisible(), false);
    await cancel(page);
  });

  it('the account panel: the store URL and password rows only for Redis; a URL with a password, or not redis://, is marked', async () => {
    await edit(page, 'acc1');
    const rows = () =>
      page
        .locator('.bulkgate-store-redis')
        .evaluateAll((els) => els.map((el) => (el as HTMLElement).offsetParent !== null));
    assert.equal(
      await page.locator('#node-config-input-store').inputValue(),
      'file',
      'an account without the setting: this Node-RED',
    );
    assert.deepEqual(await rows(), [false, false]);
    await page.locator('#node-config-input-store').selectOption('redis');
    assert.deepEqual(await rows(), [true, true]);
    assert.equal(await page.locator('#node-config-input-storePassword').getAttribute('type'), 'password');
    const urlMarked = async (value: string) => {
      await page.locator('#node-config-input-storeUrl').fill(value);
      await page.locator('#node-config-input-storeUrl').dispatchEvent('change');
      await page.waitForTimeout(200);
      return page.locator('#node-config-input-storeUrl').evaluate((el) => el.classList.contains('input-error'));
    };
    assert.equal(await urlMarked('redis://:secret@127.0.0.1:6379'), true, 'a password in the URL');
    assert.equal(await urlMarked('http://127.0.0.1:6379'), true, 'not redis:// or rediss://');
    assert.equal(await urlMarked('rediss://redis.example.net:6380'), false, 'TLS, no password');
    assert.equal(await urlMarked('redis://127.0.0.1:6379'), false);
    await page.locator('#node-config-input-store').selectOption('file');
    assert.deepEqual(await rows(), [false, false]);
    await cancel(page);
    assert.deepEqual(browser.errors, []);
  });

  it('a fixed recipient that is not a phone number is marked in the panel, with the rule as its tooltip', async () => {
    const numberMarked = async (value: string) => {
      await page.evaluate((v) => {
        $('#node-input-number').typedInput('type', 'str');
        $('#node-input-number').typedInput('value', v);
        $('#node-input-number').trigger('change');
      }, value);
      await page.waitForTimeout(200);
      return page
        .locator('#node-input-number + .red-ui-typedInput-container')
        .evaluate((el) => el.classList.contains('input-error'));
    };
    await edit(page, 'trans1');
    assert.equal(await numberMarked('abc'), true, 'abc');
    assert.equal(await numberMarked('+420 777 123 456'), false, 'a number as people write it');
    assert.equal(await numberMarked('420777123456; 420777123457'), true, 'two numbers in a transactional node');
    assert.equal(
      await page.evaluate(() =>
        (window as any).BulkGateEditor.validNumber({ numberType: 'str' }, 'transactional', '12ab'),
      ),
      'Not a phone number: 12ab (3 to 20 digits; spaces, dashes, brackets and a leading + or 00 are fine)',
    );
    await cancel(page);
    await edit(page, 'promo1');
    assert.equal(await numberMarked('420777123456; 12ab'), true, 'one bad number in a list');
    // The panel says why, under the field, not only in a tooltip.
    const why = page.locator('.bulkgate-number-invalid');
    assert.equal(
      await why.innerText(),
      'Not a phone number: 12ab (3 to 20 digits; spaces, dashes, brackets and a leading + or 00 are fine)',
    );
    assert.equal(await numberMarked('420777123456; 420777123457'), false, 'a list of good numbers');
    assert.equal(await why.isVisible(), false, 'nothing to say once the numbers are good');
    await cancel(page);
  });

  it('the cascade editor: "+ channel" goes above SMS, wrong fields are marked, a channel dragged below SMS is flagged; the order is kept', async () => {
    await edit(page, 'promo1');
    await page.fill('#node-input-text', 'Sale');
    const items = page.locator('#bulkgate-channels > li');
    const types = () =>
      items.locator('.bulkgate-channel-type').evaluateAll((els) => (els as HTMLSelectElement[]).map((e) => e.value));
    const marked = (index: number) =>
      items
        .nth(index)
        .locator('.input-error')
        .evaluateAll((els) => els.map((e) => Array.from(e.classList).find((c) => c.startsWith('bulkgate-'))));
    const fallback = () => page.locator('#bulkgate-fallback').innerText();
    /** Drags item `from` by its handle to just above (`up`) or below item `to`. */
    const drag = async (from: number, to: number) => {
      const handle = await items.nth(from).locator('.red-ui-editableList-item-handle').boundingBox();
      const target = await items.nth(to).boundingBox();
      assert.ok(handle && target);
      const x = handle.x + handle.width / 2;
      const y0 = handle.y + handle.height / 2;
      const y1 = to < from ? target.y - 10 : target.y + target.height + 10;
      await page.mouse.move(x, y0);
      await page.mouse.down();
      for (let step = 1; step <= 10; step++) await page.mouse.move(x, y0 + ((y1 - y0) * step) / 10);
      await page.mouse.up();
      await page.waitForTimeout(300);
    };

    assert.deepEqual(await types(), ['sms']);
    await page.click('.node-input-channel-row .red-ui-editableList-addButton');
    assert.deepEqual(await types(), ['viber', 'sms'], 'the new channel is a channel SMS does not cover, above SMS');
    assert.match(await fallback(), /ends with SMS/i);
    // Required in a promotional Viber channel: the sender and the button; each is marked until filled.
    assert.deepEqual(await marked(0), ['bulkgate-viber-sender', 'bulkgate-viber-caption', 'bulkgate-viber-url']);
    assert.deepEqual(await marked(1), []);
    await items.nth(0).locator('.bulkgate-viber-sender').fill('Shop');
    assert.deepEqual(await marked(0), ['bulkgate-viber-caption', 'bulkgate-viber-url']);
    await items.nth(0).locator('.bulkgate-viber-caption').fill('Open');
    await items.nth(0).locator('.bulkgate-viber-url').fill('https://shop.example');
    assert.deepEqual(await marked(0), []);
    await browser.screenshot('cascade');

    // Below SMS a channel is never tried: flagged on its type, and said under the list.
    await drag(0, 1);
    assert.deepEqual(await types(), ['sms', 'viber']);
    assert.deepEqual(await marked(1), ['bulkgate-channel-type']);
    assert.match(await fallback(), /never tried/);
    assert.equal(
      await page.evaluate(() =>
        (window as any).BulkGateEditor.validChannel(RED.nodes.node('promo1'), 'promotional', [
          { type: 'sms' },
          { type: 'viber', sender: 'Shop', button: { caption: 'Open', url: 'https://shop.example' } },
        ]),
      ),
      false,
      'the node is invalid so (red triangle)',
    );
    await browser.screenshot('cascade-after-sms');
    await drag(1, 0);
    assert.deepEqual(await types(), ['viber', 'sms']);
    assert.deepEqual([await marked(0), await marked(1)], [[], []]);
    assert.match(await fallback(), /ends with SMS/i);
    await done(page);
    let saved = await page.evaluate(() => RED.nodes.node('promo1').channel);
    assert.deepEqual(saved, [
      { type: 'viber', sender: 'Shop', expiration: 120, button: { caption: 'Open', url: 'https://shop.example' } },
      { type: 'sms', unicode: 'auto' },
    ]);

    await edit(page, 'promo1');
    await page.locator('#bulkgate-channels > li').nth(1).locator('.red-ui-editableList-item-remove').click();
    await page.waitForTimeout(400);
    await done(page);
    saved = await page.evaluate(() => RED.nodes.node('promo1').channel);
    assert.deepEqual(
      saved.map((c: { type: string }) => c.type),
      ['viber'],
    );
  });

  it('a viber channel without a button is refused in a promotional panel', async () => {
    const valid = await page.evaluate(() => {
      const node = RED.nodes.node('promo1');
      return [
        (window as any).BulkGateEditor.validChannel(node, 'promotional', [{ type: 'viber', sender: 'Shop' }]),
        (window as any).BulkGateEditor.validChannel(node, 'transactional', [{ type: 'viber', sender: 'Shop' }]),
        (window as any).BulkGateEditor.validChannel(node, 'promotional', [{ type: 'sms', sender_id: 'gOwn' }]),
      ];
    });
    assert.deepEqual(valid, [false, true, false]);
  });

  it('the counter counts a GSM-7 text, a text with € and a Czech text as the runtime does', async () => {
    await edit(page, 'trans1');
    const counter = page.locator('#bulkgate-counter');
    await page.fill('#node-input-text', 'Hello world');
    assert.equal(await counter.innerText(), '11 / 612 characters · GSM-7 · 1 SMS part(s)');
    await page.fill('#node-input-text', 'Price 5€ [net]');
    assert.equal(await counter.innerText(), '17 / 612 characters · GSM-7 · 1 SMS part(s)');
    await page.fill('#node-input-text', 'Příliš žluťoučký kůň úpěl ďábelské ódy');
    assert.equal(await counter.innerText(), '38 / 268 characters · Unicode · 1 SMS part(s)');
    await page.fill('#node-input-text', 'a'.repeat(600));
    assert.match(await counter.innerText(), /^600 \/ 612 characters · GSM-7 · 4 SMS part\(s\) — close to the limit$/);
    await page.fill('#node-input-text', 'ž'.repeat(300));
    assert.match(await counter.innerText(), /over the 268-character limit/);
    await browser.screenshot('counter-over-limit');
    await cancel(page);
  });

  it('"test connection" reports the simulator\'s credit, and an auth failure', async () => {
    await edit(page, 'acc1');
    await page.fill('#node-config-input-application_id', DEMO_ACCOUNT.id);
    await page.fill('#node-config-input-application_token', DEMO_ACCOUNT.token);
    await page.click('#bulkgate-test-connection');
    await page.waitForFunction(() =>
      /Connected|Failed/.test(document.getElementById('bulkgate-test-result')?.textContent ?? ''),
    );
    assert.equal(await page.locator('#bulkgate-test-result').innerText(), `Connected: ${DEMO_ACCOUNT.credit} credits`);
    await page.fill('#node-config-input-application_token', 'wrong-token');
    await page.click('#bulkgate-test-connection');
    await page.waitForFunction(() => /Failed/.test(document.getElementById('bulkgate-test-result')?.textContent ?? ''));
    assert.match(
      await page.locator('#bulkgate-test-result').innerText(),
      /^Failed: The gateway does not accept this application id and token: check them in the BulkGate account node \(they come from the API application in the BulkGate portal\) \(authentication_failed, HTTP 401\)$/,
    );
    await browser.screenshot('account-test-connection');
    assert.equal(
      await page.locator('#bulkgate-test-store').isVisible(),
      false,
      'the file store: nothing about a store',
    );
    // The Redis store: the test asks it too, and says why it cannot be reached.
    await page.fill('#node-config-input-application_token', DEMO_ACCOUNT.token);
    await page.locator('#node-config-input-store').selectOption('redis');
    await page.fill('#node-config-input-storeUrl', `redis://127.0.0.1:${await freePort()}`);
    await page.click('#bulkgate-test-connection');
    await page.waitForFunction(() => /Store:/.test(document.getElementById('bulkgate-test-store')?.textContent ?? ''));
    assert.equal(await page.locator('#bulkgate-test-result').innerText(), `Connected: ${DEMO_ACCOUNT.credit} credits`);
    // Worded in the editor's language by the failure's code (the runtime's sentence also names the address).
    assert.equal(await page.locator('#bulkgate-test-store').innerText(), 'Store: nothing listening (ECONNREFUSED)');
    await cancel(page);
  });

  it('a node configured only through its panel sends the body the simulator expects', async () => {
    await page.evaluate(() => RED.view.importNodes([], {}));
    // A new node from the palette.
    const chart = await page.locator('#red-ui-workspace-chart').boundingBox();
    assert.ok(chart);
    await page.dragAndDrop(
      '.red-ui-palette-node[data-palette-type="bulkgate-transactional"]',
      '#red-ui-workspace-chart',
      {
        targetPosition: { x: 400, y: 450 },
      },
    );
    const id = await page.evaluate(() => {
      const nodes: { id: string; type: string }[] = [];
      RED.nodes.eachNode((n: { id: string; type: string }) => {
        if (n.type === 'bulkgate-transactional' && n.id !== 'trans1') nodes.push(n);
      });
      return nodes[0]?.id;
    });
    assert.ok(id, 'the node was dropped');
    await edit(page, id);
    // A new account, through its own panel.
    // The "add new account" button (Node-RED 4 names it so; 3.x had one lookup button).
    await page.click('#node-input-btn-account-add, #node-input-lookup-account');
    await page.waitForSelector('#node-config-input-baseUrl', { state: 'visible' });
    await page.fill('#node-config-input-name', 'panel account');
    await page.fill('#node-config-input-baseUrl', demo.simulatorUrl);
    await page.fill('#node-config-input-application_id', DEMO_ACCOUNT.id);
    await page.fill('#node-config-input-application_token', DEMO_ACCOUNT.token);
    await page.click('#node-config-dialog-ok');
    await page.waitForSelector('#node-config-input-baseUrl', { state: 'detached' });
    await page.selectOption('#node-input-version', '1.0');
    await page.fill('#node-input-text', 'Hello from the panel');
    await page.selectOption('#node-input-sender_id', 'gText');
    await page.locator('[data-field="sender_id_value"] input:visible').fill('Panel');
    await page.selectOption('#node-input-duplicates_check', 'on');
    await done(page);
    // An inject node wired to it (not ours: imported), then deploy.
    await importNodes(page, [
      {
        id: 'inj1',
        type: 'inject',
        props: [{ p: 'number', v: '420 777 123 456', vt: 'str' }],
        repeat: '',
        once: false,
        topic: '',
        x: 150,
        y: 600,
        wires: [[]],
      },
    ]);
    await page.mouse.click(700, 700);
    await page.evaluate((target) => {
      RED.nodes.addLink({ source: RED.nodes.node('inj1'), sourcePort: 0, target: RED.nodes.node(target) });
      RED.nodes.dirty(true);
      RED.view.redraw(true);
    }, id);
    await page.click('#red-ui-header-button-deploy');
    // The earlier test nodes use an account without credentials: Node-RED asks to confirm.
    const confirm = page.locator('#red-ui-deploy-dialog-confirm-deploy-deploy');
    await confirm.waitFor({ state: 'visible', timeout: 2000 }).then(
      () => confirm.click(),
      () => undefined,
    );
    await page.waitForFunction(() => RED.nodes.dirty() === false, undefined, { timeout: 10_000 });
    await pressByApi(demo.editorUrl)('inj1');
    let last: { path: string; body: Record<string, unknown> } | undefined;
    await until(
      'the send at the simulator',
      async () => {
        const requests = (await (await fetch(`${demo.simulatorUrl}/simulator/requests`)).json()) as {
          path: string;
          body: Record<string, unknown>;
        }[];
        last = requests.find((r) => r.path.includes('transactional'));
        return last !== undefined;
      },
      5000,
    ).catch(() => undefined);
    await browser.screenshot('after-deploy');
    assert.ok(last, `the simulator received no request; Node-RED said:\n${demo.output()}`);
    assert.equal(last.path, '/api/1.0/advanced/transactional');
    assert.deepEqual(last.body, {
      application_id: DEMO_ACCOUNT.id,
      application_token: DEMO_ACCOUNT.token,
      number: '420777123456',
      text: 'Hello from the panel',
      sender_id: 'gText',
      sender_id_value: 'Panel',
      duplicates_check: 'on',
    });
    const flows = await (await fetch(`${demo.editorUrl}/flows`)).text();
    assert.equal(flows.includes(DEMO_ACCOUNT.token), false, 'the token is not in the exported flow');
    await browser.screenshot('after-deploy');
    // The deployed account has a stored token: now the tip says how to keep it.
    const accountId = await page.evaluate((nodeId) => RED.nodes.node(nodeId).account, id);
    await edit(page, accountId);
    assert.equal(await page.locator('#bulkgate-token-stored').isVisible(), true);
    await cancel(page);
    assert.deepEqual(browser.errors, []);
  });

  it('nodes deployed through the admin API without their optional properties: valid, and nothing red in their panels', async () => {
    // As a hand-written or older flow has them: no timeout, retries, base URL, cascade or path.
    const flow = [
      { id: 'bare-tab', type: 'tab', label: 'bare' },
      {
        id: 'bare-acc',
        type: 'bulkgate-account',
        credentials: { application_id: DEMO_ACCOUNT.id, application_token: DEMO_ACCOUNT.token },
      },
      { id: 'bare-promo', type: 'bulkgate-promotional', z: 'bare-tab', account: 'bare-acc', x: 200, y: 100, wires: [] },
      {
        id: 'bare-trans',
        type: 'bulkgate-transactional',
        z: 'bare-tab',
        account: 'bare-acc',
        x: 200,
        y: 200,
        wires: [],
      },
      { id: 'bare-bal', type: 'bulkgate-balance', z: 'bare-tab', account: 'bare-acc', x: 200, y: 300, wires: [] },
      {
        id: 'bare-ev',
        type: 'bulkgate-events',
        z: 'bare-tab',
        x: 200,
        y: 400,
        wires: [],
        credentials: { secret: 's3cret' },
      },
      { id: 'bare-otp', type: 'bulkgate-otp', z: 'bare-tab', account: 'bare-acc', x: 400, y: 100, wires: [] },
      { id: 'bare-nc', type: 'bulkgate-number-check', z: 'bare-tab', account: 'bare-acc', x: 400, y: 200, wires: [] },
      { id: 'bare-bl', type: 'bulkgate-blacklist', z: 'bare-tab', account: 'bare-acc', x: 400, y: 300, wires: [] },
      { id: 'bare-ct', type: 'bulkgate-contacts', z: 'bare-tab', account: 'bare-acc', x: 400, y: 400, wires: [] },
    ];
    const res = await fetch(`${demo.editorUrl}/flows`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'node-red-deployment-type': 'full' },
      body: JSON.stringify(flow),
    });
    assert.ok(res.ok, `deploy: HTTP ${res.status}`);
    await openEditor(page, demo.editorUrl);
    await page.waitForFunction(() => RED.nodes.node('bare-promo'), undefined, { timeout: 10_000 });
    const invalid = await page.evaluate(() =>
      [
        'bare-acc',
        'bare-promo',
        'bare-trans',
        'bare-bal',
        'bare-ev',
        'bare-otp',
        'bare-nc',
        'bare-bl',
        'bare-ct',
      ].filter((id) => RED.nodes.node(id).valid === false),
    );
    assert.deepEqual(invalid, [], 'no red triangle');
    for (const id of [
      'bare-acc',
      'bare-promo',
      'bare-trans',
      'bare-bal',
      'bare-ev',
      'bare-otp',
      'bare-nc',
      'bare-bl',
      'bare-ct',
    ]) {
      await edit(page, id);
      const red = await page
        .locator('.red-ui-tray-body .input-error:visible')
        .evaluateAll((els) => els.map((e) => e.id || `${e.className} after #${e.previousElementSibling?.id}`));
      assert.deepEqual(red, [], `${id}: nothing red in the panel`);
      if (id === 'bare-acc') {
        assert.equal(
          await page.getAttribute('#node-config-input-timeout', 'placeholder'),
          '15000',
          'the default shows',
        );
        assert.equal(await page.getAttribute('#node-config-input-retries', 'placeholder'), '3');
      }
      await browser.screenshot(`bare-${id}`);
      await cancel(page);
    }
    assert.deepEqual(browser.errors, []);
  });

  it('the account panel shows the messages waiting in its outbox, and empties it: each goes to Catch as discarded', async () => {
    const flow = [
      { id: 'ob-tab', type: 'tab', label: 'outbox' },
      // outboxDelay (not in the panel): the first round waits a minute, so the message stays to be seen.
      {
        id: 'ob-acc',
        type: 'bulkgate-account',
        name: 'outbox',
        baseUrl: demo.simulatorUrl,
        retries: 0,
        outboxDelay: 60000,
        credentials: { application_id: DEMO_ACCOUNT.id, application_token: DEMO_ACCOUNT.token },
      },
      {
        id: 'ob-inj',
        type: 'inject',
        z: 'ob-tab',
        props: [{ p: 'payload' }, { p: 'number', v: '420777123456', vt: 'str' }],
        payload: 'Water on the floor',
        payloadType: 'str',
        x: 100,
        y: 100,
        wires: [['ob-t']],
      },
      {
        id: 'ob-t',
        type: 'bulkgate-transactional',
        z: 'ob-tab',
        account: 'ob-acc',
        text: '',
        x: 300,
        y: 100,
        wires: [[], []],
      },
      { id: 'ob-catch', type: 'catch', z: 'ob-tab', scope: ['ob-t'], x: 100, y: 200, wires: [['ob-debug']] },
      {
        id: 'ob-debug',
        type: 'debug',
        z: 'ob-tab',
        name: 'outbox caught',
        active: true,
        tosidebar: true,
        console: false,
        complete: 'error.code',
        x: 300,
        y: 200,
        wires: [],
      },
    ];
    const deployed = await fetch(`${demo.editorUrl}/flows`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'node-red-deployment-type': 'full' },
      body: JSON.stringify(flow),
    });
    assert.ok(deployed.ok);
    const offline = (seconds: number) =>
      fetch(`${demo.simulatorUrl}/simulator/faults`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ offline: { seconds, mode: '503' } }),
      });
    const sidebar = new Sidebar();
    await sidebar.open(demo.editorUrl);
    await offline(120);
    try {
      // Node-RED answers a deploy before its nodes have started: the press waits for the inject.
      await pressByApi(demo.editorUrl)('ob-inj');
      const waiting = async () =>
        ((await (await fetch(`${demo.editorUrl}/bulkgate/outbox/ob-acc`)).json()) as { waiting: number }).waiting;
      await until('the msg in the outbox', async () => (await waiting()) === 1).catch(() => undefined);
      assert.equal(await waiting(), 1);
      await openEditor(page, demo.editorUrl);
      await page.waitForFunction(() => RED.nodes.node('ob-acc'), undefined, { timeout: 10_000 });
      await edit(page, 'ob-acc');
      await page.waitForSelector('#bulkgate-outbox-row', { state: 'visible' });
      assert.equal(await page.locator('#bulkgate-outbox-waiting').innerText(), '1 message waits in the outbox');
      assert.equal(await page.getAttribute('#node-config-input-outboxMinutes', 'placeholder'), '60');
      await browser.screenshot('account-outbox');
      page.once('dialog', (dialog) => void dialog.accept());
      await page.click('#bulkgate-outbox-empty');
      await page.waitForSelector('#bulkgate-outbox-row', { state: 'hidden' });
      assert.equal(await waiting(), 0);
      const caught = () => sidebar.debug.filter((d) => d.name === 'outbox caught').map((d) => d.msg);
      await until('Catch to get the discarded message', () => caught().length > 0);
      assert.deepEqual(caught(), ['discarded']);
      await cancel(page);
      const delivered = (await (await fetch(`${demo.simulatorUrl}/simulator/outbox`)).json()) as {
        messages: { text: string }[];
      };
      assert.equal(delivered.messages.filter((m) => m.text === 'Water on the floor').length, 0);
    } finally {
      sidebar.close();
      await offline(0);
    }
    assert.deepEqual(browser.errors, []);
  });

  it('the account panel counts the messages from the outbox that ended unconfirmed (a simple 1.0 attempt without an answer before a stop)', async () => {
    // As a kill mid-send leaves the file: the entry, and its attempt with no answer after it.
    mkdirSync(join(demo.userDir, 'bulkgate-outbox'), { recursive: true });
    const entry = {
      id: 'cut-1',
      node: 'uc-t',
      operation: { kind: 'transactional', api: 'simple', version: '1.0', method: 'POST', encoding: 'form' },
      body: { number: '420777123456', text: 'Water on the floor' },
      rejected: [],
      messages: 1,
      msg: { payload: 'Water on the floor' },
      since: Date.now() - 60_000,
      order: 1,
      attempts: 1,
      reason: 'HTTP 503',
    };
    const lines = [{ bulkgateOutbox: 2 }, entry, { attempt: 'cut-1' }].map((l) => JSON.stringify(l));
    writeFileSync(join(demo.userDir, 'bulkgate-outbox', 'uc-acc.jsonl'), `${lines.join('\n')}\n`, { mode: 0o600 });
    const flow = [
      { id: 'uc-tab', type: 'tab', label: 'unconfirmed' },
      {
        id: 'uc-acc',
        type: 'bulkgate-account',
        name: 'unconfirmed',
        baseUrl: demo.simulatorUrl,
        retries: 0,
        outboxDelay: 200,
        credentials: { application_id: DEMO_ACCOUNT.id, application_token: DEMO_ACCOUNT.token },
      },
      {
        id: 'uc-t',
        type: 'bulkgate-transactional',
        z: 'uc-tab',
        account: 'uc-acc',
        api: 'simple',
        version: '1.0',
        text: '',
        x: 300,
        y: 100,
        wires: [[], []],
      },
      { id: 'uc-catch', type: 'catch', z: 'uc-tab', scope: ['uc-t'], x: 100, y: 200, wires: [] },
    ];
    const deployed = await fetch(`${demo.editorUrl}/flows`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'node-red-deployment-type': 'full' },
      body: JSON.stringify(flow),
    });
    assert.ok(deployed.ok);
    const unconfirmed = async () =>
      ((await (await fetch(`${demo.editorUrl}/bulkgate/outbox/uc-acc`)).json()) as { unconfirmed: number }).unconfirmed;
    await until('the msg ended unconfirmed', async () => (await unconfirmed()) === 1).catch(() => undefined);
    assert.equal(await unconfirmed(), 1);
    await openEditor(page, demo.editorUrl);
    await page.waitForFunction(() => RED.nodes.node('uc-acc'), undefined, { timeout: 10_000 });
    await edit(page, 'uc-acc');
    await page.waitForSelector('#bulkgate-outbox-unconfirmed', { state: 'visible' });
    assert.match(
      await page.locator('#bulkgate-outbox-unconfirmed').innerText(),
      /^1 message from the outbox ended in Catch unconfirmed since Node-RED started/,
    );
    assert.equal(await page.isVisible('#bulkgate-outbox-row'), false, 'none waits');
    await browser.screenshot('account-unconfirmed');
    await cancel(page);
    assert.deepEqual(browser.errors, []);
  });

  it('the one-time password, blacklist and contacts panels: each action shows its fields; the OTP cascade (no text) is saved as edited and sent as the simulator expects', async () => {
    const shown = async () =>
      (
        await page
          .locator('.red-ui-tray-body .form-row:visible label[for^="node-input-"]')
          .evaluateAll((els) => els.map((e) => e.getAttribute('for')))
      ).map((f) => String(f).replace('node-input-', ''));
    // Earlier tests deployed their own flow and reloaded the editor: these nodes use its account.
    await importNodes(page, [
      simulatorAccount('panel-acc', 'panel'),
      { id: 'otp2', type: 'bulkgate-otp', account: 'panel-acc', action: 'send', y: 500 },
      { id: 'bl2', type: 'bulkgate-blacklist', account: 'panel-acc', action: 'check', y: 620 },
      { id: 'ct2', type: 'bulkgate-contacts', account: 'panel-acc', action: 'get', y: 680 },
    ]);
    await edit(page, 'otp2');
    assert.deepEqual(
      (await shown()).filter((f) => ['number', 'code_length', 'otpId', 'code'].includes(f)),
      ['number', 'code_length'],
      'send: the number and the code settings, no OTP id',
    );
    assert.equal(
      await page.locator('#bulkgate-channels .bulkgate-channel-text').count(),
      0,
      'an OTP channel has no text: the gateway writes it',
    );
    await page.selectOption('#node-input-action', 'verify');
    assert.deepEqual(
      (await shown()).filter((f) => ['number', 'code_length', 'otpId', 'code'].includes(f)),
      ['otpId', 'code'],
      'verify: the OTP id and the code typed',
    );
    assert.equal(await page.isVisible('#bulkgate-channels'), false);
    await page.selectOption('#node-input-action', 'send');
    await page.fill('#node-input-code_length', '4');
    // "+ channel" adds Viber above SMS; it needs a sender.
    await page.click('.node-input-channel-row .red-ui-editableList-addButton');
    const viber = page.locator('#bulkgate-channels .bulkgate-viber-sender');
    assert.equal(
      await viber.evaluate((el) => el.classList.contains('input-error')),
      true,
      'a Viber channel without a sender is marked',
    );
    await viber.fill('Door');
    assert.equal(await viber.evaluate((el) => el.classList.contains('input-error')), false);
    assert.equal(await page.locator('#bulkgate-channels .bulkgate-viber-caption').count(), 0, 'no button for an OTP');
    await page.evaluate(() => $('#node-input-number').typedInput('type', 'str'));
    await page.evaluate(() => $('#node-input-number').typedInput('value', '+420 777 000 001'));
    await done(page);
    const saved = await page.evaluate(() => {
      const n = RED.nodes.node('otp2');
      return {
        action: n.action,
        code_length: n.code_length,
        channel: n.channel,
        number: n.number,
        numberType: n.numberType,
        valid: n.valid,
        errors: n.validationErrors,
      };
    });
    assert.deepEqual(saved.channel, [{ type: 'viber', sender: 'Door', expiration: 120 }, { type: 'sms' }]);
    assert.deepEqual(
      [saved.action, saved.code_length, saved.number, saved.numberType],
      ['send', '4', '+420 777 000 001', 'str'],
    );
    assert.equal(
      saved.valid,
      true,
      `invalid: ${JSON.stringify(saved.errors)} ${await page.evaluate(() => JSON.stringify(RED.nodes.node('otp2'), (k, v) => (k.startsWith('_') ? undefined : v)))}`,
    );

    await edit(page, 'bl2');
    assert.equal(await page.isVisible('#node-input-route'), true, 'check: the route');
    assert.equal(await page.isVisible('#node-input-listType'), false);
    await page.selectOption('#node-input-action', 'add');
    assert.deepEqual(
      [
        await page.isVisible('#node-input-route'),
        await page.isVisible('#node-input-listType'),
        await page.isVisible('#node-input-source_id'),
      ],
      [false, true, true],
    );
    await cancel(page);
    await edit(page, 'ct2');
    assert.equal(await page.isVisible('#node-input-group_name'), false, 'get: no group');
    await page.selectOption('#node-input-action', 'import');
    assert.equal(await page.isVisible('#node-input-group_name'), true, 'import: groups');
    await cancel(page);

    // The node as the panel saved it, deployed on its own tab, sends what the gateway takes.
    const node = await page.evaluate(() => {
      const n = RED.nodes.node('otp2');
      const out: Record<string, unknown> = {};
      for (const key of Object.keys(n._def.defaults)) out[key] = n[key];
      for (const key of Object.keys(n._def.defaults))
        if (n[`${key}Type`] !== undefined) out[`${key}Type`] = n[`${key}Type`];
      return out;
    });
    const flow = [
      { id: 'otp-tab', type: 'tab', label: 'otp' },
      {
        id: 'otp-acc',
        type: 'bulkgate-account',
        baseUrl: demo.simulatorUrl,
        credentials: { application_id: DEMO_ACCOUNT.id, application_token: DEMO_ACCOUNT.token },
      },
      {
        ...node,
        id: 'otp-node',
        type: 'bulkgate-otp',
        z: 'otp-tab',
        account: 'otp-acc',
        x: 300,
        y: 100,
        wires: [[], []],
      },
      {
        id: 'otp-inject',
        type: 'inject',
        z: 'otp-tab',
        props: [{ p: 'payload' }],
        payload: '',
        payloadType: 'str',
        repeat: '',
        once: false,
        x: 100,
        y: 100,
        wires: [['otp-node']],
      },
    ];
    const res = await fetch(`${demo.editorUrl}/flows`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'node-red-deployment-type': 'full' },
      body: JSON.stringify(flow),
    });
    assert.ok(res.ok, `deploy: HTTP ${res.status}`);
    await until(
      'the OTP flow to start',
      async () => (await fetch(`${demo.editorUrl}/inject/otp-inject`, { method: 'POST' })).status === 200,
    );
    let sent: { path: string; body: Record<string, unknown> } | undefined;
    await until('the OTP request', async () => {
      const requests = (await (await fetch(`${demo.simulatorUrl}/simulator/requests`)).json()) as {
        path: string;
        body: Record<string, unknown>;
      }[];
      sent = requests.find((r) => r.path === '/api/1.0/otp/send');
      return Boolean(sent);
    });
    assert.deepEqual(sent?.body, {
      application_id: DEMO_ACCOUNT.id,
      application_token: DEMO_ACCOUNT.token,
      number: '420777000001',
      code_length: 4,
      request_quota_identification: 'otp-node',
      channel: { viber: { sender: 'Door', expiration: 120 }, sms: {} },
    });
    const outbox = (await (await fetch(`${demo.simulatorUrl}/simulator/outbox`)).json()) as {
      messages: { kind: string; channel: string }[];
    };
    assert.deepEqual(
      outbox.messages.filter((m) => m.kind === 'otp').map((m) => m.channel),
      ['viber'],
      "the demo's Viber user gets the code on Viber",
    );
    await openEditor(page, demo.editorUrl);
    assert.deepEqual(browser.errors, []);
  });
  it('the cascade editor offers WhatsApp and RCS: sender, expiration 3600, a text with its own counter (no SMS parts) or a WhatsApp template; saved as the wire takes it', async () => {
    await importNodes(page, [
      simulatorAccount('chat-acc', 'chat'),
      {
        id: 'chat1',
        type: 'bulkgate-transactional',
        account: 'chat-acc',
        api: 'advanced',
        version: '2.0',
        channel: [{ type: 'sms' }],
        text: 'SMS text',
        y: 740,
      },
    ]);
    await edit(page, 'chat1');
    assert.deepEqual(await options(page, '#bulkgate-channels li:first-child .bulkgate-channel-type'), [
      'viber',
      'whatsapp',
      'rcs',
      'sms',
    ]);
    await page.click('.node-input-channel-row .red-ui-editableList-addButton');
    const row = page.locator('#bulkgate-channels li').first();
    await row.locator('.bulkgate-channel-type').selectOption('whatsapp');
    assert.equal(await row.locator('.bulkgate-chat-expiration').inputValue(), '3600', "WhatsApp's default expiration");
    assert.equal(
      await row.locator('.bulkgate-chat-sender').evaluate((el) => el.classList.contains('input-error')),
      true,
      'no sender yet: marked',
    );
    await row.locator('.bulkgate-chat-sender').fill('Home');
    await row.locator('.bulkgate-chat-text').fill('Water in the cellar, Zürich €');
    assert.equal(
      await row.locator('.bulkgate-counter').innerText(),
      '29 / 4096 characters (one message, no SMS parts)',
    );
    assert.equal(
      await row.locator('.bulkgate-chat-text').evaluate((el) => el.classList.contains('input-error')),
      false,
    );
    await row.locator('.bulkgate-chat-text').fill('x'.repeat(4097));
    assert.equal(
      await row.locator('.bulkgate-chat-text').evaluate((el) => el.classList.contains('input-error')),
      true,
      'over 4096: marked',
    );
    await row.locator('.bulkgate-chat-content').selectOption('template');
    assert.equal(await row.locator('.bulkgate-chat-text').isVisible(), false, 'a template has no text of its own');
    await row.locator('.bulkgate-chat-template').fill('alarm');
    await row.locator('.bulkgate-chat-language').fill('en');
    await row.locator('.bulkgate-chat-parameters').fill('cellar\n21:04');
    await row.locator('.bulkgate-chat-buttons').fill('not json');
    assert.equal(
      await row.locator('.bulkgate-chat-buttons').evaluate((el) => el.classList.contains('input-error')),
      true,
      'buttons that are not a JSON list: marked',
    );
    await row.locator('.bulkgate-chat-buttons').fill('[{"type": "url", "text": "home"}]');
    await row.locator('.bulkgate-chat-header').fill('{"type": "text", "text": "Cellar"}');
    await browser.screenshot('cascade-whatsapp');
    // A second channel, switched to RCS.
    await page.click('.node-input-channel-row .red-ui-editableList-addButton');
    const second = page.locator('#bulkgate-channels li').nth(1);
    await second.locator('.bulkgate-channel-type').selectOption('rcs');
    assert.equal(await second.locator('.bulkgate-chat-content').count(), 0, 'RCS: a text message only in the panel');
    await second.locator('.bulkgate-chat-sender').fill('Home');
    await second.locator('.bulkgate-chat-text').fill('Water in the cellar');
    await second.locator('.bulkgate-chat-suggestions').fill('[{"type": "reply", "text": "OK"}]');
    assert.match(await page.locator('#bulkgate-fallback').innerText(), /ends with SMS/);
    await done(page);
    const saved = await page.evaluate(() => ({
      channel: RED.nodes.node('chat1').channel,
      valid: RED.nodes.node('chat1').valid,
    }));
    assert.deepEqual(saved.channel, [
      {
        type: 'whatsapp',
        sender: 'Home',
        expiration: 3600,
        template: {
          template: 'alarm',
          language: 'en',
          body: [
            { type: 'text', text: 'cellar' },
            { type: 'text', text: '21:04' },
          ],
          header: { type: 'text', text: 'Cellar' },
          buttons: [{ type: 'url', text: 'home' }],
        },
      },
      {
        type: 'rcs',
        sender: 'Home',
        expiration: 3600,
        message: { text: 'Water in the cellar', suggestions: [{ type: 'reply', text: 'OK' }] },
      },
      { type: 'sms', unicode: 'auto' },
    ]);
    assert.equal(saved.valid, true);
    assert.deepEqual(browser.errors, []);
  });
});

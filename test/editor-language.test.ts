/**
 * The account panel in the editor's language: what it shows from an admin endpoint (the last
 * failure while the gateway cannot be reached, the shared store's trouble, and Test connection's
 * result for the gateway and the store) reads in German under a German browser and in Czech under
 * a Czech one, worded from the catalog by the key and parameters the endpoint answers, not the
 * runtime's English sentence.
 */
import assert from 'node:assert/strict';
import type { Page } from 'playwright-core';
import { openBrowser, type Browser } from './support/browser';
import { startDemo, type DemoProcess } from './support/demo-process';
import { freePort } from './support/node-red-process';
import { cancel, edit } from './support/panel';
import { DEMO_ACCOUNT } from './support/simulator';

/* The page's globals (RED) are reached inside page.evaluate only. */
declare const RED: any;

/** What each panel line reads in a language; `URL` and `SINCE` stand for the address and the time. */
const EXPECTED = {
  de: {
    failure:
      /^Letzter Fehler \(Gateway nicht erreichbar seit [^)]+\): Das Gateway unter URL ist nicht erreichbar \(ECONNREFUSED\)$/,
    testDown: 'Fehlgeschlagen: Das Gateway unter URL ist nicht erreichbar (ECONNREFUSED)',
    storeTrouble:
      /^Der gemeinsame Speicher ist nicht erreichbar \(seit [^)]+\): Verbindung abgelehnt \(ECONNREFUSED\)\. Bis er wieder erreichbar ist/,
    testOk: `Verbunden: ${DEMO_ACCOUNT.credit} credits`,
    testStore: 'Speicher: Verbindung abgelehnt (ECONNREFUSED)',
    wrongToken:
      'Fehlgeschlagen: Das Gateway akzeptiert diese App-ID und dieses App-Token nicht: Prüfen Sie beide im BulkGate-Konto (sie stammen aus der API-Anwendung im BulkGate-Portal) (authentication_failed, HTTP 401)',
    noToken: /^Fehlgeschlagen: Geben Sie das App-Token ein/,
  },
  cs: {
    failure: /^Poslední chyba \(brána nedostupná od [^)]+\): Brána na URL je nedostupná \(ECONNREFUSED\)$/,
    testDown: 'Nepodařilo se: Brána na URL je nedostupná (ECONNREFUSED)',
    storeTrouble:
      /^Sdílené úložiště je nedostupné \(od [^)]+\): spojení odmítnuto \(ECONNREFUSED\)\. Dokud nebude dostupné/,
    testOk: `Připojeno: ${DEMO_ACCOUNT.credit} credits`,
    testStore: 'Úložiště: spojení odmítnuto (ECONNREFUSED)',
    wrongToken:
      'Nepodařilo se: Brána toto ID aplikace a token aplikace nepřijímá: zkontrolujte je v účtu BulkGate (pocházejí z API aplikace na portálu BulkGate) (authentication_failed, HTTP 401)',
    noToken: /^Nepodařilo se: Zadejte token aplikace/,
  },
};

describe('the account panel in the editor language', function () {
  this.timeout(180_000);
  let demo: DemoProcess;
  let gatewayUrl: string;

  before(async () => {
    demo = await startDemo(['--no-flows']);
    // Nothing listens on these ports: the gateway of `down` and the store of `st` (names unlike any id:
    // Node-RED takes a config node's property equal to a node id for a reference).
    gatewayUrl = `http://127.0.0.1:${await freePort()}`;
    const storeUrl = `redis://127.0.0.1:${await freePort()}`;
    const credentials = { application_id: DEMO_ACCOUNT.id, application_token: DEMO_ACCOUNT.token };
    const flows = [
      { id: 'tab', type: 'tab', label: 'panel language' },
      {
        id: 'down',
        type: 'bulkgate-account',
        name: 'gateway away',
        baseUrl: gatewayUrl,
        retries: 0,
        timeout: 2000,
        outboxDelay: 100,
        credentials,
      },
      {
        id: 'st',
        type: 'bulkgate-account',
        name: 'store away',
        baseUrl: demo.simulatorUrl,
        store: 'redis',
        storeUrl,
        credentials,
      },
      {
        id: 'alarm',
        type: 'inject',
        z: 'tab',
        props: [
          { p: 'payload', v: 'Door opened', vt: 'str' },
          { p: 'number', v: '420777123456', vt: 'str' },
        ],
        once: true,
        onceDelay: 0.1,
        repeat: '',
        x: 100,
        y: 100,
        wires: [['t']],
      },
      { id: 't', type: 'bulkgate-transactional', z: 'tab', account: 'down', text: '', x: 300, y: 100, wires: [[], []] },
    ];
    const deployed = await fetch(`${demo.editorUrl}/flows`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'Node-RED-Deployment-Type': 'full' },
      body: JSON.stringify(flows),
    });
    assert.equal(deployed.status, 204, await deployed.text());
  });
  after(async () => {
    await demo?.stop();
  });

  for (const [lang, locale] of [
    ['de', 'de-DE'],
    ['cs', 'cs-CZ'],
  ] as const) {
    describe(lang, () => {
      let browser: Browser;
      let page: Page;
      const expected = EXPECTED[lang];
      const url = (text: string) => text.replaceAll(gatewayUrl, 'URL');
      const shown = async (selector: string, unlike?: string) => {
        await page.waitForFunction(
          ({ selector, unlike }) => {
            const element = document.querySelector<HTMLElement>(selector);
            return element && element.style.display !== 'none' && element.textContent && element.textContent !== unlike;
          },
          { selector, unlike },
          { timeout: 30_000 },
        );
        return url(await page.locator(selector).innerText());
      };
      /** Clicks Test connection and reads its result once the answer is in (the button is enabled again). */
      const test = async () => {
        await page.click('#bulkgate-test-connection');
        await page.waitForFunction(
          () => !(document.getElementById('bulkgate-test-connection') as HTMLButtonElement).disabled,
        );
        return url(await page.locator('#bulkgate-test-result').innerText());
      };

      before(async () => {
        browser = await openBrowser({ locale });
        page = browser.page;
        await page.goto(`${demo.editorUrl}/`);
        await page.waitForFunction(() => (window as any).RED?.nodes?.node?.('down'), undefined, { timeout: 30_000 });
      });
      after(async () => {
        await browser?.close();
      });

      it('the last failure and Test connection of an account whose gateway is away', async () => {
        await edit(page, 'down');
        assert.match(await shown('#bulkgate-outbox-failure'), expected.failure);
        assert.equal(await test(), expected.testDown);
        await cancel(page);
      });

      it("the shared store's trouble, Test connection's store line, and a token the gateway refuses", async () => {
        await edit(page, 'st');
        assert.match(await shown('#bulkgate-store-trouble'), expected.storeTrouble);
        assert.equal(await test(), expected.testOk);
        assert.equal(url(await page.locator('#bulkgate-test-store').innerText()), expected.testStore);
        await page.fill('#node-config-input-application_token', 'wrong-token');
        assert.equal(await test(), expected.wrongToken);
        await cancel(page);
      });

      it("Test connection's own refusal: no token typed and none deployed", async () => {
        await page.evaluate(
          ({ simulator }) =>
            RED.view.importNodes(
              [{ id: 'fresh', type: 'bulkgate-account', name: 'not deployed', baseUrl: simulator }],
              {
                generateIds: false,
              },
            ),
          { simulator: demo.simulatorUrl },
        );
        await edit(page, 'fresh');
        assert.match(await test(), expected.noToken);
        await cancel(page);
        assert.deepEqual(browser.errors, [], 'no console error');
      });
    });
  }
});

/**
 * The account's admin endpoints (the outbox's count, emptying it, "test connection") against a web
 * page of another site in the same browser. Node-RED's admin app answers CORS with `*` and echoes
 * any header a preflight asks for, so without adminAuth such a page could empty an outbox and read
 * the answer. A real Node-RED process and Chromium: a page served from another loopback origin
 * (localhost against 127.0.0.1: another site; another port: the same site) is refused and changes
 * nothing; the editor itself, directly and behind a proxy that rewrites Host (as Home Assistant's
 * ingress does), still reads and empties the outbox.
 */
import assert from 'node:assert/strict';
import { createServer, request as httpRequest, type IncomingHttpHeaders, type Server } from 'node:http';
import { writeFileSync } from 'node:fs';
import { connect, type AddressInfo } from 'node:net';
import { join } from 'node:path';
import type { Page } from 'playwright-core';
import { openBrowser, type Browser } from './support/browser';
import { freePort, nodeRedProcess, type NodeRedProcess } from './support/node-red-process';
import { edit, cancel } from './support/panel';
import { until } from './support/wait';

/** Node-RED 5 answers the admin API without CORS headers (3.1 and 4.1: `*`). */
const CORS_CLOSED =
  Number(
    (
      require(
        require.resolve(
          'node-red/package.json',
          process.env.NODE_RED_HOME ? { paths: [process.env.NODE_RED_HOME] } : undefined,
        ),
      ) as { version: string }
    ).version.split('.')[0],
  ) >= 5;

/* The page's globals (RED) are reached inside page.evaluate only. */
declare const RED: any;

const listen = (server: Server, host: string): Promise<number> =>
  new Promise((resolve) => server.listen(0, host, () => resolve((server.address() as AddressInfo).port)));

/** A plain request from Node.js (no browser: no Sec-Fetch-Site unless given). */
function send(
  url: string,
  method: string,
  headers: Record<string, string>,
  body?: string,
): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(url, { method, headers }, (res) => {
      let text = '';
      res.on('data', (chunk: Buffer) => (text += chunk.toString()));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: text }));
    });
    req.on('error', reject);
    req.end(body);
  });
}

describe('the admin endpoints refuse a page of another site', function () {
  this.timeout(120_000);
  let copy: NodeRedProcess;
  let nodeRed: string;
  let browser: Browser;
  let page: Page;
  const servers: Server[] = [];

  const waiting = async (): Promise<number> =>
    (JSON.parse((await send(`${nodeRed}/bulkgate/outbox/acc`, 'GET', {})).body) as { waiting: number }).waiting;
  /** Exactly one alert in the outbox: what waits emptied (by a script: no page), one sent; the gateway's port is closed, so the account keeps it. */
  const keepOne = async (): Promise<void> => {
    assert.equal(
      (await send(`${nodeRed}/bulkgate/outbox/acc/empty`, 'POST', { 'content-type': 'application/json' }, '{}')).status,
      200,
    );
    const pressed = await send(`${nodeRed}/inject/inj`, 'POST', {});
    assert.equal(pressed.status, 200, pressed.body);
    await until('the alert in the outbox', async () => (await waiting()) === 1, 20_000);
  };

  before(async () => {
    const closed = await freePort();
    copy = nodeRedProcess('bulkgate-cross-site-');
    // No welcome tour and no update prompt over the editor (Node-RED 4 shows both on a first start).
    writeFileSync(
      join(copy.userDir, 'settings.js'),
      `module.exports = { flowFile: 'flows.json', credentialSecret: false, editorTheme: { tours: false, projects: { enabled: false } }, telemetry: { enabled: false } };\n`,
    );
    copy.flows(
      [
        { id: 'tab', type: 'tab', label: 'cross-site' },
        {
          id: 'acc',
          type: 'bulkgate-account',
          name: 'home',
          baseUrl: `http://127.0.0.1:${closed}`,
          retries: 0,
          timeout: 2000,
        },
        {
          id: 'inj',
          type: 'inject',
          z: 'tab',
          props: [{ p: 'payload' }],
          payload: 'Water on the floor',
          payloadType: 'str',
          wires: [['t']],
        },
        {
          id: 't',
          type: 'bulkgate-transactional',
          z: 'tab',
          account: 'acc',
          number: '420777123456',
          numberType: 'str',
          text: '',
          wires: [[], []],
        },
      ],
      { acc: { application_id: '10000', application_token: 'demo-simulator-token' } },
    );
    nodeRed = await copy.start();
    browser = await openBrowser();
    page = browser.page;
  });
  after(async () => {
    await browser?.close();
    for (const server of servers) server.close();
    await copy?.remove();
  });

  for (const [where, host] of [
    ['another site (localhost against 127.0.0.1)', 'localhost'],
    ['the same site on another port', '127.0.0.1'],
  ] as const) {
    it(`a page of ${where}: its fetch() to empty the outbox or read it is refused, and nothing changes`, async () => {
      const other = createServer((_req, res) =>
        res.writeHead(200, { 'content-type': 'text/html' }).end('<!doctype html><title>another site</title>'),
      );
      servers.push(other);
      const port = await listen(other, '127.0.0.1');
      await keepOne();
      await page.goto(`http://${host}:${port}/`);
      const answers = await page.evaluate(async (target) => {
        const json = { method: 'POST', headers: { 'content-type': 'application/json' } };
        const calls: [string, RequestInit][] = [
          [`${target}/bulkgate/outbox/acc/empty`, { ...json, body: '{}' }],
          [`${target}/bulkgate/outbox/acc`, {}],
          [`${target}/bulkgate/test-connection`, { ...json, body: '{"id":"acc"}' }],
        ];
        return Promise.all(
          calls.map(([url, init]) =>
            fetch(url, init).then(
              async (r) => ({ status: r.status, body: await r.text() }),
              () => ({ status: 0, body: 'blocked by the browser' }),
            ),
          ),
        );
      }, nodeRed);
      for (const answer of answers) {
        // Node-RED 5 answers no CORS: the browser itself keeps the answer (and a preflighted request) from the page.
        if (answer.status === 0 && CORS_CLOSED) continue;
        assert.equal(answer.status, 403, answer.body);
        assert.deepEqual(JSON.parse(answer.body), {
          ok: false,
          type: 'cross_site',
          message:
            'Refused: the request came from a page of another site. Only the Node-RED editor itself may use this endpoint.',
        });
      }
      assert.equal(await waiting(), 1, 'the alert still waits');
    });
  }

  it('without Sec-Fetch-Site (an older browser), an Origin other than the address asked is refused; the own one and none (a script) pass', async () => {
    const host = new URL(nodeRed).host;
    const empty = (headers: Record<string, string>) =>
      send(`${nodeRed}/bulkgate/outbox/acc/empty`, 'POST', { 'content-type': 'application/json', ...headers }, '{}');
    await until('the outbox to be ready', async () => (await waiting()) >= 0);
    for (const origin of ['http://evil.example', `http://localhost:${new URL(nodeRed).port}`, 'null']) {
      const refused = await empty({ origin });
      assert.equal(refused.status, 403, `${origin}: ${refused.body}`);
    }
    assert.equal((await empty({ origin: `http://${host}` })).status, 200);
    assert.equal((await empty({})).status, 200);
  });

  /** The editor at `url`: the account's panel shows the waiting alert, and its button empties the outbox. */
  const editorEmpties = async (url: string): Promise<void> => {
    await keepOne();
    await page.goto(`${url}/`);
    await page.waitForFunction(() => (window as any).RED?.nodes?.node?.('acc'), undefined, { timeout: 30_000 });
    await edit(page, 'acc');
    // Shown only while something waits: the panel read the count (its words are the editor test's).
    await page.waitForSelector('#bulkgate-outbox-row', { state: 'visible' });
    page.once('dialog', (dialog) => void dialog.accept());
    await page.click('#bulkgate-outbox-empty');
    await page.waitForSelector('#bulkgate-outbox-row', { state: 'hidden' });
    assert.equal(await waiting(), 0);
    await cancel(page);
    await page.evaluate(() => RED.nodes.dirty(false));
  };

  it('the editor itself reads and empties the outbox', async () => {
    await editorEmpties(nodeRed);
  });

  it('the editor behind a proxy that rewrites Host (as Home Assistant ingress does) reads and empties the outbox', async () => {
    const target = new URL(nodeRed);
    const rewrite = (headers: IncomingHttpHeaders) => ({ ...headers, host: target.host });
    const proxy = createServer((req, res) => {
      const forwarded = httpRequest(
        { host: target.hostname, port: target.port, method: req.method, path: req.url, headers: rewrite(req.headers) },
        (answer) => {
          res.writeHead(answer.statusCode ?? 502, answer.headers);
          answer.pipe(res);
        },
      );
      forwarded.on('error', () => res.writeHead(502).end());
      req.pipe(forwarded);
    });
    // The editor's comms websocket: the upgrade passed on with Host rewritten too.
    proxy.on('upgrade', (req, socket, head) => {
      const upstream = connect(Number(target.port), target.hostname, () => {
        const lines = Object.entries(rewrite(req.headers)).flatMap(([k, v]) =>
          Array.isArray(v) ? v.map((x) => `${k}: ${x}`) : [`${k}: ${v ?? ''}`],
        );
        upstream.write(`${req.method ?? 'GET'} ${req.url ?? '/'} HTTP/1.1\r\n${lines.join('\r\n')}\r\n\r\n`);
        upstream.write(head);
        upstream.pipe(socket).pipe(upstream);
      });
      upstream.on('error', () => socket.destroy());
      socket.on('error', () => upstream.destroy());
    });
    servers.push(proxy);
    const port = await listen(proxy, '127.0.0.1');
    // localhost: the browser's origin names neither Node-RED's host nor its port, as behind ingress.
    await editorEmpties(`http://localhost:${port}`);
  });
});

/**
 * The security review's findings (what the package protects: docs/SECURITY.md), one behaviour each: no msg, webhook
 * caller or editor request can stall Node-RED, flood it, or carry the token away.
 */
import assert from 'node:assert/strict';
import { createServer, request as httpRequest, type Server } from 'node:http';
import express from 'express';
import { GatewayClient, GatewayError, measureText, TEXT_COUNT_BOUND } from '../gateway';
import { startSimulator } from '../simulator/server';
import { prepare } from './support/prepare';
import {
  collect,
  describe as text,
  helper,
  httpNode,
  load,
  logs,
  seen,
  unload,
  type FlowNode,
  type TestNode,
} from './support/red';
import { ACCOUNT_ID, DEMO_ACCOUNT, startTestSimulator, TOKEN, type TestSimulator } from './support/simulator';
import { until } from './support/wait';

const SECRET = 'webhook-secret-hardening';
const COMBINING = '\u0301';

/** Texts that made the old segment counter slower than linear (grapheme clusters, extensions, pairs). */
const ADVERSARIAL = [
  ['combining marks', `a${COMBINING.repeat(31_999)}`],
  ['euro signs', '€'.repeat(32_000)],
  ['emoji', '😀'.repeat(16_000)],
  ['ZWJ sequences', '👨‍👩‍👧'.repeat(4_000)],
] as const;

/** A loopback server that counts what reaches it: where a leaked token would go. */
async function trap(): Promise<{ url: string; hits: string[]; close(): Promise<void> }> {
  const hits: string[] = [];
  const server = createServer((req, res) => {
    let body = '';
    req.on('data', (c: Buffer) => (body += c.toString()));
    req.on('end', () => {
      hits.push(body);
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ data: { credit: 1, currency: 'x', wallet: 'w', free_messages: 0, datetime: '' } }));
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  return {
    url: `http://127.0.0.1:${(server.address() as { port: number }).port}`,
    hits,
    close: () => new Promise<void>((r) => server.close(() => r())),
  };
}

describe('hardening', function () {
  this.timeout(30_000);
  let sim: TestSimulator;

  before(async () => {
    sim = await startTestSimulator();
  });
  beforeEach(() => sim.reset());
  after(() => sim.close());

  describe('1. a text that cannot fit is refused before it is counted', () => {
    for (const [name, body] of ADVERSARIAL) {
      it(`${name} (${body.length} UTF-16 units): invalid_request naming the field, for every text field`, () => {
        const client = new GatewayClient({ baseUrl: sim.url, applicationId: ACCOUNT_ID, applicationToken: TOKEN });
        const cases: [string, Record<string, unknown>][] = [
          ['text', { number: '420777111222', text: body }],
          ['channel.sms.text', { number: '420777111222', channel: { sms: { text: body } } }],
          [
            'channel.viber.text',
            { number: '420777111222', text: 'x', channel: { viber: { sender: 'A', text: body } } },
          ],
        ];
        for (const [field, fields] of cases) {
          assert.throws(
            () => prepare(client, 'transactional', fields),
            (e: GatewayError) =>
              e.code === 'invalid_request' &&
              e.message === `${field} is ${body.length} characters; the limit is 612 (268 with Unicode)`,
          );
        }
        assert.throws(
          () => prepare(client, 'promotional', { number: [{ number: '420777111222', text: body }] }),
          (e: GatewayError) => e.message.startsWith(`number[0].text is ${body.length} characters`),
        );
        void client.close();
      });
    }

    it('the bound is just above what can fit: 2 x 612 code units are counted, one more is refused', () => {
      const client = new GatewayClient({ baseUrl: sim.url, applicationId: ACCOUNT_ID, applicationToken: TOKEN });
      // Counted: refused by the limit with the counted figure (an extension character counts twice).
      assert.throws(
        () => prepare(client, 'transactional', { number: '420777111222', text: '€'.repeat(TEXT_COUNT_BOUND) }),
        (e: GatewayError) =>
          e.message === `text is ${2 * TEXT_COUNT_BOUND} characters; the limit is 612 (268 with Unicode)`,
      );
      assert.throws(
        () => prepare(client, 'transactional', { number: '420777111222', text: 'a'.repeat(TEXT_COUNT_BOUND + 1) }),
        (e: GatewayError) =>
          e.message === `text is ${TEXT_COUNT_BOUND + 1} characters; the limit is 612 (268 with Unicode)`,
      );
      void client.close();
    });

    it('the counter reads the adversarial texts in one pass, with the figures of the reference', () => {
      assert.deepEqual(measureText(`a${COMBINING.repeat(5)}`, true), {
        characters: 6,
        parts: 1,
        encoding: 'UCS-2',
        limit: 268,
        nonGsm: [COMBINING],
      });
      assert.deepEqual(measureText('€'.repeat(80), false), {
        characters: 160,
        parts: 1,
        encoding: 'GSM-7',
        limit: 612,
        nonGsm: [],
      });
      // 81 euro signs: 162 septets; an escape pair never straddles two parts (76 + 5 pairs).
      assert.equal(measureText('€'.repeat(81), false).parts, 2);
      assert.deepEqual(measureText('😀'.repeat(35), true), {
        characters: 70,
        parts: 1,
        encoding: 'UCS-2',
        limit: 268,
        nonGsm: ['😀'],
      });
      assert.equal(measureText('😀'.repeat(36), true).parts, 2);
    });
  });

  describe('2. test connection keeps the stored token at the deployed address', () => {
    let evil: Awaited<ReturnType<typeof trap>>;
    before(async () => {
      evil = await trap();
    });
    after(() => evil.close());
    afterEach(() => unload());

    const deploy = () =>
      load([{ id: 'acc', type: 'bulkgate-account', baseUrl: sim.url, outboxMinutes: 0, timeout: 2000 }], {
        acc: { application_id: ACCOUNT_ID, application_token: TOKEN },
      });

    it('another base URL without a typed token: refused, and nothing reaches that URL', async () => {
      await deploy();
      const res = await helper
        .request()
        .post('/bulkgate/test-connection')
        .send({ id: 'acc', baseUrl: evil.url, application_token: '__PWRD__' });
      assert.equal(res.body.ok, false);
      assert.match(res.body.message, /Type the application token again to test another base URL/);
      const omitted = await helper.request().post('/bulkgate/test-connection').send({ id: 'acc', baseUrl: evil.url });
      assert.equal(omitted.body.ok, false);
      assert.deepEqual(evil.hits, []);
    });

    it('the deployed base URL with the stored token works; a typed token may go to another URL', async () => {
      await deploy();
      const stored = await helper
        .request()
        .post('/bulkgate/test-connection')
        .send({ id: 'acc', baseUrl: `${sim.url}/`, application_token: '__PWRD__' });
      assert.deepEqual(stored.body, { ok: true, credit: 1000, currency: 'credits' });
      const typed = await helper
        .request()
        .post('/bulkgate/test-connection')
        .send({ id: 'acc', baseUrl: evil.url, application_id: '1', application_token: 'typed-here' });
      assert.equal(typed.body.ok, true);
      assert.equal(evil.hits.length, 1);
      assert.equal(evil.hits[0]?.includes(TOKEN), false, 'the stored token did not travel with the typed one');
    });

    it('JSON only: a form or text/plain post (what a cross-site page can send) gets 415', async () => {
      await deploy();
      const form = await helper
        .request()
        .post('/bulkgate/test-connection')
        .type('form')
        .send({ id: 'acc', baseUrl: sim.url });
      assert.equal(form.status, 415);
      const plain = await helper
        .request()
        .post('/bulkgate/test-connection')
        .set('content-type', 'text/plain')
        .send(JSON.stringify({ id: 'acc' }));
      assert.equal(plain.status, 415);
    });

    it("the answer is the client's own sentence, never the remote body's text", async () => {
      await deploy();
      await sim.fault({ echo: true });
      const res = await helper
        .request()
        .post('/bulkgate/test-connection')
        .send({ id: 'acc', baseUrl: sim.url, application_token: '__PWRD__' });
      assert.deepEqual(res.body, {
        ok: false,
        type: 'unknown',
        message: 'The gateway refused the request (unknown, HTTP 400)',
        // The same sentence for the editor's language: the catalog's keys, the type and the status only.
        wording: { key: 'answer', params: { sentence: { key: 'type.refused' }, type: 'unknown', status: 400 } },
      });
    });
  });

  describe('7. every string of a gateway answer is redacted', () => {
    afterEach(() => unload());

    for (const token of [TOKEN, 'tok_9f8e7d6c5b4a']) {
      it(`an answer that echoes the token (${token === TOKEN ? 'with dashes' : 'identifier-shaped'}) in every field leaks it nowhere`, async () => {
        sim.sim.accounts.set('echo', { ...sim.sim.accounts.get(ACCOUNT_ID)!, id: 'echo', token });
        const client = new GatewayClient({
          baseUrl: sim.url,
          applicationId: 'echo',
          applicationToken: token,
          retries: 0,
        });
        await sim.fault({ echo: true });
        const error = await client.transactional({ number: '420777111222', text: 'x' }).then(
          () => assert.fail('must fail'),
          (e: GatewayError) => e,
        );
        await client.close();
        const everything = JSON.stringify({
          message: error.message,
          code: error.code,
          json: error.toJSON(),
          own: { ...error },
          text: String(error),
        });
        assert.equal(everything.includes(token), false, everything);
        assert.equal(error.code, 'unknown', 'an echoed type is not an identifier the package passes on');
      });
    }

    it('through a node: msg.bulkgate, msg.error and the log carry no token', async () => {
      seen.length = 0;
      await load(
        [
          { id: 'acc', type: 'bulkgate-account', baseUrl: sim.url, outboxMinutes: 0, retries: 0 },
          { id: 't', type: 'bulkgate-transactional', account: 'acc', wires: [[], []] },
          { id: 'c', type: 'catch', scope: null, uncaught: false, wires: [['caught']] },
          { id: 'caught', type: 'helper' },
        ] as FlowNode[],
        { acc: { application_id: ACCOUNT_ID, application_token: TOKEN } },
      );
      await sim.fault({ echo: true });
      const caught = collect('caught', 1);
      (helper.getNode('t') as TestNode & { receive(m: unknown): void }).receive({
        payload: 'x',
        number: '420777111222',
      });
      const [msg] = await caught;
      assert.equal(msg?.bulkgate.type, 'unknown');
      const all = JSON.stringify([msg, seen, logs()].map(text));
      assert.equal(all.includes(TOKEN), false);
    });
  });

  describe('3-6. the webhook', () => {
    let raw: Server;
    let parsed: Server;
    let rawBase = '';
    let parsedBase = '';

    before(async () => {
      raw = createServer((req, res) => (httpNode ? httpNode(req, res) : res.end()));
      // What Node-RED does when the admin and node roots share `/`: a JSON parser reads the body first.
      const app = express();
      app.use(express.json({ limit: '50mb' }), express.urlencoded({ extended: true, limit: '50mb' }));
      app.use((req, res) => (httpNode ? httpNode(req, res) : res.end()));
      parsed = createServer(app);
      await Promise.all([raw, parsed].map((s) => new Promise<void>((r) => s.listen(0, '127.0.0.1', () => r()))));
      rawBase = `http://127.0.0.1:${(raw.address() as { port: number }).port}`;
      parsedBase = `http://127.0.0.1:${(parsed.address() as { port: number }).port}`;
    });
    after(() => {
      raw.close();
      parsed.close();
    });
    afterEach(() => unload());

    const events = (extra: FlowNode[] = [], credentials: Record<string, unknown> = {}) =>
      load(
        [
          { id: 'e', type: 'bulkgate-events', path: '/hooks/bulkgate', wires: [['reports'], ['incoming'], []] },
          { id: 'reports', type: 'helper' },
          { id: 'incoming', type: 'helper' },
          ...extra,
        ] as FlowNode[],
        { e: { secret: SECRET }, ...credentials },
      );
    const url = (base: string) => `${base}/hooks/bulkgate?token=${SECRET}`;
    const counted = () => {
      const got: unknown[] = [];
      (helper.getNode('reports') as TestNode).on('input', (m: unknown) => got.push(m));
      return got;
    };
    /** Posts with node:http, so that a chunked body (no content-length) can be sent too. */
    const post = (target: string, body: string, options: { chunked?: boolean; type?: string } = {}) =>
      new Promise<number>((resolve, reject) => {
        const req = httpRequest(
          target,
          {
            method: 'POST',
            headers: {
              'content-type': options.type ?? 'application/json',
              ...(options.chunked ? {} : { 'content-length': Buffer.byteLength(body) }),
            },
          },
          (res) => {
            res.resume();
            resolve(res.statusCode ?? 0);
          },
        );
        req.on('error', reject);
        if (options.chunked) {
          for (let i = 0; i < body.length; i += 64 * 1024) req.write(body.slice(i, i + 64 * 1024));
          req.end();
        } else req.end(body);
      });
    const reports = (n: number) => JSON.stringify(Array.from({ length: n }, () => ({ status: 1 })));
    /**
     * Posts a good report after refused calls and waits for it: the node emits in the order it
     * answered, so a refused call's reports would come out before it. Checks that it came alone.
     */
    const goodCallAlone = async (target: string, got: unknown[]) => {
      assert.equal((await fetch(`${target}&status=1&smsID=after`)).status, 200);
      await until('the good call emitted', () => got.length > 0);
      assert.deepEqual(
        got.map((m) => (m as { smsId: string }).smsId),
        ['after'],
      );
    };

    for (const [name, base] of [
      ['read by the node', () => rawBase],
      ['parsed by Node-RED before the node', () => parsedBase],
    ] as const) {
      describe(`a body ${name}`, () => {
        it('5 MB of reports: 413, nothing emitted (sized, and sent chunked)', async () => {
          await events();
          const got = counted();
          const big = reports(400_000);
          assert.ok(big.length > 5_000_000);
          assert.equal(await post(url(base()), big), 413);
          assert.equal(await post(url(base()), big, { chunked: true }), 413);
          await goodCallAlone(url(base()), got);
        });

        it('10,001 reports (under the byte cap): 413; 10,000: 200, all emitted, in batches that yield', async () => {
          await events();
          const got = counted();
          assert.equal(await post(url(base()), reports(10_001)), 413);
          const all = collect('reports', 10_000, 15_000);
          let ticks = 0;
          const ticker = setInterval(() => ticks++, 0);
          assert.equal(await post(url(base()), reports(10_000)), 200);
          let ticksAtFirst = -1;
          (helper.getNode('reports') as TestNode).once('input', () => (ticksAtFirst = ticks));
          await all;
          clearInterval(ticker);
          assert.equal(got.length, 10_000);
          assert.ok(ticks > ticksAtFirst, `timers ran while the reports were emitted (${ticksAtFirst} -> ${ticks})`);
        });

        it('[], {} and an empty body with the right token: 400 at once, never a hang', async () => {
          await events();
          const got = counted();
          for (const body of ['[]', '{}', '']) {
            const status = await Promise.race([
              post(url(base()), body),
              new Promise<number>((r) => setTimeout(() => r(-1), 3000)),
            ]);
            assert.equal(status, 400, `body ${JSON.stringify(body)}`);
          }
          const form = await Promise.race([
            post(url(base()), '', { type: 'application/x-www-form-urlencoded' }),
            new Promise<number>((r) => setTimeout(() => r(-1), 3000)),
          ]);
          assert.equal(form, 400, 'an empty form body');
          assert.equal(got.length, 0);
        });

        it('one bad report among good ones: 400, and none of them is emitted', async () => {
          await events();
          const got = counted();
          assert.equal(await post(url(base()), JSON.stringify([{ status: 1, smsID: 'a' }, { nothing: true }])), 400);
          await goodCallAlone(url(base()), got);
        });
      });
    }

    it("a redeploy of the events node keeps a user's own route on the same path", async () => {
      await events();
      // A user's handler for PUT on the same path (as an http-in node registers one).
      const httpApp = httpNode as unknown as {
        put(path: string, h: (req: unknown, res: { end(t: string): void }) => void): void;
      };
      httpApp.put('/hooks/bulkgate', (_req, res) => res.end('user route'));
      assert.equal(await (await fetch(url(rawBase), { method: 'PUT' })).text(), 'user route');
      // "Modified nodes" deploy: only the events node is restarted.
      await helper.setFlows(
        [
          { id: 'tab', type: 'tab', label: 'test' },
          {
            id: 'e',
            z: 'tab',
            type: 'bulkgate-events',
            path: '/hooks/bulkgate',
            name: 'changed',
            wires: [['reports'], ['incoming'], []],
          },
          { id: 'reports', z: 'tab', type: 'helper' },
          { id: 'incoming', z: 'tab', type: 'helper' },
        ] as never,
        'nodes',
        { e: { secret: SECRET } } as never,
      );
      assert.equal(
        await (await fetch(url(rawBase), { method: 'PUT' })).text(),
        'user route',
        "the user's route survived",
      );
      const got = collect('reports', 1);
      assert.equal((await fetch(`${url(rawBase)}&status=1&smsID=after`)).status, 200, 'the events node serves again');
      assert.equal((await got)[0]?.smsId, 'after');
    });

    it('a second events node on the same path gets a warning that names the first', async () => {
      await events([{ id: 'e2', type: 'bulkgate-events', path: '/hooks/bulkgate', wires: [[], [], []] } as FlowNode], {
        e2: { secret: 'other' },
      });
      const warnings = () => logs().filter((l) => l.includes('already serves /hooks/bulkgate'));
      // Given when the second node starts, with the flow: no later node start could add another.
      await until('the warning', () => warnings().length > 0);
      // Once, from the second node, naming the path.
      assert.equal(warnings().length, 1, logs().join('\n'));
      assert.match(warnings()[0] ?? '', /"id":"e2"/);
    });

    it("the secret is a password credential: the editor's credentials API answers has_secret, never the secret", async () => {
      await events();
      const nodes = (helper as unknown as { _redNodes: { getCredentialDefinition(type: string): unknown } })._redNodes;
      assert.equal(
        (nodes.getCredentialDefinition('bulkgate-events') as { secret: { type: string } }).secret.type,
        'password',
      );
    });
  });

  describe('8. the simulator is a developer tool, and bounded', () => {
    it('its controls take JSON only: a text/plain post cannot move its webhook', async () => {
      const res = await fetch(`${sim.url}/simulator/webhook`, {
        method: 'POST',
        headers: { 'content-type': 'text/plain' },
        body: JSON.stringify({ url: 'http://127.0.0.1:9/x' }),
      });
      assert.equal(res.status, 415);
      const form = await fetch(`${sim.url}/simulator/faults`, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: 'status=500',
      });
      assert.equal(form.status, 415);
    });

    it('a webhook URL that is not an http(s) URL: 400 naming the field, and the webhook stays as it was', async () => {
      const post = (body: unknown) =>
        fetch(`${sim.url}/simulator/webhook`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify(body),
        });
      for (const url of ['not a url', 'ftp://127.0.0.1/x', 42]) {
        const res = await post({ url });
        assert.equal(res.status, 400, String(url));
        assert.match(((await res.json()) as { error: string }).error, /^url must be an http or https URL/);
      }
      // Before, 'not a url' was taken: the next report's timer threw and took the process down.
      const incoming = await fetch(`${sim.url}/simulator/incoming`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ from: '420777777777', message: 'hi' }),
      });
      assert.equal(incoming.status, 200);
      assert.equal((await post({ url: '' })).status, 200, 'an empty url turns the webhook off');
    });

    it('another Host (DNS rebinding) or a foreign Origin: 403, the log is not read', async () => {
      const port = new URL(sim.url).port;
      const status = (headers: Record<string, string>) =>
        new Promise<number>((resolve, reject) => {
          httpRequest({ host: '127.0.0.1', port, path: '/simulator/requests', headers }, (res) => {
            res.resume();
            resolve(res.statusCode ?? 0);
          })
            .on('error', reject)
            .end();
        });
      assert.equal(await status({ host: `attacker.example:${port}` }), 403);
      assert.equal(await status({ host: `127.0.0.1:${port}`, origin: 'http://attacker.example' }), 403);
      assert.equal(await status({ host: `127.0.0.1:${port}` }), 200);
      assert.equal(await status({ host: `localhost:${port}`, origin: `http://localhost:${port}` }), 200);
    });

    it('the outbox keeps the newest within its bound (a long load test grows it no further); the duplicate check and the schedule still work on what it keeps', async () => {
      // Spread from a variable: the option is read by name, as a caller's object would pass it.
      const options = { outboxMax: 5 };
      const small = await startSimulator({ ...options });
      try {
        const send = async (number: string, extra: Record<string, unknown> = {}) => {
          const res = await fetch(`${small.url}/api/2.0/advanced/transactional`, {
            method: 'POST',
            headers: { 'content-type': 'application/json' },
            body: JSON.stringify({
              application_id: DEMO_ACCOUNT.id,
              application_token: DEMO_ACCOUNT.token,
              number,
              text: 'Door opened',
              ...extra,
            }),
          });
          return ((await res.json()) as { data: { sms_id: string; price: number } }).data;
        };
        // The first is scheduled for later: it is the oldest, and goes when the bound is passed.
        await send('420777000100', { schedule: Math.floor(Date.now() / 1000) + 3600 });
        for (let i = 1; i <= 7; i++) await send(`42077700010${i}`);
        const kept = small.gateway.state.outbox;
        assert.deepEqual(
          kept.map((m) => m.number),
          ['420777000103', '420777000104', '420777000105', '420777000106', '420777000107'],
        );
        assert.equal(small.gateway.releaseDue(), false, 'the scheduled one forgotten is not released later');
        // A copy of a kept message is still its duplicate; one of a forgotten message is a new message.
        const newest = kept.at(-1)?.sms_id;
        const copy = await send('420777000107', { duplicates_check: 'on' });
        assert.deepEqual([copy.sms_id, copy.price], [newest, 0]);
        const again = await send('420777000101', { duplicates_check: 'on' });
        assert.ok(again.price > 0);
        assert.equal(small.gateway.state.outbox.length, 5);
      } finally {
        await small.close();
      }
    });

    it('the request log keeps the newest within its bounds; an over-size body is answered 413', async () => {
      const small = await startSimulator({ logMaxRequests: 5, logMaxBytes: 1_000_000 });
      try {
        const send = (text: string) =>
          fetch(`${small.url}/api/2.0/advanced/transactional`, {
            method: 'POST',
            headers: { 'content-type': 'application/json' },
            body: JSON.stringify({ application_id: 'x', text }),
          });
        for (let i = 0; i < 8; i++) await send(`n${i}`);
        assert.deepEqual(
          small.requests.map((r) => r.body.text),
          ['n3', 'n4', 'n5', 'n6', 'n7'],
        );
        for (let i = 0; i < 3; i++) await send('x'.repeat(400_000));
        assert.ok(small.requests.reduce((n, r) => n + r.raw.length, 0) <= 1_000_000);
        const huge = await fetch(`${small.url}/api/2.0/advanced/transactional`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: 'x'.repeat(33 * 1024 * 1024),
        });
        assert.equal(huge.status, 413);
      } finally {
        await small.close();
      }
    });

    it('a bind to a non-loopback address prints a warning', async () => {
      const warned: string[] = [];
      const original = console.warn;
      console.warn = (...args: unknown[]) => void warned.push(args.join(' '));
      try {
        const open = await startSimulator({ host: '0.0.0.0' });
        await open.close();
        const quiet = await startSimulator({ host: '127.0.0.1' });
        await quiet.close();
      } finally {
        console.warn = original;
      }
      assert.equal(warned.length, 1);
      assert.match(warned[0] ?? '', /listening on 0\.0\.0\.0, not loopback/);
    });
  });
});

/**
 * Behind a proxy: a real forward proxy on loopback (test/support/proxy.ts) between the client and
 * the simulator. Through a configured proxy (the core `http proxy` node in the runtime), through
 * the environment's HTTP_PROXY, past it for NO_PROXY hosts, and a proxy that refuses.
 */
import assert from 'node:assert/strict';
import { bypassesProxy, GatewayClient, GatewayError } from '../gateway';
import { collect, helper, load, seen, unload, type TestNode } from './support/red';
import { startTestProxy, type TestProxy } from './support/proxy';
import { ACCOUNT_ID, startTestSimulator, TOKEN, type TestSimulator } from './support/simulator';

const PROXY_USER = 'proxy-user';
const PROXY_PASSWORD = 'proxy-secret-8d1f';
const basic = `Basic ${Buffer.from(`${PROXY_USER}:${PROXY_PASSWORD}`).toString('base64')}`;

describe('behind an HTTP proxy', () => {
  let sim: TestSimulator;
  let proxy: TestProxy;
  const clients: GatewayClient[] = [];
  const make = (options: Partial<ConstructorParameters<typeof GatewayClient>[0]>) => {
    const client = new GatewayClient({
      baseUrl: sim.url,
      applicationId: ACCOUNT_ID,
      applicationToken: TOKEN,
      retryDelay: 10,
      ...options,
    });
    clients.push(client);
    return client;
  };
  const env = (values: Record<string, string | undefined>) => {
    for (const [name, value] of Object.entries(values)) {
      if (value === undefined) delete process.env[name];
      else process.env[name] = value;
    }
  };
  const VARIABLES = ['HTTP_PROXY', 'http_proxy', 'HTTPS_PROXY', 'https_proxy', 'NO_PROXY', 'no_proxy'];
  const saved = Object.fromEntries(VARIABLES.map((name) => [name, process.env[name]]));

  before(async () => {
    sim = await startTestSimulator();
    proxy = await startTestProxy({ username: PROXY_USER, password: PROXY_PASSWORD });
  });
  beforeEach(async () => {
    await sim.reset();
    proxy.passed.length = 0;
    proxy.authorizations.length = 0;
    proxy.refuse = false;
    env(Object.fromEntries(VARIABLES.map((name) => [name, undefined])));
  });
  afterEach(async () => {
    env(saved);
    await Promise.all(clients.splice(0).map((c) => c.close(0)));
    await unload();
  });
  after(async () => {
    await proxy.close();
    await sim.close();
  });

  describe('the client', () => {
    it('with a proxy set, the request goes through it, with its credentials', async () => {
      const result = await make({
        proxy: { url: proxy.url, username: PROXY_USER, password: PROXY_PASSWORD },
      }).transactional({
        number: '420777111222',
        text: 'via proxy',
      });
      assert.equal(result.record.status, 'accepted');
      assert.deepEqual(proxy.passed, [new URL(sim.url).host]);
      assert.deepEqual(proxy.authorizations, [basic]);
      assert.equal((await sim.outbox()).messages[0]?.text, 'via proxy');
    });

    it("a host on the proxy's no-proxy list is reached directly", async () => {
      await make({ proxy: { url: proxy.url, noProxy: ['localhost', '127.0.0.1'] } }).transactional({
        number: '420777111222',
        text: 'direct',
      });
      assert.deepEqual(proxy.passed, []);
      assert.equal((await sim.outbox()).messages.length, 1);
    });

    it('without one, HTTP_PROXY is followed (either case), and NO_PROXY bypasses it', async () => {
      const authed = proxy.url.replace('http://', `http://${PROXY_USER}:${PROXY_PASSWORD}@`);
      for (const name of ['HTTP_PROXY', 'http_proxy']) {
        env({ HTTP_PROXY: undefined, http_proxy: undefined, [name]: authed });
        proxy.passed.length = 0;
        await make({}).transactional({ number: '420777111222', text: `env ${name}` });
        assert.deepEqual(proxy.passed, [new URL(sim.url).host], name);
      }
      env({ NO_PROXY: '127.0.0.1' });
      proxy.passed.length = 0;
      await make({}).transactional({ number: '420777111222', text: 'no proxy' });
      assert.deepEqual(proxy.passed, [], 'NO_PROXY');
      assert.equal((await sim.outbox()).messages.length, 3);
    });

    it('a proxy that refuses is a network error, retried as one that never reached the gateway; no credential in it', async () => {
      proxy.refuse = true;
      const error = await make({
        retries: 2,
        proxy: { url: proxy.url, username: PROXY_USER, password: PROXY_PASSWORD },
      })
        .transactional({ number: '420777111222', text: 'refused' })
        .then(
          () => undefined,
          (e: unknown) => e as GatewayError,
        );
      assert.ok(error instanceof GatewayError);
      assert.equal(error.code, 'network');
      assert.match(error.message, /^The proxy would not connect to the gateway at .* \(HTTP 403 from the proxy\)$/);
      // One CONNECT per attempt, each with its Proxy-Authorization.
      assert.equal(proxy.authorizations.length, 3, 'retried: the gateway was never reached');
      assert.equal((await sim.requests()).length, 0);
      const told = JSON.stringify({ message: error.message, cause: String(error.cause), json: error.toJSON() });
      assert.equal(told.includes(PROXY_PASSWORD) || told.includes(basic.slice(6)), false, told);
    });

    it('the no-proxy rule: a name matches itself and its subdomains; * matches all', () => {
      assert.equal(bypassesProxy('portal.bulkgate.com', ['bulkgate.com']), true);
      assert.equal(bypassesProxy('portal.bulkgate.com', ['.bulkgate.com']), true);
      assert.equal(bypassesProxy('notbulkgate.com', ['bulkgate.com']), false);
      assert.equal(bypassesProxy('anything', ['*']), true);
      assert.equal(bypassesProxy('127.0.0.1', ['localhost']), false);
    });
  });

  describe('the account node with a core http proxy node', () => {
    const httpProxyNode = require(
      require.resolve('@node-red/nodes/core/network/06-httpproxy.js', { paths: [require.resolve('node-red')] }),
    );

    it('sends through the http proxy node, with its credentials, which appear in no msg or log', async () => {
      await helper.load(
        [httpProxyNode, ...(require('./support/red') as typeof import('./support/red')).ALL_NODES],
        [
          { id: 'tab', type: 'tab' },
          { id: 'px', type: 'http proxy', url: proxy.url, noproxy: [] },
          { id: 'acc', type: 'bulkgate-account', baseUrl: sim.url, outboxMinutes: 0, proxy: 'px', retries: 0 },
          {
            id: 't',
            z: 'tab',
            type: 'bulkgate-transactional',
            account: 'acc',
            text: 'alarm via proxy',
            number: '420777111222',
            numberType: 'str',
            wires: [['ok'], ['bad']],
          },
          { id: 'ok', z: 'tab', type: 'helper' },
          { id: 'bad', z: 'tab', type: 'helper' },
        ] as never,
        {
          acc: { application_id: ACCOUNT_ID, application_token: TOKEN },
          px: { username: PROXY_USER, password: PROXY_PASSWORD },
        },
      );
      const ok = collect('ok', 1);
      const logged: unknown[] = [];
      for (const event of ['call:status', 'call:warn', 'call:error', 'call:log'])
        (helper.getNode('t') as TestNode).on(event, (call: { args: unknown[] }) => logged.push(call.args));
      (helper.getNode('t') as TestNode & { receive(m: unknown): void }).receive({ payload: 'x' });
      const [msg] = await ok;
      assert.equal(msg?.payload.status, 'accepted');
      assert.deepEqual(proxy.passed, [new URL(sim.url).host]);
      assert.deepEqual(proxy.authorizations, [basic]);
      const told = JSON.stringify([msg, logged, seen]);
      assert.equal(told.includes(PROXY_PASSWORD), false);
    });

    it('an account whose http proxy node is missing: a request error naming the proxy, nothing sent', async () => {
      await load(
        [
          { id: 'acc', type: 'bulkgate-account', baseUrl: sim.url, outboxMinutes: 0, proxy: 'gone', retries: 0 },
          {
            id: 't',
            type: 'bulkgate-transactional',
            account: 'acc',
            text: 'x',
            number: '420777111222',
            numberType: 'str',
            wires: [[], []],
          },
          { id: 'c', type: 'catch', scope: null, wires: [['caught']] },
          { id: 'caught', type: 'helper' },
        ],
        { acc: { application_id: ACCOUNT_ID, application_token: TOKEN } },
      );
      const caught = collect('caught', 1);
      (helper.getNode('t') as TestNode & { receive(m: unknown): void }).receive({ payload: 'x' });
      const [msg] = await caught;
      assert.match(msg?.error.message, /^proxy: the http proxy node this account uses is missing/);
      assert.equal((await sim.requests()).length, 0);
    });
  });
});

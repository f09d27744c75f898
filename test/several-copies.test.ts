/**
 * Two copies of Node-RED on one account and one Redis store (a real redis-server): one alert raised
 * by both reaches the gateway once; the account's rate limit holds across both.
 */
import assert from 'node:assert/strict';
import { nodeRedProcess, type NodeRedProcess } from './support/node-red-process';
import { startRedis, type TestRedis } from './support/redis';
import { ACCOUNT_ID, startTestSimulator, TOKEN, type TestSimulator } from './support/simulator';
import { pressByApi, until } from './support/examples';

describe('several copies of Node-RED on one Redis store', function () {
  this.timeout(120_000);
  let redis: TestRedis;
  let sim: TestSimulator;
  const copies: NodeRedProcess[] = [];

  before(async () => {
    redis = await startRedis();
    sim = await startTestSimulator(1_000_000);
    copies.push(nodeRedProcess(), nodeRedProcess());
  });
  after(async () => {
    await Promise.all(copies.map((c) => c.remove()));
    await sim?.close();
    await redis?.stop();
  });

  /** The same flows in both copies: an account on the store, injects into one transactional node. */
  async function deploy(account: Record<string, unknown>, alerts: number, label: string): Promise<void> {
    const flows = [
      { id: 'tab', type: 'tab', label: 'alarms' },
      { id: 'acc', type: 'bulkgate-account', name: 'home', baseUrl: sim.url, retries: 0, ...account },
      ...Array.from({ length: alerts }, (_, i) => ({
        id: `alarm${i}`,
        z: 'tab',
        type: 'inject',
        props: [{ p: 'payload' }, { p: 'number', v: '420777123456', vt: 'str' }],
        payload: `Alarm ${i}: water on the floor (${label})`,
        payloadType: 'str',
        wires: [['t']],
      })),
      { id: 't', z: 'tab', type: 'bulkgate-transactional', account: 'acc', text: '', wires: [[], []] },
    ];
    await Promise.all(copies.map((c) => c.kill()));
    for (const c of copies) c.flows(flows, { acc: { application_id: ACCOUNT_ID, application_token: TOKEN } });
    await Promise.all(copies.map((c) => c.start()));
    if (account.store === 'redis') await Promise.all(copies.map((c) => until('the store connected', () => /Shared store connected/.test(c.output()), 10_000)));
  }

  it('one alert injected into both copies at once (as an MQTT fan-out does) reaches the gateway once', async () => {
    await sim.reset();
    await deploy({ store: 'redis', storeUrl: redis.url }, 1, 'fan-out');
    await Promise.all(copies.map((c) => pressByApi(c.url)('alarm0')));
    await until('the alert at the gateway', async () => (await sim.outbox()).messages.length >= 1);
    await new Promise((r) => setTimeout(r, 1500));
    assert.deepEqual(
      (await sim.outbox()).messages.map((m) => m.text),
      ['Alarm 0: water on the floor (fan-out)'],
    );
  });

  it('a limit of 5 per 2 s holds across both copies: at most 5 requests in any 2 s', async () => {
    await sim.reset();
    await deploy({ store: 'redis', storeUrl: redis.url, rateLimit: 5, rateWindow: 2 }, 12, 'limit');
    // Twelve different alerts, six into each copy.
    await Promise.all(Array.from({ length: 12 }, (_, i) => pressByApi((copies[i % 2] as NodeRedProcess).url)(`alarm${i}`)));
    await until('all twelve at the gateway', async () => (await sim.outbox()).messages.length >= 12, 20_000);
    const times = (await sim.requests()).filter((r) => r.path.includes('transactional')).map((r) => Date.parse(r.at));
    assert.equal(times.length, 12);
    // Counted where the gateway sees them, less 50 ms: the window is kept when a send is let go, and
    // the first request of a copy also opens its connection (it arrives up to ~40 ms later than it left).
    for (const t of times) {
      const inWindow = times.filter((u) => u >= t && u < t + 1950).length;
      assert.ok(inWindow <= 5, `${inWindow} requests in the 2 s from ${new Date(t).toISOString()}`);
    }
  });
});

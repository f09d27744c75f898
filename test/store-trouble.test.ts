/**
 * A shared store that cannot be reached says so at once, in the Node-RED runtime: the send node's
 * status names the cause before any msg comes, the account logs it once, its panel's answer
 * carries the reason and since when, and Test connection asks the store too (the stored store
 * password only with the deployed store URL). Once the store answers, all of it clears. The
 * password is in none of it.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort } from './support/node-red-process';
import { helper, load, unload, type TestNode } from './support/red';
import { watchEscapes } from './support/escapes';
import { startRedis, type TestRedis } from './support/redis';
import { startSimulator, type Simulator } from '../simulator/server';
import { ACCOUNT_ID, TOKEN } from './support/simulator';
import { until } from './support/wait';

type Status = { fill?: string; shape?: string; text?: string };

/** The statuses node `id` showed so far (the test helper spies on every node's `status`). */
function statusesOf(id: string): Status[] {
  const node = helper.getNode(id) as TestNode & { status: { getCalls?(): unknown } };
  const spy = Object.getPrototypeOf(node).status as { getCalls(): { thisValue: unknown; args: [Status] }[] };
  return spy
    .getCalls()
    .filter((call) => call.thisValue === node)
    .map((call) => call.args[0]);
}

/** Waits until node `id`'s latest status matches (checked every 50 ms: it may have come before the wait). */
async function latestStatus(id: string, match: (status: Status) => boolean, ms = 15_000): Promise<Status> {
  const matching = () => {
    const latest = statusesOf(id).at(-1);
    return latest && match(latest) ? latest : undefined;
  };
  await until(`a matching status on ${id}`, () => matching() !== undefined, ms, {
    detail: () => `the last: ${JSON.stringify(statusesOf(id).at(-1))}`,
  });
  return matching() as Status;
}

describe('a shared store that cannot be reached says so at once (Node-RED runtime, redis-server)', function () {
  this.timeout(60_000);
  const PASSWORD = 'the-store-password-7Q';
  let userDir: string;
  let simulator: Simulator;
  let redis: TestRedis | undefined;
  const { escaped, start, stop } = watchEscapes();

  before(async () => {
    start();
    simulator = await startSimulator({ port: 0, accounts: [{ id: ACCOUNT_ID, token: TOKEN, credit: 1000 }] });
  });
  after(async () => {
    stop();
    await simulator.close();
  });
  beforeEach(() => {
    userDir = mkdtempSync(join(tmpdir(), 'bulkgate-store-trouble-'));
    helper.settings({ userDir });
  });
  afterEach(async () => {
    await unload();
    await redis?.stop();
    redis = undefined;
    helper.settings({});
    rmSync(userDir, { recursive: true, force: true });
    assert.deepEqual(escaped, [], 'no unhandled rejection or uncaught exception');
  });

  it('nothing listening: the status, one log line, the panel and Test connection name the cause; a store that comes up clears them', async () => {
    const port = await freePort();
    const storeUrl = `redis://127.0.0.1:${port}`;
    await load(
      [
        { id: 'acc', type: 'bulkgate-account', baseUrl: simulator.url, store: 'redis', storeUrl },
        { id: 't', type: 'bulkgate-transactional', account: 'acc', text: '', wires: [[], []] },
      ],
      { acc: { application_id: ACCOUNT_ID, application_token: TOKEN, storePassword: PASSWORD } },
    );
    // Before any msg: the send node says the copies are not coordinated, and why.
    const shown = await latestStatus('t', (s) => s.text === 'store unreachable: nothing listening');
    assert.equal(shown.fill, 'yellow');

    const account = helper.getNode('acc') as unknown as { warn: { args: unknown[][] } };
    const lines = () => account.warn.args.map((a) => String(a[0]));
    await new Promise((r) => setTimeout(r, 1500)); // checks that the client's reconnects add no line
    assert.equal(lines().filter((l) => /shared store cannot be reached/.test(l)).length, 1, lines().join('\n'));

    const panel = (await helper.request().get('/bulkgate/outbox/acc')).body;
    assert.match(panel.store.reason, new RegExp(`^nothing listening: .*ECONNREFUSED 127\\.0\\.0\\.1:${port}`));
    assert.ok(panel.store.since <= Date.now() && Date.now() - panel.store.since < 60_000);

    const test = (body: Record<string, unknown>) =>
      helper
        .request()
        .post('/bulkgate/test-connection')
        .send({ id: 'acc', ...body });
    const tested = (await test({ store: 'redis', storeUrl, storePassword: '__PWRD__' })).body;
    assert.equal(tested.ok, true, 'the gateway part answers on its own');
    assert.equal(tested.store.ok, false);
    assert.match(tested.store.message, /^nothing listening: /);
    // The stored password goes only to the deployed store URL.
    const elsewhere = (
      await test({ store: 'redis', storeUrl: `redis://127.0.0.1:${await freePort()}`, storePassword: '__PWRD__' })
    ).body;
    assert.deepEqual(elsewhere.store, {
      ok: false,
      message: 'Type the store password again to test another store URL than the deployed one',
      wording: { key: 'test.store-password-again' },
    });
    // The file store: nothing about a store in the answer.
    assert.equal((await test({ store: 'file' })).body.store, undefined);

    // The store comes up on that port, with that password: the status, the panel and the test clear.
    redis = await startRedis(['--requirepass', PASSWORD], port);
    await latestStatus('t', (s) => !/store/.test(s.text ?? ''));
    assert.equal((await helper.request().get('/bulkgate/outbox/acc')).body.store, null);
    assert.deepEqual((await test({ store: 'redis', storeUrl, storePassword: '__PWRD__' })).body.store, { ok: true });
    // A wrong password typed in the panel: the test says so.
    const wrong = (await test({ store: 'redis', storeUrl, storePassword: 'not-it' })).body.store;
    assert.equal(wrong.ok, false);
    assert.match(wrong.message, /^authentication refused: /);

    const everything = JSON.stringify([statusesOf('t'), lines(), panel, tested, elsewhere, wrong]);
    assert.ok(!everything.includes(PASSWORD), 'the store password is in no status, log line or answer');
  });

  it('a wrong password: the status says authentication refused; after a msg it stands beside the totals', async () => {
    redis = await startRedis(['--requirepass', PASSWORD]);
    await load(
      [
        { id: 'acc', type: 'bulkgate-account', baseUrl: simulator.url, store: 'redis', storeUrl: redis.url },
        { id: 't', type: 'bulkgate-transactional', account: 'acc', text: '', wires: [[], []] },
      ],
      { acc: { application_id: ACCOUNT_ID, application_token: TOKEN, storePassword: 'a-wrong-one' } },
    );
    await latestStatus('t', (s) => s.text === 'store unreachable: authentication refused');
    (helper.getNode('t') as TestNode & { receive(m: unknown): void }).receive({
      payload: 'Door opened',
      number: '420777123456',
    });
    // Sent all the same (this copy decides alone meanwhile), and the status still says why.
    const after = await latestStatus('t', (s) => /^sent 1/.test(s.text ?? ''));
    assert.equal(after.text, 'sent 1 / rejected 0 / store unreachable: authentication refused');
    assert.equal(after.fill, 'yellow');
  });
});

/**
 * A message that waits says why (the gateway's port closed): the send node's status carries the
 * short cause, the account logs the cause and the address once when the outage starts and once
 * when it ends, its panel's outbox answer carries the last failure and since when, and Test
 * connection names the address and the cause.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort } from './support/node-red-process';
import { collect, helper, load, statusOf, unload, type TestNode } from './support/red';
import { watchEscapes } from './support/escapes';
import { startSimulator } from '../simulator/server';
import { ACCOUNT_ID, TOKEN } from './support/simulator';

describe('a message that waits says why: the gateway port closed', function () {
  this.timeout(60_000);
  let userDir: string;
  const { escaped, start, stop } = watchEscapes();

  before(() => start());
  after(() => stop());
  beforeEach(() => {
    userDir = mkdtempSync(join(tmpdir(), 'bulkgate-cause-'));
    helper.settings({ userDir });
  });
  afterEach(async () => {
    await unload();
    helper.settings({});
    rmSync(userDir, { recursive: true, force: true });
    assert.deepEqual(escaped, [], 'no unhandled rejection or uncaught exception');
  });

  it('status, log (once per outage), panel and Test connection each name the cause; the end of the outage is logged once', async () => {
    const port = await freePort();
    const url = `http://127.0.0.1:${port}`;
    await load(
      [
        { id: 'acc', type: 'bulkgate-account', baseUrl: url, retries: 0, timeout: 2000, outboxDelay: 100 },
        { id: 't', type: 'bulkgate-transactional', account: 'acc', text: '', wires: [[], []] },
      ],
      { acc: { application_id: ACCOUNT_ID, application_token: TOKEN } },
    );
    const account = helper.getNode('acc') as unknown as { warn: { args: unknown[][] } };
    const logLines = () => account.warn.args.map((a) => String(a[0]));
    const waiting = statusOf('t', (s) => /^1 waiting: connection refused$/.test(s.text ?? ''), 10_000);
    const node = helper.getNode('t') as TestNode & { receive(m: unknown): void };
    node.receive({ payload: 'Door opened', number: '420777123456' });
    await waiting;

    const outage = logLines().filter((l) => /cannot be reached/.test(l));
    assert.equal(outage.length, 1, logLines().join('\n'));
    assert.match(
      outage[0] as string,
      new RegExp(
        `The gateway at ${url} cannot be reached \\(Could not reach the gateway at ${url} \\(ECONNREFUSED\\)\\)`,
      ),
    );

    // A second alert and the probes that fail the same way: no second line.
    node.receive({ payload: 'Door opened again', number: '420777123456' });
    await statusOf('t', (s) => /^2 waiting: connection refused$/.test(s.text ?? ''), 10_000);
    await new Promise((r) => setTimeout(r, 1200)); // checks that no line more comes with the next probe
    assert.equal(logLines().filter((l) => /cannot be reached/.test(l)).length, 1);

    const panel = await helper.request().get('/bulkgate/outbox/acc');
    assert.equal(panel.body.waiting, 2);
    assert.match(panel.body.outage.reason, new RegExp(`${url} \\(ECONNREFUSED\\)`));
    assert.ok(Date.now() - panel.body.outage.since < 60_000 && panel.body.outage.since <= Date.now());

    const tested = await helper.request().post('/bulkgate/test-connection').send({ id: 'acc' });
    assert.equal(tested.body.ok, false);
    assert.equal(tested.body.message, `Could not reach the gateway at ${url} (ECONNREFUSED)`);

    // The gateway comes back on that port: both alerts go, the end is logged once, the panel clears.
    const back = await startSimulator({ port, accounts: [{ id: ACCOUNT_ID, token: TOKEN, credit: 1000 }] });
    try {
      await statusOf('t', (s) => /^sent/.test(s.text ?? ''), 30_000);
      await new Promise((r) => setTimeout(r, 300)); // checks that the end is not logged twice
      assert.equal(logLines().filter((l) => /reachable again/.test(l)).length, 1, logLines().join('\n'));
      assert.equal((await helper.request().get('/bulkgate/outbox/acc')).body.outage, null);
      assert.equal(back.gateway.state.outbox.length, 2);
    } finally {
      await back.close();
    }
  });

  it('the last waiting msg gives up while the gateway is still away: the log says nothing waits any more, not that the gateway is back', async () => {
    const port = await freePort();
    const url = `http://127.0.0.1:${port}`;
    await load(
      [
        { id: 'acc', type: 'bulkgate-account', baseUrl: url, retries: 0, timeout: 2000, outboxDelay: 100 },
        { id: 't', type: 'bulkgate-transactional', account: 'acc', text: '', giveUpAfter: 1, wires: [[], []] },
        { id: 'c', type: 'catch', scope: ['t'], uncaught: false, wires: [['caught']] },
        { id: 'caught', type: 'helper' },
      ],
      { acc: { application_id: ACCOUNT_ID, application_token: TOKEN } },
    );
    const account = helper.getNode('acc') as unknown as { warn: { args: unknown[][] } };
    const logLines = () => account.warn.args.map((a) => String(a[0]));
    const caught = collect('caught', 1, 10_000);
    (helper.getNode('t') as TestNode & { receive(m: unknown): void }).receive({
      payload: 'Door opened',
      number: '420777123456',
    });
    const [msg] = await caught;
    assert.equal(msg?.bulkgate.type, 'expired');
    await new Promise((r) => setTimeout(r, 300)); // checks that no other line follows
    const after = logLines().slice(logLines().findIndex((l) => /cannot be reached/.test(l)) + 1);
    assert.deepEqual(
      after.filter((l) => /reachable again/.test(l)),
      [],
      'not "reachable again": nothing answered',
    );
    assert.equal(after.length, 1, logLines().join('\n'));
    assert.match(
      after[0] as string,
      new RegExp(
        `^The gateway at ${url} has not answered for \\d+ s, and no message waits for it any more \\(the last gave up or was discarded\\): the next one tries it at once$`,
      ),
    );
  });
});

/**
 * Every alert once when the shared store fails: two Node-RED processes on one account and one real
 * redis-server, the simulator as the gateway, 300 alerts kept during a gateway outage and drained
 * when it ends, and a fault of the store (or of a copy) during the drain. Counted per alert across
 * both copies (support/alert-ledger.ts): lost 0, delivered twice 0, ended twice 0; with simple 1.0
 * (no duplicates_check) an alert whose fate is unknown ends once, in Catch, `unconfirmed`. Run by
 * `npm run test:faults` beside the outbox's own faults.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createClient } from '@redis/client';
import { keyPrefix } from '../nodes/account/redis-store';
import {
  alertFlow,
  deliveries,
  endsSeen,
  handIn,
  ledger,
  rows,
  table,
  until,
  type FlowOptions,
} from './support/alert-ledger';
import { nodeRedProcess, type NodeRedProcess } from './support/node-red-process';
import { startRedis, type TestRedis } from './support/redis';
import { ACCOUNT_ID, startTestSimulator, type TestSimulator } from './support/simulator';

// The ledger of every fault of the suite, as a table, when it ends.
after(() => console.log(`\n${table()}\n`));

const ALERTS = 300;
/** Short, so an outage longer than it and a copy's death cost seconds (the account's default is 30 s). */
const CLAIM_SECONDS = 4;

const APIS: [string, FlowOptions][] = [
  ['advanced 2.0', { api: 'advanced', version: '2.0' }],
  ['simple 1.0', { api: 'simple', version: '1.0' }],
];

describe('every alert once across two copies on a shared store (redis-server), under its faults', function () {
  this.timeout(180_000);
  let dir: string;
  let redis: TestRedis;
  let sim: TestSimulator;
  let copies: [NodeRedProcess, NodeRedProcess];
  const entries = `${keyPrefix(ACCOUNT_ID)}outbox:entries`;
  const handing = `${keyPrefix(ACCOUNT_ID)}outbox:handing`;

  beforeEach(async () => {
    dir = mkdtempSync(join(tmpdir(), 'bulkgate-store-faults-'));
    sim = await startTestSimulator(10_000_000);
    copies = [nodeRedProcess('bulkgate-store-a-'), nodeRedProcess('bulkgate-store-b-')];
  });
  afterEach(async () => {
    await Promise.all(copies.map((c) => c.remove()));
    await sim.close();
    await redis?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  const output = () => copies.map((c, i) => `--- copy ${'ab'[i]}\n${c.output().slice(-2000)}`).join('\n');

  /** What the store holds: its waiting entries, and the ended ones whose msg has not left (a client of the test's own, each time: the server restarts). */
  async function held(): Promise<number> {
    const client = createClient({ url: redis.url });
    client.on('error', () => undefined);
    await client.connect();
    try {
      return (await client.hLen(entries)) + (await client.zCard(handing));
    } finally {
      client.destroy();
    }
  }

  async function save(): Promise<void> {
    const client = createClient({ url: redis.url });
    await client.connect();
    try {
      await client.sendCommand(['SAVE']);
    } finally {
      client.destroy();
    }
  }

  const delivered = () => sim.sim.gateway.state.outbox.length;

  /** Both copies on the store, 300 alerts kept in the shared outbox during a gateway outage (half from each), then the gateway back, slow enough that the drain takes seconds. */
  async function keptThenDraining(flow: FlowOptions, redisOptions: string[]): Promise<string[]> {
    redis = await startRedis(['--dir', dir, ...redisOptions]);
    for (const copy of copies)
      alertFlow(copy, sim, {
        ...flow,
        account: { store: 'redis', storeUrl: redis.url, storeClaimSeconds: CLAIM_SECONDS, outboxDelay: 200 },
      });
    const [a, b] = await Promise.all(copies.map((c, i) => c.start({ env: { LIFE: `${'ab'[i]}1` } })));
    await sim.fault({ offline: { seconds: 3600, mode: '503' } });
    const alerts = Array.from({ length: ALERTS }, (_, i) => `s${i}`);
    // A few at a time, each kept before the next: a burst of keeps on a loaded machine could miss
    // the store's answer time (1 s), and its msgs would go to Catch instead of waiting.
    for (let i = 0; i < ALERTS; i += 60) {
      await Promise.all([
        handIn(a as string, alerts.slice(i, i + 30)),
        handIn(b as string, alerts.slice(i + 30, i + 60)),
      ]);
      await until(`${i + 60} kept in the shared outbox`, async () => (await held()) === i + 60, 60_000, output);
    }
    return alerts;
  }

  /** The gateway back, each answer 300 to 500 ms late: 64 on the wire at a time (32 per copy), the drain takes a few seconds. */
  const gatewayBack = () => sim.fault({ offline: { seconds: 0 }, latency: 300, jitter: 200 });

  /**
   * The shared outbox empty (nothing left that could go a second time) and every alert ended in a
   * living copy's flow, its end in the ledger's file; one the killed copy handled may have been
   * delivered and its end lost with it (`killed`).
   */
  async function settled(alerts: string[], killed?: NodeRedProcess): Promise<void> {
    const living = copies.filter((c) => c !== killed);
    await until(
      'every alert ended and the shared outbox emptied',
      async () => {
        const seen = new Set(living.flatMap(endsSeen).map((e) => e.alert));
        const at = deliveries(sim);
        return alerts.every((a) => seen.has(a) || (killed && at.has(a))) && (await held()) === 0;
      },
      120_000,
      output,
    );
  }

  /** Counts the run, records its row, and asserts the promise; with simple 1.0, what went to Catch is `unconfirmed` only. */
  function check(fault: string, alerts: string[], strict: boolean) {
    const { problems, ...row } = ledger(fault, alerts, copies, sim, { strict });
    const caught = copies.flatMap(endsSeen).filter((e) => e.end === 'catch');
    rows.push({ ...row, fault: `${fault} (${caught.length} unconfirmed)` });
    assert.deepEqual(problems.slice(0, 20), [], `${fault}: ${JSON.stringify(row)}`);
    assert.equal(row.lost + row.sentTwice + row.endedTwice, 0);
    assert.deepEqual(
      [...new Set(caught.map((e) => e.code))].filter((code) => code !== 'unconfirmed'),
      [],
      'only unconfirmed ones at Catch',
    );
  }

  for (const [name, flow] of APIS) {
    it(`${name}: the store restored from an older snapshot mid-drain (SAVE while ${ALERTS} wait, killed after ~100 delivered, restarted from it): what was ended is not sent or ended again`, async () => {
      const alerts = await keptThenDraining(flow, []);
      await save();
      await gatewayBack();
      await until('~100 delivered', () => delivered() >= 100, 60_000, output);
      await redis.stop();
      await redis.start();
      await settled(alerts);
      check(`store restored from a snapshot, ${name}`, alerts, true);
    });

    it(`${name}: the store away longer than the claim mid-drain (append-only file, SIGTERM, back after ${CLAIM_SECONDS + 3} s): no copy takes over what the other holds`, async () => {
      const alerts = await keptThenDraining(flow, ['--appendonly', 'yes']);
      await gatewayBack();
      await until('~60 delivered', () => delivered() >= 60, 60_000, output);
      await redis.stop('SIGTERM');
      // Waits for the clock itself: every claim lapses meanwhile.
      await new Promise((r) => setTimeout(r, (CLAIM_SECONDS + 3) * 1000));
      await redis.start();
      await settled(alerts);
      check(`store away ${CLAIM_SECONDS + 3} s (claim ${CLAIM_SECONDS} s), ${name}`, alerts, true);
    });

    it(`${name}: a copy killed (SIGKILL) mid-drain: the other takes its entries over; none it may have sent goes blind`, async () => {
      const alerts = await keptThenDraining(flow, []);
      await gatewayBack();
      await until('~100 delivered', () => delivered() >= 100, 60_000, output);
      await copies[0].kill();
      await settled(alerts, copies[0]);
      // A msg the killed copy emitted may come out again marked a resend: the contract's one exception.
      check(`copy killed mid-drain, ${name}`, alerts, false);
    });
  }
});

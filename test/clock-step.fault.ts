/**
 * The wall clock steps in a running Node-RED (a preload steps Date.now() as NTP does on a Raspberry
 * Pi without a real-time clock): alerts kept during an outage, the clock a year
 * ahead, the gateway back. Each is sent and ends once on port 1, none expired untried. Run by
 * `npm run test:faults`.
 */
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { alertFlow, deliveries, endsSeen, handIn, until, waitingInJournal } from './support/alert-ledger';
import { nodeRedProcess, type NodeRedProcess } from './support/node-red-process';
import { startTestSimulator, type TestSimulator } from './support/simulator';

const YEAR = 365 * 24 * 3600 * 1000;

describe('the wall clock steps in a running Node-RED (a preload, the simulator as the gateway)', function () {
  this.timeout(300_000);
  let sim: TestSimulator;
  let copy: NodeRedProcess;

  beforeEach(async () => {
    sim = await startTestSimulator(10_000_000);
    copy = nodeRedProcess('bulkgate-clock-');
  });
  afterEach(async () => {
    await copy.remove();
    await sim.close();
  });

  it('forward a year during an outage: the 10 kept alerts are sent when the gateway is back, each once on port 1, none expired', async () => {
    const stepFile = join(copy.userDir, 'clock-step');
    alertFlow(copy, sim);
    const editor = await copy.start({
      env: {
        LIFE: '1',
        NODE_OPTIONS: `--require ${join(__dirname, 'support', 'clock-step-preload.js')}`,
        BULKGATE_CLOCK_STEP_FILE: stepFile,
      },
    });
    const alerts = Array.from({ length: 10 }, (_, i) => `c${i}`);
    await sim.fault({ offline: { seconds: 3600, mode: '503' } });
    await handIn(editor, alerts);
    await until(
      '10 alerts kept',
      () => waitingInJournal(copy).size === 10,
      60_000,
      () => copy.output(),
    );
    writeFileSync(stepFile, String(YEAR));
    // The preload looks every 100 ms; the outbox probes at most 15 s apart: a round runs on the stepped clock.
    await new Promise((r) => setTimeout(r, 1000));
    await sim.fault({ offline: { seconds: 0 } });
    await until(
      'every alert ended',
      () => new Set(endsSeen(copy).map((e) => e.alert)).size === 10,
      120_000,
      () => copy.output(),
    );
    const ends = endsSeen(copy);
    assert.deepEqual(
      ends.filter((e) => e.end !== 'port1').map((e) => `${e.alert}:${e.end}:${e.code}`),
      [],
      'none to Catch',
    );
    assert.equal(ends.length, 10, 'each ended once');
    const delivered = deliveries(sim);
    assert.deepEqual(
      alerts.filter((a) => delivered.get(a) !== 1),
      [],
      'each delivered once',
    );
  });
});

/**
 * What a Node-RED pays for having the package installed: nothing of the gateway, no
 * dependency, until a node starts; the simulator's dependencies never, even while sending; ajv
 * never (the validators are precompiled). Checked in a child process, as a fresh Node-RED.
 */
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { ACCOUNT_ID, startTestSimulator, TOKEN, type TestSimulator } from './support/simulator';

interface Report {
  stage: string;
  loaded: string[];
  types?: string[];
  own?: string[];
  status?: string;
  valid?: boolean;
  validators?: string[];
}

describe('lean: what the package loads, and when', function () {
  this.timeout(60_000);
  let gateway: TestSimulator;
  let reports: Report[] = [];

  before(async () => {
    gateway = await startTestSimulator();
    const out = await new Promise<string>((resolve, reject) =>
      execFile(
        process.execPath,
        [join(__dirname, 'support', 'load-probe.js'), gateway.url, ACCOUNT_ID, TOKEN],
        (error, stdout, stderr) => (error ? reject(new Error(`${error.message}\n${stderr}`)) : resolve(stdout)),
      ),
    );
    reports = out
      .trim()
      .split('\n')
      .filter((line) => line.startsWith('{'))
      .map((line) => JSON.parse(line) as Report);
  });
  after(() => gateway?.close());

  const stage = (name: string): Report => {
    const report = reports.find((r) => r.stage === name);
    assert.ok(report, `the probe reported "${name}"`);
    return report;
  };

  it('installed, no node deployed: all ten types registered, none of the dependencies loaded', () => {
    const installed = stage('installed');
    assert.deepEqual(installed.types?.sort(), [
      'bulkgate-account',
      'bulkgate-balance',
      'bulkgate-blacklist',
      'bulkgate-contacts',
      'bulkgate-escalation',
      'bulkgate-events',
      'bulkgate-number-check',
      'bulkgate-otp',
      'bulkgate-promotional',
      'bulkgate-transactional',
    ]);
    assert.deepEqual(installed.loaded, []);
  });

  it("installed, no node deployed: Node-RED requires one file of the package's own, the node set's bundle", () => {
    assert.deepEqual(stage('installed').own, ['nodes/bulkgate.js']);
  });

  it('after a send: undici only; ajv, mustache (no template) and the simulator dependencies never', async () => {
    const sent = stage('sent');
    assert.equal(sent.status, 'accepted');
    assert.deepEqual(sent.loaded, ['undici']);
    const messages = (await gateway.outbox()).messages;
    assert.equal(messages.length, 1);
    assert.deepEqual(
      sent.validators,
      ['validators'],
      "a send loads the send bodies' validators, not the other endpoints'",
    );
  });

  it('a send from an account with no escalation node runs none of the escalation code: none of its files is loaded', () => {
    const own = stage('sent').own ?? [];
    assert.ok(own.includes('nodes/account/account.js'), 'the probe lists the files a send loaded');
    assert.deepEqual(
      own.filter((file) => /escalation/.test(file)),
      [],
    );
  });

  it("the other endpoints' validators load with the first call of theirs (a number check), not before", () => {
    const checked = stage('checked');
    assert.equal(checked.valid, true);
    assert.deepEqual(checked.validators, ['endpoint-validators', 'validators']);
  });
});

/**
 * The outbox's lock where users run Node-RED: a Docker container recreated (an upgrade) or a new
 * Kubernetes pod keeps the user directory (a volume) but comes back under another host name. A
 * lock whose holder is gone holds nothing back, wherever it ran; two living Node-REDs on one
 * directory still exclude each other. A Node-RED process of its own, the simulator as the
 * gateway, counted by the ledger (support/alert-ledger.ts). Run by `npm run test:faults`.
 *
 * The bound (how long a lock not touched stands) is 30 s; most of these tests set it shorter
 * (BULKGATE_OUTBOX_LOCK_STALE_MS) so that the suite waits seconds, not minutes. The planted lock
 * and the graceful stop run with the default.
 */
import assert from 'node:assert/strict';
import { existsSync, readFileSync, statSync, utimesSync, writeFileSync } from 'node:fs';
import { hostname } from 'node:os';
import {
  alertFlow,
  deliveries,
  endsSeen,
  handIn,
  ledger,
  outboxPath,
  rows,
  until,
  waitingInJournal,
} from './support/alert-ledger';
import { nodeRedProcess, type NodeRedProcess } from './support/node-red-process';
import { startTestSimulator, type TestSimulator } from './support/simulator';

const ids = (prefix: string, n: number) => Array.from({ length: n }, (_, i) => `${prefix}${i}`);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe("the outbox's lock when Node-RED comes back under another host name (a recreated container, a new pod)", function () {
  this.timeout(300_000);
  let sim: TestSimulator;
  let copy: NodeRedProcess;
  let life = 0;

  beforeEach(async () => {
    sim = await startTestSimulator(10_000_000);
    copy = nodeRedProcess('bulkgate-lock-');
    life = 0;
  });
  afterEach(async () => {
    await copy.remove();
    await sim.close();
  });

  const lockPath = () => `${outboxPath(copy)}.lock`;
  const lockHost = () => (JSON.parse(readFileSync(lockPath(), 'utf8')) as { host: string }).host;
  const start = (options: { hostname?: string; staleMs?: number } = {}) =>
    copy.start({
      env: {
        LIFE: String(++life),
        ...(options.staleMs === undefined ? {} : { BULKGATE_OUTBOX_LOCK_STALE_MS: String(options.staleMs) }),
      },
      hostname: options.hostname,
    });
  const output = () => copy.output();

  /** The alerts whose entries wait in the journal. */
  function waitingIds(): Set<string> {
    const alerts = new Set<string>();
    const live = waitingInJournal(copy);
    if (!live.size) return alerts;
    for (const line of readFileSync(outboxPath(copy), 'utf8').split('\n')) {
      const id = /^\{"id":"([^"]+)"/.exec(line)?.[1];
      if (id && live.has(id)) alerts.add((JSON.parse(line) as { msg: { alert: string } }).msg.alert);
    }
    return alerts;
  }

  const caught = (alerts: string[]) => endsSeen(copy).filter((e) => e.end === 'catch' && alerts.includes(e.alert));

  async function keepDuringOutage(editor: string, alerts: string[]) {
    await sim.fault({ offline: { seconds: 3600, mode: '503' } });
    await handIn(editor, alerts);
    await until(`${alerts.length} alerts kept`, () => alerts.every((a) => waitingIds().has(a)), 60_000, output);
  }

  /** Each new alert is kept (none refused `outbox_locked`); fails as soon as one went to Catch. */
  async function keptNotRefused(alerts: string[], ms = 60_000) {
    await until(
      `${alerts.length} new alerts kept or at Catch`,
      () => {
        const waiting = waitingIds();
        const ended = new Set(caught(alerts).map((e) => e.alert));
        return alerts.every((a) => waiting.has(a) || ended.has(a));
      },
      ms,
      output,
    );
    assert.deepEqual(
      caught(alerts).map((e) => `${e.alert}: ${e.code}`),
      [],
      'no new alert refused while the outbox file is locked by a Node-RED that is gone',
    );
  }

  /** The gateway back: every alert delivered once, each ended once, the outbox empty. */
  async function sentOnce(fault: string, alerts: string[]) {
    await sim.fault({ offline: { seconds: 0 } });
    await until(
      'every alert delivered and the outbox emptied',
      () => alerts.every((a) => deliveries(sim).has(a)) && waitingInJournal(copy).size === 0,
      120_000,
      output,
    );
    const { problems, ...row } = ledger(fault, alerts, copy, sim);
    rows.push(row);
    assert.deepEqual(problems.slice(0, 20), [], `${fault}: ${JSON.stringify(row)}`);
    assert.equal(row.atGateway, alerts.length);
  }

  it('killed with 20 alerts kept, started again on the same directory under another host name (a UTS namespace of its own) after the bound: the 20 and 5 new ones sent once, none outbox_locked', async () => {
    const staleMs = 4000;
    alertFlow(copy, sim);
    const kept = ids('a', 20);
    await keepDuringOutage(await start({ staleMs }), kept);
    assert.equal(lockHost(), hostname());
    const touched = statSync(lockPath()).mtimeMs;
    await copy.kill();
    // Waiting for the clock itself: the dead holder's lock is past the bound.
    await sleep(Math.max(0, touched + staleMs + 500 - Date.now()));
    const editor = await start({ staleMs, hostname: 'recreated-container' });
    const more = ids('b', 5);
    await handIn(editor, more);
    await keptNotRefused(more);
    assert.equal(lockHost(), 'recreated-container', 'taken over by the new container');
    await sentOnce('killed, back under another host name', [...kept, ...more]);
  });

  it('a planted lock naming another host, not touched for an hour (the default bound, 30 s): taken over at start; the 20 kept alerts and 5 new ones sent once, none outbox_locked', async () => {
    alertFlow(copy, sim);
    const kept = ids('p', 20);
    await keepDuringOutage(await start(), kept);
    await copy.kill();
    writeFileSync(lockPath(), JSON.stringify({ pid: 1, host: 'a-container-long-gone' }));
    const anHourAgo = new Date(Date.now() - 3_600_000);
    utimesSync(lockPath(), anHourAgo, anHourAgo);
    const editor = await start();
    const more = ids('q', 5);
    await handIn(editor, more);
    await keptNotRefused(more);
    assert.equal(lockHost(), hostname());
    await sentOnce('planted lock of another host', [...kept, ...more]);
  });

  it('killed, started again at once under another host name (within the bound): new alerts held, not refused, then kept once the lock is stale; all sent once', async () => {
    const staleMs = 15_000;
    alertFlow(copy, sim);
    const kept = ids('k', 20);
    await keepDuringOutage(await start({ staleMs }), kept);
    const touched = statSync(lockPath()).mtimeMs;
    await copy.kill();
    const editor = await start({ staleMs, hostname: 'quick-pod' });
    const more = ids('h', 5);
    await handIn(editor, more);
    // A fixed wait that checks what does NOT happen: the 503s came back long since, and no new
    // alert is refused (Catch) nor written (the lock is not this process's yet): they are held.
    await sleep(2000);
    assert.ok(
      Date.now() < touched + staleMs - 1000,
      `the restart came within the bound (${Date.now() - touched} ms after the last touch): a slower machine needs a longer bound here`,
    );
    assert.deepEqual(
      caught(more).map((e) => `${e.alert}: ${e.code}`),
      [],
      'held, not refused',
    );
    assert.deepEqual(
      more.filter((a) => waitingIds().has(a)),
      [],
      'held, not yet written: the lock is still the old holder’s',
    );
    assert.equal(lockHost(), hostname(), "the lock is still the killed process's");
    assert.match(
      output(),
      /is locked by another Node-RED\. If that one is gone .* taken over once it has gone 15 s untouched/,
      'the log says why and for how long',
    );
    await keptNotRefused(more, staleMs + 30_000);
    assert.equal(lockHost(), 'quick-pod');
    await sentOnce('killed, back at once under another host name', [...kept, ...more]);
  });

  it('two living Node-REDs on one directory, on this host and under another host name: the second refuses (outbox_locked), also past the bound; the first keeps its lock and sends its alerts once', async () => {
    const staleMs = 4000;
    alertFlow(copy, sim);
    const kept = ids('f', 5);
    await keepDuringOutage(await start({ staleMs }), kept);
    const second = nodeRedProcess('', copy.userDir);
    try {
      let editor = await second.start({ env: { LIFE: 'second', BULKGATE_OUTBOX_LOCK_STALE_MS: String(staleMs) } });
      const here = ids('s', 3);
      await handIn(editor, here);
      await until(
        'the alerts of the second on this host at Catch',
        () => caught(here).length === here.length,
        30_000,
        second.output,
      );
      await second.kill();
      const since = Date.now();
      editor = await second.start({
        env: { LIFE: 'second-pod', BULKGATE_OUTBOX_LOCK_STALE_MS: String(staleMs) },
        hostname: 'second-pod',
      });
      const there = ids('o', 3);
      await handIn(editor, there);
      await until(
        'the alerts of the second under another host name at Catch',
        () => caught(there).length === there.length,
        30_000,
        second.output,
      );
      // Waiting for the clock itself: past the bound, the living holder's lock still stands.
      await sleep(Math.max(0, since + 2 * staleMs - Date.now()));
      const later = ids('l', 3);
      await handIn(editor, later);
      await until(
        'the later alerts of the second at Catch',
        () => caught(later).length === later.length,
        30_000,
        second.output,
      );
      assert.deepEqual([...new Set(caught([...here, ...there, ...later]).map((e) => e.code))], ['outbox_locked']);
      assert.equal(lockHost(), hostname(), 'the first still holds it');
      assert.deepEqual([...waitingIds()].sort(), [...kept].sort(), "the second wrote nothing into the first's file");
    } finally {
      await second.kill();
    }
    await sentOnce('two living Node-REDs on one directory', kept);
  });

  it('stopped gracefully (SIGTERM, as docker stop sends) with alerts waiting: the lock is released, the file stays; under another host name they are sent at once (the default bound)', async () => {
    alertFlow(copy, sim);
    const kept = ids('g', 10);
    await keepDuringOutage(await start(), kept);
    await copy.stop();
    assert.equal(existsSync(lockPath()), false, 'the lock is released by a graceful stop');
    assert.deepEqual([...waitingIds()].sort(), [...kept].sort(), 'the kept alerts stay in the file');
    await start({ hostname: 'upgraded-container' });
    await sentOnce('stopped gracefully, back under another host name', kept);
    // Given up after the last done line is written.
    await until('nothing waits: the lock released again', () => !existsSync(lockPath()), 10_000, output);
  });
});

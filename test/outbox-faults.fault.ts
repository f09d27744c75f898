/**
 * Every alert once, under every fault: a Node-RED process of its own takes alerts while the
 * gateway (the simulator) is away, and the outbox's promise is counted after each fault (the
 * ledger in support/alert-ledger.ts): 0 lost, 0 delivered but never out of a port or Catch, 0 sent
 * twice, 0 ended twice. Run by
 * `npm run test:faults` (CI's `.ci/run`), apart from `npm test`: it takes minutes.
 */
import assert from 'node:assert/strict';
import { execFileSync, spawnSync } from 'node:child_process';
import { appendFileSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { OutboxJournal } from '../nodes/account/outbox-journal';
import {
  alertFlow,
  deliveries,
  endsSeen,
  handIn,
  ledger,
  outboxPath,
  rows,
  table,
  until,
  waitingInJournal,
  type FlowOptions,
} from './support/alert-ledger';
import { nodeRedProcess, type NodeRedProcess } from './support/node-red-process';
import { startTestSimulator, type TestSimulator } from './support/simulator';
import { ENDED, entryLine, KEPT, STEPS } from './support/compaction-child';

// The ledger of every fault of the suite, as a table, when it ends.
after(() => console.log(`\n${table()}\n`));

const ids = (prefix: string, n: number) => Array.from({ length: n }, (_, i) => `${prefix}${i}`);

describe('every alert once, under every fault (a Node-RED process, the simulator as the gateway)', function () {
  this.timeout(240_000);
  let sim: TestSimulator;
  let copy: NodeRedProcess;
  let life = 0;

  beforeEach(async () => {
    sim = await startTestSimulator(10_000_000);
    copy = nodeRedProcess('bulkgate-faults-');
    life = 0;
  });
  afterEach(async () => {
    await copy.remove();
    await sim.close();
  });

  const start = (options: { fileSizeKb?: number } = {}) => copy.start({ env: { LIFE: String(++life) }, ...options });
  const output = () => copy.output();

  /** Counts the run, records its row, and asserts the promise. */
  function check(fault: string, handedIn: string[]) {
    const { problems, ...row } = ledger(fault, handedIn, copy, sim);
    rows.push(row);
    assert.deepEqual(problems.slice(0, 20), [], `${fault}: ${JSON.stringify(row)}`);
    assert.equal(row.lost + row.neverEnded + row.sentTwice + row.endedTwice, 0);
  }

  /** Keeps `alerts` during a 503 outage (all on disk before it returns). */
  async function keepDuringOutage(editor: string, alerts: string[]) {
    await sim.fault({ offline: { seconds: 3600, mode: '503' } });
    await handIn(editor, alerts);
    await until(
      `${alerts.length} alerts kept`,
      () => {
        const waiting = waitingIds();
        return alerts.every((a) => waiting.has(a));
      },
      120_000,
      output,
    );
  }

  /** The alerts whose entries wait in the journal. */
  function waitingIds(): Set<string> {
    const alerts = new Set<string>();
    const path = outboxPath(copy);
    const live = waitingInJournal(copy);
    if (!live.size) return alerts;
    for (const line of readFileSync(path, 'utf8').split('\n')) {
      const id = /^\{"id":"([^"]+)"/.exec(line)?.[1];
      if (id && live.has(id)) alerts.add((JSON.parse(line) as { msg: { alert: string } }).msg.alert);
    }
    return alerts;
  }

  const allEnded = (alerts: string[]) => {
    const ended = new Set(endsSeen(copy).map((e) => e.alert));
    const delivered = deliveries(sim);
    return alerts.every((a) => ended.has(a) || delivered.has(a));
  };

  async function drain(fault: string, flow: FlowOptions) {
    alertFlow(copy, sim, flow);
    const editor = await start();
    const alerts = ids('d', 5000);
    await keepDuringOutage(editor, alerts);
    // Answers come back out of order, as a real gateway's do: a send that finished early waits
    // in the drain's list behind older ones still on the wire.
    await sim.fault({ offline: { seconds: 0 }, jitter: 20 });
    // A send goes from the journal and leaves it when it ended: with every alert ended and the
    // journal empty, nothing is left that could go a second time.
    await until(
      'every alert ended and the outbox emptied',
      () => allEnded(alerts) && waitingInJournal(copy).size === 0,
      300_000,
      output,
    );
    check(fault, alerts);
  }

  it('the drain of 5,000 alerts kept during an outage, answers 0-20 ms late (advanced 2.0 API): each delivered and ended once', () =>
    drain('drain, advanced 2.0', { api: 'advanced', version: '2.0' }));

  it('the drain of 5,000 alerts kept during an outage, answers 0-20 ms late (simple 1.0 API): each delivered and ended once', () =>
    drain('drain, simple 1.0', { api: 'simple', version: '1.0' }));

  it('Node-RED killed (SIGKILL) again and again during a drain: each alert delivered once and out of a port; a msg emitted before a kill may come out again, marked (a resend, or afterRestart)', () =>
    killedDuringDrain('SIGKILL', {}));

  it('Node-RED killed (SIGKILL) again and again during a drain, simple 1.0 (no duplicates_check): none delivered twice, each delivered one out of a port or Catch; one whose attempt had no answer ends once in Catch, unconfirmed', () =>
    killedDuringDrain('SIGKILL, simple 1.0,', { api: 'simple', version: '1.0' }));

  async function killedDuringDrain(fault: string, flow: FlowOptions) {
    alertFlow(copy, sim, flow);
    const alerts = ids('k', 3000);
    await keepDuringOutage(await start(), alerts);
    await copy.kill();
    await sim.fault({ offline: { seconds: 0 }, latency: 10, jitter: 20 });
    let kills = 0;
    for (let round = 0; round < 40 && kills < 12; round++) {
      const before = sim.sim.gateway.state.outbox.length;
      await start();
      // Killed once the drain has delivered a random few more (or after 10 s: a slow start on a busy machine).
      const more = 20 + Math.floor(Math.random() * 150);
      await until('a few more delivered', () => sim.sim.gateway.state.outbox.length >= before + more, 10_000).catch(
        () => undefined,
      );
      const draining = waitingInJournal(copy).size > 0;
      await copy.kill();
      if (draining && sim.sim.gateway.state.outbox.length > before) kills++;
      if (!draining) break;
    }
    assert.ok(kills >= 10, `killed ${kills} times during a drain`);
    await start();
    // A send goes from the journal and leaves it when it ended: with every alert ended and the
    // journal empty, nothing is left that could go a second time.
    await until(
      'every alert ended and the outbox emptied',
      () => allEnded(alerts) && waitingInJournal(copy).size === 0,
      300_000,
      output,
    );
    check(`${fault} x ${kills} during a drain`, alerts);
  }

  it('a torn tail (a line cut mid-way; garbage appended) with alerts kept after it, then a restart: each delivered once, and the warning says the tail was cut', async () => {
    alertFlow(copy, sim);
    let editor = await start();
    const first = ids('t', 3);
    await keepDuringOutage(editor, first);
    await copy.kill();
    // A line written in part when the power went: an entry no keep ever acknowledged.
    const whole = readFileSync(outboxPath(copy), 'utf8')
      .split('\n')
      .find((l) => l.includes('"id"')) as string;
    appendFileSync(
      outboxPath(copy),
      whole.replace(/"id":"[^"]+"/, '"id":"phantom"').slice(0, Math.floor(whole.length / 2)),
    );
    editor = await start();
    const second = ids('u', 2);
    await keepDuringOutage(editor, second);
    assert.match(output(), /cut off before anything else was written/);
    await copy.kill();
    appendFileSync(outboxPath(copy), '\u0000garbage{"id":');
    editor = await start();
    const third = ids('v', 2);
    await keepDuringOutage(editor, third);
    await copy.kill();
    await sim.fault({ offline: { seconds: 0 } });
    editor = await start();
    const alerts = [...first, ...second, ...third];
    // A send goes from the journal and leaves it when it ended: with every alert ended and the
    // journal empty, nothing is left that could go a second time.
    await until(
      'every alert ended and the outbox emptied',
      () => allEnded(alerts) && waitingInJournal(copy).size === 0,
      60_000,
      output,
    );
    // No kill after the last start: every alert's end reaches the ledger's file too.
    await until(
      'every end in the ledger',
      () => new Set(endsSeen(copy).map((e) => e.alert)).size === alerts.length,
      30_000,
      output,
    );
    check('torn tail, restart', alerts);
    assert.ok(editor);
  });

  it('a full disk during an outage, then freed, then a restart: what went to Catch (outbox_unavailable) is never sent; what was kept is sent once', async () => {
    const folder = join(copy.userDir, 'bulkgate-outbox');
    mkdirSync(folder);
    // A small file system of its own where the machine allows a mount (CI runs as root);
    // otherwise every file Node-RED writes is limited in size, which fails a write as a full disk does.
    let mounted = false;
    try {
      execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=1m,mode=0700', 'tmpfs', folder], { stdio: 'ignore' });
      mounted = true;
    } catch {
      // Not allowed here: the file-size limit stands in.
    }
    try {
      alertFlow(copy, sim);
      let editor = await start(mounted ? {} : { fileSizeKb: 256 });
      await sim.fault({ offline: { seconds: 3600, mode: '503' } });
      if (mounted) writeFileSync(join(folder, 'filler'), Buffer.alloc(1024 * 1024 - 200 * 1024));
      const alerts = ids('f', 800);
      await handIn(editor, alerts);
      await until(
        'each alert kept or at Catch',
        () => {
          const caught = new Set(endsSeen(copy).map((e) => e.alert));
          const waiting = waitingIds();
          return alerts.every((a) => caught.has(a) || waiting.has(a));
        },
        120_000,
        output,
      );
      const caught = endsSeen(copy).filter((e) => e.end === 'catch');
      assert.ok(
        caught.length > 0 && caught.length < alerts.length,
        `${caught.length} of ${alerts.length} went to Catch: the disk filled part-way`,
      );
      assert.deepEqual([...new Set(caught.map((e) => e.code))], ['outbox_unavailable']);
      await copy.kill();
      if (mounted) rmSync(join(folder, 'filler'));
      await sim.fault({ offline: { seconds: 0 } });
      editor = await start();
      // A send goes from the journal and leaves it when it ended: with every alert ended and the
      // journal empty, nothing is left that could go a second time.
      await until(
        'every alert ended and the outbox emptied',
        () => allEnded(alerts) && waitingInJournal(copy).size === 0,
        120_000,
        output,
      );
      check(`full disk (${mounted ? 'a 1 MB tmpfs' : 'ulimit -f'}), freed, restart`, alerts);
      assert.ok(editor);
    } finally {
      await copy.kill();
      if (mounted) execFileSync('umount', [folder]);
    }
  });
});

describe("every alert once: a kill at each step of the outbox journal's compaction", function () {
  this.timeout(120_000);
  let dir: string;
  before(() => (dir = mkdtempSync(join(tmpdir(), 'bulkgate-compaction-'))));
  after(() => rmSync(dir, { recursive: true, force: true }));

  for (const step of STEPS) {
    it(`killed at "${step}": after a restart exactly the ${KEPT - ENDED} waiting entries load, none that ended, and the file takes more`, () => {
      const path = join(dir, step, 'acc.jsonl');
      const child = spawnSync(process.execPath, [join(__dirname, 'support', 'compaction-child.js'), path, step], {
        encoding: 'utf8',
      });
      assert.equal(child.signal, 'SIGKILL', `the child was killed at ${step}: ${child.stderr}`);
      const journal = new OutboxJournal(path);
      assert.equal(journal.lock(), true, "the dead process's lock is taken over");
      const loaded = [...journal.load(() => undefined).keys()];
      const expected = Array.from({ length: KEPT - ENDED }, (_, i) => `e${ENDED + i}`);
      const ended = new Set(Array.from({ length: ENDED }, (_, i) => `e${i}`));
      const row = {
        fault: `compaction, killed at ${step}`,
        handedIn: KEPT,
        ended: ENDED,
        atGateway: 0,
        lost: expected.filter((id) => !loaded.includes(id)).length,
        neverEnded: 0,
        sentTwice: 0,
        endedTwice: loaded.filter((id) => ended.has(id)).length,
        resentAfterCrash: 0,
      };
      rows.push(row);
      assert.deepEqual(loaded, expected);
      return journal
        .keep(entryLine(KEPT))
        .then(() => journal.close())
        .then(() => {
          assert.deepEqual([...new OutboxJournal(path).load(() => undefined).keys()], [...expected, `e${KEPT}`]);
          // A temporary file the kill left is only litter: it is never read as the journal.
          assert.ok(readdirSync(join(dir, step)).every((f) => f === 'acc.jsonl' || f.startsWith('acc.jsonl.')));
        });
    });
  }
});

/**
 * The outbox's file itself (unit): one writer at a time (its lock, taken over at once from a
 * process of this machine that is gone, and from any whose lock went untouched for the bound),
 * what each line holds, when the file counts as mostly spent, and that an empty outbox leaves no
 * file and no lock behind.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, utimesSync, writeFileSync } from 'node:fs';
import { hostname, tmpdir } from 'node:os';
import { join } from 'node:path';
import FakeTimers from '@sinonjs/fake-timers';
import { LOCK_STALE_MS, lockStaleMs } from '../../nodes/account/journal';
import { OutboxJournal, lockedError } from '../../nodes/account/outbox-journal';
import { until } from '../support/wait';

/** A process id no process has (beyond Linux's pid_max). */
const GONE_PID = 4_194_305;

describe("the outbox's file (unit)", () => {
  let dir: string;
  let path: string;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'bulkgate-file-'));
    path = join(dir, 'bulkgate-outbox', 'acc.jsonl');
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  const lockOf = (pid: unknown, host: unknown = hostname()) => {
    mkdirSync(join(dir, 'bulkgate-outbox'), { recursive: true });
    writeFileSync(`${path}.lock`, JSON.stringify({ pid, host }));
  };

  it('the lock: taken with its folder made (owner only), naming this process; taken once', () => {
    const journal = new OutboxJournal(path);
    assert.equal(journal.locked, false);
    assert.equal(journal.lock(), true);
    assert.equal(journal.locked, true);
    assert.deepEqual(JSON.parse(readFileSync(`${path}.lock`, 'utf8')), { pid: process.pid, host: hostname() });
    assert.equal(statSync(`${path}.lock`).mode & 0o777, 0o600);
    assert.equal(statSync(join(dir, 'bulkgate-outbox')).mode & 0o777, 0o700);
    assert.equal(journal.lock(), true, 'held already');
  });

  it('a living process holds it: not taken (this process is one); a process that is gone, or a lock no one can read: taken over', () => {
    lockOf(process.ppid);
    assert.equal(new OutboxJournal(path).lock(), false, 'the parent process lives');
    lockOf(GONE_PID);
    assert.equal(new OutboxJournal(path).lock(), true, 'gone');
    lockOf(process.pid);
    assert.equal(new OutboxJournal(path).lock(), true, 'this very process left it (an earlier account node)');
    mkdirSync(join(dir, 'bulkgate-outbox'), { recursive: true });
    writeFileSync(`${path}.lock`, '{"pid": 12');
    assert.equal(new OutboxJournal(path).lock(), true, 'damaged');
  });

  describe('a lock whose holder is gone, wherever it ran (a fake clock)', () => {
    let clock: ReturnType<typeof FakeTimers.install>;
    const T = 1_700_000_000_000;
    beforeEach(
      () => (clock = FakeTimers.install({ toFake: ['setInterval', 'clearInterval', 'Date', 'performance'], now: T })),
    );
    afterEach(() => clock.uninstall());
    /** The lock's time, as its holder's touch sets it. */
    const touch = (at = Date.now()) => utimesSync(`${path}.lock`, new Date(at), new Date(at));

    it("the bound is 30 s; BULKGATE_OUTBOX_LOCK_STALE_MS sets it (tests), within setTimeout's range", () => {
      assert.equal(LOCK_STALE_MS, 30_000);
      assert.equal(lockStaleMs({}), 30_000);
      assert.equal(lockStaleMs({ BULKGATE_OUTBOX_LOCK_STALE_MS: '4000' }), 4000);
      assert.equal(lockStaleMs({ BULKGATE_OUTBOX_LOCK_STALE_MS: 'soon' }), 30_000);
      assert.equal(
        lockStaleMs({ BULKGATE_OUTBOX_LOCK_STALE_MS: '10' }),
        30_000,
        'shorter than the touches could keep up with',
      );
      assert.equal(lockStaleMs({ BULKGATE_OUTBOX_LOCK_STALE_MS: '1e12' }), 2 ** 31 - 1);
      assert.equal(new OutboxJournal(path).touchEveryMs, 5000, 'touched six times per bound');
    });

    it('another host, or no pid: not taken while touched within the bound; taken once untouched for longer (a recreated container, a new pod)', async () => {
      lockOf(GONE_PID, 'another-host');
      touch(T - 1000);
      const journal = new OutboxJournal(path);
      assert.equal(journal.lock(), false, 'touched 1 s ago');
      clock.tick(30_000 - 1000);
      assert.equal(journal.lock(), false, 'exactly the bound');
      clock.tick(1);
      assert.equal(journal.lock(), true, 'untouched for longer than the bound');
      assert.deepEqual(JSON.parse(readFileSync(`${path}.lock`, 'utf8')), { pid: process.pid, host: hostname() });
      await journal.close();
      rmSync(`${path}.lock`);
      lockOf('12');
      touch();
      const other = new OutboxJournal(path);
      assert.equal(other.lock(), false);
      clock.tick(30_001);
      assert.equal(other.lock(), true, 'without a pid: by its time only');
    });

    it('another host, not touched for an hour (a container recreated long after): taken at the first look, nothing to wait for', () => {
      lockOf(GONE_PID, 'another-host');
      touch(T - 3_600_000);
      assert.equal(new OutboxJournal(path).lock(), true);
    });

    it('a lock touched by its holder is never stale: another host that keeps touching it keeps it, past the bound many times', () => {
      lockOf(GONE_PID, 'another-host');
      touch();
      const journal = new OutboxJournal(path);
      for (let i = 0; i < 40; i++) {
        clock.tick(5000);
        touch();
        assert.equal(journal.lock(), false, `after ${(i + 1) * 5} s`);
      }
    });

    it("a holder's clock ahead of this one's (a shared disk): stale once not seen changing for the bound on this process's own clock", () => {
      lockOf(GONE_PID, 'another-host');
      touch(T + 3_600_000);
      const journal = new OutboxJournal(path);
      assert.equal(journal.lock(), false, 'first seen now');
      clock.tick(30_000);
      assert.equal(journal.lock(), false, 'unchanged for the bound, not longer');
      clock.tick(1);
      assert.equal(journal.lock(), true);
    });

    it('the wall clock stepped forward an hour while this process watches: a lock its holder touched just before is not stale until untouched for the bound', () => {
      lockOf(GONE_PID, 'another-host');
      touch();
      const journal = new OutboxJournal(path);
      assert.equal(journal.lock(), false, 'first seen now');
      clock.setSystemTime(Date.now() + 3_600_000);
      clock.tick(1000);
      assert.equal(journal.lock(), false, 'an hour by the wall clock, 1 s by this process');
      touch();
      clock.tick(30_000);
      assert.equal(journal.lock(), false, 'touched after the step, unchanged for the bound');
      clock.tick(1);
      assert.equal(journal.lock(), true);
    });

    it("the holder's death is known only by its lock: alive once seen touched, and for three touches after; a lock first seen is not known to live", () => {
      lockOf(GONE_PID, 'another-host');
      touch();
      const journal = new OutboxJournal(path);
      assert.equal(journal.holderAlive(), false, 'first seen: it may be a dead one');
      clock.tick(5000);
      touch();
      assert.equal(journal.holderAlive(), true, 'seen touched');
      clock.tick(15_000);
      assert.equal(journal.holderAlive(), true, 'three touches since');
      clock.tick(1);
      assert.equal(journal.holderAlive(), false, 'no touch seen for more than three');
      lockOf(process.ppid);
      assert.equal(new OutboxJournal(path).holderAlive(), true, 'a living process of this machine');
    });

    it("the holder touches its lock every 5 s (an unref'd timer); a lock taken over meanwhile is lost: not touched, nothing more written, its owner told", async () => {
      const journal = new OutboxJournal(path);
      let lost = 0;
      journal.lost = () => lost++;
      assert.equal(journal.lock(), true);
      clock.tick(5000);
      assert.equal(statSync(`${path}.lock`).mtimeMs, Date.now(), 'touched');
      clock.tick(5000);
      assert.equal(statSync(`${path}.lock`).mtimeMs, Date.now(), 'touched again');
      lockOf(GONE_PID, 'another-host');
      touch(T);
      clock.tick(5000);
      assert.equal(lost, 1);
      assert.equal(journal.locked, false);
      assert.equal(statSync(`${path}.lock`).mtimeMs, T, "the other's lock is left alone");
      const error = await journal.keep('{"id":"a"}').then(
        () => undefined,
        (e: { code: string }) => e,
      );
      assert.equal(error?.code, 'outbox_locked', 'an append does not take it back');
      assert.equal(journal.lock(), false, 'touched 5 s ago by the other');
    });
  });

  it('a graceful stop (the process exits) gives the lock up and leaves the file; a kill leaves the lock', () => {
    const child = (exit: string) =>
      spawnSync(
        process.execPath,
        [
          '-e',
          `const { OutboxJournal } = require(${JSON.stringify(require.resolve('../../nodes/account/outbox-journal'))}); const j = new OutboxJournal(${JSON.stringify(path)}); j.keep('{"id":"a"}').then(() => { ${exit} });`,
        ],
        { encoding: 'utf8' },
      );
    const stopped = child('process.exit(0)');
    assert.equal(stopped.status, 0, stopped.stderr);
    assert.equal(existsSync(`${path}.lock`), false, 'given up at exit');
    assert.match(readFileSync(path, 'utf8'), /\{"id":"a"\}/);
    const killed = child("process.kill(process.pid, 'SIGKILL')");
    assert.equal(killed.signal, 'SIGKILL');
    assert.equal(existsSync(`${path}.lock`), true, 'a kill leaves it (its time tells, or its pid on this machine)');
  });

  it('the file: a header, each kept line, then a done line per message that left; appended in one write per turn; owner only', async () => {
    const journal = new OutboxJournal(path);
    assert.equal(journal.exists(), false);
    assert.equal(journal.where, path);
    await Promise.all([journal.keep('{"id":"a"}'), journal.keep('{"id":"b"}')]);
    await journal.done('a');
    assert.equal(readFileSync(path, 'utf8'), '{"bulkgateOutbox":2}\n{"id":"a"}\n{"id":"b"}\n{"done":"a"}\n');
    assert.equal(statSync(path).mode & 0o777, 0o600);
    assert.equal(journal.exists(), true);
    assert.equal(journal.spent, 2, 'a done message spends its line and the done line');
    await journal.close();
    await journal.keep('{"id":"c"}');
    assert.equal(readFileSync(path, 'utf8').split('\n').filter(Boolean).length, 5, 'reopened: no second header');
    await journal.close();
  });

  it('a line that its msg left rides the next commit, after the lines that commit waits for; without one it is written within a second; a graceful close writes it', async () => {
    const journal = new OutboxJournal(path);
    await journal.keep('{"id":"a"}');
    journal.emitted('a');
    assert.doesNotMatch(readFileSync(path, 'utf8'), /emitted/, 'no write of its own at once');
    await journal.keep('{"id":"b"}');
    assert.equal(readFileSync(path, 'utf8'), '{"bulkgateOutbox":2}\n{"id":"a"}\n{"id":"b"}\n{"emitted":"a"}\n');
    journal.emitted('b');
    await until('written alone within a second', () => readFileSync(path, 'utf8').includes('{"emitted":"b"}'), 3_000);
    await journal.keep('{"id":"c"}');
    journal.emitted('c');
    await journal.close();
    assert.match(readFileSync(path, 'utf8'), /\{"emitted":"c"\}\n$/, 'a graceful close writes it');
  });

  it('another process holds the file: a keep fails with outbox_locked, naming the file', async () => {
    lockOf(process.ppid);
    const error = await new OutboxJournal(path).keep('{"id":"a"}').then(
      () => undefined,
      (e: { code: string; message: string }) => e,
    );
    assert.equal(error?.code, 'outbox_locked');
    assert.equal(error?.message, lockedError(path).message);
    assert.match(
      lockedError(path).message,
      new RegExp(`another Node-RED process holds the outbox file ${path.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}`),
    );
    assert.deepEqual(lockedError(path).brief, { key: 'outbox-locked' });
  });

  it('mostly spent: more than 2,000 spent lines and more than the live ones', () => {
    const journal = new OutboxJournal(path);
    journal.spent = 2_000;
    assert.equal(journal.wantsCompaction(0), false, 'not past 2,000');
    journal.spent = 2_001;
    assert.equal(journal.wantsCompaction(2_000), true);
    assert.equal(journal.wantsCompaction(2_001), false, 'not more than the live ones');
  });

  it('loading counts what is spent: every line that no longer stands for a waiting message', async () => {
    const journal = new OutboxJournal(path);
    await journal.keep(JSON.stringify({ id: 'a', node: 'n', body: {}, since: 1, order: 0, attempts: 1, reason: '' }));
    await journal.keep(JSON.stringify({ id: 'b', node: 'n', body: {}, since: 2, order: 0, attempts: 1, reason: '' }));
    await journal.done('a');
    await journal.close();
    const loaded = new OutboxJournal(path).load(() => undefined);
    assert.deepEqual([...loaded.keys()], ['b']);
    const again = new OutboxJournal(path);
    again.load(() => undefined);
    assert.equal(again.spent, 2, 'a and its done line; the header is not a line of the journal');
  });

  it('released when nothing waits: the file and its lock are gone, and the lock is free for another', async () => {
    const journal = new OutboxJournal(path);
    await journal.keep('{"id":"a"}');
    await journal.done('a');
    await journal.release();
    assert.equal(existsSync(path), false);
    assert.equal(existsSync(`${path}.lock`), false);
    assert.equal(journal.locked, false);
    assert.equal(journal.spent, 0);
    assert.equal(new OutboxJournal(path).lock(), true);
  });

  it('not released while a line waits to be written', async () => {
    const journal = new OutboxJournal(path);
    await journal.keep('{"id":"a"}');
    const written = journal.keep('{"id":"b"}');
    await journal.release();
    await written;
    assert.equal(existsSync(path), true);
    assert.equal(journal.locked, true);
    await journal.close();
  });
  it("release by a journal that does not hold the lock removes nothing: the file is the holder's", async () => {
    const holder = new OutboxJournal(path);
    assert.equal(holder.lock(), true);
    await holder.keep(JSON.stringify({ id: 'a', node: 'n', body: {}, since: 1, order: 0, attempts: 1, reason: '' }));
    const other = new OutboxJournal(path);
    await other.release();
    assert.deepEqual([existsSync(path), existsSync(`${path}.lock`)], [true, true]);
    await holder.close();
  });

  it('loading: a line without an id, a node, a body or a since is damaged and counted; a kept line repeated counts once, at its last place; no file is no warning, a folder in its place is', async () => {
    mkdirSync(join(dir, 'bulkgate-outbox'), { recursive: true });
    const entry = (id: string, since: number) =>
      JSON.stringify({ id, node: 'n', body: {}, since, order: 0, attempts: 1, reason: '' });
    writeFileSync(
      path,
      [
        JSON.stringify({ bulkgateOutbox: 2 }),
        entry('a', 1),
        entry('b', 2),
        JSON.stringify({ id: 3, node: 'n', body: {}, since: 3 }),
        JSON.stringify({ id: 'c', body: {}, since: 3 }),
        JSON.stringify({ id: 'd', node: 'n', body: 'text', since: 3 }),
        JSON.stringify({ id: 'e', node: 'n', body: {}, since: '3' }),
        '   ',
        entry('a', 1),
        'not json',
      ].join('\n') + '\n',
    );
    const warned: [string, unknown][] = [];
    const loaded = new OutboxJournal(path).load((key, params) => warned.push([key, params]));
    assert.deepEqual([...loaded.keys()], ['b', 'a']);
    assert.deepEqual(warned, [['outbox-bad-lines', { path, bad: 5, kept: 2 }]]);
    const none: unknown[] = [];
    assert.equal(new OutboxJournal(join(dir, 'nothing.jsonl')).load((...w) => none.push(w)).size, 0);
    assert.deepEqual(none, []);
    mkdirSync(join(dir, 'folder.jsonl'));
    const folder: string[] = [];
    new OutboxJournal(join(dir, 'folder.jsonl')).load((key) => folder.push(key));
    assert.deepEqual(folder, ['outbox-unreadable']);
  });
});

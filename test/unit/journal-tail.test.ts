/**
 * The outbox's journal is true at its tail (unit): a last line written in part is cut back before
 * anything is appended, and the warning says so; a group commit that fails part-way (a disk
 * filling up, stood in for by a write that stops half-way) is cut back to where it began, and its
 * `done` lines go with the next commit; the file is never opened through a symbolic link. The
 * tracking file follows the same rules.
 */
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { open } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Outbox } from '../../nodes/account/outbox';
import { FileOutboxLog, OutboxJournal, type Warn } from '../../nodes/account/outbox-journal';
import { TrackingFile } from '../../nodes/account/tracking-file';

const entry = (id: string) =>
  JSON.stringify({ id, node: 't', body: { text: id }, since: 1, order: 0, attempts: 1, reason: '' });

/** The ids a journal's file holds as waiting, read as a restart reads it. */
function waiting(path: string): string[] {
  return [...new OutboxJournal(path).load(() => undefined).keys()];
}

/** Makes every FileHandle write stop half-way with ENOSPC while `full()` says the disk is full. */
async function fillingDisk(dir: string, full: () => boolean): Promise<() => void> {
  const probe = await open(join(dir, 'probe'), 'w');
  const proto = Object.getPrototypeOf(probe) as { appendFile: (data: string, encoding: string) => Promise<void> };
  await probe.close();
  const original = proto.appendFile;
  proto.appendFile = async function (this: unknown, data: string, encoding: string) {
    if (!full()) return original.call(this, data, encoding);
    await original.call(this, data.slice(0, Math.floor(data.length / 2)), encoding);
    throw Object.assign(new Error('ENOSPC: no space left on device, write'), { code: 'ENOSPC' });
  };
  return () => void (proto.appendFile = original);
}

describe("the outbox's journal at its tail (unit)", () => {
  let dir: string;
  let path: string;
  let seen: [string, Record<string, string | number | Error>][];
  const warn: Warn = (key, params) => void seen.push([key, params]);
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'bulkgate-tail-'));
    mkdirSync(join(dir, 'bulkgate-outbox'));
    path = join(dir, 'bulkgate-outbox', 'acc.jsonl');
    seen = [];
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it('a last line cut short is cut back at loading, with a warning that names the bytes; the next kept line is whole', async () => {
    const torn = entry('torn').slice(0, 20);
    writeFileSync(path, `{"bulkgateOutbox":2}\n${entry('a')}\n${torn}`);
    const journal = new OutboxJournal(path);
    assert.equal(journal.lock(), true);
    assert.deepEqual([...journal.load(warn).keys()], ['a']);
    assert.deepEqual(seen, [['outbox-torn-tail', { path, bytes: torn.length }]]);
    await journal.keep(entry('b'));
    await journal.close();
    assert.deepEqual(waiting(path), ['a', 'b']);
    assert.equal(readFileSync(path, 'utf8'), `{"bulkgateOutbox":2}\n${entry('a')}\n${entry('b')}\n`);
  });

  it('garbage appended while the journal runs is cut back before the next commit (a 3 MB line too)', async () => {
    const journal = new OutboxJournal(path);
    journal.warn = warn;
    assert.equal(journal.lock(), true);
    await journal.keep(entry('a'));
    await journal.close();
    writeFileSync(path, readFileSync(path, 'utf8') + 'x'.repeat(3 * 1024 * 1024));
    await journal.keep(entry('b'));
    await journal.close();
    assert.deepEqual(waiting(path), ['a', 'b']);
    assert.deepEqual(seen, [['outbox-torn-tail', { path, bytes: 3 * 1024 * 1024 }]]);
  });

  it('a group commit that fails part-way is cut back to where it began: the refused keep is not in the file, its outbox_unavailable names the cause', async () => {
    let full = false;
    const restore = await fillingDisk(dir, () => full);
    try {
      const journal = new OutboxJournal(path);
      const outbox = new Outbox(new FileOutboxLog(journal), warn);
      await outbox.keep(
        {
          ...JSON.parse(entry('x')),
          operation: {},
          rejected: [],
          messages: 1,
          msg: {},
          order: 0,
          attempts: 1,
          reason: '',
        },
        {},
      );
      full = true;
      await assert.rejects(
        outbox.keep(
          {
            ...JSON.parse(entry('y')),
            operation: {},
            rejected: [],
            messages: 1,
            msg: {},
            order: 1,
            attempts: 1,
            reason: '',
          },
          {},
        ),
        (error: Error & { code?: string }) =>
          error.code === 'outbox_unavailable' &&
          /could not be written \(no space left on the disk \(ENOSPC\)\)/.test(error.message),
      );
      assert.equal(outbox.waiting, 1);
      full = false;
      await journal.close();
      const text = readFileSync(path, 'utf8');
      assert.ok(text.endsWith('\n'), 'the file ends with a whole line');
      assert.equal(waiting(path).length, 1, 'only the message that was kept is in the file');
    } finally {
      restore();
    }
  });

  it('a done line that could not be written goes with the next commit', async () => {
    let full = false;
    const restore = await fillingDisk(dir, () => full);
    try {
      const journal = new OutboxJournal(path);
      assert.equal(journal.lock(), true);
      await journal.keep(entry('a'));
      await journal.keep(entry('b'));
      full = true;
      await assert.rejects(journal.done('a'), /ENOSPC/);
      assert.deepEqual(waiting(path), ['a', 'b'], 'not written yet');
      full = false;
      await journal.keep(entry('c'));
      await journal.close();
      assert.deepEqual(waiting(path), ['b', 'c']);
    } finally {
      restore();
    }
  });

  it("a symbolic link planted at the journal's path is never followed: the keep fails, the target is untouched", async () => {
    const journal = new OutboxJournal(path);
    assert.equal(journal.lock(), true);
    const target = join(dir, 'target');
    writeFileSync(target, 'precious\n');
    symlinkSync(target, path);
    await assert.rejects(journal.keep(entry('a')), /ELOOP|symbolic/);
    assert.equal(readFileSync(target, 'utf8'), 'precious\n');
  });

  it('the tracking file: a torn last line is cut back before the next append, with a warning; a symbolic link at its path is not followed', async () => {
    const file = join(dir, 'track.jsonl');
    const line = JSON.stringify({
      s: { smsId: 'a', number: '1', sent: { node: 'n' }, acceptedAt: Date.now(), countsFrom: Date.now() },
    });
    writeFileSync(file, `${line}\n{"s":{"smsId":"b","num`);
    const warnings: string[] = [];
    const tracking = new TrackingFile(file, (w) => warnings.push(w));
    assert.deepEqual(
      tracking.load().records.map((r) => r.smsId),
      ['a'],
    );
    assert.match(warnings[0] as string, /the last line was written in part \(22 bytes cut off/);
    tracking.final('a');
    await tracking.close();
    assert.equal(readFileSync(file, 'utf8'), `${line}\n{"f":"a"}\n`);

    const linked = join(dir, 'linked.jsonl');
    const target = join(dir, 'target');
    writeFileSync(target, 'precious\n');
    symlinkSync(target, linked);
    const other = new TrackingFile(linked, (w) => warnings.push(w));
    other.final('x');
    await other.close();
    assert.equal(readFileSync(target, 'utf8'), 'precious\n');
    assert.ok(existsSync(linked));
  });
});

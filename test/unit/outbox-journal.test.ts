/**
 * The outbox's policies without Node-RED: its journal file (a file of any size loads, damaged
 * lines are skipped, the earlier format is carried over, spent lines are compacted away, a
 * temporary file never follows a planted symlink), its order and its stop on a transient
 * failure with a stand-in sender, and the circuit and rate limit it works with.
 */
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { GatewayError, withdrawnError, isWithdrawn, sendOperation } from '../../gateway';
import { Circuit } from '../../nodes/account/circuit';
import {
  Outbox,
  type NewEntry,
  type OutboxEntry,
  type OutboxReport,
  type OutboxWorker,
  type Outcome,
} from '../../nodes/account/outbox';
import { FileOutboxLog, OutboxJournal } from '../../nodes/account/outbox-journal';
import FakeTimers from '@sinonjs/fake-timers';
import { RateLimiter } from '../../nodes/account/rate-limit';
import { EMIT_BATCH, sendInBatches, type Msg } from '../../nodes/plumbing/runtime';
import { until as waitUntil } from '../support/wait';

const OPERATION = { kind: 'transactional', api: 'advanced', version: '2.0', method: 'POST', encoding: 'json' } as const;
const SIMPLE = sendOperation('transactional', { api: 'simple', version: '1.0' });

function newEntry(i: number, since = Date.now()): NewEntry {
  return {
    node: 't',
    operation: OPERATION as never,
    body: { number: '420777123456', text: `Alert ${i}` },
    rejected: [],
    messages: 1,
    msg: { payload: `Alert ${i}`, seq: i },
    since,
    order: i,
    attempts: 1,
    reason: 'HTTP 503',
  };
}

/** A stand-in for the account: sends succeed until `failAfter` sends, then fail as the gateway being away. */
function standIn(options: { failAfter?: number; minutes?: number } = {}) {
  const settled: { seq: unknown; outcome: Outcome; attempts?: number; afterRestart?: boolean }[] = [];
  const reports: OutboxReport['kind'][] = [];
  let sent = 0;
  const worker: OutboxWorker = {
    minutes: options.minutes ?? 60,
    firstDelay: 5,
    size: 1_000_000,
    account: 'test',
    concurrency: 8,
    report: (report) => reports.push(report.kind),
    transient: (error) => error instanceof GatewayError && error.retryable,
    send: async (entry: OutboxEntry) => {
      await new Promise((r) => setImmediate(r));
      if (options.failAfter !== undefined && sent >= options.failAfter)
        throw new GatewayError({ type: 'unknown', status: 503, retryable: true, message: 'HTTP 503' });
      sent++;
      return { record: { status: 'accepted', number: String(entry.body.number) }, rejected: false };
    },
    settle: (entry, msg, outcome, afterRestart) =>
      void settled.push({ seq: msg.seq, outcome, attempts: entry.attempts, afterRestart }),
  };
  return { worker, settled, reports, sent: () => sent };
}

const until = (what: string, check: () => boolean, ms = 20_000) => waitUntil(what, check, ms, { every: 10 });

const warnings = () => {
  const seen: string[] = [];
  return {
    seen,
    warn: (key: string, params: Record<string, string | number | Error>) =>
      seen.push(`${key} ${JSON.stringify(params)}`),
  };
};

describe('outbox journal and policies (unit)', function () {
  this.timeout(60_000);
  let dir: string;
  let path: string;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'bulkgate-journal-'));
    path = join(dir, 'bulkgate-outbox', 'acc.jsonl');
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it('a simple 1.0 attempt is on disk before its request; after a crash, a simple 1.0 entry whose attempt had no answer ends once, unconfirmed, never sent again; an advanced 2.0 one and one answered before the crash are sent', async () => {
    const live = new Outbox(new FileOutboxLog(new OutboxJournal(path)), () => undefined);
    const onDisk: boolean[] = [];
    const { worker } = standIn();
    const send = worker.send;
    worker.send = (entry, probe) => {
      onDisk.push(readFileSync(path, 'utf8').includes(JSON.stringify({ attempt: entry.id })));
      return send(entry, probe);
    };
    const simple = (i: number) => ({ ...newEntry(i), operation: SIMPLE as never });
    await live.keep(simple(0), {});
    live.attach(worker);
    await until('sent', () => onDisk.length === 1);
    await live.detach(worker);
    assert.deepEqual(onDisk, [true], 'the attempt line was written before the request');

    // As a SIGKILL leaves it: entries, attempts without an answer, one answered (back) before the crash.
    rmSync(path, { force: true });
    writeFileSync(
      path,
      [
        '{"bulkgateOutbox":2}',
        JSON.stringify({ id: 's1', ...simple(1) }),
        JSON.stringify({ id: 'a2', ...newEntry(2) }),
        JSON.stringify({ id: 's3', ...simple(3) }),
        JSON.stringify({ attempt: 's1' }),
        JSON.stringify({ attempt: 'a2' }),
        JSON.stringify({ attempt: 's3' }),
        JSON.stringify({ back: 's3' }),
        '',
      ].join('\n'),
    );
    const outbox = new Outbox(new FileOutboxLog(new OutboxJournal(path)), () => undefined);
    const after = standIn();
    const sent: unknown[] = [];
    const sendAfter = after.worker.send;
    after.worker.send = (entry, probe) => {
      sent.push(entry.msg.seq);
      return sendAfter(entry, probe);
    };
    outbox.attach(after.worker);
    try {
      await until('all three ended', () => after.settled.length === 3);
      assert.deepEqual(sent.sort(), [2, 3], 'the simple 1.0 entry whose attempt had no answer is not sent again');
      const unconfirmed = after.settled.find((s) => s.seq === 1)?.outcome as { error?: GatewayError };
      assert.equal(unconfirmed.error?.code, 'unconfirmed');
      assert.deepEqual(
        after.settled
          .filter((s) => 'result' in s.outcome)
          .map((s) => s.seq)
          .sort(),
        [2, 3],
      );
      await until('the journal given back', () => !existsSync(path));
    } finally {
      await outbox.detach(after.worker);
    }
  });

  it('a stop or a crash between a done line and its port: after a restart the msg comes out once, marked afterRestart, as its done line records the end (the answer, or the error with its type and sentence); one whose emitted line follows is not handed on again; the file goes once every msg left', async () => {
    const answer = {
      record: { status: 'accepted', number: '420777123456', sms_id: 'sms-1', price: 1 },
      rejected: false,
    };
    const refused = {
      type: 'low_credit',
      status: 400,
      detail: null,
      retryable: false,
      message: 'The account has too little credit',
      brief: { key: 'low-credit' },
    };
    mkdirSync(join(dir, 'bulkgate-outbox'));
    writeFileSync(
      path,
      [
        '{"bulkgateOutbox":2}',
        ...[1, 2, 3, 4].map((i) => JSON.stringify({ id: `e${i}`, ...newEntry(i) })),
        JSON.stringify({ done: 'e1', end: { attempts: 3, result: answer } }),
        JSON.stringify({ done: 'e2', end: { attempts: 2, error: refused } }),
        JSON.stringify({ done: 'e3', end: { attempts: 1, result: answer } }),
        JSON.stringify({ emitted: 'e3' }),
        '',
      ].join('\n'),
    );
    const outbox = new Outbox(new FileOutboxLog(new OutboxJournal(path)), () => undefined);
    assert.equal(outbox.waiting, 1, 'one entry waits; the ended ones are not sent again');
    const { worker, settled, sent } = standIn();
    outbox.attach(worker);
    try {
      await until('three msgs out', () => settled.length === 3);
      const bySeq = new Map(settled.map((s) => [s.seq, s]));
      assert.deepEqual([...bySeq.keys()].sort(), [1, 2, 4], 'e3 left before the stop: not again');
      assert.deepEqual(bySeq.get(1)?.outcome, { result: answer }, 'the answer as the gateway gave it');
      assert.deepEqual([bySeq.get(1)?.afterRestart, bySeq.get(1)?.attempts], [true, 3]);
      const error = (bySeq.get(2)?.outcome as { error: GatewayError }).error;
      assert.ok(error instanceof GatewayError);
      assert.deepEqual(
        [error.code, error.status, error.message, error.retryable, error.brief],
        ['low_credit', 400, refused.message, false, refused.brief],
      );
      assert.equal(bySeq.get(2)?.afterRestart, true);
      assert.equal(bySeq.get(4)?.afterRestart, false, 'one sent after the restart is not marked');
      assert.equal(sent(), 1, 'only the waiting one was sent');
      await until('the journal given back once every msg left', () => !existsSync(path));
    } finally {
      await outbox.detach(worker);
    }
    // A second start finds nothing to hand on.
    const again = new Outbox(new FileOutboxLog(new OutboxJournal(path)), () => undefined);
    const next = standIn();
    again.attach(next.worker);
    await new Promise((r) => setTimeout(r, 100)); // checks that nothing comes out again
    await again.detach(next.worker);
    assert.deepEqual(next.settled, []);
  });

  it('a done line records how its entry ended and is on disk before the msg leaves; the line that it left follows; a start that finds both hands nothing on', async () => {
    const outbox = new Outbox(new FileOutboxLog(new OutboxJournal(path)), () => undefined);
    const seen: string[] = [];
    const { worker } = standIn();
    worker.settle = () => void seen.push(readFileSync(path, 'utf8'));
    await outbox.keep(newEntry(1), {});
    await outbox.keep(newEntry(2), {});
    outbox.attach(worker);
    await until('both out', () => seen.length === 2);
    const [first] = seen;
    const doneLine = (first as string).split('\n').find((l) => l.startsWith('{"done"'));
    assert.ok(doneLine, 'the done line is on disk when the msg leaves');
    const done = JSON.parse(doneLine) as { end: { attempts: number; result: { record: { status: string } } } };
    assert.deepEqual([done.end.attempts, done.end.result.record.status], [2, 'accepted']);
    assert.ok(!(first as string).includes('"emitted"'), 'not yet the line that it left');
    // The second msg keeps the file (and the first one's emitted line rides its commit).
    await until('the file given back', () => !existsSync(path));
    await outbox.detach(worker);
  });

  it('a file of 200,000 entries loads whole (no spread of call arguments), oldest first', () => {
    const lines = ['{"bulkgateOutbox":2}'];
    const since = Date.now();
    for (let i = 0; i < 200_000; i++) lines.push(JSON.stringify({ id: `e${i}`, ...newEntry(i, since) }));
    mkdirSync(join(dir, 'bulkgate-outbox'));
    writeFileSync(path, lines.join('\n') + '\n');
    const { warn, seen } = warnings();
    const outbox = new Outbox(new FileOutboxLog(new OutboxJournal(path)), warn);
    assert.equal(outbox.waiting, 200_000);
    assert.equal(outbox.waitingFor('t'), 200_000);
    assert.deepEqual(seen, []);
  });

  it('a header line is the header, not an entry; damaged lines are skipped with a warning; done lines end their entry', () => {
    mkdirSync(join(dir, 'bulkgate-outbox'));
    writeFileSync(
      path,
      [
        '{"bulkgateOutbox":1}',
        JSON.stringify({ id: 'a', ...newEntry(1) }),
        '{"id": "broken", "node": ',
        JSON.stringify({ id: 'b', ...newEntry(2) }),
        JSON.stringify({ done: 'a' }),
        'not json',
      ].join('\n') + '\n',
    );
    const { warn, seen } = warnings();
    const outbox = new Outbox(new FileOutboxLog(new OutboxJournal(path)), warn);
    assert.equal(outbox.waiting, 1, 'b waits; a was done');
    assert.equal(seen.length, 1);
    assert.match(seen[0] as string, /^outbox-bad-lines .*"bad":2,"kept":1/);
  });

  it('a line without a field an entry holds, or with one of the wrong type, is damaged: skipped and counted, never sent', () => {
    mkdirSync(join(dir, 'bulkgate-outbox'));
    const whole = { id: 'whole', ...newEntry(1) } as Record<string, unknown>;
    const damaged: Record<string, unknown>[] = [];
    for (const field of ['id', 'node', 'body', 'since', 'order', 'attempts', 'reason']) {
      const { [field]: _left, ...without } = whole;
      damaged.push(field === 'id' ? without : { ...without, id: `no-${field}` }, {
        ...whole,
        id: `wrong-${field}`,
        [field]: field === 'body' ? null : field === 'id' ? 7 : true,
      });
    }
    damaged.push({ ...whole, id: 'wrong-deadline', deadline: 'soon' });
    writeFileSync(
      path,
      [
        '{"bulkgateOutbox":2}',
        JSON.stringify(whole),
        JSON.stringify({ ...whole, id: 'with-deadline', deadline: 1 }),
        ...damaged.map((d) => JSON.stringify(d)),
      ].join('\n') + '\n',
    );
    const { warn, seen } = warnings();
    const outbox = new Outbox(new FileOutboxLog(new OutboxJournal(path)), warn);
    assert.equal(outbox.waiting, 2, 'the whole entry and the one with a deadline');
    assert.deepEqual(seen, [`outbox-bad-lines ${JSON.stringify({ path, bad: damaged.length, kept: 2 })}`]);
  });

  it('a drain with a stand-in sender: results handed on in the order the msgs came; a transient failure stops it and keeps the rest in order', async () => {
    const { warn } = warnings();
    const kept = new OutboxJournal(path);
    const outbox = new Outbox(new FileOutboxLog(kept), warn);
    const { worker, settled, reports } = standIn({ failAfter: 30 });
    for (let i = 0; i < 50; i++) await outbox.keep(newEntry(i, Date.now()), {} as never);
    outbox.attach(worker);
    await until('30 sent', () => settled.length === 30);
    await new Promise((r) => setTimeout(r, 100)); // checks that nothing more is sent after the transient failure
    assert.deepEqual(
      settled.map((s) => s.seq),
      Array.from({ length: 30 }, (_, i) => i),
    );
    assert.equal(outbox.waiting, 20);
    assert.equal(reports.at(-1), 'probe-failed', 'the next probe failed, and the account was told');
    await outbox.detach(worker);
    // What is left is read back from the file by the next process, in order.
    const journal = new OutboxJournal(path);
    assert.deepEqual(
      [...journal.load(warn).values()].map(({ entry }) => (entry as unknown as OutboxEntry).msg.seq),
      Array.from({ length: 20 }, (_, i) => 30 + i),
    );
    await kept.close();
  });

  /**
   * `count` entries kept, each send held on the wire until answered, the lock touched every 100 ms (a removal or a
   * taking over seen, the lock taken back, within a second). `run` gets it; its sends are answered and it stops after.
   */
  async function onTheWire(count: number, run: (held: ReturnType<typeof holding>) => Promise<void>): Promise<void> {
    const held = holding();
    for (let i = 0; i < count; i++) await held.outbox.keep(newEntry(i), {} as never);
    held.outbox.attach(held.worker);
    try {
      await run(held);
    } finally {
      held.answers.splice(0).forEach((answer) => answer());
      await held.outbox.detach(held.worker);
      await held.journal.close();
    }
  }
  function holding() {
    const { warn, seen } = warnings();
    process.env.BULKGATE_OUTBOX_LOCK_STALE_MS = '600';
    const journal = new OutboxJournal(path);
    delete process.env.BULKGATE_OUTBOX_LOCK_STALE_MS;
    const outbox = new Outbox(new FileOutboxLog(journal), warn);
    const sends = new Map<unknown, number>();
    const answers: (() => void)[] = [];
    const { worker, settled } = standIn();
    worker.send = (entry) => {
      sends.set(entry.msg.seq, (sends.get(entry.msg.seq) ?? 0) + 1);
      return new Promise((resolve) =>
        answers.push(() =>
          resolve({ record: { status: 'accepted', number: '420777123456' }, rejected: false } as never),
        ),
      );
    };
    const lockLost = () => seen.some((w) => w.startsWith('outbox-lock-lost'));
    return { journal, outbox, worker, settled, sends, answers, warn, lockLost };
  }

  it('its lock file removed while an entry is on the wire: the lock is taken back and the file adopted again, but what this process still sends is not sent twice; every msg ends once', async () => {
    await onTheWire(3, async ({ journal, outbox, settled, sends, answers, lockLost }) => {
      await until('the probe on the wire', () => answers.length === 1);
      rmSync(`${path}.lock`);
      await until('the lock taken back', () => lockLost() && journal.locked);
      // Waiting again: the two it let go, and (before the fix) a second copy of the one on the wire.
      await until('the file adopted again', () => outbox.waiting >= 3);
      for (let step = 0; settled.length < 3 && step < 500; step++) {
        answers.shift()?.();
        await new Promise((r) => setTimeout(r, 10));
      }
      await new Promise((r) => setTimeout(r, 100)); // time for a second attempt of one on the wire
      answers.splice(0).forEach((answer) => answer());
      await new Promise((r) => setTimeout(r, 50));
      assert.deepEqual(Object.fromEntries(sends), { 0: 1, 1: 1, 2: 1 }, 'each sent once');
      assert.deepEqual(
        settled.map((s) => s.seq),
        [0, 1, 2],
        'each msg ended once, in order',
      );
    });
  });

  it('its lock taken by another host, then stale and taken back: one answered meanwhile (its done line refused) is not sent again, and its end is on record for a restart (only the one on the wire waits in its file)', async () => {
    await onTheWire(4, async ({ journal, settled, sends, answers, warn, lockLost }) => {
      await until('the probe on the wire', () => answers.length === 1);
      // Another host's Node-RED takes the lock, and is then gone (it never touches it again).
      writeFileSync(`${path}.lock`, JSON.stringify({ pid: 1, host: 'another-host' }));
      await until('the lock lost', lockLost);
      answers.shift()?.();
      await until('the probe handed on', () => settled.length === 1);
      await until('the lock taken back', () => journal.locked, 5_000);
      // The next probe answered, then the first of the two that follow it; the last stays on the wire.
      await until('the next probe on the wire', () => answers.length === 1);
      answers.shift()?.();
      await until('the last two on the wire', () => answers.length === 2);
      answers.shift()?.();
      await until('three handed on', () => settled.length === 3);
      await new Promise((r) => setTimeout(r, 100)); // time for a second attempt
      assert.deepEqual(
        Object.fromEntries(sends),
        { 0: 1, 1: 1, 2: 1, 3: 1 },
        'each sent once (the last still on the wire)',
      );
      assert.deepEqual(
        settled.map((s) => s.seq),
        [0, 1, 2],
        'each msg ended once, in order',
      );
      // A crash now: the next start sends only the one still on the wire (its end may be on record, not yet its leaving).
      const waiting = [...new OutboxJournal(path).load(warn).values()].filter(({ ended }) => !ended);
      assert.deepEqual(
        waiting.map(({ entry }) => (entry as unknown as OutboxEntry).msg.seq),
        [3],
      );
    });
  });

  it('its lock taken by another host while 1,024 wait and one is on the wire: that one, answered meanwhile (its done line refused), is not sent again when the lock is taken back (the outbox sweeping its ended entries forgets nothing it must remember)', async () => {
    await onTheWire(1025, async ({ journal, sends, answers, lockLost }) => {
      await until('the probe on the wire', () => answers.length === 1);
      writeFileSync(`${path}.lock`, JSON.stringify({ pid: 1, host: 'another-host' }));
      await until('the lock lost', lockLost);
      // Its end is the 1,025th entry let go or ended: the outbox sweeps its ended ones.
      answers.shift()?.();
      await until('the lock taken back', () => journal.locked, 5_000);
      await until('the next probe on the wire', () => answers.length === 1);
      await new Promise((r) => setTimeout(r, 100)); // time for a second attempt of the first
      assert.equal(sends.get(0), 1, 'the one answered while the lock was lost is not sent again');
    });
  });

  it('a file mostly spent is compacted: its lines are the waiting entries only; an empty outbox removes it and its lock', async () => {
    const { warn } = warnings();
    const outbox = new Outbox(new FileOutboxLog(new OutboxJournal(path)), warn);
    const { worker, settled } = standIn({ failAfter: 4000 });
    for (let i = 0; i < 5000; i++) void outbox.keep(newEntry(i), {} as never);
    await until('all kept', () => existsSync(path) && readFileSync(path, 'utf8').split('\n').length >= 5001);
    outbox.attach(worker);
    await until('4000 sent', () => settled.length === 4000, 30_000);
    await outbox.detach(worker);
    const lines = () => readFileSync(path, 'utf8').split('\n').filter(Boolean).length;
    await until('compacted', () => lines() < 2000, 10_000).catch(() =>
      assert.fail(`${lines()} lines (5,000 entries and 4,000 done lines were written)`),
    );
    assert.equal(lines(), 1001, 'the header and the 1,000 waiting entries');
    const { worker: second, settled: rest } = standIn();
    outbox.attach(second);
    await until('the rest sent', () => rest.length === 1000, 30_000);
    await outbox.detach(second);
    // The file goes first, its lock a moment later (release awaits the one, then removes the other).
    await until('the file and its lock removed', () => !existsSync(path) && !existsSync(`${path}.lock`));
  });

  it('compaction creates its temporary file exclusively: a planted symlink is never followed', async () => {
    const { warn } = warnings();
    const journal = new OutboxJournal(path);
    assert.equal(journal.lock(), true);
    await journal.keep(JSON.stringify({ id: 'x', ...newEntry(1) }));
    const target = join(dir, 'target');
    writeFileSync(target, 'precious');
    const now = Date.now;
    Date.now = () => 1_700_000_000_000;
    try {
      symlinkSync(target, `${path}.${process.pid}.${(1_700_000_000_000).toString(36)}.tmp`);
      await assert.rejects(
        journal.compact(() => ['{"id":"y"}']),
        (error: NodeJS.ErrnoException) => error.code === 'EEXIST',
      );
    } finally {
      Date.now = now;
    }
    assert.equal(readFileSync(target, 'utf8'), 'precious');
    assert.equal(journal.load(warn).size, 1, 'the journal is as it was');
    await journal.close();
  });

  it('the circuit: trip stops what waits on its signal, reset gives a new one; a withdrawn error is marked and never reached the gateway', () => {
    const circuit = new Circuit();
    let stopped = 0;
    circuit.signal.addEventListener('abort', () => stopped++);
    circuit.trip('HTTP 503');
    circuit.trip('HTTP 503');
    assert.equal(stopped, 1);
    assert.equal(circuit.signal.aborted, true);
    circuit.reset('answered');
    assert.equal(circuit.open, false);
    assert.equal(circuit.signal.aborted, false);
    const withdrawn = withdrawnError();
    assert.equal(isWithdrawn(withdrawn), true);
    assert.equal(withdrawn.mayHaveReached, false);
    assert.equal(isWithdrawn(new Error('other')), false);
  });

  it('a long list is sent in batches a turn of the event loop apart: each port in order, the summary last; a few at once', async () => {
    const calls: (Msg | Msg[] | null)[][] = [];
    const accepted = Array.from({ length: 1000 }, (_, i) => ({ seq: i }) as unknown as Msg);
    const refused = Array.from({ length: 200 }, (_, i) => ({ seq: 1000 + i }) as unknown as Msg);
    const summary = { summary: true } as unknown as Msg;
    let otherFlowRan = false;
    const sending = sendInBatches(
      (out) => {
        calls.push(out as (Msg | Msg[] | null)[]);
        if (calls.length === 1) setImmediate(() => (otherFlowRan = true));
        else if (calls.length === 3) assert.equal(otherFlowRan, true, 'another flow ran between the batches');
      },
      [accepted, refused, summary],
    );
    assert.equal(calls.length, 1, 'the first batch at once, the rest later');
    await sending;
    assert.equal(calls.length, Math.ceil(1200 / EMIT_BATCH));
    const port = (p: number) =>
      calls.flatMap((c) => (Array.isArray(c[p]) ? (c[p] as Msg[]) : c[p] ? [c[p] as Msg] : []));
    assert.deepEqual(port(0), accepted);
    assert.deepEqual(port(1), refused);
    assert.deepEqual(port(2), [summary]);
    assert.equal(calls.at(-1)?.[2], summary, 'the summary with the last batch');
    assert.ok(calls.every((c) => c.filter(Array.isArray).reduce((n, a) => n + (a as Msg[]).length, 0) <= EMIT_BATCH));
    const few: unknown[] = [];
    await sendInBatches((out) => few.push(out), [[summary], null]);
    assert.deepEqual(few, [[[summary], null]], 'a few msgs: one send, as before');
  });

  describe('on a fake clock', () => {
    let clock: ReturnType<typeof FakeTimers.install>;
    beforeEach(() => {
      clock = FakeTimers.install({
        toFake: ['setTimeout', 'clearTimeout', 'Date', 'performance'],
        now: 1_700_000_000_000,
      });
    });
    afterEach(() => clock.uninstall());

    const failing = (minutes: number) => {
      const { worker, settled, reports } = standIn({ failAfter: 0, minutes });
      return { worker: { ...worker, firstDelay: 1000 }, settled, reports };
    };
    const expiredOf = (settled: { seq: unknown; outcome: Outcome }[]) =>
      settled.filter((s) => 'error' in s.outcome && s.outcome.error.code === 'expired').map((s) => s.seq);

    it("a message's give-up time ends it on time: not a moment before, and not at the next probe", async () => {
      const outbox = new Outbox(undefined, () => undefined);
      const { worker, settled } = failing(60);
      outbox.attach(worker);
      await outbox.keep({ ...newEntry(1, Date.now()), deadline: Date.now() + 5_000 }, {} as never);
      await outbox.keep(newEntry(2, Date.now()), {} as never);
      await clock.tickAsync(4_999);
      assert.deepEqual(expiredOf(settled), [], 'not before its time');
      await clock.tickAsync(2);
      assert.deepEqual(expiredOf(settled), [1], 'at its time');
      assert.equal(outbox.waiting, 1, 'the other one waits on, with the account time');
      await outbox.detach(worker);
    });

    it('a message kept after others with a sooner give-up time ends at its own time, not at the next probe or at the account time', async () => {
      const outbox = new Outbox(undefined, () => undefined);
      const { worker, settled } = failing(60);
      outbox.attach(worker);
      await outbox.keep(newEntry(1, Date.now()), {} as never);
      // Probes at 1 s and 3 s fail; the next is due at 7 s: no round comes between the keep and the give-up.
      await clock.tickAsync(3_500);
      await outbox.keep({ ...newEntry(2, Date.now()), deadline: Date.now() + 2_000 }, {} as never);
      await clock.tickAsync(1_999);
      assert.deepEqual(expiredOf(settled), [], 'not before its time');
      await clock.tickAsync(2);
      assert.deepEqual(expiredOf(settled), [2], 'at its time');
      assert.equal(outbox.waiting, 1);
      await outbox.detach(worker);
    });

    it('when the last waiting message gives up, the account hears that nothing waits (it closes the circuit: the next msg tries the gateway itself, not after a probe delay)', async () => {
      const outbox = new Outbox(undefined, () => undefined);
      const { worker, settled, reports } = failing(60);
      outbox.attach(worker);
      await outbox.keep({ ...newEntry(1, Date.now()), deadline: Date.now() + 5_000 }, {} as never);
      await clock.tickAsync(1_001);
      assert.deepEqual(reports, ['probe-failed'], 'the probe failed, and the account was told');
      await clock.tickAsync(4_000);
      assert.deepEqual(expiredOf(settled), [1]);
      assert.equal(outbox.waiting, 0);
      assert.equal(reports.at(-1), 'empty', 'nothing waits, and the account was told');
      await outbox.detach(worker);
    });

    it("the account's outbox time counts in minutes: 1 minute is 60 s, not 1 s and not 60 min", async () => {
      const outbox = new Outbox(undefined, () => undefined);
      const { worker, settled } = failing(1);
      outbox.attach(worker);
      await outbox.keep(newEntry(1, Date.now()), {} as never);
      await clock.tickAsync(59_000);
      assert.deepEqual(expiredOf(settled), []);
      await clock.tickAsync(1_100);
      assert.deepEqual(expiredOf(settled), [1]);
      await outbox.detach(worker);
    });

    it('probes an unreachable gateway at growing intervals, never more than 15 s apart', async () => {
      const outbox = new Outbox(undefined, () => undefined);
      const { worker } = failing(60);
      const tries: number[] = [];
      const send = worker.send;
      const counting: OutboxWorker = {
        ...worker,
        send: (entry, probe) => (tries.push(Date.now()), send(entry, probe)),
      };
      outbox.attach(counting);
      await outbox.keep(newEntry(1, Date.now()), {} as never);
      await clock.tickAsync(120_000);
      const gaps = tries.slice(1).map((t, i) => t - (tries[i] as number));
      assert.ok(
        gaps.every((g, i) => i === 0 || g >= (gaps[i - 1] as number)),
        `growing: ${gaps.join(', ')}`,
      );
      assert.ok(Math.max(...gaps) <= 15_000, `at most 15 s: ${gaps.join(', ')}`);
      assert.equal(gaps.at(-1), 15_000, 'capped at 15 s');
      await outbox.detach(counting);
    });

    it("a msg waiting for the rate limit ends at its node's give-up time, not when its turn comes", async () => {
      const limiter = new RateLimiter(1, 60_000, 10);
      await limiter.acquire(1);
      const ended: { error?: GatewayError } = {};
      const waiting = limiter
        .acquire(1, undefined, undefined, {
          at: performance.now() + 2_000,
          error: () => new GatewayError({ type: 'expired', message: 'gave up' }),
        })
        .catch((error: GatewayError) => (ended.error = error));
      await clock.tickAsync(1_999);
      assert.ok(!ended.error, 'not before its time');
      await clock.tickAsync(2);
      await waiting;
      assert.equal((ended.error as GatewayError | undefined)?.code, 'expired');
      assert.equal(limiter.queued, 0);
      limiter.close('done');
    });
  });

  it('the rate limit: a msg waiting when the circuit opens leaves for the outbox; a refund frees its slot for the next', async () => {
    const limiter = new RateLimiter(1, 60_000, 10);
    const circuit = new Circuit();
    await limiter.acquire(1, undefined, circuit.signal);
    const waiting = limiter.acquire(1, undefined, circuit.signal);
    circuit.trip('HTTP 503');
    await assert.rejects(waiting, (error: unknown) => isWithdrawn(error));
    assert.equal(limiter.queued, 0);
    circuit.reset('answered');
    const next = limiter.acquire(1, undefined, circuit.signal);
    let through = false;
    void next.then(() => (through = true));
    // A slot free now would let it through within a turn of the event loop; the window is 60 s.
    await new Promise((r) => setImmediate(r));
    assert.equal(through, false, 'the window is full');
    limiter.refund(1);
    await next;
    assert.equal(through, true, 'the refunded slot let it through at once');
    limiter.close('done');
  });
});

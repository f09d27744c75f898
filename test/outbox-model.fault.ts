/**
 * The outbox against a model (fast-check's model-based testing): random sequences of keeps,
 * rounds, probes that fail or get through, sends that finish out of order, bursts big enough for
 * the outbox to tidy its list, and restarts from the journal, run against the real outbox with a
 * stand-in sender, checked at every step against the invariant: an entry is attempted only while
 * it waits (never while on the wire, never once it ended), it ends once, and nothing waiting is
 * forgotten (a restart loads exactly what did not end, and hands on what ended before the stop but
 * had not left yet, marked; at the end, everything kept ended). The wall
 * clock steps too (forward a year or an hour, back an hour or 30 days, as NTP sets a Raspberry Pi):
 * an entry ends as expired only once its 60 minutes passed, on the monotonic clock since it was
 * kept, or since a restart plus its age then by the wall clock (a power cut's length counts).
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import FakeTimers from '@sinonjs/fake-timers';
import fc from 'fast-check';
import { GatewayError } from '../gateway';
import { MAX_PROBE_DELAY, Outbox, type NewEntry, type OutboxEntry, type OutboxWorker } from '../nodes/account/outbox';
import { FileOutboxLog, OutboxJournal } from '../nodes/account/outbox-journal';
import { randomRuns } from './support/random-runs';

const realSetTimeout = globalThis.setTimeout;
const OPERATION = { kind: 'transactional', api: 'advanced', version: '2.0', method: 'POST', encoding: 'json' } as const;
type Finish = 'ok' | 'transient' | 'refused';

/** The model: which alerts wait, and which ended. */
interface Model {
  waiting: Set<number>;
  ended: Set<number>;
  next: number;
  /** When each may expire, on the monotonic clock; its wall-clock time kept, for a restart. */
  due: Map<number, { at: number; since: number }>;
}

const OUTBOX_MS = 60 * 60_000;

/** The real outbox, its stand-in sender's sends on the wire, and what broke the invariant. */
class Real {
  journal!: OutboxJournal;
  outbox!: Outbox;
  worker!: OutboxWorker;
  readonly wire: { seq: number; resolve: () => void; reject: (error: unknown) => void }[] = [];
  readonly onWire = new Set<number>();
  readonly settled = new Map<number, number>();
  /** Handed on by a process that started after it ended (a stop cut its hand-on short). */
  readonly afterRestart = new Set<number>();
  readonly broken: string[] = [];
  constructor(
    readonly path: string,
    readonly model: Model,
  ) {
    this.open();
  }

  open(): void {
    this.journal = new OutboxJournal(this.path);
    this.outbox = new Outbox(new FileOutboxLog(this.journal), () => undefined);
    this.worker = {
      minutes: 60,
      firstDelay: 10,
      size: 1_000_000,
      account: 'model',
      concurrency: 4,
      report: () => undefined,
      transient: (error) => error instanceof GatewayError && error.retryable,
      send: (entry: OutboxEntry) => {
        const seq = (entry.msg as { seq: number }).seq;
        if (this.onWire.has(seq)) this.broken.push(`${seq} attempted while on the wire`);
        if (this.model.ended.has(seq)) this.broken.push(`${seq} attempted after it ended`);
        if (!this.model.waiting.has(seq)) this.broken.push(`${seq} attempted while not waiting`);
        this.onWire.add(seq);
        return new Promise((resolve, reject) => {
          this.wire.push({
            seq,
            resolve: () =>
              resolve({ record: { status: 'accepted', number: '420777123456' }, rejected: false } as never),
            reject,
          });
        });
      },
      settle: (_entry, msg, outcome, afterRestart) => {
        const seq = (msg as { seq: number }).seq;
        if (afterRestart) this.afterRestart.add(seq);
        const due = this.model.due.get(seq);
        if ('error' in outcome && outcome.error.code === 'expired' && due && performance.now() < due.at) {
          this.broken.push(
            `${seq} expired ${Math.round((due.at - performance.now()) / 1000)} s before its 60 minutes passed`,
          );
        }
        this.onWire.delete(seq);
        this.settled.set(seq, (this.settled.get(seq) ?? 0) + 1);
        if (this.model.ended.has(seq)) this.broken.push(`${seq} ended twice`);
        this.model.waiting.delete(seq);
        this.model.ended.add(seq);
      },
    };
    this.outbox.attach(this.worker);
  }

  /** Ends one send on the wire (the `index`th, modulo), as the gateway answers it. */
  finish(index: number, how: Finish): void {
    const [send] = this.wire.splice(index % this.wire.length, 1);
    if (!send) return;
    if (how === 'ok') return send.resolve();
    // A failure a later round may get past leaves it waiting; a refusal ends it (Catch).
    if (how === 'transient') this.onWire.delete(send.seq);
    send.reject(
      how === 'transient'
        ? new GatewayError({ type: 'unknown', status: 503, retryable: true, message: 'HTTP 503' })
        : new GatewayError({ type: 'low_credit', status: 400, message: 'low credit' }),
    );
  }
}

const entry = (seq: number): NewEntry => ({
  node: 't',
  operation: OPERATION as never,
  body: { number: '420777123456', text: `Alert ${seq}` },
  rejected: [],
  messages: 1,
  msg: { seq },
  since: Date.now(),
  order: seq,
  attempts: 1,
  reason: 'HTTP 503',
});

/** Lets the outbox's promises and the journal's writes run (real I/O, so real time). */
async function quiet(): Promise<void> {
  for (let i = 0; i < 4; i++) await new Promise((r) => realSetTimeout(r, 1));
}

let clock: ReturnType<typeof FakeTimers.install>;

class Keep implements fc.AsyncCommand<Model, Real> {
  constructor(readonly count: number) {}
  check = () => true;
  async run(model: Model, real: Real) {
    const keeps: Promise<void>[] = [];
    for (let i = 0; i < this.count; i++) {
      const seq = model.next++;
      model.waiting.add(seq);
      model.due.set(seq, { at: performance.now() + OUTBOX_MS, since: Date.now() });
      keeps.push(real.outbox.keep(entry(seq), { seq } as never));
    }
    await Promise.all(keeps);
    await quiet();
  }
  toString = () => `keep ${this.count}`;
}

class Round implements fc.AsyncCommand<Model, Real> {
  check = () => true;
  async run(_model: Model, real: Real) {
    clock.tick(MAX_PROBE_DELAY);
    await quiet();
    assert.deepEqual(real.broken, []);
  }
  toString = () => 'round due';
}

class FinishOne implements fc.AsyncCommand<Model, Real> {
  constructor(
    readonly index: number,
    readonly how: Finish,
  ) {}
  check = () => true;
  async run(_model: Model, real: Real) {
    real.finish(this.index, this.how);
    await quiet();
    assert.deepEqual(real.broken, []);
  }
  toString = () => `finish #${this.index} ${this.how}`;
}

/** Every send on the wire answered in a random order, again and again while the drain sends more. */
class DrainOutOfOrder implements fc.AsyncCommand<Model, Real> {
  constructor(readonly seed: number) {}
  check = () => true;
  async run(_model: Model, real: Real) {
    let seed = this.seed;
    for (let step = 0; step < 20_000; step++) {
      if (!real.wire.length) await quiet();
      if (!real.wire.length) break;
      seed = (seed * 1103515245 + 12345) & 0x7fffffff;
      real.finish(seed, 'ok');
      // Several answers in one turn, the next sends picked meanwhile.
      if (step % 8 === 0) await quiet();
      assert.deepEqual(real.broken, []);
    }
    await quiet();
    assert.deepEqual(real.broken, []);
  }
  toString = () => `drain out of order (seed ${this.seed})`;
}

/** The gateway goes away (every send on the wire fails), the process stops, and starts again from its journal. */
class Restart implements fc.AsyncCommand<Model, Real> {
  check = () => true;
  async run(model: Model, real: Real) {
    while (real.wire.length) {
      real.finish(0, 'transient');
      await quiet();
    }
    // The stop may cut short the hand-on of what the outbox ended (1,100 expired at once): a done line
    // whose msg has not left yet. The next process hands it on, marked.
    await real.outbox.detach(real.worker);
    await real.journal.close();
    // The process exits: its lock goes, and nothing of it touches the file again (an old journal left holding it
    // would remove the new process's lock and file once its own outbox went empty).
    real.journal.unlock();
    // A new process knows an entry's age only by the wall clock: a time ahead is now, a step forward is real.
    for (const seq of model.waiting) {
      const due = model.due.get(seq) as { at: number; since: number };
      due.at = performance.now() + OUTBOX_MS - Math.max(0, Date.now() - due.since);
    }
    real.open();
    await quiet();
    // After the first delay, as a start hands on what ended before it (and ends what expired meanwhile).
    clock.tick(real.worker.firstDelay);
    for (let i = 0; i < 1000 && real.outbox.waiting !== model.waiting.size; i++) await quiet();
    assert.equal(
      real.outbox.waiting,
      model.waiting.size,
      'a restart loads exactly what did not end, and hands on what ended but had not left',
    );
  }
  toString = () => 'restart';
}

/** NTP steps the wall clock: the monotonic clock and the timers go on as before. */
class StepClock implements fc.AsyncCommand<Model, Real> {
  constructor(readonly by: number) {}
  check = () => true;
  async run(_model: Model, real: Real) {
    clock.setSystemTime(Date.now() + this.by);
    clock.tick(MAX_PROBE_DELAY);
    await quiet();
    assert.deepEqual(real.broken, []);
  }
  toString = () => `clock steps ${this.by > 0 ? '+' : ''}${this.by / 3_600_000} h`;
}

const commands = [
  fc.integer({ min: 1, max: 5 }).map((n) => new Keep(n)),
  fc.constant(new Keep(1100)),
  fc.constant(new Round()),
  fc
    .tuple(fc.nat(), fc.constantFrom<Finish>('ok', 'ok', 'transient', 'refused'))
    .map(([i, how]) => new FinishOne(i, how)),
  fc.nat().map((seed) => new DrainOutOfOrder(seed)),
  fc.constant(new Restart()),
  fc.constantFrom(365 * 24, 1, -1, -30 * 24).map((hours) => new StepClock(hours * 3_600_000)),
];

describe('the outbox against a model (fast-check commands)', function () {
  this.timeout(240_000);
  let dir: string;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'bulkgate-model-'));
    clock = FakeTimers.install({
      toFake: ['setTimeout', 'clearTimeout', 'setInterval', 'clearInterval', 'Date', 'performance'],
    });
  });
  afterEach(() => {
    clock.uninstall();
    rmSync(dir, { recursive: true, force: true });
  });

  let run = 0;
  const property = () =>
    fc.asyncProperty(fc.commands(commands, { maxCommands: 25 }), async (steps) => {
      const model: Model = { waiting: new Set(), ended: new Set(), next: 0, due: new Map() };
      const real = new Real(join(dir, `run${run++}`, 'acc.jsonl'), model);
      try {
        await fc.asyncModelRun(() => ({ model, real }), steps);
        // The gateway answers everything from now on: every kept alert ends, once.
        for (let i = 0; i < 50 && model.waiting.size; i++) {
          await new Round().run(model, real);
          await new DrainOutOfOrder(i).run(model, real);
        }
        assert.deepEqual(real.broken, []);
        assert.deepEqual([...model.waiting], [], 'every kept alert ended');
        assert.ok([...real.settled.values()].every((n) => n === 1));
      } finally {
        while (real.wire.length) real.finish(0, 'transient');
        await quiet();
        await real.outbox.detach(real.worker);
        await real.journal.close();
        real.journal.unlock();
      }
    });

  it('an entry is attempted only while it waits, ends once, and nothing waiting is forgotten', async () => {
    await fc.assert(property(), randomRuns(40, 150_000));
  });

  it('a stop that cuts short the hand-on of 1,100 expired entries (seed 868664398, path 26: keep 1100, clock +8760 h, round, restart, round, restart): each msg comes out once, after the restart', async () => {
    // That one run alone: past it, a replay goes on through the seed's later runs (74 more, about 100 s
    // of CI), which the random test above already covers.
    await fc.assert(property(), { seed: 868664398, path: '26', endOnFailure: true, numRuns: 1 });
  });
});

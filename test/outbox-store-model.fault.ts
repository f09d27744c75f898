/**
 * The shared outbox against a model (fast-check's model-based testing): two copies of Node-RED,
 * each the real outbox on the real Redis log, on one real redis-server, with a stand-in sender.
 * Random sequences of keeps (advanced 2.0 and simple 1.0), rounds, sends that finish out of order,
 * a copy cut off from the store for longer than the claim time (its claims lapse; past the grace
 * the other copy adopts them), a copy killed (at rest, or between an entry's done and its port)
 * and started again, the store restored from an older snapshot, and the wall clock stepped; checked
 * against the invariant: an entry is attempted only while it waits (never once it ended; a simple
 * 1.0 one never after an attempt that may have reached the gateway, an advanced one again only as
 * a resend the gateway drops), it ends once (a killed copy's msg handed on again only marked
 * `afterRestart`), a simple 1.0 one whose fate is unknown ends `unconfirmed`, nothing expires
 * untried, and nothing kept is forgotten. The store's claims run on the server's real time, so
 * the looks do too; the outbox's rounds run on a fake clock, stepped by the commands.
 */
import assert from 'node:assert/strict';
import { createClient, RESP_TYPES, type RedisClientType } from '@redis/client';
import FakeTimers from '@sinonjs/fake-timers';
import fc from 'fast-check';
import { GatewayError, sendOperation } from '../gateway';
import { MAX_TIMER_MS } from '../gateway/clock';
import { MAX_PROBE_DELAY, Outbox, type NewEntry, type OutboxEntry, type OutboxWorker } from '../nodes/account/outbox';
import { keyPrefix, openStoreCalls, RedisOutboxLog } from '../nodes/account/redis-store';
import type { StoreCalls } from '../nodes/account/store-scripts';
import { randomRuns } from './support/random-runs';
import { startRedis, type TestRedis } from './support/redis';

const realSetTimeout = globalThis.setTimeout;
const sleep = (ms: number) => new Promise<void>((r) => realSetTimeout(r, ms));
const ADVANCED = sendOperation('transactional', { api: 'advanced', version: '2.0' });
const SIMPLE = sendOperation('transactional', { api: 'simple', version: '1.0' });
type Finish = 'ok' | 'transient' | 'refused';
/** Entry ids to their alert, as the copies keep them. */
const idSeq = new Map<string, number>();

/** Short, so a lapse costs a second; the grace several looks long, so a loaded machine's late look is not a death. */
const CLAIM_MS = 600;
const GRACE_MS = 1500;

/** The model: which alerts wait, which ended, which are simple 1.0. */
interface Model {
  waiting: Set<number>;
  ended: Set<number>;
  simple: Set<number>;
  next: number;
  /** A snapshot of the store was taken, and no copy died since (a restore with the death of the copy that sent is beyond reach). */
  snapshot: boolean;
}

interface Send {
  seq: number;
  copy: Copy;
  resolve: () => void;
  reject: (error: unknown) => void;
}

/** One copy of Node-RED: its connection to the store (which the test can cut), its log, outbox and worker. */
class Copy {
  readonly log: RedisOutboxLog;
  readonly outbox: Outbox;
  readonly worker: OutboxWorker;
  alive = true;
  /** Cut off from the store: every call fails at once (no offline queue), as a lost connection's. */
  cut = false;
  /** Killed as its next done reaches the server: the done is recorded, its answer and the port never come. */
  crashOnDone = false;

  constructor(
    readonly name: string,
    readonly real: Real,
    store: StoreCalls,
  ) {
    const calls: StoreCalls = {
      run: (name, keys, args) => {
        if (this.cut || !this.alive) return Promise.reject(new Error('ECONNRESET'));
        real.calls++;
        if (name === 'keep')
          idSeq.set(args[0] as string, (JSON.parse(args[1] as string) as { msg: { seq: number } }).msg.seq);
        const answer = store.run(name, keys, args).finally(() => real.calls--);
        if (name === 'done' && this.crashOnDone) {
          real.kill(this);
          return new Promise(() => undefined);
        }
        return answer;
      },
    };
    this.log = new RedisOutboxLog(() => calls, real.prefix, name, CLAIM_MS, GRACE_MS);
    this.outbox = new Outbox(this.log, () => undefined);
    this.worker = {
      minutes: 60,
      firstDelay: 10,
      size: 1_000_000,
      account: 'model',
      concurrency: 4,
      report: () => undefined,
      transient: (error) => error instanceof GatewayError && error.retryable,
      send: (entry: OutboxEntry) => real.send(this, entry),
      settle: (_entry, msg, outcome, afterRestart) =>
        real.settle(this, (msg as { seq: number }).seq, outcome, afterRestart),
    };
    this.outbox.attach(this.worker);
  }
}

/** Two living copies, the stand-in gateway's sends on the wire, and what broke the invariant. */
class Real {
  copies: Copy[] = [];
  /** Store calls not answered yet, across the copies. */
  calls = 0;
  readonly wire: Send[] = [];
  /** Attempts that may have reached the gateway, per alert (answered ok, or on the wire of a copy that died). */
  readonly reached = new Map<number, number>();
  readonly settled = new Map<number, number>();
  readonly broken: string[] = [];
  /** What happened, for the scenarios' own checks: a run where it did not happen proves nothing. */
  readonly stats = { sends: 0, resent: 0, afterRestart: 0, unconfirmed: 0, endedAgain: 0 };
  #born = 0;

  constructor(
    readonly prefix: string,
    readonly model: Model,
    readonly store: () => Promise<StoreCalls>,
  ) {}

  async start(): Promise<Copy> {
    const copy = new Copy(`copy-${this.#born++}`, this, await this.store());
    this.copies.push(copy);
    return copy;
  }

  send(copy: Copy, entry: OutboxEntry): Promise<never> {
    const seq = (entry.msg as { seq: number }).seq;
    const where = `${seq} at ${copy.name}`;
    if (!copy.alive) this.broken.push(`${where} attempted by a dead copy`);
    if (this.model.ended.has(seq)) this.broken.push(`${where} attempted after it ended`);
    if (!this.model.waiting.has(seq)) this.broken.push(`${where} attempted while not waiting`);
    if (this.wire.some((s) => s.seq === seq && s.copy === copy))
      this.broken.push(`${where} attempted while on its wire`);
    const mayHave = (this.reached.get(seq) ?? 0) + this.wire.filter((s) => s.seq === seq).length;
    this.stats.sends++;
    if (mayHave) this.stats.resent++;
    if (this.model.simple.has(seq) && mayHave > 0)
      this.broken.push(`${where}: simple 1.0 sent again after an attempt that may have reached the gateway`);
    return new Promise((resolve, reject) => {
      this.wire.push({
        seq,
        copy,
        resolve: () => resolve({ record: { status: 'accepted', number: '420777123456' }, rejected: false } as never),
        reject,
      });
    });
  }

  settle(copy: Copy, seq: number, outcome: { error: GatewayError } | object, afterRestart: boolean): void {
    // A killed process's port never fires.
    if (!copy.alive) return;
    const where = `${seq} at ${copy.name}`;
    if ('error' in outcome) {
      const code = outcome.error.code;
      if (code === 'expired') this.broken.push(`${where} expired, though its 60 minutes never passed`);
      if (code === 'unconfirmed' && !this.model.simple.has(seq))
        this.broken.push(`${where}: advanced 2.0 ended unconfirmed within the duplicate window`);
    }
    this.settled.set(seq, (this.settled.get(seq) ?? 0) + 1);
    if (afterRestart) this.stats.afterRestart++;
    if ('error' in outcome && outcome.error.code === 'unconfirmed') this.stats.unconfirmed++;
    // A msg handed on again after its copy died is marked so: the contract's one exception.
    if (this.model.ended.has(seq) && !afterRestart) this.broken.push(`${where} ended twice`);
    this.model.waiting.delete(seq);
    this.model.ended.add(seq);
  }

  /** Ends one send on the wire (the `index`th, modulo), as the gateway answers it. */
  finish(index: number, how: Finish): void {
    const [send] = this.wire.splice(index % this.wire.length, 1);
    if (!send) return;
    if (how === 'ok') {
      this.reached.set(send.seq, (this.reached.get(send.seq) ?? 0) + 1);
      return send.resolve();
    }
    // A failure a later round may get past (it did not reach the gateway) leaves it waiting; a refusal ends it (Catch).
    send.reject(
      how === 'transient'
        ? new GatewayError({ type: 'unknown', status: 503, retryable: true, message: 'HTTP 503' })
        : new GatewayError({ type: 'low_credit', status: 400, message: 'low credit' }),
    );
  }

  /** SIGKILL: nothing more from it; what it had on the wire may have reached the gateway. */
  kill(copy: Copy): void {
    if (!copy.alive) return;
    copy.alive = false;
    this.copies = this.copies.filter((c) => c !== copy);
    for (let i = this.wire.length - 1; i >= 0; i--) {
      const send = this.wire[i] as Send;
      if (send.copy !== copy) continue;
      this.wire.splice(i, 1);
      this.reached.set(send.seq, (this.reached.get(send.seq) ?? 0) + 1);
    }
    void copy.outbox.detach(copy.worker);
    this.model.snapshot = false;
  }

  /** Waits until no store call is unanswered for a few ms (the looks run on real time meanwhile). */
  async quiet(): Promise<void> {
    for (let still = 0, i = 0; still < 4 && i < 2000; i++) {
      await sleep(1);
      still = this.calls === 0 ? still + 1 : 0;
    }
  }
}

const entry = (seq: number, simple: boolean): NewEntry => ({
  node: 't',
  operation: simple ? SIMPLE : ADVANCED,
  body: { number: '420777123456', text: `Alert ${seq}` },
  rejected: [],
  messages: 1,
  msg: { seq },
  since: Date.now(),
  order: seq,
  attempts: 1,
  reason: 'HTTP 503',
});

let clock: ReturnType<typeof FakeTimers.install>;
let admin: RedisClientType;

/** The store's keys of the shared outbox (the claims not among them: restored, they have lapsed). */
const OUTBOX_KEYS = [
  'outbox',
  'outbox:entries',
  'outbox:attempts',
  'outbox:ended',
  'outbox:ended-by',
  'outbox:orphans',
  'outbox:handing',
  'outbox:handing-lines',
];
const snapshot = new Map<string, Buffer>();

type Command = fc.AsyncCommand<Model, Real>;

class Keep implements Command {
  constructor(
    readonly at: number,
    readonly count: number,
    readonly simple: boolean,
  ) {}
  check = () => true;
  async run(model: Model, real: Real) {
    const copy = real.copies[this.at % real.copies.length] as Copy;
    const keeps: Promise<void>[] = [];
    for (let i = 0; i < this.count; i++) {
      const seq = model.next++;
      model.waiting.add(seq);
      if (this.simple) model.simple.add(seq);
      keeps.push(copy.outbox.keep(entry(seq, this.simple), { seq } as never));
    }
    await Promise.all(keeps);
    await real.quiet();
  }
  toString = () => `keep ${this.count} ${this.simple ? 'simple 1.0' : 'advanced 2.0'} at #${this.at}`;
}

class Round implements Command {
  check = () => true;
  async run(_model: Model, real: Real) {
    clock.tick(MAX_PROBE_DELAY);
    await real.quiet();
    assert.deepEqual(real.broken, []);
  }
  toString = () => 'round due';
}

class FinishOne implements Command {
  constructor(
    readonly index: number,
    readonly how: Finish,
  ) {}
  check = () => true;
  async run(_model: Model, real: Real) {
    real.finish(this.index, this.how);
    await real.quiet();
    assert.deepEqual(real.broken, []);
  }
  toString = () => `finish #${this.index} ${this.how}`;
}

/** Every send on the wire answered in a random order while the drain sends more. */
class DrainOutOfOrder implements Command {
  constructor(readonly seed: number) {}
  check = () => true;
  async run(_model: Model, real: Real) {
    let seed = this.seed;
    for (let step = 0; step < 2_000; step++) {
      if (!real.wire.length) await real.quiet();
      if (!real.wire.length) break;
      seed = (seed * 1103515245 + 12345) & 0x7fffffff;
      real.finish(seed, 'ok');
      if (step % 4 === 0) await real.quiet();
    }
    await real.quiet();
    assert.deepEqual(real.broken, []);
  }
  toString = () => `drain out of order (seed ${this.seed})`;
}

/** A copy cut off from the store for `ms` (longer than the claim: its claims lapse; longer than the claim and the grace: the other copy adopts them). */
class CutOff implements Command {
  constructor(
    readonly at: number,
    readonly ms: number,
  ) {}
  check = () => true;
  async run(_model: Model, real: Real) {
    const copy = real.copies[this.at % real.copies.length] as Copy;
    copy.cut = true;
    // Waits for the clock itself: the server's claims lapse on its real time.
    await sleep(this.ms);
    copy.cut = false;
    await real.quiet();
    assert.deepEqual(real.broken, []);
  }
  toString = () => `copy #${this.at} cut off from the store for ${this.ms} ms`;
}

/** Real time passes (the copies' looks run); the outbox's timers stand still. */
class Pause implements Command {
  constructor(readonly ms: number) {}
  check = () => true;
  async run(_model: Model, real: Real) {
    await sleep(this.ms);
    await real.quiet();
    assert.deepEqual(real.broken, []);
  }
  toString = () => `${this.ms} ms pass`;
}

/** A copy killed (SIGKILL) at rest, or as its next done reaches the server; a new copy starts. */
class Kill implements Command {
  constructor(
    readonly at: number,
    readonly onDone: boolean,
  ) {}
  check = () => true;
  async run(_model: Model, real: Real) {
    const copy = real.copies[this.at % real.copies.length] as Copy;
    const own = real.wire.filter((s) => s.copy === copy);
    // Its oldest on the wire: the one whose done its round waits for first.
    if (this.onDone && own[0]) {
      copy.crashOnDone = true;
      real.finish(real.wire.indexOf(own[0]), 'ok');
      await real.quiet();
    }
    real.kill(copy);
    await real.start();
    await real.quiet();
    assert.deepEqual(real.broken, []);
  }
  toString = () => `kill copy #${this.at}${this.onDone ? ' between a done and its port' : ''}`;
}

class Snapshot implements Command {
  check = () => true;
  async run(model: Model, real: Real) {
    await real.quiet();
    const binary = admin.withTypeMapping({ [RESP_TYPES.BLOB_STRING]: Buffer });
    snapshot.clear();
    for (const key of OUTBOX_KEYS) {
      const dumped = await binary.dump(`${real.prefix}${key}`);
      if (dumped) snapshot.set(key, dumped);
    }
    model.snapshot = true;
  }
  toString = () => 'snapshot of the store';
}

/** The store restored from the snapshot: what ended since comes back, what was kept since is gone, every claim lapsed. */
class Restore implements Command {
  check = (model: Readonly<Model>) => model.snapshot;
  async run(model: Model, real: Real) {
    await real.quiet();
    for (const key of OUTBOX_KEYS) await admin.del(`${real.prefix}${key}`);
    for (const claim of await admin.keys(`${real.prefix}outbox:claim:*`)) await admin.del(claim);
    // Replacing: a copy's write between the deletes and here (its own I/O runs on) is lost, as with a real restore.
    for (const [key, value] of snapshot) await admin.restore(`${real.prefix}${key}`, 0, value, { REPLACE: true });
    // The living copies end again what they ended, take back what they hold, write back what the store
    // lost (a copy that dies before it did takes them with it: beyond reach, as README says).
    const untidy = async () => {
      const held = (await admin.hKeys(`${real.prefix}outbox:entries`)).map((id) => idSeq.get(id));
      const handing = (await admin.hKeys(`${real.prefix}outbox:handing-lines`)).map((id) => idSeq.get(id));
      const back = held.filter((seq) => seq !== undefined && model.ended.has(seq)).length;
      return { back, lost: [...model.waiting].filter((seq) => !held.includes(seq) && !handing.includes(seq)).length };
    };
    real.stats.endedAgain += (await untidy()).back;
    for (let i = 0; i < 250; i++) {
      const { back, lost } = await untidy();
      if (back + lost === 0) break;
      await sleep(20);
    }
    // Each living copy looks (a third of the claim apart) and records again its attempts on the wire that the
    // snapshot lacks; a copy that dies or is cut off before its first look takes that with it (beyond reach, as
    // docs/shared-store.md says of a restore together with the death of the copy that sent).
    await sleep(CLAIM_MS);
    await real.quiet();
    assert.deepEqual(real.broken, []);
  }
  toString = () => 'store restored from the snapshot';
}

/** NTP steps the wall clock: the monotonic clock, the timers and the server's time go on as before. */
class StepClock implements Command {
  constructor(readonly by: number) {}
  check = () => true;
  async run(_model: Model, real: Real) {
    clock.setSystemTime(Date.now() + this.by);
    clock.tick(MAX_PROBE_DELAY);
    await real.quiet();
    assert.deepEqual(real.broken, []);
  }
  toString = () => `clock steps ${this.by > 0 ? '+' : ''}${this.by / 3_600_000} h`;
}

// Keeps and rounds more often than the faults: a fault proves something only with entries waiting and on the wire.
const keep = fc
  .tuple(fc.nat(1), fc.integer({ min: 1, max: 5 }), fc.boolean())
  .map(([at, n, simple]) => new Keep(at, n, simple));
const commands = [
  keep,
  keep,
  keep,
  fc.constant(new Round()),
  fc.constant(new Round()),
  fc.constant(new Round()),
  fc
    .tuple(fc.nat(), fc.constantFrom<Finish>('ok', 'ok', 'transient', 'refused'))
    .map(([i, how]) => new FinishOne(i, how)),
  fc
    .tuple(fc.nat(), fc.constantFrom<Finish>('ok', 'ok', 'transient', 'refused'))
    .map(([i, how]) => new FinishOne(i, how)),
  fc.nat().map((seed) => new DrainOutOfOrder(seed)),
  fc.tuple(fc.nat(1), fc.constantFrom(CLAIM_MS + 300, CLAIM_MS + GRACE_MS + 600)).map(([at, ms]) => new CutOff(at, ms)),
  fc.tuple(fc.nat(1), fc.boolean()).map(([at, onDone]) => new Kill(at, onDone)),
  fc.constant(new Snapshot()),
  fc.constant(new Restore()),
  fc.constantFrom(365 * 24, 1, -1, -30 * 24).map((hours) => new StepClock(hours * 3_600_000)),
];

/** Past the claim and the grace with a margin for a loaded machine: the other copy adopts for certain. */
const DEAD_MS = CLAIM_MS + GRACE_MS + 1500;

describe('the shared outbox against a model: two copies on a redis-server (fast-check commands)', function () {
  this.timeout(240_000);
  let redis: TestRedis;
  const connections: (StoreCalls & { close(): void })[] = [];
  before(async () => {
    redis = await startRedis();
    admin = createClient({ url: redis.url }) as RedisClientType;
    await admin.connect();
  });
  after(async () => {
    for (const c of connections) c.close();
    admin?.destroy();
    await redis?.stop();
  });
  beforeEach(() => {
    // The outbox's timers and the wall clock; not the store client's, nor the looks (the claims lapse on the server's real time).
    clock = FakeTimers.install({ now: Date.now(), toFake: ['setTimeout', 'clearTimeout', 'Date'] });
  });
  afterEach(() => clock.uninstall());

  let run = 0;
  /** Runs the commands on two fresh copies, then lets the gateway answer everything: every kept alert ends, once. */
  async function modelRun(steps: Iterable<Command>): Promise<Real['stats']> {
    const model: Model = { waiting: new Set(), ended: new Set(), simple: new Set(), next: 0, snapshot: false };
    const prefix = keyPrefix(`model-${run++}`);
    // No answer time of its own: the fake clock's steps would time calls out.
    const store = async () => {
      const calls = await openStoreCalls(redis.url, undefined, MAX_TIMER_MS);
      connections.push(calls);
      return calls;
    };
    const real = new Real(prefix, model, store);
    try {
      await real.start();
      await real.start();
      await fc.asyncModelRun(() => ({ model, real }), steps);
      // No copy cut off now; a dead copy's entries are adopted after the claim and the grace, on real time.
      // Until the store holds nothing either: what a copy would adopt and send from it is checked too.
      const left = async () =>
        model.waiting.size +
        (await admin.hLen(`${prefix}outbox:entries`)) +
        (await admin.zCard(`${prefix}outbox:handing`));
      for (let i = 0; i < 80 && (await left()); i++) {
        await new Round().run(model, real);
        await new DrainOutOfOrder(i).run(model, real);
        if (await left()) await sleep(100);
      }
      assert.deepEqual(real.broken, []);
      assert.deepEqual([...model.waiting], [], 'every kept alert ended');
      assert.equal(await left(), 0, 'the shared outbox emptied');
      return real.stats;
    } finally {
      // A stop waits for the sends on the wire: each is answered, as are those a round sends meanwhile.
      let stopped = false;
      void Promise.all(real.copies.map((copy) => copy.outbox.detach(copy.worker))).then(() => (stopped = true));
      for (let i = 0; i < 1000 && !stopped; i++) {
        while (real.wire.length) real.finish(0, 'transient');
        clock.tick(1000);
        await sleep(2);
      }
      for (const c of connections.splice(0)) c.close();
    }
  }

  it('a copy killed between a done and its port: its msg comes out once, at the other copy, marked afterRestart', async () => {
    const stats = await modelRun([new Keep(0, 3, false), new Round(), new Kill(0, true)]);
    assert.equal(stats.afterRestart, 1);
  });

  it('a copy cut off from the store past the claim and the grace with sends on the wire and one waiting: the other copy ends the simple 1.0 ones unconfirmed, resends the advanced ones, and the first copy ends none again', async () => {
    const stats = await modelRun([
      new Keep(0, 1, false),
      new Keep(0, 2, true),
      new Keep(0, 2, false),
      // Waiting, not on the wire, when the copy is cut off: the other copy's to send.
      new Keep(0, 1, true),
      new Round(),
      new FinishOne(0, 'ok'),
      new CutOff(0, DEAD_MS),
      new Round(),
    ]);
    assert.equal(stats.unconfirmed, 2);
    assert.ok(stats.resent >= 1, JSON.stringify(stats));
  });

  it("a copy cut off past the claim with an advanced one on the wire, answered there after the other copy took it over (its end is that copy's), then that copy killed with it on the wire: it is sent again and its msg ends once", async () => {
    await modelRun([
      new Keep(0, 1, false),
      new Round(),
      new CutOff(0, DEAD_MS),
      new Round(),
      new FinishOne(0, 'ok'),
      new Kill(1, false),
      new Round(),
    ]);
  });

  it('the store restored from a snapshot taken before a simple 1.0 attempt that is still on the wire, then its copy cut off past the claim: the other copy ends it unconfirmed, never sends it again', async () => {
    const stats = await modelRun([
      new Keep(0, 1, true),
      new Snapshot(),
      new Round(),
      new Restore(),
      // The copy's looks (a third of the claim apart) take its claim back and record its attempt again.
      new Pause(CLAIM_MS),
      new CutOff(0, DEAD_MS),
      new Round(),
    ]);
    assert.equal(stats.unconfirmed, 1, JSON.stringify(stats));
  });

  it('the store restored from a snapshot taken while alerts waited, after they ended: each ends again at its copy, none goes again', async () => {
    const stats = await modelRun([
      new Keep(0, 3, false),
      new Keep(1, 2, true),
      new Snapshot(),
      new Round(),
      new DrainOutOfOrder(1),
      new Round(),
      new DrainOutOfOrder(2),
      new Restore(),
    ]);
    assert.ok(stats.endedAgain >= 1, JSON.stringify(stats));
  });

  it('the wall clock stepped a year forward, then 30 days back, around a kill: nothing expires untried', async () => {
    await modelRun([
      new Keep(0, 2, false),
      new Keep(1, 2, true),
      new StepClock(365 * 24 * 3_600_000),
      new Kill(0, false),
      new StepClock(-30 * 24 * 3_600_000),
      new Round(),
    ]);
  });

  it('an entry is attempted only while it waits, ends once, simple 1.0 never goes twice, and nothing kept is forgotten (random commands)', async () => {
    await fc.assert(
      fc.asyncProperty(fc.commands(commands, { maxCommands: 25, size: 'max' }), (steps) =>
        modelRun(steps).then(() => undefined),
      ),
      randomRuns(16, 150_000),
    );
  });
});

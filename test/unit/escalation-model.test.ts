/**
 * The escalation's incidents against a model (fast-check's model-based testing) on a fake clock:
 * raises and duplicate raises, time passing over steps, replies with the right or a wrong code
 * from a texted or a stranger's number, the ack word, the flow's acknowledge and resolve, and
 * restarts from the stored book (a new monotonic clock, time passed while down). Checked at every
 * command: which SMS go out (each step's once per number per round, none after an
 * acknowledgement, `late` only for the one step that came due while down), which reply
 * acknowledges, when the chain runs out, and the codes (2 digits or more, unique among the open
 * incidents, not given again within 24 hours of their incident's end).
 */
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { CODE_QUARANTINE_MS, IncidentBook, mostSms, type Fired, type Policy } from '../../nodes/account/escalation';

const NODE = 'n1';
const PHONES = ['420601000001', '420601000002', '420601000003'] as const;
const STRANGER = '420609999999';

const policy = (steps: [string[], number][], repeat: number): Policy => ({
  steps: steps.map(([numbers, wait]) => ({ numbers, wait })),
  repeat,
  text: '',
  ackWords: ['OK', 'ACK'],
  sender_id: 'gSystem',
  sender_id_value: '',
});
/** Each topic its own chain: two incidents may text one phone. */
const POLICIES: Record<string, Policy> = {
  door: policy(
    [
      [[PHONES[0]], 60],
      [[PHONES[1]], 60],
    ],
    2,
  ),
  smoke: policy([[[PHONES[1], PHONES[2]], 30]], 3),
  water: policy(
    [
      [[PHONES[2]], 45],
      [[PHONES[0]], 300],
    ],
    1,
  ),
};
const TOPICS = Object.keys(POLICIES);

interface ModelIncident {
  topic: string;
  code: string;
  acked: boolean;
  texted: Set<string>;
  position: number;
  /** Real time (ms since the run began). */
  due: number;
  late: boolean;
  sent: Set<string>;
  raisedAt: number;
}

/** Real time, the open incidents, and the codes that may not be given again (until when). */
interface Model {
  now: number;
  open: Map<string, ModelIncident>;
  retired: Map<string, number>;
}

const total = (p: Policy) => p.steps.length * p.repeat;
const waitOf = (p: Policy, position: number) => (p.steps[position % p.steps.length] as { wait: number }).wait * 1000;

/** What the model expects to fire now: every position whose time passed, one after another. */
function modelTick(model: Model): string[] {
  const out: string[] = [];
  for (let again = true; again;) {
    again = false;
    for (const inc of [...model.open.values()]) {
      if (inc.acked || inc.due > model.now) continue;
      const p = POLICIES[inc.topic] as Policy;
      again = true;
      if (inc.position >= total(p)) {
        model.open.delete(inc.topic);
        model.retired.set(inc.code, model.now + CODE_QUARANTINE_MS);
        out.push(`${inc.topic} unacknowledged`);
        continue;
      }
      const index = inc.position % p.steps.length;
      const round = Math.floor(inc.position / p.steps.length) + 1;
      for (const number of (p.steps[index] as { numbers: string[] }).numbers) {
        const once = `${round}:${index + 1}:${number}`;
        assert.ok(!inc.sent.has(once), `model: ${inc.topic} ${once} twice`);
        inc.sent.add(once);
        inc.texted.add(number);
        out.push(`${inc.topic} sms ${once}${inc.late ? ' late' : ''}`);
      }
      inc.due = (inc.late ? model.now : inc.due) + waitOf(p, inc.position);
      inc.position++;
      inc.late = false;
    }
  }
  return out;
}

const WALL_AT_START = Date.UTC(2026, 10, 27, 4, 0, 0);

/** The real book, on a clock the test moves: the wall clock, and a monotonic one that starts anew at each restart. */
class Real {
  book: IncidentBook;
  monoOrigin = 0;
  now = 0;
  readonly sms = new Map<string, number>();
  constructor() {
    this.book = new IncidentBook();
  }
  clock = { wall: () => WALL_AT_START + this.now, mono: () => this.now - this.monoOrigin };
  tick(): string[] {
    const out: string[] = [];
    for (let fired: Fired[]; (fired = this.book.due(this.clock.mono(), () => true)).length;) {
      for (const f of fired) {
        const topic = f.incident.topic;
        if (f.kind === 'unacknowledged') out.push(`${topic} unacknowledged`);
        else
          for (const s of f.sms) {
            out.push(`${topic} sms ${s.round}:${s.step}:${s.number}${s.late ? ' late' : ''}`);
            const once = `${topic} (code ${f.incident.code}) raised at ${f.incident.raised + this.monoOrigin}: ${s.round}:${s.step}:${s.number}`;
            this.sms.set(once, (this.sms.get(once) ?? 0) + 1);
            this.book.answered(f.incident.key, s);
          }
      }
    }
    return out.sort();
  }
}

function checkCode(model: Model, code: string, topic: string): void {
  assert.match(code, /^\d{2,}$/, 'a code has at least 2 digits');
  for (const inc of model.open.values())
    assert.notEqual(inc.code, code, `${topic}'s code ${code} is ${inc.topic}'s, open`);
  const until = model.retired.get(code);
  assert.ok(until === undefined || until <= model.now, `${topic}'s code ${code} ended less than 24 h ago`);
}

class Raise implements fc.Command<Model, Real> {
  constructor(readonly topic: string) {}
  check = () => true;
  run(model: Model, real: Real) {
    const incident = real.book.raise(
      NODE,
      this.topic,
      POLICIES[this.topic] as Policy,
      { payload: this.topic },
      real.clock.mono(),
    );
    if (model.open.has(this.topic)) {
      assert.equal(incident, undefined, 'a second raise with an open key starts nothing');
    } else {
      assert.ok(incident, 'a raise with no open key starts an incident');
      checkCode(model, incident.code, this.topic);
      model.open.set(this.topic, {
        topic: this.topic,
        code: incident.code,
        acked: false,
        texted: new Set(),
        position: 0,
        due: model.now,
        late: false,
        sent: new Set(),
        raisedAt: model.now,
      });
    }
    assert.deepEqual(real.tick(), modelTick(model).sort());
  }
  toString = () => `raise ${this.topic}`;
}

class Pass implements fc.Command<Model, Real> {
  constructor(readonly ms: number) {}
  check = () => true;
  run(model: Model, real: Real) {
    model.now += this.ms;
    real.now += this.ms;
    assert.deepEqual(real.tick(), modelTick(model).sort());
  }
  toString = () => `pass ${this.ms / 1000} s`;
}

type Said = { kind: 'code'; topic: string } | { kind: 'wrong-code'; code: string } | { kind: 'word'; word: string };

class Reply implements fc.Command<Model, Real> {
  constructor(
    readonly from: string,
    readonly said: Said,
  ) {}
  check = () => true;
  run(model: Model, real: Real) {
    const said = this.said;
    let text: string;
    let expected: ModelIncident | undefined;
    if (said.kind === 'code') {
      const inc = model.open.get(said.topic);
      text = `${inc?.code ?? '55555'} on my way`;
      expected = inc && !inc.acked && inc.texted.has(this.from) ? inc : undefined;
    } else if (said.kind === 'wrong-code') {
      text = `${said.code}!`;
      const inc = [...model.open.values()].find((i) => i.code === said.code);
      expected = inc && !inc.acked && inc.texted.has(this.from) ? inc : undefined;
    } else {
      text = said.word;
      const texted = [...model.open.values()].filter((i) => i.texted.has(this.from) && !i.acked);
      expected = /^\W*(ok|ack)\W*$/i.test(said.word) && texted.length === 1 ? texted[0] : undefined;
    }
    const outcome = real.book.reply(`+${this.from}`, text, real.clock.mono());
    const acked = 'acknowledged' in outcome ? outcome.acknowledged.incident.topic : undefined;
    assert.equal(acked, expected?.topic, `"${text}" from ${this.from} acknowledges ${expected?.topic ?? 'nothing'}`);
    if (expected) {
      expected.acked = true;
      assert.equal('acknowledged' in outcome && outcome.acknowledged.by, this.from);
    }
    assert.deepEqual(real.tick(), modelTick(model).sort());
  }
  toString = () => `reply ${this.from.slice(-1)} ${JSON.stringify(this.said)}`;
}

class FlowSays implements fc.Command<Model, Real> {
  constructor(
    readonly what: 'acknowledge' | 'resolve',
    readonly topic: string,
  ) {}
  check = () => true;
  run(model: Model, real: Real) {
    const inc = model.open.get(this.topic);
    const key = `${NODE}\u0000${this.topic}`;
    if (this.what === 'acknowledge') {
      const ended = real.book.acknowledge(key, 'flow', real.clock.mono());
      assert.equal(ended?.incident.topic, inc && !inc.acked ? this.topic : undefined, 'the first acknowledgement wins');
      if (inc) inc.acked = true;
    } else {
      const ended = real.book.resolve(key, real.clock.mono());
      assert.equal(ended?.incident.topic, inc?.topic, 'resolve ends an open incident');
      if (ended && inc)
        assert.equal(ended.after, model.now - inc.raisedAt, 'after: ms since it was raised, across restarts');
      if (inc) {
        model.open.delete(this.topic);
        model.retired.set(inc.code, model.now + CODE_QUARANTINE_MS);
      }
    }
    assert.deepEqual(real.tick(), modelTick(model).sort());
  }
  toString = () => `flow ${this.what} ${this.topic}`;
}

/** Node-RED stops, `down` ms pass, it starts with a new monotonic clock and loads the stored book. */
class Restart implements fc.Command<Model, Real> {
  constructor(
    readonly down: number,
    readonly monoStart: number,
  ) {}
  check = () => true;
  run(model: Model, real: Real) {
    const stored = JSON.parse(JSON.stringify(real.book.stored(real.clock))) as ReturnType<IncidentBook['stored']>;
    model.now += this.down;
    real.now += this.down;
    real.monoOrigin = real.now - this.monoStart;
    real.book = IncidentBook.load(stored, real.clock);
    assert.deepEqual(
      real.book.incidents.map((i) => `${i.topic}:${i.code}:${!!i.acknowledged}`).sort(),
      [...model.open.values()].map((i) => `${i.topic}:${i.code}:${i.acked}`).sort(),
    );
    for (const inc of model.open.values()) {
      if (inc.acked || inc.due > model.now) continue;
      const p = POLICIES[inc.topic] as Policy;
      while (inc.position < total(p) && inc.due + waitOf(p, inc.position) <= model.now) {
        inc.due += waitOf(p, inc.position);
        inc.position++;
      }
      inc.late = inc.position < total(p);
    }
    assert.deepEqual(real.tick(), modelTick(model).sort());
  }
  toString = () => `restart after ${this.down / 1000} s`;
}

const topic = fc.constantFrom(...TOPICS);
const commands = [
  topic.map((t) => new Raise(t)),
  fc.integer({ min: 1, max: 400 }).map((s) => new Pass(s * 1000)),
  fc.constantFrom(CODE_QUARANTINE_MS, CODE_QUARANTINE_MS - 1).map((ms) => new Pass(ms)),
  fc
    .tuple(
      fc.constantFrom(...PHONES, STRANGER),
      fc.oneof(
        topic.map((t): Said => ({ kind: 'code', topic: t })),
        fc.integer({ min: 10, max: 99 }).map((c): Said => ({ kind: 'wrong-code', code: String(c) })),
        fc.constantFrom('OK', 'ok.', ' Ack! ', 'yes', 'OK thanks').map((w): Said => ({ kind: 'word', word: w })),
      ),
    )
    .map(([from, said]) => new Reply(from, said)),
  fc
    .tuple(fc.constantFrom('acknowledge' as const, 'resolve' as const), topic)
    .map(([what, t]) => new FlowSays(what, t)),
  fc
    .tuple(fc.integer({ min: 0, max: 1_000 }), fc.integer({ min: 0, max: 1e9 }))
    .map(([s, mono]) => new Restart(s * 1000, mono)),
];

describe('escalation incidents against a model (fast-check commands, fake clock)', function () {
  this.timeout(120_000);

  it('each step once per number and round, late once after a restart, acknowledged only by a texted number, codes unique and resting 24 h', () => {
    fc.assert(
      fc.property(fc.commands(commands, { maxCommands: 60 }), (cmds) => {
        const model: Model = { now: 0, open: new Map(), retired: new Map() };
        const real = new Real();
        fc.modelRun(() => ({ model, real }), cmds);
        for (const [once, times] of real.sms) assert.equal(times, 1, `${once} sent ${times} times`);
      }),
      { numRuns: 300 },
    );
  });

  it("the most SMS one incident can send: every step's numbers times the rounds", () => {
    assert.equal(mostSms((POLICIES.smoke as Policy).steps, 3), 6);
    assert.equal(mostSms((POLICIES.door as Policy).steps, 2), 4);
  });

  it('a 2-digit code space that is full moves to 3 digits, and a code is free again 24 h after its incident ended', () => {
    const book = new IncidentBook(() => 0);
    const one = policy([[[PHONES[0]], 60]], 1);
    const codes = new Set<string>();
    for (let i = 0; i < 91; i++) codes.add((book.raise(NODE, `t${i}`, one, {}, 0) as { code: string }).code);
    assert.equal(codes.size, 91);
    assert.equal([...codes].filter((c) => c.length === 3).length, 1);
    const first = (book.get(`${NODE}\u0000t0`) as { code: string }).code;
    book.resolve(`${NODE}\u0000t0`, 1000);
    assert.notEqual(
      (book.raise(NODE, 'again', one, {}, 1000 + CODE_QUARANTINE_MS - 1) as { code: string }).code,
      first,
    );
    book.resolve(`${NODE}\u0000again`, 2000);
    assert.equal((book.raise(NODE, 'later', one, {}, 1000 + CODE_QUARANTINE_MS) as { code: string }).code, first);
  });
  it('a chain SMS kept in an outbox still goes while its incident escalates and after its chain ran out, also after a restart; not once acknowledged, resolved or its node deleted, nor a day after', () => {
    let now = 0;
    const at = { wall: () => 1_000_000 + now, mono: () => now };
    const book = new IncidentBook(() => 0.5);
    const one = policy([[[PHONES[0]], 60]], 1);
    const wanted = (b: IncidentBook, topic: string, code: string) => b.smsWanted(`${NODE}\u0000${topic}`, code);
    const codes: Record<string, string> = {};
    for (const topic of ['ran', 'ack', 'resolved', 'deleted'])
      codes[topic] = (book.raise(topic === 'deleted' ? 'n2' : NODE, topic, one, {}, now) as { code: string }).code;
    book.due(now, () => true);
    assert.equal(wanted(book, 'ran', codes.ran as string), true, 'escalating');
    book.acknowledge(`${NODE}\u0000ack`, 'flow', now);
    book.resolve(`${NODE}\u0000resolved`, now);
    book.dropNode('n2', now);
    now = 60_000;
    assert.deepEqual(
      book.due(now, () => true).map((f) => [f.kind, f.incident.topic]),
      [['unacknowledged', 'ran']],
    );
    // Stored and loaded, as a restart (or a crash after the acknowledgement was stored) finds it.
    const restarted = IncidentBook.load(JSON.parse(JSON.stringify(book.stored(at))), at);
    for (const b of [book, restarted])
      assert.deepEqual(
        ['ran', 'ack', 'resolved']
          .map((topic) => wanted(b, topic, codes[topic] as string))
          .concat(b.smsWanted(`n2\u0000deleted`, codes.deleted as string)),
        [true, false, false, false],
      );
    assert.equal(wanted(book, 'ran', 'not-its-code'), false, 'another incident of the key');
    now += CODE_QUARANTINE_MS;
    book.raise(NODE, 'next', one, {}, now);
    assert.equal(wanted(book, 'ran', codes.ran as string), false, 'forgotten with its code, a day after');
  });
});

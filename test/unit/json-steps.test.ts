/**
 * JSON in steps (unit): a text or a value holding a long list is parsed and written a step at a
 * time, the event loop running between steps; the result is JSON.parse's or JSON.stringify's, on
 * random values (seeded: a failure names its seed), and so is a refusal. Every stepped work of the
 * process runs one step a turn, whoever's it is, in the order the steps were waiting.
 */
import assert from 'node:assert/strict';
import { holdsLongList, LONG_JSON, parseInSteps, stringifyInSteps } from '../../gateway/json-steps';
import { atOnce, eachInSteps, inTurns, LIST_STEP, type Steps } from '../../gateway/steps';
import { sendOperation } from '../../gateway';
import { prepareSend } from '../../gateway/request';
import { storableBody, storableBodyInSteps } from '../../gateway/resend';
import { storableMsg, storableMsgInSteps } from '../../nodes/account/outbox';
import type { Msg } from '../../nodes/plumbing/msg';

/** How many turns of the event loop pass while `work` runs: an immediate rescheduled until it ends. */
async function turnsDuring<T>(work: () => Promise<T>): Promise<{ result: T; turns: number }> {
  let turns = 0;
  let ended = false;
  const turn = () => {
    if (ended) return;
    turns++;
    setImmediate(turn);
  };
  setImmediate(turn);
  try {
    return { result: await work(), turns };
  } finally {
    ended = true;
  }
}

/** mulberry32: a small seeded generator, so a failing value can be made again from its seed. */
function random(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const CHARACTERS = [
  'a',
  'Z',
  '0',
  ' ',
  '"',
  '\\',
  '/',
  '\n',
  '\t',
  '\u0001',
  'é',
  'ř',
  '€',
  '😀',
  '\u2028',
  '{',
  ']',
  ',',
  ':',
];

/** A JSON value: objects and arrays to `depth`, now and then an array past LIST_STEP items, keys that repeat across objects. */
function jsonValue(next: () => number, depth: number, long = true): unknown {
  const pick = next();
  const text = () =>
    Array.from({ length: Math.floor(next() * 8) }, () => CHARACTERS[Math.floor(next() * CHARACTERS.length)]).join('');
  if (depth === 0 || pick < 0.35) {
    const kind = Math.floor(next() * 7);
    if (kind === 0) return null;
    if (kind === 1) return next() < 0.5;
    if (kind === 2) return Math.floor(next() * 2e6) - 1e6;
    if (kind === 3) return (next() - 0.5) * 10 ** Math.floor(next() * 40 - 20);
    // Now and then a long text, so that what holds it is longer than LONG_JSON, at any depth.
    if (long && kind === 4 && next() < 0.2) return 'y"\\'.repeat(LONG_JSON / 6);
    return text();
  }
  if (pick < 0.7) {
    const length = next() < 0.15 ? LIST_STEP + Math.floor(next() * 3 * LIST_STEP) : Math.floor(next() * 6);
    return Array.from({ length }, () =>
      length > 20 ? jsonValue(next, Math.min(depth - 1, 1), false) : jsonValue(next, depth - 1, long),
    );
  }
  const object: Record<string, unknown> = {};
  const keys = Math.floor(next() * 6);
  for (let k = 0; k < keys; k++)
    object[next() < 0.2 ? String(Math.floor(next() * 20)) : `${text()}${k}`] = jsonValue(next, depth - 1, long);
  return object;
}

/** The gateway's answer to a promotional list: the shape a real answer to 10,000 numbers has. */
function promotionalAnswer(numbers: number): string {
  const response = Array.from({ length: numbers }, (_, i) => ({
    status: 'accepted',
    sms_id: `tmpde1bcd4b1d1-${i}`,
    part_id: [`tmpde1bcd4b1d1-${i}_1`, `tmpde1bcd4b1d1-${i}_2`],
    price: 0.048,
    credit: 215.8 - i / 1000,
    number: `420777${String(i).padStart(6, '0')}`,
  }));
  const total = { price: 0.048 * numbers, status: { sent: 0, accepted: numbers, scheduled: 0, error: 0 } };
  return JSON.stringify({ data: { total, response } });
}

const refusalOf = (work: () => unknown): string => {
  try {
    work();
  } catch (error) {
    return `${(error as Error).name}: ${(error as Error).message}`;
  }
  return 'not refused';
};
const refusalInSteps = async (work: () => Promise<unknown>): Promise<string> => {
  try {
    await work();
  } catch (error) {
    return `${(error as Error).name}: ${(error as Error).message}`;
  }
  return 'not refused';
};

describe('JSON in steps (unit)', () => {
  it('the answer to 10,000 numbers is parsed in steps (the event loop turns while it is read), to what JSON.parse gives, keys in the same order', async () => {
    const text = promotionalAnswer(10_000);
    const { result, turns } = await turnsDuring(() => inTurns(parseInSteps(text)));
    assert.ok(turns >= text.length / LONG_JSON - 1, `${turns} turns while ${text.length} characters were parsed`);
    assert.deepStrictEqual(result, JSON.parse(text));
    assert.equal(JSON.stringify(result), text);
  });

  it('a text up to LONG_JSON characters is parsed at once: no turn of the event loop', async () => {
    const text = promotionalAnswer(10);
    assert.ok(text.length <= LONG_JSON);
    const { result, turns } = await turnsDuring(() => inTurns(parseInSteps(text)));
    assert.equal(turns, 0);
    assert.deepStrictEqual(result, JSON.parse(text));
  });

  it('random values, written compact and indented: parsed in steps to what JSON.parse gives (100 seeds)', () => {
    for (let seed = 1; seed <= 100; seed++) {
      const value = { pad: 'x'.repeat(LONG_JSON), value: jsonValue(random(seed), 4) };
      for (const text of [JSON.stringify(value), ` \n${JSON.stringify(value, null, seed % 2 ? 2 : '\t')}\r\n `]) {
        const stepped = atOnce(parseInSteps(text));
        assert.deepStrictEqual(stepped, JSON.parse(text), `seed ${seed}`);
        assert.equal(JSON.stringify(stepped), JSON.stringify(value), `seed ${seed}: the keys' order`);
      }
    }
  });

  it('a key `__proto__` is an own field, as JSON.parse makes it, and a repeated key keeps the last value at the first place', () => {
    const text = `{"__proto__":{"polluted":true},"a":1,"list":[${'{"b":2,"b":3},'.repeat(LONG_JSON / 10)}0],"a":4}`;
    const stepped = atOnce(parseInSteps(text)) as Record<string, unknown>;
    assert.deepStrictEqual(stepped, JSON.parse(text));
    assert.equal(Object.getPrototypeOf(stepped), Object.prototype);
    assert.deepEqual(Object.keys(stepped), ['__proto__', 'a', 'list']);
    assert.equal(({} as Record<string, unknown>).polluted, undefined);
  });

  it('a text JSON.parse refuses is refused with its error, however deep in the list the fault is', async () => {
    const list = (inner: string) => `{"data":[${'{"n":"420777000001"},'.repeat(LONG_JSON / 20)}${inner}]}`;
    const faults = [
      list('1,]'),
      list(',1'),
      list('1,,2'),
      list('{"n":1,}'),
      list('{"n" 1}'),
      list('{n:1}'),
      list('"open'),
      list('"tab\there"'),
      list('01'),
      list('tru'),
      list('1 2'),
      list('[1}'),
      `${list('1')} x`,
      `${list('1')},`,
      `\uFEFF${list('1')}`,
      list('1').slice(0, -1),
      `[${'1,'.repeat(LONG_JSON)}`,
      // A fault just after a run of items was parsed: nothing of the run is left to show it.
      `["${'a'.repeat(LONG_JSON)}",]`,
      `{"a":["${'a'.repeat(LONG_JSON)}",,1]}`,
    ];
    for (const text of faults) {
      const expected = refusalOf(() => JSON.parse(text));
      assert.notEqual(expected, 'not refused');
      assert.equal(await refusalInSteps(() => inTurns(parseInSteps(text))), expected, text.slice(-40));
    }
  });

  it('a value holding a long list is written in steps (the event loop turns while it is written), the characters JSON.stringify writes', async () => {
    const end = { done: 'id-1', end: { attempts: 1, result: JSON.parse(promotionalAnswer(10_000)) as unknown } };
    assert.ok(holdsLongList(end));
    const { result, turns } = await turnsDuring(() => inTurns(stringifyInSteps(end)));
    assert.ok(turns >= 10_000 / LIST_STEP - 1, `${turns} turns while 10,000 records were written`);
    assert.equal(result, JSON.stringify(end));
  });

  it('random values: written in steps to the characters JSON.stringify writes, with and without a replacer (100 seeds)', () => {
    const extras = (next: () => number) => [
      undefined,
      () => 1,
      Symbol('s'),
      NaN,
      -Infinity,
      new Date(Math.floor(next() * 4e12)),
      new Number(3),
      new String('s'),
      new Boolean(false),
      -0,
    ];
    for (let seed = 1; seed <= 100; seed++) {
      const next = random(seed);
      const value = jsonValue(next, 4) as Record<string, unknown>;
      const container = {
        value,
        extras: extras(next),
        list: Array.from({ length: LIST_STEP + 3 }, (_, i) => (i % 7 === 0 ? extras(next) : { i })),
      };
      const sparse: unknown[] = new Array(LIST_STEP + 5);
      sparse[2] = 'two';
      for (const v of [value, container, sparse, [container], 'text', 12, null, undefined]) {
        assert.equal(atOnce(stringifyInSteps(v)), JSON.stringify(v), `seed ${seed}`);
        // A replacer that reads its holder and key: each place is called as JSON.stringify calls it.
        const calls: string[] = [];
        const replacer = function (this: unknown, key: string, field: unknown) {
          calls.push(`${Array.isArray(this) ? 'array' : typeof this}:${key}`);
          return typeof field === 'number' && key !== '' ? field + 1 : field;
        };
        const replacedCalls: string[] = [];
        const whole = JSON.stringify(v, function (this: unknown, key: string, field: unknown) {
          replacedCalls.push(`${Array.isArray(this) ? 'array' : typeof this}:${key}`);
          return typeof field === 'number' && key !== '' ? field + 1 : field;
        });
        assert.equal(atOnce(stringifyInSteps(v, replacer)), whole, `seed ${seed}, replaced`);
        assert.deepEqual(calls, replacedCalls, `seed ${seed}: the replacer's calls`);
      }
    }
  });

  it('toJSON is called once for its place, with its key; a circle is refused as JSON.stringify refuses it', () => {
    const keys: string[] = [];
    const marked = { toJSON: (key: string) => (keys.push(key), { toJSON: () => 'never', key }) };
    const value = {
      list: Array.from({ length: LIST_STEP + 2 }, (_, i) => (i === LIST_STEP + 1 ? marked : i)),
      at: marked,
    };
    assert.equal(atOnce(stringifyInSteps(value)), JSON.stringify(value));
    assert.deepEqual(keys, [String(LIST_STEP + 1), 'at', String(LIST_STEP + 1), 'at']);
    const circle: Record<string, unknown> = { list: Array.from({ length: LIST_STEP + 1 }, (_, i) => i) };
    (circle.list as unknown[]).push({ back: circle });
    assert.throws(() => atOnce(stringifyInSteps(circle)), TypeError);
    assert.throws(() => atOnce(stringifyInSteps(10n)), TypeError);
  });

  it('a list kept in the outbox: its msg and body are read in steps (the event loop turns), to what storableMsg and storableBody give at once', async () => {
    for (let seed = 1; seed <= 5; seed++) {
      const next = random(seed);
      const shared = { note: 'seen twice' };
      const number = Array.from({ length: 10_000 }, (_, i) =>
        i % 997 === 0 ? shared : { number: `420777${String(i).padStart(6, '0')}`, variables: { first_name: `N${i}` } },
      );
      const msg = {
        _msgid: `m${seed}`,
        req: { socket: 'a request' },
        res: { end: () => undefined },
        topic: jsonValue(next, 3),
        payload: { number, shared, at: new Date(0), handler: () => 1 },
        extra: jsonValue(next, 4),
      } as unknown as Msg;
      const { result, turns } = await turnsDuring(() => storableMsgInSteps(msg));
      assert.ok(turns >= 10_000 / LIST_STEP - 1, `seed ${seed}: ${turns} turns`);
      const whole = storableMsg(msg);
      assert.deepStrictEqual(result, whole, `seed ${seed}`);
      assert.equal(JSON.stringify(result), JSON.stringify(whole), `seed ${seed}: the keys' order`);
    }
    const alert = { _msgid: 'a', payload: 'Door open', req: {} } as unknown as Msg;
    const once = await turnsDuring(() => storableMsgInSteps(alert));
    assert.equal(once.turns, 0);
    assert.deepStrictEqual(once.result, storableMsg(alert));

    const number = Array.from({ length: 10_000 }, (_, i) => ({
      number: `420777${String(i).padStart(6, '0')}`,
      variables: { first_name: `N${i}` },
    }));
    const prepared = prepareSend(
      sendOperation('promotional'),
      { number, text: 'Hi <first_name>' },
      { applicationId: '1', applicationToken: 'unit-token-4f2a' },
    );
    const body = await turnsDuring(() => storableBodyInSteps(prepared));
    assert.ok(body.turns >= 1);
    assert.deepStrictEqual(body.result, storableBody(prepared));
    assert.equal(JSON.stringify(body.result).includes('unit-token-4f2a'), false);
  });

  it('stepped works share the turns: one step a turn of all of them, each in the order its steps were waiting, each the result it has at once', async () => {
    const log: string[] = [];
    const work = function* (name: string, steps: number): Steps<string> {
      for (let i = 0; i < steps; i++) {
        if (i > 0) yield;
        log.push(`${name}${i}`);
      }
      return `${name} done`;
    };
    const turnsAt: number[] = [];
    let turns = 0;
    let ended = false;
    const turn = () => {
      if (ended) return;
      turns++;
      turnsAt.push(log.length);
      setImmediate(turn);
    };
    setImmediate(turn);
    const results = await Promise.all([inTurns(work('a', 4)), inTurns(work('b', 2)), inTurns(work('c', 3))]);
    ended = true;
    assert.deepEqual(results, ['a done', 'b done', 'c done']);
    // The first steps at once, then round by round: a, b, c, a, c, a.
    assert.deepEqual(log, ['a0', 'b0', 'c0', 'a1', 'b1', 'c1', 'a2', 'c2', 'a3']);
    // Between two turns of the probe, at most one step ran.
    for (let i = 1; i < turnsAt.length; i++)
      assert.ok((turnsAt[i] as number) - (turnsAt[i - 1] as number) <= 1, `turns ${turnsAt.join(',')}`);
    assert.ok(turns >= 6);
    assert.deepEqual(results, [atOnce(work('a', 4)), atOnce(work('b', 2)), atOnce(work('c', 3))]);
  });

  it('a list of LIST_STEP items or fewer never yields; a longer one yields before each LIST_STEP items but the first', () => {
    let yields = 0;
    const seen: number[] = [];
    const steps = eachInSteps(
      Array.from({ length: 3 * LIST_STEP + 1 }, (_, i) => i),
      (i) => seen.push(i),
    );
    while (!steps.next().done) yields++;
    assert.equal(yields, 3);
    assert.equal(seen.length, 3 * LIST_STEP + 1);
    assert.equal(holdsLongList({ a: { b: Array.from({ length: LIST_STEP }) } }), false);
    assert.equal(holdsLongList({ a: { b: Array.from({ length: LIST_STEP + 1 }) } }), true);
  });
});

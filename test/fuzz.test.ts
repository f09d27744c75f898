/**
 * Property-based fuzzing (fast-check): 10,000 arbitrary msgs into each send node in the Node-RED
 * runtime. No crash, no request for a msg that fails the checks, every refusal names a field, and
 * Object.prototype stays as it was.
 */
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { isPhoneNumber, SEND_FIELDS } from '../gateway';
import { helper, load, unload, type TestNode } from './support/red';
import { watchEscapes } from './support/escapes';
import { ACCOUNT_ID, startTestSimulator, TOKEN, type TestSimulator } from './support/simulator';
import { until } from './support/wait';

const RUNS = 10_000;
const SEED = 20261122;
/** A refusal starts with the field it is about (or names the field first in its sentence). */
// A refusal starts with the field it is about ("text is 640 characters", "no number: ...").
const NAMES_A_FIELD = new RegExp(
  `^(no )?(${[...SEND_FIELDS, 'one of number, groups, admins'].join('|')})\\b|^text template`,
);

const polluting = ['__proto__', 'constructor', 'prototype', 'toString', 'hasOwnProperty', 'valueOf'];
const junk = fc.oneof(
  fc.anything({
    maxDepth: 3,
    withNullPrototype: true,
    withBoxedValues: true,
    withMap: true,
    withSet: true,
    withDate: true,
    withTypedArray: true,
    withSparseArray: true,
  }),
  fc.string({ maxLength: 700 }),
  fc.constant('x'.repeat(200_000)),
  fc.constant('ž'.repeat(269)),
  // Texts that made the old segment counter slower than linear: refused by a cheap bound.
  fc.constantFrom('\u0301'.repeat(32_000), '€'.repeat(32_000), '😀'.repeat(50_000), '{'.repeat(100_000)),
  // The worst cases the counter must take quickly: at or just under the limit.
  fc.constantFrom('\u0301'.repeat(268), '€'.repeat(306), '{'.repeat(306), '😀'.repeat(134), 'a€'.repeat(306)),
);
const phone = fc.oneof(
  fc.constantFrom(
    '420777123456',
    '+420 777 123 457',
    '00420-777-123-458',
    '(420) 777.123.459',
    '123',
    '12ab',
    '12',
    '1234567890123456789012',
  ),
  fc.stringMatching(/^\+?[0-9 ]{3,15}$/),
);
const field = fc.oneof(
  junk,
  phone,
  fc.array(
    fc.oneof(
      phone,
      fc.record(
        {
          number: phone,
          text: fc.string({ maxLength: 50 }),
          variables: fc.dictionary(fc.string({ maxLength: 8 }), fc.oneof(fc.string(), fc.integer())),
        },
        { requiredKeys: [] },
      ),
    ),
    { maxLength: 5 },
  ),
  fc.record(
    {
      sms: fc.record(
        { text: fc.string(), sender_id: fc.constantFrom('gText', 'gOwn', 'gSystem', 'bogus') },
        { requiredKeys: [] },
      ),
    },
    { requiredKeys: [] },
  ),
);
/** An object whose keys may be request fields or prototype-polluting names, set as own properties. */
const fieldsObject = fc
  .array(fc.tuple(fc.constantFrom(...SEND_FIELDS, ...polluting, 'application_token', 'temp'), field), { maxLength: 6 })
  .map((entries) => {
    const obj: Record<string, unknown> = {};
    for (const [key, value] of entries)
      Object.defineProperty(obj, key, { value, enumerable: true, writable: true, configurable: true });
    return obj;
  });
const msgArbitrary = fc.record(
  {
    payload: fc.oneof(
      { arbitrary: fc.string({ minLength: 1, maxLength: 100 }), weight: 3 },
      { arbitrary: fieldsObject, weight: 2 },
      { arbitrary: junk, weight: 1 },
    ),
    number: fc.oneof({ arbitrary: phone, weight: 3 }, { arbitrary: field, weight: 1 }),
    variables: junk,
    schedule: fc.oneof(junk, fc.date(), fc.integer()),
    parts: junk,
    topic: junk,
  },
  { requiredKeys: [] },
);

describe('fuzzing the send nodes with arbitrary msgs', function () {
  this.timeout(300_000);
  let sim: TestSimulator;
  const { escaped, start, stop } = watchEscapes();
  const prototypeBefore = Object.getOwnPropertyNames(Object.prototype).sort();

  before(async () => {
    start();
    sim = await startTestSimulator(1e9);
  });
  after(async () => {
    stop();
    await sim.close();
  });
  afterEach(() => unload());

  for (const [type, outputs, text] of [
    ['bulkgate-promotional', 3, 'Hi {{payload.temp}} <first_name>'],
    ['bulkgate-transactional', 2, ''],
  ] as const) {
    it(`${type}: ${RUNS} msgs, each ends once, no request for a refused one, every refusal names a field`, async () => {
      await sim.reset();
      await load(
        [
          { id: 'acc', type: 'bulkgate-account', baseUrl: sim.url, retries: 0, outboxMinutes: 0 },
          {
            id: 'n',
            type,
            account: 'acc',
            text,
            wires: Array.from({ length: outputs }, (_, i) => (i < 2 ? ['out'] : ['summary'])),
          },
          { id: 'c', type: 'catch', scope: ['n'], wires: [['caught']] },
          { id: 'out', type: 'helper' },
          { id: 'summary', type: 'helper' },
          { id: 'caught', type: 'helper' },
        ],
        { acc: { application_id: ACCOUNT_ID, application_token: TOKEN } },
        { record: false },
      );
      const ended = new Map<number, number>();
      const refusals: { code: string; message: string }[] = [];
      let requests = 0;
      let rejectedHere = 0;
      const end = (seq: number) => ended.set(seq, (ended.get(seq) ?? 0) + 1);
      // A promotional request ends on its summary (port 3); a transactional one on port 1 or 2.
      // A msg whose numbers were all impossible ends on the ports too, answered without a request
      // (a recipient is a recipient, whoever refuses it: the node's own refusal is shaped as the gateway's): its records carry `type`.
      // The gateway's own refusal of a number has the same record; the node's checks refuse only a number that cannot be one.
      const localRefusal = (r: any) =>
        r?.code === 9 && r?.type === 'invalid_phone_number' && !isPhoneNumber(String(r.number));
      (helper.getNode(outputs === 3 ? 'summary' : 'out') as TestNode).on('input', (m: any) => {
        end(m.seq);
        const answeredHere =
          outputs === 3
            ? m.payload.response.length > 0 && m.payload.response.every(localRefusal)
            : localRefusal(m.payload);
        if (answeredHere) rejectedHere++;
        else requests++;
      });
      (helper.getNode('caught') as TestNode).on('input', (m: any) => {
        end(m.seq);
        refusals.push({ code: m.bulkgate?.type, message: m.error.message });
      });
      const node = helper.getNode('n') as TestNode & { receive(m: unknown): void };
      const msgs = fc.sample(msgArbitrary, { numRuns: RUNS, seed: SEED });
      msgs.forEach((msg, seq) => node.receive({ ...msg, seq }));
      await until('every msg ended', () => ended.size >= RUNS, 240_000).catch(() => undefined);
      await new Promise((r) => setTimeout(r, 200)); // checks that no msg ends twice and nothing escapes late

      assert.deepEqual(escaped, [], 'no unhandled rejection or uncaught exception');
      assert.equal(ended.size, RUNS, 'every msg ended');
      assert.ok(
        [...ended.values()].every((n) => n === 1),
        'each msg ended exactly once',
      );
      // The gateway alone knows which address-book ids exist: those refusals follow valid requests.
      const others = refusals.filter((r) => !['invalid_request', 'admin_not_found', 'no_recipients'].includes(r.code));
      const kinds = [...new Set(others.map((r) => r.message))];
      assert.deepEqual(kinds.slice(0, 5), [], `${others.length} refusals came after a request was sent`);
      const received = (await sim.requests()).length;
      const answeredByGateway = refusals.length - refusals.filter((r) => r.code === 'invalid_request').length;
      assert.equal(
        received,
        requests + answeredByGateway,
        'the gateway got a request for each msg that passed the checks, and none other',
      );
      const unnamed = refusals.filter((r) => r.code === 'invalid_request' && !NAMES_A_FIELD.test(r.message));
      assert.deepEqual(unnamed.slice(0, 5), [], `${unnamed.length} refusals do not name a field`);
      assert.deepEqual(
        Object.getOwnPropertyNames(Object.prototype).sort(),
        prototypeBefore,
        'Object.prototype unchanged',
      );
      assert.equal(({} as Record<string, unknown>).polluted, undefined);
      assert.ok(requests > RUNS / 50, `enough valid msgs reached the gateway to mean something (${requests})`);
      assert.ok(rejectedHere > 0, 'some msgs had only impossible numbers, and ended on the ports');
      console.log(
        `      ${type}: ${requests} sent, ${rejectedHere} with only impossible numbers (port 2, no request), ${refusals.length - answeredByGateway} refused by the checks, ${answeredByGateway} by the gateway (unknown address-book ids)`,
      );
    });
  }
});

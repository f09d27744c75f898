/**
 * Long lists in steps (unit): a promotional list of 10,000 numbers is checked and
 * written a step at a time, the event loop running between steps, so other flows wait no longer
 * than a step; a short list is prepared at once (no turn of the event loop: the one-number alert's path).
 * Either way the request is the same, character for character, and so is a refusal. A list kept in
 * the outbox is written again for its resend in steps too.
 */
import assert from 'node:assert/strict';
import { sendOperation, type PreparedRequest, type SendFields } from '../../gateway';
import { prepareSend, prepareSendInSteps } from '../../gateway/request';
import { prepareResendInSteps, storableBody } from '../../gateway/resend';
import { SCHEMAS } from '../../gateway/schemas';
import { atOnce, eachInSteps, inTurns, LIST_STEP } from '../../gateway/steps';

const ACCOUNT = { applicationId: '10000', applicationToken: 'unit-token-4f2a', applicationProduct: 'node-red' };
const PROMOTIONAL = sendOperation('promotional');
const TEXT = 'Hi <first_name>, the water is off on Monday.';
const list = (n: number) =>
  Array.from({ length: n }, (_, i) => ({
    number: `420777${String(i).padStart(6, '0')}`,
    variables: { first_name: `Name${i}` },
  }));

/** How many turns of the event loop pass while `work` runs: an immediate rescheduled until it ends. */
async function turnsDuring<T>(work: () => T | Promise<T>): Promise<{ result: T; turns: number }> {
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

const refusal = (work: () => unknown): string => {
  try {
    work();
  } catch (error) {
    return (error as Error).message;
  }
  return 'not refused';
};
const refusalInSteps = async (fields: SendFields): Promise<string> => {
  try {
    await prepareSendInSteps(PROMOTIONAL, fields, ACCOUNT);
  } catch (error) {
    return (error as Error).message;
  }
  return 'not refused';
};

describe('long lists in steps (unit)', () => {
  it('a 10,000-recipient prepare yields to the event loop: an immediate scheduled at its start runs before it ends, a turn at least every LIST_STEP recipients', async () => {
    const fields = { number: list(10_000), text: TEXT };
    const { result, turns } = await turnsDuring(() => prepareSendInSteps(PROMOTIONAL, fields, ACCOUNT));
    assert.ok(turns >= 10_000 / LIST_STEP, `${turns} turns of the event loop while 10,000 recipients were prepared`);
    assert.equal(result.messages, 10_000);
    assert.ok(LIST_STEP <= 1000, 'a step is bounded');
  });

  it('a short list is prepared at once: one number, and LIST_STEP numbers, give the request without a turn of the event loop', async () => {
    for (const fields of [
      { number: '420777000001', text: 'Door open' },
      { number: list(LIST_STEP), text: TEXT },
    ]) {
      const { result, turns } = await turnsDuring(() => prepareSendInSteps(PROMOTIONAL, fields, ACCOUNT));
      assert.equal(turns, 0);
      assert.equal(result.payload, prepareSend(PROMOTIONAL, fields, ACCOUNT).payload);
    }
    const alert = await turnsDuring(() =>
      prepareSendInSteps(sendOperation('transactional'), { number: '420777000001', text: 'Door open' }, ACCOUNT),
    );
    assert.equal(alert.turns, 0);
  });

  it('a kept 10,000-recipient list is written again for its resend in steps (a turn at least every LIST_STEP recipients), the body as JSON.stringify writes it with duplicates_check; a kept alert at once', async () => {
    const sent = prepareSend(PROMOTIONAL, { number: list(10_000), text: TEXT }, ACCOUNT);
    const kept = { body: storableBody(sent), rejected: sent.rejected, messages: sent.messages };
    const { result, turns } = await turnsDuring(() => prepareResendInSteps(PROMOTIONAL, kept, ACCOUNT));
    assert.ok(
      turns >= 10_000 / LIST_STEP - 1,
      `${turns} turns of the event loop while 10,000 kept recipients were written`,
    );
    const body = { ...(JSON.parse(sent.payload as string) as Record<string, unknown>), duplicates_check: 'same_text' };
    assert.equal(result.payload, JSON.stringify(body));
    assert.equal(result.messages, 10_000);
    const alert = prepareSend(sendOperation('transactional'), { number: '420777000001', text: 'Door open' }, ACCOUNT);
    const once = await turnsDuring(() =>
      prepareResendInSteps(
        sendOperation('transactional'),
        { body: storableBody(alert), rejected: [], messages: 1 },
        ACCOUNT,
      ),
    );
    assert.equal(once.turns, 0);
    assert.equal(
      once.result.payload,
      JSON.stringify({ ...(JSON.parse(alert.payload as string) as object), duplicates_check: 'on' }),
    );
  });

  it('the same request either way: the body character for character as JSON.stringify writes it, the count, the rejected at their places, the missing variables', async () => {
    const recipients: unknown[] = list(10_000);
    recipients[3] = 'not a number';
    recipients[5_432] = { number: '12ab' };
    recipients[7_001] = { number: '420777999999', text: 'Own text <code>' };
    recipients[9_999] = '+420 777 888 999';
    const fields = {
      number: recipients,
      text: TEXT,
      country: 'cz',
      schedule: '2030-01-01T10:00:00+01:00',
      duplicates_check: 'same_text',
    };
    const stepped: PreparedRequest = await prepareSendInSteps(PROMOTIONAL, fields, ACCOUNT);
    const whole = prepareSend(PROMOTIONAL, fields, ACCOUNT);
    assert.equal(stepped.payload, whole.payload);
    assert.equal(stepped.payload, JSON.stringify(JSON.parse(whole.payload as string)));
    const body = JSON.parse(stepped.payload as string) as { number: unknown[] };
    assert.deepEqual(Object.keys(body), [
      'application_id',
      'application_token',
      'application_product',
      'number',
      'text',
      'country',
      'schedule',
      'duplicates_check',
    ]);
    assert.equal(body.number.length, 9_998);
    assert.equal(body.number.at(-1), '420777888999');
    assert.equal(stepped.messages, 9_998);
    assert.deepEqual(
      stepped.rejected.map((r) => [r.at, r.record.number]),
      [
        [3, 'not a number'],
        [5_432, '12ab'],
      ],
    );
    assert.deepEqual(stepped.missingVariables, ['code', 'first_name']);
    assert.deepEqual(stepped.missingVariables, whole.missingVariables);
  });

  it('a refusal deep in a long list names the same field and rule as the list checked at once (the recipient loop, the schema, another field beside it)', async () => {
    const cases: [SendFields, RegExp][] = [];
    const unknownKey: unknown[] = list(10_000);
    unknownKey[8_000] = { number: '420777000001', colour: 'red' };
    cases.push([{ number: unknownKey, text: TEXT }, /number\[8000\]\.colour/]);
    const badVariables: unknown[] = list(10_000);
    badVariables[7_500] = { number: '420777000001', variables: { first_name: ['a', 'list'] } };
    cases.push([{ number: badVariables, text: TEXT }, /number\[7500\] must be a phone number or an object/]);
    // Two faults: the one the whole body's check reports first is the one named.
    cases.push([{ number: badVariables, text: TEXT, country: 'CZE' }, /./]);
    const longText: unknown[] = list(10_000);
    longText[6_200] = { number: '420777000001', text: 'x'.repeat(700) };
    cases.push([{ number: longText, text: TEXT }, /number\[6200\]\.text/]);
    for (const [fields, names] of cases) {
      const whole = refusal(() => prepareSend(PROMOTIONAL, fields, ACCOUNT));
      assert.match(whole, names);
      assert.notEqual(whole, 'not refused');
      assert.equal(await refusalInSteps(fields), whole);
    }
  });

  it("the schemas' recipient lists have no rule over the list as a whole but at least one entry (what checking a step's slice relies on)", () => {
    const lists = Object.entries(SCHEMAS).filter(
      ([, schema]) => (schema.properties as Record<string, { type?: unknown }> | undefined)?.number?.type === 'array',
    );
    assert.ok(lists.length >= 2);
    for (const [key, schema] of lists) {
      const number = (schema.properties as Record<string, Record<string, unknown>>).number as Record<string, unknown>;
      assert.deepEqual(Object.keys(number).sort(), ['items', 'minItems', 'rule', 'type'], key);
      assert.equal(number.minItems, 1, key);
    }
  });

  it('a step visits what forEach visits (not the holes of a sparse list), in order, and yields between LIST_STEP items', () => {
    const sparse: number[] = [];
    for (const i of [0, 1, LIST_STEP - 1, LIST_STEP, 2 * LIST_STEP + 5]) sparse[i] = i;
    const visited: number[] = [];
    const steps = eachInSteps(sparse, (item, index) => visited.push(item, index));
    let yields = 0;
    while (!steps.next().done) yields++;
    assert.deepEqual(visited, [
      0,
      0,
      1,
      1,
      LIST_STEP - 1,
      LIST_STEP - 1,
      LIST_STEP,
      LIST_STEP,
      2 * LIST_STEP + 5,
      2 * LIST_STEP + 5,
    ]);
    assert.equal(yields, 2);
    assert.equal(atOnce(eachInSteps([], () => undefined)), undefined);
  });

  it('a step that throws ends the work with its error (a promise that rejects), later steps not run', async () => {
    const seen: number[] = [];
    const failing = inTurns(
      eachInSteps(
        Array.from({ length: 3 * LIST_STEP }, (_, i) => i),
        (i) => {
          if (i === LIST_STEP + 1) throw new Error('step refused');
          seen.push(i);
        },
      ),
    );
    await assert.rejects(failing, /step refused/);
    assert.equal(seen.length, LIST_STEP + 1);
  });
});

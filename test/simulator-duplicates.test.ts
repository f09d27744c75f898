/**
 * A promotional list that names one number twice, with `duplicates_check`: the later copy is
 * answered as a duplicate at price 0, so the credit check must not charge it either. A list the
 * credit covers once its duplicates are left out is sent; without the check, every copy is charged.
 */
import assert from 'node:assert/strict';
import { PRICES } from '../simulator/gateway';
import { ACCOUNT_ID, startTestSimulator, TOKEN, type TestSimulator } from './support/simulator';

interface Answer {
  data?: { total: { price: number }; response: { status: string; price?: number; sms_id?: string }[] };
  type?: string;
}

describe('the simulator charges a list only for what it sends', () => {
  let sim: TestSimulator;
  before(async () => {
    // Credit for one SMS part and no more.
    sim = await startTestSimulator(PRICES.sms);
  });
  beforeEach(() => sim.reset());
  after(() => sim.close());

  const promotional = async (body: Record<string, unknown>) => {
    const res = await fetch(`${sim.url}/api/2.0/advanced/promotional`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ application_id: ACCOUNT_ID, application_token: TOKEN, ...body }),
    });
    return { status: res.status, body: (await res.json()) as Answer };
  };

  for (const [check, number] of [
    ['same_text', ['420777123456', '420777123456']],
    [
      'same_number',
      [
        { number: '420777123456', text: 'Door opened' },
        { number: '420777123456', text: 'Door shut' },
      ],
    ],
  ] as const) {
    it(`duplicates_check ${check}: a number twice in one list, credit for one: sent once, the copy at price 0`, async () => {
      const { status, body } = await promotional({ number: number, text: 'Door opened', duplicates_check: check });
      assert.equal(status, 200, JSON.stringify(body));
      const [first, copy] = body.data?.response ?? [];
      assert.deepEqual([first?.status, first?.price], ['accepted', PRICES.sms]);
      assert.deepEqual([copy?.status, copy?.price, copy?.sms_id], ['accepted', 0, first?.sms_id]);
      assert.equal(body.data?.total.price, PRICES.sms);
      assert.equal((await sim.outbox()).messages.length, 1);
      assert.equal((await sim.outbox()).accounts.find((a) => a.id === ACCOUNT_ID)?.credit, 0);
    });
  }

  it('same_text with two different texts to one number: both are charged, so credit for one is low_credit', async () => {
    const number = [
      { number: '420777123456', text: 'Door opened' },
      { number: '420777123456', text: 'Door shut' },
    ];
    const { status, body } = await promotional({ number, duplicates_check: 'same_text' });
    assert.deepEqual([status, body.type], [400, 'low_credit']);
    assert.equal((await sim.outbox()).messages.length, 0);
  });

  it('without duplicates_check, both copies are charged: credit for one is low_credit, nothing sent', async () => {
    const { status, body } = await promotional({ number: ['420777123456', '420777123456'], text: 'Door opened' });
    assert.deepEqual([status, body.type], [400, 'low_credit']);
    assert.equal((await sim.outbox()).messages.length, 0);
  });
});

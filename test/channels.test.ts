/**
 * WhatsApp and RCS in the 2.0 channel cascade: the bodies the client sends and refuses,
 * the simulator delivering to each channel's users and falling back along the cascade, and a send
 * node whose cascade lists them.
 */
import assert from 'node:assert/strict';
import { GatewayClient, GatewayError } from '../gateway';
import { collect, helper, load, unload, type TestNode } from './support/red';
import { ACCOUNT_ID, startTestSimulator, TOKEN, type TestSimulator } from './support/simulator';

const WHATSAPP_USER = '420777000031';
const RCS_USER = '420777000032';
const NEITHER = '420777000033';

describe('WhatsApp and RCS in the cascade', function () {
  this.timeout(20_000);
  let sim: TestSimulator;
  let client: GatewayClient;

  before(async () => {
    sim = await startTestSimulator();
  });
  beforeEach(async () => {
    await sim.reset();
    await fetch(`${sim.url}/simulator/accounts`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ id: ACCOUNT_ID, token: TOKEN, credit: 100, whatsapp: [WHATSAPP_USER], rcs: [RCS_USER] }),
    });
    client = new GatewayClient({ baseUrl: sim.url, applicationId: ACCOUNT_ID, applicationToken: TOKEN, retries: 0 });
  });
  afterEach(async () => {
    await client.close();
    await unload();
  });
  after(() => sim.close());

  const last = async () => (await sim.outbox()).messages.at(-1);
  const cascade = {
    whatsapp: { sender: 'Home', message: { text: 'Water in the cellar', preview_url: false } },
    rcs: {
      sender: 'Home',
      expiration: '600',
      message: { text: 'Water in the cellar', suggestions: [{ type: 'reply', text: 'OK' }] },
    },
    sms: {},
  };

  it('a WhatsApp user gets the text on WhatsApp: one message at its own price, no SMS parts; the body as the page shows', async () => {
    const result = await client.transactional({
      number: WHATSAPP_USER,
      text: 'Water in the cellar (SMS)',
      channel: cascade,
    });
    assert.equal(result.record.status, 'accepted');
    const body = (await sim.lastRequest()).body as { channel: Record<string, unknown> };
    assert.deepEqual(Object.keys(body.channel), ['whatsapp', 'rcs', 'sms'], 'the order is kept');
    assert.deepEqual(
      body.channel.rcs,
      { sender: 'Home', expiration: 600, message: cascade.rcs.message },
      'an expiration written as digits is sent as a number',
    );
    const message = await last();
    assert.deepEqual(
      [message?.channel, message?.text, message?.parts, message?.price],
      ['whatsapp', 'Water in the cellar', 1, 0.04],
    );
  });

  it('the cascade falls back in order: an RCS user on RCS, a user of neither by SMS with the message text', async () => {
    await client.transactional({ number: RCS_USER, text: 'Water in the cellar (SMS)', channel: cascade });
    assert.deepEqual([(await last())?.channel, (await last())?.price], ['rcs', 0.02]);
    await client.transactional({ number: NEITHER, text: 'Water in the cellar (SMS)', channel: cascade });
    assert.deepEqual([(await last())?.channel, (await last())?.text], ['sms', 'Water in the cellar (SMS)']);
    // Without SMS listed it is still the last resort.
    await client.promotional({ number: [NEITHER], text: 'Sale', channel: { whatsapp: cascade.whatsapp } });
    assert.equal((await last())?.channel, 'sms');
  });

  it('a WhatsApp template is sent by name with its parameters; other content kinds (an RCS card) from the API names', async () => {
    await client.transactional({
      number: WHATSAPP_USER,
      text: 'fallback',
      channel: {
        whatsapp: {
          sender: 'Home',
          template: { template: 'alarm', language: 'en', body: [{ type: 'text', text: 'garage' }] },
        },
      },
    });
    assert.equal((await last())?.text, '[template alarm]');
    await client.transactional({
      number: RCS_USER,
      text: 'fallback',
      channel: { rcs: { sender: 'Shop', card: { title: 'New in', description: 'Boots' } } },
    });
    assert.deepEqual([(await last())?.channel, (await last())?.text], ['rcs', '[card]']);
  });

  it('refuses before sending: two content kinds, none, no sender, a text over the limit, WhatsApp in an OTP cascade', async () => {
    const before = (await sim.requests()).length;
    const refused = async (channel: unknown) => {
      const error = await client.transactional({ number: WHATSAPP_USER, text: 'x', channel }).catch((e: unknown) => e);
      assert.ok(error instanceof GatewayError);
      assert.equal(error.code, 'invalid_request');
      return error.message;
    };
    assert.equal(
      await refused({ whatsapp: { sender: 'Home', message: { text: 'a' }, template: { template: 'alarm' } } }),
      'channel.whatsapp must hold exactly one of message, template, file, otp, location',
    );
    assert.equal(
      await refused({ rcs: { sender: 'Home' } }),
      'channel.rcs must hold exactly one of message, file, card, carousel',
    );
    assert.equal(await refused({ whatsapp: { message: { text: 'a' } } }), 'channel.whatsapp.sender is required');
    assert.equal(
      await refused({ whatsapp: { sender: 'Home', message: { text: 'x'.repeat(4097) } } }),
      'channel.whatsapp.message.text must be a text of 1 to 4096 characters',
    );
    assert.equal(
      await refused({ rcs: { sender: 'Home', message: { text: 'x'.repeat(3073) } } }),
      'channel.rcs.message.text must be a text of 1 to 3072 characters',
    );
    assert.equal(await refused([{ type: 'telegram' }]), 'channel[0] must be a viber, whatsapp, rcs, sms channel');
    const otp = await client
      .call('otp send', {
        number: WHATSAPP_USER,
        request_quota_identification: 'x',
        channel: { whatsapp: cascade.whatsapp },
      })
      .catch((e: unknown) => e);
    assert.equal((otp as GatewayError).message, 'channel.whatsapp is not a field of the otp send request');
    assert.equal((await sim.requests()).length, before, 'nothing reached the gateway');
  });

  it('a transactional node with WhatsApp first: the text template filled from the msg, accepted out of port 1', async () => {
    await load(
      [
        { id: 'acc', type: 'bulkgate-account', baseUrl: sim.url, retries: 0 },
        {
          id: 'alarm',
          type: 'bulkgate-transactional',
          account: 'acc',
          text: 'SMS: {{payload}}',
          channel: [
            { type: 'whatsapp', sender: 'Home', expiration: 300, message: { text: 'WhatsApp: {{payload}}' } },
            { type: 'sms' },
          ],
          wires: [['accepted'], []],
        },
        { id: 'accepted', type: 'helper' },
      ],
      { acc: { application_id: ACCOUNT_ID, application_token: TOKEN } },
    );
    const accepted = collect('accepted', 2);
    const node = helper.getNode('alarm') as TestNode & { receive(m: unknown): void };
    node.receive({ number: WHATSAPP_USER, payload: 'smoke in the kitchen' });
    node.receive({ number: NEITHER, payload: 'smoke in the kitchen' });
    await accepted;
    const messages = (await sim.outbox()).messages.slice(-2);
    assert.deepEqual(
      messages.map((m) => [m.channel, m.text]),
      [
        ['whatsapp', 'WhatsApp: smoke in the kitchen'],
        ['sms', 'SMS: smoke in the kitchen'],
      ],
    );
  });
});

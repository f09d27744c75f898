/** The gateway client against the simulator over loopback HTTP: bodies, answers, errors. */
import assert from 'node:assert/strict';
import diagnostics from 'node:diagnostics_channel';
import { getEventListeners } from 'node:events';
import { GatewayClient, GatewayError, onStop, type GatewayClientOptions } from '../gateway';
import { listening } from '../gateway/abort';
import { prepare } from './support/prepare';
import { ACCOUNT_ID, startTestSimulator, TOKEN, type TestSimulator } from './support/simulator';
import { until } from './support/wait';

/**
 * Runs a call that must fail; returns its GatewayError, checked in the test that made it: the
 * application token is in none of its message, stack, enumerable properties, cause or JSON.
 */
async function failure(call: () => Promise<unknown> | unknown): Promise<GatewayError> {
  try {
    await call();
  } catch (error) {
    assert.ok(error instanceof GatewayError, `expected a GatewayError, got ${String(error)}`);
    const everything = JSON.stringify({
      message: error.message,
      stack: error.stack,
      own: { ...error },
      cause: error.cause,
      json: error.toJSON(),
    });
    assert.equal(everything.includes(TOKEN), false, `token found in ${error.message}`);
    return error;
  }
  assert.fail('expected the call to fail');
}

describe('gateway client', () => {
  let sim: TestSimulator;
  let client: GatewayClient;
  const clients: GatewayClient[] = [];
  const make = (options: Partial<GatewayClientOptions> = {}) => {
    const c = new GatewayClient({
      baseUrl: sim.url,
      applicationId: ACCOUNT_ID,
      applicationToken: TOKEN,
      retryDelay: 5,
      ...options,
    });
    clients.push(c);
    return c;
  };

  before(async () => {
    sim = await startTestSimulator();
    client = make();
  });
  beforeEach(() => sim.reset());
  after(async () => {
    await Promise.all(clients.map((c) => c.close()));
    await sim.close();
  });

  describe('promotional, advanced 2.0', () => {
    it('sends numbers, per-recipient text and variables, and the channel cascade, and reads the result', async () => {
      const result = await client.promotional({
        number: [
          '+420 777 000 001',
          { number: '00420-777-123-456', text: 'Hi <first_name>', variables: { first_name: 'Jan' } },
          { text: 'skipped' },
        ],
        text: 'Hello',
        channel: [
          { type: 'viber', sender: 'Shop', expiration: '90', button: { caption: 'Open', url: 'https://example.com' } },
          { type: 'sms', sender_id: 'gText', sender_id_value: 'Shop' },
        ],
        duplicates_check: 'same_text',
      });
      const received = await sim.lastRequest();
      assert.equal(received.path, '/api/2.0/advanced/promotional');
      assert.equal(received.contentType, 'application/json');
      assert.deepEqual(received.body, {
        application_id: ACCOUNT_ID,
        application_token: TOKEN,
        number: ['420777000001', { number: '420777123456', text: 'Hi <first_name>', variables: { first_name: 'Jan' } }],
        text: 'Hello',
        channel: {
          viber: { sender: 'Shop', expiration: 90, button: { caption: 'Open', url: 'https://example.com' } },
          sms: { sender_id: 'gText', sender_id_value: 'Shop' },
        },
        duplicates_check: 'same_text',
      });
      assert.deepEqual(Object.keys(received.body.channel as object), ['viber', 'sms'], 'the cascade keeps its order');
      assert.equal(result.response.length, 2);
      assert.deepEqual(result.total.status, { sent: 0, accepted: 2, scheduled: 0, error: 0 });
      const { messages } = await sim.outbox();
      assert.deepEqual(
        messages.map((m) => [m.number, m.channel, m.text]),
        [
          ['420777000001', 'viber', 'Hello'],
          ['420777123456', 'sms', 'Hi Jan'],
        ],
      );
    });

    it('moves top-level unicode, sender_id and sender_id_value into channel.sms', async () => {
      await client.promotional({
        number: '420777111222',
        text: 'x',
        sender_id: 'gOwn',
        sender_id_value: '420777999999',
        unicode: 'on',
      });
      const { body } = await sim.lastRequest();
      assert.deepEqual(body.channel, { sms: { sender_id: 'gOwn', sender_id_value: '420777999999', unicode: true } });
      assert.equal('sender_id' in body, false);
      assert.equal('unicode' in body, false);
    });

    it('turns unicode on for a Czech text and leaves it off for a GSM-7 one', async () => {
      await client.promotional({ number: '420777111222', text: 'Příliš žluťoučký kůň' });
      assert.deepEqual((await sim.lastRequest()).body.channel, { sms: { unicode: true } });
      await client.promotional({ number: '420777111222', text: 'Price 5€ [net]' });
      assert.equal('channel' in (await sim.lastRequest()).body, false);
    });

    it('reports invalid numbers as code 9 records beside the accepted ones', async () => {
      const result = await client.promotional({ number: '420777111222;123', text: 'x' });
      assert.deepEqual(
        result.response.map((r) => [r.status, r.code, r.number]),
        [
          ['accepted', undefined, '420777111222'],
          ['error', 9, '123'],
        ],
      );
      assert.equal(result.total.status.error, 1);
    });

    it('an impossible number (12ab) is a rejected recipient at its place; the others are still sent in one request', async () => {
      const result = await client.promotional({
        number: ['420777111222', '12ab', { number: '+420 777 111 223' }],
        text: 'x',
      });
      const requests = await sim.requests();
      assert.equal(requests.length, 1, 'one request');
      assert.deepEqual(
        requests[0]?.body.number,
        ['420777111222', { number: '420777111223' }],
        'without the impossible number',
      );
      assert.deepEqual(
        result.response.map((r) => [r.status, r.number]),
        [
          ['accepted', '420777111222'],
          ['error', '12ab'],
          ['accepted', '420777111223'],
        ],
      );
      assert.deepEqual(result.response[1], {
        status: 'error',
        code: 9,
        type: 'invalid_phone_number',
        error: 'Invalid phone number',
        number: '12ab',
      });
      assert.deepEqual(result.total.status, { sent: 0, accepted: 2, scheduled: 0, error: 1 });
    });

    it('with every number impossible and no group or admin, no request is made and each comes back rejected', async () => {
      const result = await client.promotional({ number: '12ab;1;123456789012345678901', text: 'x' });
      assert.equal((await sim.requests()).length, 0);
      assert.deepEqual(
        result.response.map((r) => [r.code, r.type, r.number]),
        [
          [9, 'invalid_phone_number', '12ab'],
          [9, 'invalid_phone_number', '1'],
          [9, 'invalid_phone_number', '123456789012345678901'],
        ],
      );
      assert.deepEqual(result.total, { price: 0, status: { sent: 0, accepted: 0, scheduled: 0, error: 3 } });
    });

    it('groups or admins beside impossible numbers still go; what is not about one recipient is still a request error', () => {
      const withGroups = prepare(client, 'promotional', { number: '12ab', groups: [1], text: 'x' });
      assert.equal(withGroups.nothingToSend, false);
      assert.deepEqual(JSON.parse(withGroups.payload as string).groups, [1]);
      assert.equal('number' in JSON.parse(withGroups.payload as string), false);
      assert.throws(
        () => prepare(client, 'promotional', { number: '12ab', text: 'x'.repeat(700) }),
        /^text is 700 characters/,
      );
      assert.throws(
        () => prepare(client, 'transactional', { number: '12', text: 'x', flash: true }),
        /^flash exists in version 1\.0 only/,
      );
      assert.throws(
        () => prepare(client, 'transactional', { number: '12', text: 'x', sender_id: 'gOwn' }, { version: '1.0' }),
        /sender_id_value/,
      );
    });

    it('sends groups and admins, which the gateway expands from the address book', async () => {
      const result = await client.promotional({ groups: '1', admins: [2], text: 'Dear <first_name>' });
      assert.deepEqual((await sim.lastRequest()).body.groups, [1]);
      assert.equal(result.response.length, 3);
      assert.deepEqual(
        (await sim.outbox()).messages.map((m) => m.text),
        ['Dear Jana', 'Dear Petr', 'Dear Admin'],
      );
    });

    it('converts a schedule from a Date, milliseconds, seconds or ISO string, and the gateway holds it', async () => {
      const at = new Date(Date.now() + 3600_000);
      const seconds = String(Math.floor(at.getTime() / 1000));
      for (const schedule of [at, at.getTime(), Math.floor(at.getTime() / 1000)]) {
        const result = await client.promotional({ number: '420777111222', text: `s ${String(schedule)}`, schedule });
        assert.equal((await sim.lastRequest()).body.schedule, seconds);
        assert.equal(result.response[0]?.status, 'scheduled');
      }
      await client.promotional({ number: '420777111222', text: 'iso', schedule: '2030-01-02T10:00:00+01:00' });
      assert.equal((await sim.lastRequest()).body.schedule, '2030-01-02T10:00:00+01:00');
      assert.ok((await sim.outbox()).messages.every((m) => m.status === 'scheduled'));
    });

    it('drops a repeated text to the same number when duplicates_check is same_text', async () => {
      const first = await client.promotional({ number: '420777111222', text: 'once', duplicates_check: 'same_text' });
      const second = await client.promotional({ number: '420777111222', text: 'once', duplicates_check: 'same_text' });
      assert.equal(second.response[0]?.sms_id, first.response[0]?.sms_id);
      assert.equal((await sim.outbox()).messages.length, 1);
      await client.promotional({ number: '420777111222', text: 'other', duplicates_check: 'same_number' });
      assert.equal((await sim.outbox()).messages.length, 1, 'same_number drops a different text too');
    });

    it("the simulator's duplicate check looks a number up, not the whole outbox: a list of 2,000 after 2,000 does not read each kept message per recipient", async () => {
      const numbers = Array.from({ length: 2000 }, (_, i) => `420777${String(i).padStart(6, '0')}`);
      await client.promotional({ number: numbers, text: 'first', duplicates_check: 'same_text' });
      // Every read of a kept message by its place in the outbox, counted (a scan per recipient reads them all for each).
      const { state } = sim.sim.gateway;
      let reads = 0;
      state.outbox = new Proxy(state.outbox, {
        get(target, key, receiver) {
          if (typeof key === 'string' && /^\d+$/.test(key)) reads++;
          return Reflect.get(target, key, receiver) as unknown;
        },
      });
      const second = await client.promotional({ number: numbers, text: 'second', duplicates_check: 'same_text' });
      assert.equal(
        second.response.filter((r) => r.status === 'accepted').length,
        2000,
        'another text: none is a duplicate',
      );
      const again = await client.promotional({ number: numbers, text: 'second', duplicates_check: 'same_text' });
      assert.equal(new Set(again.response.map((r) => r.sms_id)).size, 2000);
      assert.deepEqual(
        again.response.map((r) => r.sms_id),
        second.response.map((r) => r.sms_id),
        'the same text again: each the original',
      );
      // A scan per recipient reads over 2 × 2,000 × 2,000; the index, none (the timer that releases scheduled ones reads them all once a second).
      assert.ok(reads < 400_000, `${reads} reads of kept messages for 4,000 recipients checked`);
      assert.equal((await sim.outbox()).messages.length, 4000);
    });
  });

  describe('promotional, advanced 1.0', () => {
    it('keeps unicode, flash and the sender at top level and never sends channel', async () => {
      await client.promotional(
        {
          number: ['420777111222'],
          text: 'Žluťoučký',
          flash: true,
          sender_id: 'gText',
          sender_id_value: 'Shop',
          country: 'cz',
        },
        { version: '1.0' },
      );
      const { path, body } = await sim.lastRequest();
      assert.equal(path, '/api/1.0/advanced/promotional');
      assert.deepEqual(body, {
        application_id: ACCOUNT_ID,
        application_token: TOKEN,
        number: ['420777111222'],
        text: 'Žluťoučký',
        unicode: true,
        flash: true,
        sender_id: 'gText',
        sender_id_value: 'Shop',
        country: 'cz',
      });
    });
  });

  describe('promotional, simple 1.0', () => {
    it('joins the numbers with ; in a JSON body', async () => {
      await client.promotional(
        { number: ['420777111222', '+420 777 111 223'], text: 'hi', unicode: 'off' },
        { api: 'simple' },
      );
      const { path, body } = await sim.lastRequest();
      assert.equal(path, '/api/1.0/simple/promotional');
      assert.deepEqual(body, {
        application_id: ACCOUNT_ID,
        application_token: TOKEN,
        number: '420777111222;420777111223',
        text: 'hi',
      });
    });

    it('sends a form body with booleans as yes/no', async () => {
      await client.promotional(
        { number: '420777111222', text: 'čau', flash: true },
        { api: 'simple', encoding: 'form' },
      );
      const received = await sim.lastRequest();
      assert.equal(received.contentType, 'application/x-www-form-urlencoded');
      assert.deepEqual(Object.fromEntries(new URLSearchParams(received.raw)), {
        application_id: ACCOUNT_ID,
        application_token: TOKEN,
        number: '420777111222',
        text: 'čau',
        unicode: 'yes',
        flash: 'yes',
      });
    });
  });

  describe('transactional', () => {
    it('advanced 2.0: one number, variables, the cascade, and the accepted record', async () => {
      const result = await client.transactional({
        number: '777 123 456',
        text: 'Code <code>',
        variables: { code: 1234 },
        country: 'CZ',
        channel: { viber: { sender: 'Alarm' }, sms: { text: 'SMS code <code>' } },
      });
      const { path, body } = await sim.lastRequest();
      assert.equal(path, '/api/2.0/advanced/transactional');
      assert.deepEqual(body, {
        application_id: ACCOUNT_ID,
        application_token: TOKEN,
        number: '777123456',
        text: 'Code <code>',
        variables: { code: 1234 },
        channel: { viber: { sender: 'Alarm' }, sms: { text: 'SMS code <code>' } },
        country: 'CZ',
      });
      assert.equal(result.rejected, false);
      assert.equal(result.record.status, 'accepted');
      assert.equal(result.record.number, '420777123456');
      assert.equal((await sim.outbox()).messages[0]?.text, 'SMS code 1234');
    });

    it('advanced 2.0: an invalid number is a rejected recipient, not an error', async () => {
      const result = await client.transactional({ number: '123', text: 'x' });
      assert.equal(result.rejected, true);
      assert.deepEqual(result.record, {
        status: 'error',
        code: 9,
        type: 'invalid_phone_number',
        error: 'Invalid phone number',
        number: '123',
      });
    });

    it('an impossible number (12) is the same rejected recipient, answered without a request', async () => {
      for (const version of ['2.0', '1.0'] as const) {
        const result = await client.transactional({ number: '12', text: 'x' }, { version });
        assert.equal(result.rejected, true);
        assert.deepEqual(result.record, {
          status: 'error',
          code: 9,
          type: 'invalid_phone_number',
          error: 'Invalid phone number',
          number: '12',
        });
      }
      assert.equal((await sim.requests()).length, 0);
    });

    it('advanced 1.0: admin instead of number, flash at top level', async () => {
      await client.transactional({ admin: '1', text: 'Door opened', flash: 'yes' }, { version: '1.0' });
      const { path, body } = await sim.lastRequest();
      assert.equal(path, '/api/1.0/advanced/transactional');
      assert.deepEqual(body, {
        application_id: ACCOUNT_ID,
        application_token: TOKEN,
        admin: 1,
        text: 'Door opened',
        flash: true,
      });
    });

    it('simple 1.0 (JSON and form) and the 2.0 simple path', async () => {
      await client.transactional({ number: '420777111222', text: 'a' }, { api: 'simple', version: '1.0' });
      assert.equal((await sim.lastRequest()).path, '/api/1.0/simple/transactional');
      await client.transactional(
        { number: '420777111222', text: 'b', unicode: true },
        { api: 'simple', version: '1.0', encoding: 'form' },
      );
      assert.equal(
        (await sim.lastRequest()).raw,
        `application_id=${ACCOUNT_ID}&application_token=${TOKEN}&number=420777111222&text=b&unicode=yes`,
      );
      await client.transactional(
        { number: '420777111222', text: 'c', sender_id: 'gProfile', sender_id_value: '12' },
        { api: 'simple', version: '2.0' },
      );
      const last = await sim.lastRequest();
      assert.equal(last.path, '/api/2.0/simple/transactional');
      assert.deepEqual(last.body.channel, { sms: { sender_id: 'gProfile', sender_id_value: '12' } });
    });

    it('duplicates_check on: the same text to the same number within 5 minutes goes once', async () => {
      const a = await client.transactional({ number: '420777111222', text: 'alarm', duplicates_check: true });
      const b = await client.transactional({ number: '420777111222', text: 'alarm', duplicates_check: 'on' });
      assert.equal((await sim.lastRequest()).body.duplicates_check, 'on');
      assert.equal(b.record.sms_id, a.record.sms_id);
      assert.equal((await sim.outbox()).messages.length, 1);
    });
  });

  describe('info (balance)', () => {
    it('advanced POST JSON, simple GET with query, simple POST JSON and form', async () => {
      const variants = [
        [{}, 'POST', '/api/1.0/advanced/info', 'application/json'],
        [{ api: 'simple' as const }, 'GET', `/api/1.0/simple/info`, undefined],
        [
          { api: 'simple' as const, method: 'POST' as const, encoding: 'json' as const },
          'POST',
          '/api/1.0/simple/info',
          'application/json',
        ],
        [
          { api: 'simple' as const, method: 'POST' as const, encoding: 'form' as const },
          'POST',
          '/api/1.0/simple/info',
          'application/x-www-form-urlencoded',
        ],
      ] as const;
      for (const [options, method, path, contentType] of variants) {
        const balance = await client.info(options);
        assert.equal(balance.credit, 1000);
        assert.equal(balance.currency, 'credits');
        const received = await sim.lastRequest();
        assert.equal(received.method, method);
        assert.equal(received.path, path);
        assert.equal(received.contentType, contentType);
        assert.deepEqual(received.body, { application_id: ACCOUNT_ID, application_token: TOKEN });
      }
    });

    it('credit goes down by the price of what was sent', async () => {
      const result = await client.promotional({ number: ['420777111222', '420777111223'], text: 'x'.repeat(200) });
      assert.equal(result.total.price, 0.2, 'two recipients, two parts each, 0.05 a part');
      assert.equal((await client.info()).credit, 999.8);
    });
  });

  describe('errors from the gateway', () => {
    it('401 in the 2.0 shape: unknown_identity', async () => {
      const error = await failure(() =>
        make({ applicationToken: 'wrong' }).transactional({ number: '420777111222', text: 'x' }),
      );
      assert.equal(error.code, 'unknown_identity');
      assert.equal(error.status, 401);
      assert.equal(error.retryable, false);
      assert.match(
        error.message,
        /^The gateway does not accept this application id and token: check them in the BulkGate account node \(they come from the API application in the BulkGate portal\) \(unknown_identity, HTTP 401\)$/,
      );
    });

    it('401 in the 1.0 shape: authentication_failed', async () => {
      const error = await failure(() => make({ applicationId: 'nobody' }).info());
      assert.equal(error.code, 'authentication_failed');
      assert.equal(error.status, 401);
    });

    it('low_credit when the credit does not cover the message, and nothing is sent', async () => {
      const poor = make({ applicationId: 'poor', applicationToken: 'poor-token' });
      await fetch(`${sim.url}/simulator/accounts`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ id: 'poor', token: 'poor-token', credit: 0.01 }),
      });
      const error = await failure(() => poor.transactional({ number: '420777111222', text: 'x' }));
      assert.equal(error.code, 'low_credit');
      assert.equal(error.retryable, false);
      assert.equal((await sim.outbox()).messages.length, 0);
    });

    it('5xx is retried; a 503 has not reached the gateway so it is retried without duplicates_check', async () => {
      await sim.fault({ status: 503, count: 2 });
      const result = await client.transactional({ number: '420777111222', text: 'x' });
      assert.equal(result.record.status, 'accepted');
      assert.equal((await sim.requests()).length, 3);
    });

    it('a 500 may have reached the gateway: no retry without duplicates_check, retryable error', async () => {
      await sim.fault({ status: 500, count: 1 });
      const error = await failure(() => client.transactional({ number: '420777111222', text: 'x' }));
      assert.equal(error.status, 500);
      assert.equal(error.retryable, true);
      assert.equal((await sim.requests()).length, 1);
      await sim.fault({ status: 500, count: 1 });
      const ok = await client.transactional({ number: '420777111222', text: 'y', duplicates_check: 'on' });
      assert.equal(ok.record.status, 'accepted');
    });

    it('gives up after the configured retries', async () => {
      await sim.fault({ status: 429, count: 10 });
      const error = await failure(() => make({ retries: 2 }).info());
      assert.equal(error.status, 429);
      assert.equal((await sim.requests()).length, 3);
    });

    it('waits the Retry-After the gateway asked for before the next attempt, not its own shorter backoff', async () => {
      // The client's own backoff here is 5 to 10 ms; the gateway asks for a second.
      await sim.fault({ status: 429, retryAfter: 1, count: 1 });
      const ok = await make({ retries: 1 }).info();
      assert.ok(ok);
      const [first, second] = await sim.requests();
      assert.ok(first && second, 'two attempts');
      const waited = Date.parse(second.at) - Date.parse(first.at);
      assert.ok(waited >= 950, `the second attempt came ${waited} ms after the first (asked: 1000 ms)`);
    });

    it('an HTML body is bad_response', async () => {
      await sim.fault({ body: 'html' });
      const error = await failure(() => make({ retries: 0 }).info());
      assert.equal(error.code, 'bad_response');
      assert.equal(error.status, 502);
    });

    it('an empty body and cut-off JSON are bad_response', async () => {
      for (const body of ['empty', 'truncated'] as const) {
        await sim.fault({ body });
        const error = await failure(() => make({ retries: 0 }).transactional({ number: '420777111222', text: body }));
        assert.equal(error.code, 'bad_response');
        assert.equal(error.status, 200);
      }
    });

    it('no answer within the timeout is timeout', async () => {
      await sim.fault({ hang: true });
      const error = await failure(() =>
        make({ timeout: 300, retries: 0 }).transactional({ number: '420777111222', text: 'x' }),
      );
      assert.equal(error.code, 'timeout');
      assert.equal(error.retryable, true);
      assert.match(error.message, /within 300 ms/);
    });

    it('a connection reset is network, retryable, and not repeated without duplicates_check', async () => {
      await sim.fault({ drop: 'after' });
      const error = await failure(() => client.transactional({ number: '420777111222', text: 'x' }));
      assert.equal(error.code, 'network');
      assert.equal(error.retryable, true);
      assert.equal((await sim.requests()).length, 1);
    });

    it('a refused connection is network and retried, since nothing was sent', async () => {
      const dead = make({ baseUrl: 'http://127.0.0.1:1', retries: 1 });
      // Each attempt's refused connection, as undici reports it.
      let attempts = 0;
      const count = () => attempts++;
      diagnostics.subscribe('undici:client:connectError', count);
      const error = await failure(() => dead.info()).finally(() =>
        diagnostics.unsubscribe('undici:client:connectError', count),
      );
      assert.equal(error.code, 'network');
      assert.equal(attempts, 2);
    });
  });

  describe('checks before anything is sent', () => {
    const cases: [string, () => unknown, RegExp][] = [
      [
        'a non-https base URL to another host',
        () => make({ baseUrl: 'http://example.com' }),
        /^baseUrl must use https:\/\//,
      ],
      [
        'a text over 612 GSM-7 characters',
        () => prepare(client, 'promotional', { number: '420777111222', text: 'a'.repeat(600) + '€'.repeat(20) }),
        /^text is 640 characters; the limit is 612 \(268 with Unicode\)$/,
      ],
      [
        'a Unicode text over 268',
        () => prepare(client, 'transactional', { number: '420777111222', text: 'ř'.repeat(269) }),
        /^text is 269 characters; the limit is 612 \(268 with Unicode\)$/,
      ],
      [
        'a recipient text over the limit',
        () => prepare(client, 'promotional', { number: [{ number: '420777111222', text: 'a'.repeat(613) }] }),
        /^number\[0\]\.text is 613 characters/,
      ],
      [
        'a channel text over the limit',
        () => prepare(client, 'transactional', { number: '420777111222', channel: { sms: { text: 'ž'.repeat(300) } } }),
        /^channel\.sms\.text is 300 characters/,
      ],
      [
        'flash in 2.0',
        () => prepare(client, 'promotional', { number: '420777111222', text: 'x', flash: true }),
        /^flash exists in version 1\.0 only/,
      ],
      [
        'admin in 2.0',
        () => prepare(client, 'transactional', { admin: 1, text: 'x' }),
        /^admin exists in version 1\.0 only/,
      ],
      [
        'channel in 1.0',
        () =>
          prepare(
            client,
            'promotional',
            { number: '420777111222', text: 'x', channel: { sms: {} } },
            { version: '1.0' },
          ),
        /^channel exists in version 2\.0 only/,
      ],
      [
        'no recipient',
        () => prepare(client, 'promotional', { text: 'x' }),
        /^one of number, groups, admins is required$/,
      ],
      [
        'no text for plain numbers',
        () => prepare(client, 'promotional', { number: '420777111222' }),
        /^text is required when number holds plain numbers/,
      ],
      [
        'no text in transactional',
        () => prepare(client, 'transactional', { number: '420777111222' }),
        /^text is required/,
      ],
      [
        'a recipient that is neither a number nor an entry',
        () => prepare(client, 'promotional', { number: ['420777111222', true], text: 'x' }),
        /^number\[1\] must be a phone number or an object/,
      ],
      [
        'two numbers in transactional',
        () => prepare(client, 'transactional', { number: '420777111222,420777111223', text: 'x' }),
        /^number must be one phone number for a transactional message \(it holds 2\)$/,
      ],
      [
        'a sender type of another version',
        () =>
          prepare(
            client,
            'promotional',
            { number: '420777111222', text: 'x', sender_id: 'gMobile' },
            { version: '1.0' },
          ),
        /^sender_id must be one of gSystem, gShort, gText, gOwn or a sender profile id/,
      ],
      [
        'a sender without its value',
        () => prepare(client, 'transactional', { number: '420777111222', text: 'x', sender_id: 'gOwn' }),
        /^channel\.sms\.sender_id_value is required when sender_id is gOwn/,
      ],
      [
        'a viber channel without button in promotional',
        () =>
          prepare(client, 'promotional', { number: '420777111222', text: 'x', channel: { viber: { sender: 'S' } } }),
        /^channel\.viber\.button is required$/,
      ],
      [
        'an unknown channel',
        () => prepare(client, 'promotional', { number: '420777111222', text: 'x', channel: { telegram: {} } }),
        /^channel\.telegram is not a channel \(viber, whatsapp, rcs, sms\)$/,
      ],
      [
        'groups that are not ids',
        () => prepare(client, 'promotional', { groups: ['friends'], text: 'x' }),
        /^groups\[0\] must be an integer id$/,
      ],
      [
        'an unknown duplicates_check',
        () => prepare(client, 'promotional', { number: '420777111222', text: 'x', duplicates_check: 'always' }),
        /^duplicates_check must be same_text, same_number or null$/,
      ],
      [
        'a schedule that is not a date',
        () => prepare(client, 'promotional', { number: '420777111222', text: 'x', schedule: 'tomorrow' }),
        /^schedule must be a Date/,
      ],
      [
        'a schedule past the last date (a number String() writes with an exponent)',
        () => prepare(client, 'promotional', { number: '420777111222', text: 'x', schedule: 1e300 }),
        /^schedule must be a Date/,
      ],
      [
        'a country that is not ISO alpha-2',
        () => prepare(client, 'transactional', { number: '420777111222', text: 'x', country: 'Czechia' }),
        /^country must be a two-letter ISO 3166-1 country code/,
      ],
      [
        'variables that are not an object',
        () => prepare(client, 'transactional', { number: '420777111222', text: 'x', variables: 'a=b' }),
        /^variables must be an object/,
      ],
      [
        'unicode that is not a mode',
        () => prepare(client, 'promotional', { number: '420777111222', text: 'x', unicode: 'maybe' }),
        /^channel\.sms\.unicode must be true or false$/,
      ],
      [
        'simple promotional in 2.0',
        () => prepare(client, 'promotional', { number: '420777111222', text: 'x' }, { api: 'simple', version: '2.0' }),
        /^version 2\.0 does not exist for the simple promotional API/,
      ],
      [
        'groups in the simple API',
        () => prepare(client, 'promotional', { groups: [1], text: 'x' }, { api: 'simple' }),
        /^groups exists in the advanced API only$/,
      ],
      [
        'duplicates_check in the simple API',
        () =>
          prepare(
            client,
            'promotional',
            { number: '420777111222', text: 'x', duplicates_check: 'same_text' },
            { api: 'simple' },
          ),
        /^duplicates_check is not a field of the promotional simple 1\.0 request$/,
      ],
      [
        'a missing token',
        () => prepare(make({ applicationToken: '' }), 'transactional', { number: '420777111222', text: 'x' }),
        /^application_token is required/,
      ],
    ];
    for (const [name, call, message] of cases) {
      it(`refuses ${name}, naming the field`, async () => {
        const error = await failure(call);
        assert.equal(error.code, 'invalid_request');
        assert.match(error.message, message);
      });
    }

    it('sent nothing for any refused request', async () => {
      for (const [, call] of cases) await failure(call);
      assert.equal((await sim.requests()).length, 0);
    });

    it('reports <name> placeholders that a recipient has no variable for', () => {
      const prepared = prepare(client, 'promotional', {
        number: [{ number: '420777111222', variables: { first_name: 'A' } }, '420777111223'],
        text: 'Hi <first_name> <last_name>',
      });
      assert.deepEqual(prepared.missingVariables.sort(), ['first_name', 'last_name']);
    });
  });

  describe('stopping requests with a signal (a node closing)', () => {
    it('abort() calls each listener still listening once, in the order they joined; one that stopped is not called', () => {
      const controller = new AbortController();
      const calls: string[] = [];
      onStop(controller.signal, () => calls.push('a'));
      const stopB = onStop(controller.signal, () => calls.push('b'));
      onStop(controller.signal, () => calls.push('c'));
      stopB();
      stopB(); // a second stop changes nothing
      assert.equal(listening(controller.signal), 2);
      controller.abort();
      controller.abort(); // nobody listens any more
      assert.equal(listening(controller.signal), 0);
      onStop(controller.signal, () => calls.push('late'));
      assert.deepEqual(calls, ['a', 'c'], 'a listener that came after the abort is not called');
    });

    it('a listener that stops another while the signal aborts does not keep it from being called', () => {
      const controller = new AbortController();
      const calls: string[] = [];
      let stopSecond = () => undefined as unknown;
      onStop(controller.signal, () => {
        calls.push('first');
        stopSecond();
      });
      stopSecond = onStop(controller.signal, () => calls.push('second'));
      controller.abort();
      assert.deepEqual(calls, ['first', 'second']);
    });

    it('10,000 waits on one signal are one listener on the signal itself (an EventTarget looks through all its listeners on each add)', () => {
      const controller = new AbortController();
      const stops = Array.from({ length: 10_000 }, () => onStop(controller.signal, () => undefined));
      assert.equal(listening(controller.signal), 10_000);
      assert.equal(getEventListeners(controller.signal, 'abort').length, 1);
      for (const stop of stops) stop();
      assert.equal(listening(controller.signal), 0);
    });

    it('a request on the wire ends when its signal aborts; a finished one has stopped listening', async () => {
      const group = new AbortController();
      const calls: number[] = [];
      // Finished requests must stop listening: abort() would otherwise reach their readers.
      const watched = new AbortController();
      const quick = make({ retries: 0 });
      for (let i = 0; i < 3; i++)
        await quick.transactional({ number: '420777123456', text: `one ${i}` }, { signal: watched.signal });
      assert.equal(listening(watched.signal), 0, 'no finished request still listens');
      await sim.fault({ hang: true });
      const pending = quick.transactional({ number: '420777123456', text: 'hangs' }, { signal: group.signal }).then(
        () => calls.push(1),
        (error: unknown) => error,
      );
      await until('the hanging request at the gateway', async () =>
        (await sim.requests()).some((r) => r.body.text === 'hangs'),
      );
      group.abort();
      const error = await pending;
      assert.ok(error instanceof GatewayError, `expected a GatewayError, got ${String(error)}`);
      assert.equal(error.code, 'closed');
      assert.equal(error.mayHaveReached, true, 'it was on the wire: the gateway may have taken it');
      assert.deepEqual(calls, [], 'the request did not resolve');
    });
  });

  describe('the application token', () => {
    it('is not an enumerable property of the client', () => {
      assert.equal(JSON.stringify(client).includes(TOKEN), false);
      assert.equal(
        Object.values(client).some((v) => String(v).includes(TOKEN)),
        false,
      );
    });
  });
});

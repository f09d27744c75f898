/**
 * Request building (unit): the bodies prepareSend writes, as the API reference describes them
 * (its versioning, the simple API's bodies, the text limits). Through the
 * simulator the same bodies are checked in test/client.test.ts; here each rule is pinned at its
 * edge, fast enough for mutation testing.
 */
import assert from 'node:assert/strict';
import FakeTimers from '@sinonjs/fake-timers';
import { sendOperation, type GatewayError, type PreparedRequest, type SendFields } from '../../gateway';
import { prepareInfo, prepareSend } from '../../gateway/request';

const ACCOUNT = { applicationId: '10000', applicationToken: 'unit-token-4f2a', applicationProduct: 'node-red' };
const body = (prepared: PreparedRequest) => JSON.parse(prepared.payload as string) as Record<string, any>;
const transactional = (fields: SendFields, version: '1.0' | '2.0' = '2.0') =>
  prepareSend(sendOperation('transactional', { version }), fields, ACCOUNT);
const promotional = (fields: SendFields, choice: Parameters<typeof sendOperation>[1] = {}) =>
  prepareSend(sendOperation('promotional', choice), fields, ACCOUNT);
const refused = (build: () => unknown, message: RegExp) =>
  assert.throws(build, (e: Error) => message.test(e.message), String(message));

describe('request building (unit)', () => {
  it('a transactional 2.0 body: the credentials, the number without + or spaces, the text; its path; one message', () => {
    const prepared = transactional({ number: '+420 777 000 001', text: 'Door open' });
    assert.equal(prepared.path, '/api/2.0/advanced/transactional');
    assert.equal(prepared.method, 'POST');
    assert.equal(prepared.contentType, 'application/json');
    assert.deepEqual(body(prepared), {
      application_id: '10000',
      application_token: 'unit-token-4f2a',
      application_product: 'node-red',
      number: '420777000001',
      text: 'Door open',
    });
    assert.equal(prepared.messages, 1);
    assert.equal(prepared.nothingToSend, false);
    assert.deepEqual(prepared.missingVariables, []);
  });

  it('00 before the country code is dropped as + is', () => {
    assert.equal(body(transactional({ number: '00420777000001', text: 'x' })).number, '420777000001');
  });

  it('2.0 moves unicode, sender_id and sender_id_value into channel.sms; 1.0 keeps them at top level', () => {
    const v2 = body(
      transactional({ number: '420777000001', text: 'Dveře otevřeny', sender_id: 'gText', sender_id_value: 'Alarm' }),
    );
    assert.deepEqual(v2.channel, { sms: { sender_id: 'gText', sender_id_value: 'Alarm', unicode: true } });
    assert.equal(v2.unicode, undefined);
    const v1 = body(
      transactional(
        { number: '420777000001', text: 'Dveře otevřeny', sender_id: 'gText', sender_id_value: 'Alarm' },
        '1.0',
      ),
    );
    assert.equal(v1.unicode, true);
    assert.equal(v1.sender_id, 'gText');
    assert.equal(v1.sender_id_value, 'Alarm');
    assert.equal(v1.channel, undefined);
  });

  it('a GSM-7 text needs no unicode: none is sent, in either version', () => {
    assert.equal(body(transactional({ number: '420777000001', text: 'Door open' })).channel, undefined);
    assert.equal(body(transactional({ number: '420777000001', text: 'Door open' }, '1.0')).unicode, undefined);
  });

  it('flash: 1.0 sends it as true; 2.0 refuses it, naming the version; admin is 1.0 only too', () => {
    assert.equal(body(transactional({ number: '420777000001', text: 'x', flash: true }, '1.0')).flash, true);
    assert.equal(body(transactional({ number: '420777000001', text: 'x', flash: false }, '1.0')).flash, undefined);
    refused(
      () => transactional({ number: '420777000001', text: 'x', flash: true }),
      /flash exists in version 1\.0 only/,
    );
    refused(() => transactional({ admin: 1, text: 'x' }), /admin exists in version 1\.0 only/);
    assert.equal(body(transactional({ admin: '3', text: 'x' }, '1.0')).admin, 3);
  });

  it('transactional duplicates_check: true is "on", false and "off" send nothing', () => {
    assert.equal(
      body(transactional({ number: '420777000001', text: 'x', duplicates_check: true })).duplicates_check,
      'on',
    );
    assert.equal(transactional({ number: '420777000001', text: 'x', duplicates_check: true }).duplicatesChecked, true);
    for (const off of [false, 'off']) {
      const prepared = transactional({ number: '420777000001', text: 'x', duplicates_check: off });
      assert.equal(body(prepared).duplicates_check, undefined);
      assert.equal(prepared.duplicatesChecked, false);
    }
  });

  it('promotional duplicates_check: false, none, off and "null" send nothing; same_text is sent and counts as checked', () => {
    for (const off of [false, 'none', 'off', 'null'])
      assert.equal(
        body(promotional({ number: ['420777000001'], text: 'x', duplicates_check: off })).duplicates_check,
        undefined,
      );
    const sameText = promotional({ number: ['420777000001'], text: 'x', duplicates_check: 'same_text' });
    assert.equal(body(sameText).duplicates_check, 'same_text');
    assert.equal(sameText.duplicatesChecked, true);
  });

  it('an impossible number is set aside at its place; with none left, nothing is sent and no message counted', () => {
    const prepared = transactional({ number: '12ab', text: 'x' });
    assert.equal(prepared.nothingToSend, true);
    assert.equal(prepared.messages, 0);
    assert.equal(prepared.rejected.length, 1);
    assert.equal(body(prepared).number, undefined, 'the placeholder number is only for the checks');
    const mixed = promotional({ number: ['420777000001', '12ab', '420777000002'], text: 'x' });
    assert.equal(mixed.nothingToSend, false);
    assert.equal(mixed.messages, 2);
    assert.deepEqual(
      mixed.rejected.map((r) => r.at),
      [1],
    );
  });

  it('nothing is set aside when every number can be one (transactional, promotional, groups only); a text given as a number is sent as a string', () => {
    assert.deepEqual(transactional({ number: '420777000001', text: 'x' }).rejected, []);
    assert.deepEqual(promotional({ number: ['420777000001'], text: 'x' }).rejected, []);
    assert.deepEqual(promotional({ groups: [5], text: 'x' }).rejected, []);
    assert.equal(body(transactional({ number: '420777000001', text: 1234 })).text, '1234');
  });

  it('groups and admins count once each beside the numbers; the simple API refuses them', () => {
    const prepared = promotional({ number: ['420777000001', '420777000002'], groups: [5, 6], admins: [1], text: 'x' });
    assert.equal(prepared.messages, 5);
    assert.deepEqual(body(prepared).groups, [5, 6]);
    refused(
      () => promotional({ number: '420777000001', groups: [5], text: 'x' }, { api: 'simple', version: '1.0' }),
      /groups exists in the advanced API only/,
    );
  });

  it('variables: per recipient in a promotional message (top-level refused); missing ones are named', () => {
    refused(
      () => promotional({ number: ['420777000001'], text: 'Hi <name>', variables: { name: 'A' } }),
      /variables belong to each recipient/,
    );
    const prepared = promotional({
      number: [{ number: '420777000001', variables: { name: 'Ann' } }, { number: '420777000002' }],
      text: 'Hi <name>',
    });
    assert.deepEqual(prepared.missingVariables, ['name']);
    assert.deepEqual(
      transactional({ number: '420777000001', text: 'Hi <name>', variables: { name: 'Ann' } }).missingVariables,
      [],
    );
    assert.deepEqual(
      transactional({ number: '420777000001', text: 'Hi <name> at <place>', variables: { name: 'Ann' } })
        .missingVariables,
      ['place'],
    );
  });

  it('text: required unless every channel has its own; 612 GSM-7 characters pass, 613 are refused; 268 with unicode, 269 refused', () => {
    refused(() => transactional({ number: '420777000001' }), /text is required/);
    assert.ok(transactional({ number: '420777000001', text: 'a'.repeat(612) }));
    refused(() => transactional({ number: '420777000001', text: 'a'.repeat(613) }), /612/);
    assert.ok(transactional({ number: '420777000001', text: 'č'.repeat(268) }));
    refused(() => transactional({ number: '420777000001', text: 'č'.repeat(269) }), /268/);
  });

  it('schedule: a date or timestamp is sent; the simple transactional API refuses it; one more than a minute past is flagged', () => {
    const at = new Date(Date.now() + 3600_000);
    assert.ok(body(transactional({ number: '420777000001', text: 'x', schedule: at })).schedule !== undefined);
    refused(
      () => transactional({ number: '420777000001', text: 'x', schedule: 'tomorrow' }),
      /schedule must be a Date/,
    );
    refused(
      () =>
        prepareSend(
          sendOperation('transactional', { api: 'simple', version: '1.0' }),
          { number: '420777000001', text: 'x', schedule: at },
          ACCOUNT,
        ),
      /schedule is not taken by the simple transactional API/,
    );
    assert.equal(
      transactional({ number: '420777000001', text: 'x', schedule: new Date(Date.now() - 30_000) }).pastSchedule,
      undefined,
      'within the minute of grace',
    );
    assert.ok(
      transactional({ number: '420777000001', text: 'x', schedule: new Date(Date.now() - 120_000) }).pastSchedule,
    );
  });

  it("the account's default country is sent when the msg gives none; the msg's wins", () => {
    const account = { ...ACCOUNT, defaultCountry: 'cz' };
    assert.equal(
      body(prepareSend(sendOperation('transactional'), { number: '777000001', text: 'x' }, account)).country,
      'cz',
    );
    assert.equal(
      body(prepareSend(sendOperation('transactional'), { number: '777000001', text: 'x', country: ' sk ' }, account))
        .country,
      'sk',
    );
  });

  it('the cascade as a list (the editor) or an object (a msg): one wire object in the given order; refused with the field named', () => {
    const viber = { type: 'viber', text: 'Hi', sender: 'Shop', expiration: '90' };
    const listed = body(
      transactional({ number: '420777000001', text: 'x', channel: [viber, { type: 'sms', text: 'Hi' }] }),
    );
    assert.deepEqual(listed.channel, { viber: { text: 'Hi', sender: 'Shop', expiration: 90 }, sms: { text: 'Hi' } });
    assert.deepEqual(Object.keys(listed.channel), ['viber', 'sms'], 'the order is the cascade');
    const given = { sms: { text: 'Hi' }, viber: { text: 'Hi', sender: 'Shop' } };
    assert.deepEqual(Object.keys(body(transactional({ number: '420777000001', text: 'x', channel: given })).channel), [
      'sms',
      'viber',
    ]);
    const channels = 'viber, whatsapp, rcs, sms';
    refused(
      () => transactional({ number: '420777000001', text: 'x', channel: ['sms'] }),
      new RegExp(`^channel\\[0\\] must be a ${channels} channel`),
    );
    refused(
      () => transactional({ number: '420777000001', text: 'x', channel: [{ type: 'sms' }, { type: 'fax' }] }),
      /^channel\[1\] must be a viber/,
    );
    refused(
      () => transactional({ number: '420777000001', text: 'x', channel: [{ type: 4 }] }),
      /^channel\[0\] must be a viber/,
    );
    refused(
      () => transactional({ number: '420777000001', text: 'x', channel: [{ type: 'sms' }, { type: 'sms' }] }),
      /^channel lists sms twice/,
    );
    refused(
      () => transactional({ number: '420777000001', text: 'x', channel: 'sms' }),
      new RegExp(`^channel must be an object holding ${channels} channels`),
    );
    refused(
      () => transactional({ number: '420777000001', text: 'x', channel: { fax: {} } }),
      new RegExp(`^channel\\.fax is not a channel \\(${channels}\\)`),
    );
    const proto = JSON.parse('{"__proto__": {"text": "x"}}') as unknown;
    refused(
      () => transactional({ number: '420777000001', text: 'x', channel: proto }),
      /^channel\.__proto__ is not a channel/,
    );
    refused(
      () => transactional({ number: '420777000001', text: 'x', channel: { sms: 'Hi' } }),
      /^channel\.sms must be an object/,
    );
    refused(
      () => transactional({ number: '420777000001', text: 'x', channel: { sms: {} } }, '1.0'),
      /^channel exists in version 2\.0 only/,
    );
  });

  it("a channel's settings as sent: empty ones dropped, a number text as a string, a digit expiration as a number; what was given is left as it was", () => {
    const given = {
      viber: { text: 42, sender: 'Shop', expiration: '90', image: '', button: { caption: '', url: null } },
      sms: { text: 'Hi', sender_id: 'gText', sender_id_value: 7, unicode: 'auto' },
    };
    const copy = structuredClone(given);
    const sent = body(transactional({ number: '420777000001', channel: given })).channel;
    assert.deepEqual(sent, {
      viber: { text: '42', sender: 'Shop', expiration: 90 },
      sms: { text: 'Hi', sender_id: 'gText', sender_id_value: '7' },
    });
    assert.deepEqual(given, copy, "the msg's own objects are not changed");
    const button = { caption: 'Open', url: 'https://shop.example/o/1' };
    const withButton = body(
      promotional({ number: ['420777000001'], text: 'x', channel: { viber: { sender: 'Shop', button } } }),
    ).channel;
    assert.deepEqual(
      withButton.viber,
      { sender: 'Shop', button: { caption: 'Open', url: 'https://shop.example/o/1' } },
      'a button with a caption stays',
    );
    refused(
      () =>
        transactional({ number: '420777000001', text: 'x', channel: { viber: { sender: 'Shop', expiration: '9a' } } }),
      /^channel\.viber\.expiration must be a whole number/,
    );
    assert.notEqual(withButton.viber.button, button);
    const profile = body(
      transactional({
        number: '420777000001',
        text: 'x',
        channel: { sms: { sender_id: 'profile_id', sender_id_value: ' 12 ' } },
      }),
    ).channel;
    assert.deepEqual(profile, { sms: { sender_id: 12 } }, 'a profile id is the sender_id itself');
    assert.deepEqual(
      body(transactional({ number: '420777000001', text: 'x', channel: { sms: { sender_id: '5' } } })).channel,
      { sms: { sender_id: 5 } },
    );
    for (const [unicode, sent] of [
      ['yes', true],
      [1, true],
      ['off', false],
      [false, false],
    ] as const) {
      assert.equal(
        body(transactional({ number: '420777000001', text: 'x', channel: { sms: { unicode } } })).channel.sms.unicode,
        sent,
        String(unicode),
      );
    }
    refused(
      () => transactional({ number: '420777000001', text: 'x', channel: { sms: { unicode: 'maybe' } } }),
      /^channel\.sms\.unicode must be true or false/,
    );
    assert.equal(
      body(transactional({ number: '420777000001', text: 'x', channel: { sms: { unicode: 'auto' } } })).channel,
      undefined,
      'an SMS with nothing of its own is the default',
    );
  });

  it("a channel's own text: enough when every channel has one; one channel without it needs the top-level text; each is counted", () => {
    assert.ok(
      transactional({
        number: '420777000001',
        channel: { viber: { text: 'Hi', sender: 'Shop' }, sms: { text: 'Hi' } },
      }),
    );
    refused(
      () =>
        transactional({
          number: '420777000001',
          channel: { viber: { text: 'Hi', sender: 'Shop' }, sms: { sender_id: 'gSystem' } },
        }),
      /^text is required \(or a text in every channel\)/,
    );
    refused(
      () => transactional({ number: '420777000001', text: 'x', channel: { sms: { text: 'a'.repeat(613) } } }),
      /channel\.sms\.text/,
    );
    refused(
      () =>
        transactional({
          number: '420777000001',
          text: 'x',
          channel: { viber: { sender: 'Shop', text: 'č'.repeat(269) } },
        }),
      /channel\.viber\.text/,
    );
    assert.deepEqual(
      transactional({ number: '420777000001', text: 'x', channel: { sms: { text: 'Hi <name>' } } }).missingVariables,
      ['name'],
    );
  });

  it('recipients: an entry without a number is skipped; its own text and variables go with it; what an entry may hold is named', () => {
    const prepared = promotional({
      number: [
        { number: '' },
        { number: '420777000001', text: 7, variables: null },
        '',
        { number: 420777000002, variables: { name: 'B' } },
      ],
      text: 'Hi <name>',
    });
    assert.deepEqual(body(prepared).number, [
      { number: '420777000001', text: '7' },
      { number: '420777000002', variables: { name: 'B' } },
    ]);
    assert.equal(prepared.messages, 2);
    assert.deepEqual(prepared.missingVariables, [], 'the first has its own text, the second its variable');
    refused(
      () => promotional({ number: [{ number: '420777000001', name: 'A' }], text: 'x' }),
      /^number\[0\]\.name is not a field of a recipient entry \(number, text, variables\)/,
    );
    refused(
      () => promotional({ number: ['420777000001', true], text: 'x' }),
      /^number\[1\] must be a phone number or an object \{number, text, variables\}/,
    );
    refused(
      () => promotional({ number: [{ number: { n: 1 } }], text: 'x' }),
      /^number\[0\]\.number must be a phone number/,
    );
    refused(
      () => promotional({ number: [{ number: '420777000001', text: 5n }], text: 'x' }),
      /^number\[0\]\.text must be a string/,
    );
    const simple = { api: 'simple', version: '1.0' } as const;
    refused(
      () => promotional({ number: [{ number: '420777000001', text: 'own' }], text: 'x' }, simple),
      /^number\[0\] carries text or variables, which only the advanced API takes/,
    );
    assert.equal(
      body(promotional({ number: '420777000001, 420777000002', text: 'x' }, simple)).number,
      '420777000001;420777000002',
    );
    refused(
      () => promotional({ number: [{ number: '420777000001', text: 'own' }, '420777000002'] }),
      /^text is required when number holds plain numbers/,
    );
    assert.ok(promotional({ number: [{ number: '420777000001', text: 'own' }] }), 'every recipient has its own text');
  });

  it('a transactional message has one number: a list of two is refused, empty entries do not count', () => {
    refused(
      () => transactional({ number: '420777000001, 420777000002', text: 'x' }),
      /^number must be one phone number for a transactional message \(it holds 2\)/,
    );
    assert.equal(body(transactional({ number: ['', '420777000001', null], text: 'x' })).number, '420777000001');
    refused(() => transactional({ number: [{ number: '420777000001' }], text: 'x' }), /^number must be a phone number/);
    const simple = sendOperation('transactional', { api: 'simple', version: '1.0' });
    refused(
      () => prepareSend(simple, { number: '420777000001', text: 'x', variables: { a: 1 } }, ACCOUNT),
      /^variables exist in the advanced API only/,
    );
  });

  it('yes and no: each spelling the reference and a flow use (true/false, 1/0, yes/no, on/off); anything else refused, naming the field', () => {
    for (const yes of [true, 1, 'true', 'yes', '1', 'on'])
      assert.equal(
        body(transactional({ number: '420777000001', text: 'x', flash: yes }, '1.0')).flash,
        true,
        String(yes),
      );
    for (const no of [false, 0, 'false', 'no', '0', 'off'])
      assert.equal(
        body(transactional({ number: '420777000001', text: 'x', flash: no }, '1.0')).flash,
        undefined,
        String(no),
      );
    refused(
      () => transactional({ number: '420777000001', text: 'x', flash: 'maybe' }, '1.0'),
      /^flash must be true or false$/,
    );
    refused(
      () => transactional({ number: '420777000001', text: 'x', flash: 2 }, '1.0'),
      /^flash must be true or false$/,
    );
    assert.equal(
      body(transactional({ number: '420777000001', text: 'Door', unicode: 'yes' }, '1.0')).unicode,
      true,
      'unicode asked for a GSM-7 text',
    );
    assert.equal(
      body(transactional({ number: '420777000001', text: 'Dveře', unicode: 'no' }, '1.0')).unicode,
      undefined,
      'unicode refused for a text that needs it',
    );
    assert.equal(body(transactional({ number: '420777000001', text: 'Dveře', unicode: 'auto' }, '1.0')).unicode, true);
    refused(
      () => transactional({ number: '420777000001', text: 'x', unicode: 'sometimes' }, '1.0'),
      /^unicode must be true or false$/,
    );
    refused(
      () => transactional({ number: '420777000001', text: 'x', unicode: 'sometimes' }),
      /^channel\.sms\.unicode must be true or false$/,
    );
  });

  it('a text: a string, or a finite number written as one; anything else refused, naming the field; one beyond any count refused before it is counted', () => {
    assert.equal(body(transactional({ number: '420777000001', text: 42 })).text, '42');
    for (const bad of [Number.NaN, Infinity, { text: 'x' }, ['x'], true])
      refused(() => transactional({ number: '420777000001', text: bad }), /^text must be a string$/);
    const huge = (() => {
      try {
        transactional({ number: '420777000001', text: 'a'.repeat(100_000) });
      } catch (error) {
        return error as GatewayError;
      }
      return undefined;
    })();
    assert.deepEqual(
      [huge?.code, huge?.brief],
      ['invalid_request', { key: 'text-too-long', params: { characters: 100_000, limit: 612 } }],
    );
    const long = (() => {
      try {
        transactional({ number: '420777000001', text: 'č'.repeat(300) });
      } catch (error) {
        return error as GatewayError;
      }
      return undefined;
    })();
    assert.deepEqual(long?.brief, { key: 'text-too-long', params: { characters: 300, limit: 268 } });
  });

  it('groups and admins: ids in a list or a string split at ; , and spaces; digit strings become numbers; an empty list is none', () => {
    const sent = body(promotional({ number: ['420777000001'], groups: '5; 6,7  8', admins: [' 9 ', 10], text: 'x' }));
    assert.deepEqual(
      [sent.groups, sent.admins],
      [
        [5, 6, 7, 8],
        [9, 10],
      ],
    );
    const none = body(promotional({ number: ['420777000001'], groups: ' ; , ', admins: [], text: 'x' }));
    assert.deepEqual([none.groups, none.admins], [undefined, undefined]);
    assert.deepEqual(body(promotional({ groups: 12, text: 'x' })).groups, [12], 'one id alone');
    assert.equal(
      promotional({ groups: 12, text: 'x' }).messages,
      1,
      'a group counts once: the gateway alone knows how many it reaches',
    );
  });

  it('the sender in 1.0: a digit sender_id becomes a number, a numeric value a string; a profile id chosen as such is the sender_id itself', () => {
    const own = body(
      transactional({ number: '420777000001', text: 'x', sender_id: 'gOwn', sender_id_value: 420777000009 }, '1.0'),
    );
    assert.deepEqual([own.sender_id, own.sender_id_value], ['gOwn', '420777000009']);
    const profile = body(
      transactional({ number: '420777000001', text: 'x', sender_id: 'profile_id', sender_id_value: '12' }, '1.0'),
    );
    assert.deepEqual([profile.sender_id, profile.sender_id_value], [12, undefined]);
    assert.equal(body(transactional({ number: '420777000001', text: 'x', sender_id: '7' }, '1.0')).sender_id, 7);
    assert.deepEqual(
      Object.keys(body(transactional({ number: '420777000001', text: 'x' }, '1.0'))).includes('sender_id'),
      false,
      'none given: none sent',
    );
  });

  it('impossible numbers are answered at their place among all the numbers given; an admin still receives when the number is impossible', () => {
    const mixed = promotional({ number: ['12ab', '420777000001', 'zz', '420777000002'], text: 'x' });
    assert.deepEqual(
      mixed.rejected.map((r) => r.at),
      [0, 2],
    );
    assert.deepEqual(body(mixed).number, ['420777000001', '420777000002']);
    const withAdmin = transactional({ number: '12ab', admin: '3', text: 'x' }, '1.0');
    assert.deepEqual(
      [withAdmin.nothingToSend, withAdmin.messages, body(withAdmin).admin, body(withAdmin).number],
      [false, 1, 3, undefined],
    );
    assert.equal(transactional({ admin: 3, text: 'x' }, '1.0').messages, 1, 'an admin alone is one message');
    const allImpossible = promotional({ number: ['12ab', 'zz'], text: 'x' });
    assert.deepEqual(
      [allImpossible.nothingToSend, allImpossible.messages, body(allImpossible).number],
      [true, 0, undefined],
    );
    const withGroup = promotional({ number: ['12ab'], groups: [5], text: 'x' });
    assert.deepEqual([withGroup.nothingToSend, withGroup.messages], [false, 1]);
  });

  it('a schedule flagged as past only beyond a minute of grace (a fake clock: exactly a minute is not past)', () => {
    const clock = FakeTimers.install({ toFake: ['Date'], now: Date.parse('2026-11-25T10:00:00Z') });
    try {
      assert.equal(
        transactional({ number: '420777000001', text: 'x', schedule: new Date(Date.now() - 60_000) }).pastSchedule,
        undefined,
      );
      assert.equal(
        transactional({ number: '420777000001', text: 'x', schedule: new Date(Date.now() - 61_000) }).pastSchedule,
        '2026-11-25T09:58:59.000Z',
      );
    } finally {
      clock.uninstall();
    }
  });

  it('duplicates checked: on, same_text and same_number count as checked; none does not', () => {
    assert.equal(
      promotional({ number: ['420777000001'], text: 'x', duplicates_check: 'same_number' }).duplicatesChecked,
      true,
    );
    assert.equal(promotional({ number: ['420777000001'], text: 'x' }).duplicatesChecked, false);
    assert.equal(transactional({ number: '420777000001', text: 'x', duplicates_check: 'on' }).duplicatesChecked, true);
  });

  it("placeholders: a channel's text counts; an entry's own text is checked against its own variables; an inherited name is not a variable", () => {
    assert.deepEqual(
      transactional({
        number: '420777000001',
        text: 'x',
        channel: { viber: { sender: 'S', text: 'Hi <name>' } },
        variables: { name: 'A' },
      }).missingVariables,
      [],
    );
    assert.deepEqual(
      transactional({ number: '420777000001', text: 'Hi <constructor>', variables: { a: 1 } }).missingVariables,
      ['constructor'],
    );
    const entries = promotional({
      number: [
        { number: '420777000001', text: 'Hi <x>', variables: { x: 1 } },
        { number: '420777000002', text: 'Hi <y>' },
        { number: '420777000003', variables: { z: 1 } },
      ],
      text: 'Shared <z>',
    });
    assert.deepEqual(entries.missingVariables, ['y']);
  });

  it('an SMS object with nothing of its own is dropped only when it is the whole cascade', () => {
    assert.deepEqual(
      body(transactional({ number: '420777000001', text: 'x', channel: { viber: { sender: 'S' }, sms: {} } })).channel,
      {
        viber: { sender: 'S' },
        sms: {},
      },
    );
    assert.equal(body(transactional({ number: '420777000001', text: 'x', channel: { sms: {} } })).channel, undefined);
  });

  it('the credit request: nothing to send, no variables, nothing rejected, safe to repeat', () => {
    const info = prepareInfo(
      { kind: 'info', api: 'advanced', version: '1.0', method: 'POST', encoding: 'json' },
      ACCOUNT,
    );
    assert.deepEqual(
      [info.messages, info.duplicatesChecked, info.missingVariables, info.rejected, info.nothingToSend],
      [0, true, [], [], false],
    );
    assert.deepEqual(JSON.parse(info.payload as string), {
      application_id: '10000',
      application_token: 'unit-token-4f2a',
    });
  });

  it('form bodies carry booleans as yes/no; the credit by GET puts the credentials in the query, without application_product', () => {
    const form = prepareSend(
      sendOperation('transactional', { api: 'simple', version: '1.0', encoding: 'form' }),
      { number: '420777000001', text: 'Dveře', flash: true },
      ACCOUNT,
    );
    assert.equal(form.contentType, 'application/x-www-form-urlencoded');
    const fields = new URLSearchParams(form.payload);
    assert.equal(fields.get('unicode'), 'yes');
    assert.equal(fields.get('flash'), 'yes');
    const info = prepareInfo(
      { kind: 'info', api: 'simple', version: '1.0', method: 'GET', encoding: 'query' },
      ACCOUNT,
    );
    assert.equal(info.payload, undefined);
    assert.equal(info.path, '/api/1.0/simple/info?application_id=10000&application_token=unit-token-4f2a');
    assert.equal(info.messages, 0);
  });
});

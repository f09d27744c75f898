/**
 * The gateway's other endpoints: the client's calls over loopback to the simulator
 * (bodies as the vendor's pages show them, checks before sending, errors typed, retries only
 * where safe), and the otp, number-check, blacklist and contacts nodes in the Node-RED runtime.
 */
import assert from 'node:assert/strict';
import { GatewayClient, GatewayError, type EndpointName } from '../gateway';
import { collect, ERROR_CODE_IN_CATCH, helper, load, seen, unload, type FlowNode, type TestNode } from './support/red';
import { ACCOUNT_ID, startTestSimulator, TOKEN, type TestSimulator } from './support/simulator';

/** The code of the newest OTP message in the simulator's outbox (where a tester reads it). */
async function lastCode(sim: TestSimulator): Promise<string> {
  const { messages } = await sim.outbox();
  const otp = messages.filter((m) => m.kind === 'otp').at(-1);
  assert.ok(otp, 'an OTP message is in the outbox');
  return /(\w+)$/.exec(otp.text)?.[1] as string;
}

describe('other endpoints: the client against the simulator', function () {
  this.timeout(20_000);
  let sim: TestSimulator;
  let client: GatewayClient;

  before(async () => {
    sim = await startTestSimulator(10);
  });
  beforeEach(async () => {
    await sim.reset();
    client = new GatewayClient({
      baseUrl: sim.url,
      applicationId: ACCOUNT_ID,
      applicationToken: TOKEN,
      retries: 2,
      retryDelay: 10,
      defaultCountry: 'CZ',
    });
  });
  afterEach(() => client.close());
  after(() => sim.close());

  const refusal = async (name: EndpointName, fields: Record<string, unknown>): Promise<GatewayError> => {
    const error = await client.call(name, fields).then(
      () => undefined,
      (e: unknown) => e,
    );
    assert.ok(error instanceof GatewayError, `${name} was refused`);
    return error;
  };

  it('sends an OTP as the page shows, verifies a wrong code as verified:false and the right one as true, charges the credit', async () => {
    const sent = (await client.call('otp send', {
      number: '+420 777 000 123',
      request_quota_identification: '203.0.113.7',
      code_length: '4',
      channel: [{ type: 'sms', sender_id: 'gText', sender_id_value: 'Door' }],
    })) as { id: string };
    assert.match(sent.id, /^otp-/);
    const body = (await sim.lastRequest()).body;
    assert.equal(body.number, '420777000123');
    assert.equal(body.code_length, 4);
    assert.equal(body.country, 'CZ', "the account's default country");
    assert.deepEqual(body.channel, { sms: { sender_id: 'gText', sender_id_value: 'Door' } });
    assert.equal((await sim.lastRequest()).path, '/api/1.0/otp/send');
    const code = await lastCode(sim);
    assert.match(code, /^\d{4}$/);
    const wrong = code === '0000' ? '1111' : '0000';
    assert.deepEqual(await client.call('otp verify', { id: sent.id, code: wrong }), { id: sent.id, verified: false });
    // A keypad's digits often arrive as a number: sent as its string (a leading 0 cannot survive a number).
    const typed = code.startsWith('0') ? code : Number(code);
    assert.deepEqual(await client.call('otp verify', { id: sent.id, code: typed }), { id: sent.id, verified: true });
    const { accounts } = await sim.outbox();
    assert.equal(accounts.find((a) => a.id === ACCOUNT_ID)?.credit, 9.95, 'one SMS price charged');
  });

  it('resends an OTP (a new message with the same code) and names an unknown id invalid_id_provided', async () => {
    const { id } = (await client.call('otp send', {
      number: '420777000123',
      request_quota_identification: 'node',
    })) as { id: string };
    const first = await lastCode(sim);
    const again = (await client.call('otp resend', { id })) as {
      id: string;
      message: { status: string; number: string; channel: string };
    };
    assert.equal(again.id, id);
    assert.deepEqual(
      [again.message.status, again.message.number, again.message.channel],
      ['accepted', '420777000123', 'sms'],
    );
    assert.equal(await lastCode(sim), first);
    const error = await refusal('otp verify', { id: 'otp-unknown', code: '1234' });
    assert.equal(error.code, 'invalid_id_provided');
    assert.equal(error.status, 400);
  });

  it('refuses before sending: a missing requester, a code length out of range, both number and source_id, an unknown contact field', async () => {
    const before = (await sim.requests()).length;
    assert.equal(
      (await refusal('otp send', { number: '420777000123' })).message,
      'request_quota_identification is required',
    );
    assert.equal(
      (await refusal('otp send', { number: '420777000123', request_quota_identification: 'x', code_length: 3 }))
        .message,
      'code_length must be a whole number from 4 to 100',
    );
    assert.equal(
      (await refusal('black-list remove', { number: '420777000123', source_id: 'import-1' })).message,
      'give number or source_id, not both',
    );
    assert.equal((await refusal('black-list remove', {})).message, 'give number or source_id, not both');
    assert.equal(
      (await refusal('address-book import', { data: [{ phone_mobile: '420777000556' }, { nickname: 'x' }] })).message,
      'data[1].nickname is not a field of the address-book import request',
    );
    assert.equal((await refusal('black-list check', { numbers: ['12ab'] })).code, 'invalid_request');
    assert.equal(
      (await refusal('otp verify', { id: 'otp-1', code: '1', application_token: 'other' })).code,
      'invalid_request',
    );
    assert.equal((await sim.requests()).length, before, 'nothing reached the gateway');
  });

  it('the blacklist answers what was added: opt-out blocks the promotional route only; duplicates and removal by source id', async () => {
    await client.call('black-list add', {
      numbers: ['420777000123', '+420 777 000 124'],
      type: 'opt-out',
      source_id: 'stop',
      reason: 'replied STOP',
    });
    assert.deepEqual((await sim.lastRequest()).body.numbers, ['420777000123', '420777000124']);
    assert.deepEqual(await client.call('black-list check', { numbers: ['420777000123', '420777000125'] }), {
      '420777000123': true,
      '420777000125': false,
    });
    assert.deepEqual(await client.call('black-list check', { numbers: ['420777000123'], route: 'transactional' }), {
      '420777000123': false,
    });
    assert.equal((await refusal('black-list add', { numbers: ['420777000123'] })).code, 'number_already_exists');
    assert.equal(
      (await refusal('black-list check', { numbers: ['420777000123'], wallet: 'not-mine' })).code,
      'invalid_wallet',
    );
    await client.call('black-list remove', { source_id: 'stop' });
    assert.deepEqual(await client.call('black-list check', { numbers: ['420777000123', '420777000124'] }), {
      '420777000123': false,
      '420777000124': false,
    });
  });

  it('the address book gives back what was stored, consent included, and names a missing contact number_not_found', async () => {
    await client.call('address-book add', {
      data: { phone_mobile: '+420 777 000 555', first_name: 'Jana', custom_field_3: 'VIP' },
      groups: '1, 2',
    });
    assert.deepEqual((await sim.lastRequest()).body.groups, [1, 2]);
    await client.call('address-book edit', { phone_number: '420777000555', data: { last_name: 'Nováková' } });
    const contact = (await client.call('address-book get', { phone_number: '420777000555' })) as Record<
      string,
      unknown
    >;
    assert.deepEqual([contact.first_name, contact.last_name, contact.custom_field_3], ['Jana', 'Nováková', 'VIP']);
    assert.equal(
      ((await client.call('address-book consent-show', { phone_number: '420777000555' })) as { agreement: unknown })
        .agreement,
      null,
    );
    const given = (await client.call('address-book consent-add', { phone_number: '420777000555' })) as {
      agreement: string;
    };
    assert.ok(!Number.isNaN(Date.parse(given.agreement)), 'an ISO date');
    await client.call('address-book import', {
      data: [{ phone_mobile: '420777000556' }, { phone_mobile: '420777000557', first_name: 'Petr' }],
      group_name: 'Newsletter',
    });
    assert.equal(
      ((await client.call('address-book get', { phone_number: '420777000557' })) as Record<string, unknown>).first_name,
      'Petr',
    );
    assert.deepEqual(await client.call('address-book remove', { phone_number: '420777000555' }), {
      message: 'contact_has_been_removed',
    });
    assert.equal((await refusal('address-book get', { phone_number: '420777000555' })).code, 'number_not_found');
  });

  it('the number check reads the SDK shape: numbers as given, each valid or not with country and prefix', async () => {
    const answer = (await client.call('number-check', {
      numbers: [{ phone_number: '777 000 123' }, { phone_number: '1234' }],
    })) as Record<string, any>;
    assert.deepEqual((await sim.lastRequest()).body.numbers, [
      { phone_number: '777000123', country: 'CZ' },
      { phone_number: '1234', country: 'CZ' },
    ]);
    assert.deepEqual(
      [answer['777000123'].valid, answer['777000123'].phone_number, answer['777000123'].call_prefix],
      [true, '420777000123', 420],
    );
    assert.equal(answer['1234'].valid, false);
  });

  it('retries a read after a broken connection but not a verify, which may have counted', async () => {
    const { id } = (await client.call('otp send', { number: '420777000123', request_quota_identification: 'x' })) as {
      id: string;
    };
    await sim.fault({ drop: 'after', count: 1 });
    assert.deepEqual(await client.call('black-list check', { numbers: ['420777000123'] }), { '420777000123': false });
    await sim.fault({ drop: 'after', count: 1 });
    const error = await refusal('otp verify', { id, code: '0000' });
    assert.equal(error.code, 'network');
    assert.equal(error.retryable, true);
    const verifies = (await sim.requests()).filter((r) => r.path === '/api/1.0/otp/verify');
    assert.equal(verifies.length, 1, 'the verify was sent once');
  });

  it('a wrong token is unknown_identity, and the token is in no error', async () => {
    const wrong = new GatewayClient({
      baseUrl: sim.url,
      applicationId: ACCOUNT_ID,
      applicationToken: 'wrong-token-123456',
      retries: 0,
    });
    const error = await wrong.call('address-book get', { phone_number: '420777000555' }).catch((e: GatewayError) => e);
    await wrong.close();
    assert.equal((error as GatewayError).code, 'unknown_identity');
    assert.ok(
      !JSON.stringify({ ...(error as object), message: (error as Error).message }).includes('wrong-token-123456'),
    );
  });
});

describe('other endpoints: the nodes in Node-RED', function () {
  this.timeout(20_000);
  let sim: TestSimulator;

  before(async () => {
    sim = await startTestSimulator(1000, ['420777000001']);
  });
  beforeEach(() => sim.reset());
  afterEach(() => unload());
  after(() => sim.close());

  const account = (): FlowNode => ({
    id: 'acc',
    type: 'bulkgate-account',
    baseUrl: sim.url,
    retries: 0,
    country: 'CZ',
  });
  const credentials = { acc: { application_id: ACCOUNT_ID, application_token: TOKEN } };
  const receive = (id: string, msg: unknown) =>
    (helper.getNode(id) as TestNode & { receive(m: unknown): void }).receive(msg);
  const helpers = (...ids: string[]): FlowNode[] => ids.map((id) => ({ id, type: 'helper' }));

  it('otp: send puts msg.otpId on port 1; verify routes a wrong code to port 2 and the right one to port 1 (the keypad flow)', async () => {
    await load(
      [
        account(),
        {
          id: 'otp-send',
          type: 'bulkgate-otp',
          account: 'acc',
          action: 'send',
          number: '+420 777 000 001',
          numberType: 'str',
          code_length: '6',
          channel: [
            { type: 'viber', sender: 'Door', expiration: '300' },
            { type: 'sms', sender_id: '', unicode: 'auto' },
          ],
          wires: [['sent'], []],
        },
        {
          id: 'otp-verify',
          type: 'bulkgate-otp',
          account: 'acc',
          action: 'verify',
          otpId: 'otpId',
          otpIdType: 'flow',
          wires: [['right'], ['wrong']],
        },
        ...helpers('sent', 'right', 'wrong'),
      ],
      credentials,
    );
    const sent = collect('sent', 1);
    receive('otp-send', { payload: 'request code', topic: 'door' });
    const [msg] = await sent;
    assert.match(String(msg?.otpId), /^otp-/);
    assert.equal(msg?.topic, 'door');
    const body = (await sim.lastRequest()).body;
    assert.equal(body.request_quota_identification, 'otp-send', "without an http in msg, the node's id names who asks");
    // The editor's list as the wire's ordered object; empty SMS settings left out.
    assert.deepEqual(body.channel, { viber: { sender: 'Door', expiration: 300 }, sms: {} });
    const { messages } = await sim.outbox();
    assert.deepEqual(
      [messages.at(-1)?.kind, messages.at(-1)?.channel],
      ['otp', 'viber'],
      'a Viber user gets the code on Viber',
    );
    (helper.getNode('otp-verify') as TestNode).context().flow.set('otpId', msg?.otpId);
    const code = await lastCode(sim);
    const wrong = collect('wrong', 1);
    receive('otp-verify', { payload: code === '000000' ? '111111' : '000000' });
    assert.deepEqual((await wrong)[0]?.payload, { id: msg?.otpId, verified: false });
    const right = collect('right', 1);
    receive('otp-verify', { payload: code.startsWith('0') ? code : Number(code) });
    assert.deepEqual((await right)[0]?.payload, { id: msg?.otpId, verified: true });
  });

  it("otp: a msg from an http in node names its requester's IP; a payload object fills what the panel leaves empty, never the OTP's security settings", async () => {
    await load(
      [
        account(),
        { id: 'otp-send', type: 'bulkgate-otp', account: 'acc', action: 'send', wires: [['sent'], []] },
        { id: 'otp-resend', type: 'bulkgate-otp', account: 'acc', action: 'resend', wires: [['sent'], []] },
        ...helpers('sent'),
      ],
      credentials,
    );
    const sent = collect('sent', 1);
    const warned: unknown[] = [];
    (helper.getNode('otp-send') as TestNode).on('call:warn', (call: { args: unknown[] }) => warned.push(call.args[0]));
    // A caller trying to loosen the OTP's locks: a short code that lives a day and may be guessed a thousand times.
    const loosen = {
      code_type: 'string',
      code_length: 4,
      expiration: 86400,
      trials_available_verification: 1000,
      request_quota_identification: 'attacker',
    };
    receive('otp-send', {
      payload: { number: '420777000124', language: 'cs', ...loosen },
      req: { ip: '198.51.100.4' },
    });
    const [first] = await sent;
    const body = (await sim.lastRequest()).body;
    assert.deepEqual(
      [body.number, body.language, body.request_quota_identification],
      ['420777000124', 'cs', '198.51.100.4'],
    );
    for (const key of ['code_type', 'code_length', 'expiration', 'trials_available_verification'])
      assert.equal(
        body[key],
        undefined,
        `${key} is not taken from msg.payload (the panel leaves it to the gateway's default)`,
      );
    assert.equal(warned.length, 5, 'one warning per ignored payload key');
    assert.ok(warned.every((w) => /is ignored: the node's own setting wins/.test(String(w))));
    assert.equal(body.channel, undefined, 'no cascade set: the gateway sends an SMS');
    const { messages } = await sim.outbox();
    assert.match(
      messages.at(-1)?.text ?? '',
      /^Váš ověřovací kód je \d+$/,
      'in the language the payload filled, with the code type the panel left to the gateway',
    );
    const again1 = collect('sent', 1);
    receive('otp-send', { payload: { number: '420777000124', ...loosen } });
    await again1;
    assert.equal(warned.length, 5, 'each warned once, not per msg');
    // The resend reads msg.otpId.
    const resent = collect('sent', 1);
    receive('otp-resend', { otpId: first?.otpId });
    const [again] = await resent;
    assert.equal(again?.otpId, first?.otpId);
    assert.equal(again?.payload.message.status, 'accepted');
  });

  it('otp: an unknown id goes to Catch as invalid_id_provided; nothing leaves a port', async () => {
    await load(
      [
        account(),
        { id: 'otp-verify', type: 'bulkgate-otp', account: 'acc', action: 'verify', wires: [['right'], ['wrong']] },
        { id: 'c', type: 'catch', scope: null, wires: [['caught']] },
        ...helpers('right', 'wrong', 'caught'),
      ],
      credentials,
    );
    const caught = collect('caught', 1);
    let routed = 0;
    for (const id of ['right', 'wrong']) (helper.getNode(id) as TestNode).on('input', () => routed++);
    receive('otp-verify', { otpId: 'otp-nope', payload: '1234' });
    const [msg] = await caught;
    assert.equal(msg?.error.source.id, 'otp-verify');
    if (ERROR_CODE_IN_CATCH) assert.equal(msg?.error.code, 'invalid_id_provided');
    assert.equal(msg?.bulkgate.type, 'invalid_id_provided');
    assert.equal(routed, 0);
  });

  it('number-check: one msg per number, valid to port 1 and invalid to port 2, that a join reassembles in order', async () => {
    await load(
      [
        account(),
        {
          id: 'n-check',
          type: 'bulkgate-number-check',
          account: 'acc',
          wires: [
            ['valid', 'n-join'],
            ['invalid', 'n-join'],
          ],
        },
        { id: 'n-join', type: 'join', mode: 'auto', wires: [['joined']] },
        ...helpers('valid', 'invalid', 'joined'),
      ],
      credentials,
    );
    const joined = collect('joined', 1);
    const valid = collect('valid', 2);
    const invalid = collect('invalid', 2);
    receive('n-check', { payload: '+420 777 000 123; 12ab, 777000124; 1234' });
    const numbers = (await valid).map((m) => m.payload.phone_number);
    assert.deepEqual(numbers, ['420777000123', '420777000124']);
    assert.deepEqual(
      (await invalid).map((m) => [m.payload.phone_number, m.payload.valid]),
      [
        ['12ab', false],
        ['1234', false],
      ],
    );
    const [all] = await joined;
    assert.deepEqual(
      all?.payload.map((r: { valid: boolean }) => r.valid),
      [true, false, true, false],
    );
    const checked = (await sim.requests()).filter((r) => r.path === '/api/1.0/sdk/check-phone-numbers');
    assert.equal(checked.length, 1);
    assert.equal((checked[0]?.body.numbers as unknown[]).length, 3, '12ab is answered without asking');
  });

  it('blacklist: a STOP reply number added as opt-out, then checked: port 1 listed, port 2 not; removed again', async () => {
    await load(
      [
        account(),
        {
          id: 'n-add',
          type: 'bulkgate-blacklist',
          account: 'acc',
          action: 'add',
          listType: 'opt-out',
          reason: 'replied STOP',
          reasonType: 'str',
          wires: [['done'], []],
        },
        { id: 'n-check', type: 'bulkgate-blacklist', account: 'acc', wires: [['listed'], ['clear']] },
        { id: 'n-remove', type: 'bulkgate-blacklist', account: 'acc', action: 'remove', wires: [['done'], []] },
        ...helpers('done', 'listed', 'clear'),
      ],
      credentials,
    );
    let done = collect('done', 1);
    receive('n-add', { payload: '+420 777 000 321' });
    assert.deepEqual((await done)[0]?.payload, { message: 'contacts have been blacklisted' });
    const body = (await sim.lastRequest()).body;
    assert.deepEqual([body.numbers, body.type, body.reason], [['420777000321'], 'opt-out', 'replied STOP']);
    const listed = collect('listed', 1);
    const clear = collect('clear', 1);
    receive('n-check', { payload: ['420777000321', '420777000322'] });
    assert.deepEqual((await listed)[0]?.payload, { number: '420777000321', listed: true });
    assert.deepEqual((await clear)[0]?.payload, { number: '420777000322', listed: false });
    done = collect('done', 1);
    receive('n-remove', { payload: '420777000321' });
    await done;
    assert.deepEqual((await sim.lastRequest()).body.number, '420777000321');
  });

  it("contacts: add from msg.payload's fields, get it back, record consent, and a missing contact goes to Catch as number_not_found", async () => {
    await load(
      [
        account(),
        {
          id: 'n-add',
          type: 'bulkgate-contacts',
          account: 'acc',
          action: 'add',
          groups: '1',
          groupsType: 'str',
          wires: [['out']],
        },
        { id: 'n-get', type: 'bulkgate-contacts', account: 'acc', wires: [['out']] },
        { id: 'n-consent', type: 'bulkgate-contacts', account: 'acc', action: 'consent-add', wires: [['out']] },
        { id: 'c', type: 'catch', scope: null, wires: [['caught']] },
        ...helpers('out', 'caught'),
      ],
      credentials,
    );
    let out = collect('out', 1);
    receive('n-add', { payload: { phone_mobile: '+420 777 000 777', first_name: 'Eva', city: 'Brno' } });
    await out;
    assert.deepEqual((await sim.lastRequest()).body.data, {
      phone_mobile: '420777000777',
      first_name: 'Eva',
      city: 'Brno',
    });
    assert.deepEqual((await sim.lastRequest()).body.groups, [1]);
    out = collect('out', 2);
    receive('n-get', { payload: '420777000777' });
    receive('n-consent', { payload: '420777000777' });
    const [contact, consent] = await out;
    assert.equal(contact?.payload.first_name, 'Eva');
    assert.ok(consent?.payload.agreement);
    const caught = collect('caught', 1);
    receive('n-get', { payload: '420777000778' });
    const [missing] = await caught;
    assert.equal(missing?.bulkgate.type, 'number_not_found');
    if (ERROR_CODE_IN_CATCH) assert.equal(missing?.error.code, 'number_not_found');
  });

  it('the token reaches no msg, status, warning or log of these nodes', async () => {
    seen.length = 0;
    await load(
      [
        account(),
        { id: 'n-get', type: 'bulkgate-contacts', account: 'acc', wires: [['out']] },
        { id: 'c', type: 'catch', scope: null, wires: [['out']] },
        ...helpers('out'),
      ],
      credentials,
    );
    const out = collect('out', 1);
    receive('n-get', { payload: '420777000999' });
    await out;
    assert.ok(seen.length > 0);
    assert.ok(!seen.some((s) => JSON.stringify(s).includes(TOKEN)));
  });
});

/**
 * The wire bodies' rules at their edges (unit): every enum and bound of the schemas, from the API
 * reference and the vendor's pages, refused just outside and accepted just inside, through the
 * validators the build compiles. A refusal names the field.
 */
import assert from 'node:assert/strict';
import { CHAT_TEXT_LIMITS } from '../../gateway/channels';
import { GatewayError } from '../../gateway/errors';
import { SENDER_TYPES } from '../../gateway/senders';
import { validateBody } from '../../gateway/validate';

const CREDENTIALS = { application_id: '1', application_token: 't' };
type Body = Record<string, unknown>;

interface Edge {
  /** The schema key (operation or endpoint). */
  key: string;
  /** A valid body without the field. */
  base: Body;
  /** The field's name as a refusal names it. */
  field: string;
  /** Puts a value where the field is. */
  set: (body: Body, value: unknown) => void;
  inside: unknown[];
  outside: unknown[];
}

const top =
  (name: string) =>
  (body: Body, value: unknown): void => {
    body[name] = value;
  };
const inChannel =
  (channel: string, name: string) =>
  (body: Body, value: unknown): void => {
    const settings = ((body.channel as Body | undefined)?.[channel] ?? {}) as Body;
    body.channel = { ...(body.channel as Body | undefined), [channel]: { ...settings, [name]: value } };
  };

const transactional2 = { number: '420777000001', text: 'hi' };
const transactional1 = { number: '420777000001', text: 'hi' };
const promotional2 = { number: [{ number: '420777000001' }], text: 'hi' };
const otpSend = { number: '420777000001', request_quota_identification: '203.0.113.7' };
const phone21 = '1'.repeat(21);

const EDGES: Edge[] = [
  {
    key: 'transactional advanced 2.0',
    base: transactional2,
    field: 'duplicates_check',
    set: top('duplicates_check'),
    inside: ['on', 'off'],
    outside: ['yes', true, ''],
  },
  {
    key: 'transactional advanced 1.0',
    base: transactional1,
    field: 'duplicates_check',
    set: top('duplicates_check'),
    inside: ['on', 'off'],
    outside: ['yes', 1],
  },
  {
    key: 'promotional advanced 2.0',
    base: promotional2,
    field: 'duplicates_check',
    set: top('duplicates_check'),
    inside: ['same_text', 'same_number', null],
    outside: ['on', 'same'],
  },
  {
    key: 'transactional advanced 2.0',
    base: { text: 'hi' },
    field: 'number',
    set: top('number'),
    inside: ['123', '1'.repeat(20)],
    outside: ['12', phone21, '+420777000001', ''],
  },
  {
    key: 'transactional advanced 2.0',
    base: transactional2,
    field: 'country',
    set: top('country'),
    inside: ['CZ', 'gb'],
    outside: ['CZE', 'C', 'C1'],
  },
  {
    key: 'transactional advanced 2.0',
    base: { number: '420777000001' },
    field: 'text',
    set: top('text'),
    inside: ['x'],
    outside: [''],
  },
  {
    key: 'transactional advanced 1.0',
    base: { text: 'hi' },
    field: 'admin',
    set: top('admin'),
    inside: [0, 7],
    outside: [-1, 1.5, '1'],
  },
  {
    key: 'transactional advanced 1.0',
    base: transactional1,
    field: 'sender_id',
    set: top('sender_id'),
    inside: ['gSystem', 'gShort', 0, 12],
    outside: ['gMobile', 'gProfile', -1, 'gsystem'],
  },
  {
    key: 'transactional advanced 2.0',
    base: transactional2,
    field: 'channel.sms.sender_id',
    set: inChannel('sms', 'sender_id'),
    inside: [...SENDER_TYPES['2.0'].filter((t) => t === 'gSystem' || t === 'gShort'), 0],
    outside: ['gNone', -1],
  },
  {
    key: 'transactional advanced 2.0',
    base: transactional2,
    field: 'channel.viber.expiration',
    set: viber('expiration'),
    inside: [1, 86_400],
    outside: [0, -5, 1.5],
  },
  {
    key: 'transactional advanced 2.0',
    base: transactional2,
    field: 'channel.whatsapp.message.text',
    set: chatText('whatsapp'),
    inside: ['x', 'x'.repeat(CHAT_TEXT_LIMITS.whatsapp)],
    outside: ['', 'x'.repeat(CHAT_TEXT_LIMITS.whatsapp + 1)],
  },
  {
    key: 'transactional advanced 2.0',
    base: transactional2,
    field: 'channel.rcs.message.text',
    set: chatText('rcs'),
    inside: ['x', 'x'.repeat(CHAT_TEXT_LIMITS.rcs)],
    outside: ['', 'x'.repeat(CHAT_TEXT_LIMITS.rcs + 1)],
  },
  {
    key: 'promotional advanced 2.0',
    base: { text: 'hi' },
    field: 'groups',
    set: top('groups'),
    inside: [[0], [1, 2]],
    outside: [[], [-1], ['a']],
  },
  {
    key: 'otp send',
    base: otpSend,
    field: 'code_length',
    set: top('code_length'),
    inside: [4, 100],
    outside: [3, 101, 4.5],
  },
  {
    key: 'otp send',
    base: otpSend,
    field: 'code_type',
    set: top('code_type'),
    inside: ['int', 'string', 'combined'],
    outside: ['number', ''],
  },
  {
    key: 'otp send',
    base: otpSend,
    field: 'language',
    set: top('language'),
    inside: ['en', 'CS'],
    outside: ['eng', 'e'],
  },
  { key: 'otp send', base: otpSend, field: 'expiration', set: top('expiration'), inside: [1], outside: [0] },
  {
    key: 'otp send',
    base: otpSend,
    field: 'request_quota_number',
    set: top('request_quota_number'),
    inside: [1],
    outside: [0],
  },
  {
    key: 'otp send',
    base: otpSend,
    field: 'trials_available_resend',
    set: top('trials_available_resend'),
    inside: [0, null],
    outside: [-1],
  },
  {
    key: 'otp send',
    base: otpSend,
    field: 'trials_available_verification',
    set: top('trials_available_verification'),
    inside: [1, null],
    outside: [0],
  },
  { key: 'otp send', base: otpSend, field: 'daily_limit', set: top('daily_limit'), inside: [1, null], outside: [0] },
  {
    key: 'otp send',
    base: { number: '420777000001' },
    field: 'request_quota_identification',
    set: top('request_quota_identification'),
    inside: ['x'],
    outside: [''],
  },
  {
    key: 'black-list check',
    base: { numbers: ['420777000001'] },
    field: 'route',
    set: top('route'),
    inside: ['promotional', 'transactional'],
    outside: ['both'],
  },
  {
    key: 'black-list add',
    base: { numbers: ['420777000001'] },
    field: 'type',
    set: top('type'),
    inside: ['black-list', 'opt-out'],
    outside: ['blacklist'],
  },
  {
    key: 'black-list check',
    base: {},
    field: 'numbers',
    set: top('numbers'),
    inside: [['123']],
    outside: [[], ['12']],
  },
  {
    key: 'address-book add',
    base: {},
    field: 'data.gender',
    set: (b, v) => (b.data = { first_name: 'A', gender: v }),
    inside: ['male', 'female', 'unknown'],
    outside: ['other'],
  },
  {
    key: 'address-book add',
    base: {},
    field: 'data.type',
    set: (b, v) => (b.data = { first_name: 'A', type: v }),
    inside: ['person', 'company'],
    outside: ['people'],
  },
];

function viber(name: string) {
  return (body: Body, value: unknown): void => {
    body.channel = { viber: { sender: 'Shop', [name]: value }, sms: {} };
  };
}

function chatText(name: 'whatsapp' | 'rcs') {
  return (body: Body, value: unknown): void => {
    body.channel = { [name]: { sender: 'Shop', message: { text: value } }, sms: {} };
  };
}

describe('the wire bodies at their edges (unit)', () => {
  for (const edge of EDGES) {
    it(`${edge.key}: ${edge.field} takes ${edge.inside.map(show).join(', ')}; refuses ${edge.outside.map(show).join(', ')}, naming it`, () => {
      for (const value of edge.inside) {
        const body: Body = { ...CREDENTIALS, ...edge.base };
        edge.set(body, value);
        assert.doesNotThrow(() => validateBody(edge.key, body), `${show(value)} is inside`);
      }
      for (const value of edge.outside) {
        const body: Body = { ...CREDENTIALS, ...edge.base };
        edge.set(body, value);
        const problem = refusal(() => validateBody(edge.key, body));
        assert.ok(problem, `${show(value)} is outside`);
        assert.ok(
          problem.includes(edge.field.split('.').at(-1) as string),
          `the refusal names ${edge.field}: ${problem}`,
        );
      }
    });
  }
});

/** The message of the invalid_request the call throws; undefined when it throws none. */
function refusal(call: () => void): string | undefined {
  try {
    call();
  } catch (error) {
    assert.ok(error instanceof GatewayError && error.code === 'invalid_request', String(error));
    return error.message;
  }
  return undefined;
}

function show(value: unknown): string {
  const text = JSON.stringify(value) ?? String(value);
  return text.length > 16 ? `${text.slice(0, 8)}... (${text.length - 2} long)` : text;
}

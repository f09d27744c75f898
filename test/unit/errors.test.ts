/**
 * The client's errors (unit): what an error answer becomes (its type from either version's body,
 * its sentence, whether a repeat may help), the few words a node's status shows (a phrase of the
 * catalog, never a key it lacks), and a cause a person can read on one line.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { GatewayError, briefOf, gatewayAnswerError, invalidRequest, typeWording } from '../../gateway/errors';
import { english, ERRORS } from '../../gateway/wording';

const typeSentence = (type: string) => english(typeWording(type));
const WRONG_CREDENTIALS = ERRORS.type['wrong-credentials'];

const ROOT = join(__dirname, '..', '..', '..');
const catalog = (lang: string) =>
  JSON.parse(readFileSync(join(ROOT, 'locales', lang, 'shared.json'), 'utf8')) as { brief: Record<string, string> };

/** The gateway's error types the package words itself (the reference's, and the other endpoints' pages'). */
const WORDED = [
  'unknown_identity',
  'authentication_failed',
  'low_credit',
  'banned',
  'invalid_numeric_sender',
  'empty_message',
  'admin_not_found',
  'no_recipients',
  'blacklisted_number',
  'method_not_allowed',
  'unknown_action',
  'unsupported_api_version',
  'invalid_phone_number',
  'invalid_id_provided',
  'invalid_input_parameters',
  'invalid_wallet',
  'you_must_select_wallet',
  'no_valid_numbers',
  'number_already_exists',
  'missing_parameters',
  'use_number_or_source_id_not_both',
  'number_not_found',
  'invalid_phone_mobile',
];

/** Types whose status is a phrase of its own: the expectation, written out here. */
const OWN_BRIEFS: Record<string, string> = {
  network: 'unreachable',
  timeout: 'timeout',
  unknown_identity: 'wrong-token',
  authentication_failed: 'wrong-token',
  invalid_phone_number: 'invalid-number',
  invalid_phone_mobile: 'invalid-number',
  number_not_found: 'not-found',
  invalid_id_provided: 'unknown-otp',
  low_credit: 'low-credit',
  banned: 'banned',
  rate_limited: 'rate-limited',
  bad_response: 'bad-response',
  closed: 'closed',
  blacklisted_number: 'blacklisted',
  empty_message: 'no-text',
  no_recipients: 'no-recipient',
};

describe('errors (unit)', () => {
  describe('an error answer', () => {
    it('each worded type: a sentence of its own (not the fallback), then the type and the HTTP status', () => {
      const fallback = typeSentence('something_else');
      assert.equal(fallback, 'The gateway refused the request');
      const sentences = new Set<string>();
      for (const type of WORDED) {
        const sentence = typeSentence(type);
        assert.ok(sentence.length > 10 && sentence !== fallback, `${type}: ${sentence}`);
        assert.match(sentence, /^[A-Z]/, `${type}: a sentence`);
        sentences.add(sentence);
        const error = gatewayAnswerError(400, { type, code: 400, error: 'whatever', detail: null });
        assert.equal(error.message, `${sentence} (${type}, HTTP 400)`);
        assert.equal(error.code, type);
      }
      // Two pairs share one wording on purpose: credentials (either version), an invalid number.
      assert.equal(sentences.size, WORDED.length - 2);
      assert.equal(typeSentence('unknown_identity'), WRONG_CREDENTIALS);
      assert.equal(typeSentence('authentication_failed'), WRONG_CREDENTIALS);
      assert.match(WRONG_CREDENTIALS, /BulkGate account node/, 'it says where to fix it');
      assert.equal(typeSentence('invalid_phone_mobile'), typeSentence('invalid_phone_number'));
    });

    it('2.0 names the type in `type` (error is its description); 1.0 names it in `error`', () => {
      const v2 = gatewayAnswerError(401, {
        type: 'unknown_identity',
        code: 401,
        error: 'Unknown identity / unauthorized',
        detail: null,
      });
      assert.deepEqual([v2.code, v2.status, v2.detail], ['unknown_identity', 401, null]);
      const v1 = gatewayAnswerError(401, { error: 'authentication_failed', code: 401 });
      assert.equal(v1.code, 'authentication_failed');
      assert.equal(v1.message, `${WRONG_CREDENTIALS} (authentication_failed, HTTP 401)`);
    });

    it("a type the package does not word: the gateway's description is kept; without one, the plain fallback", () => {
      const described = gatewayAnswerError(400, { type: 'new_rule', error: 'A rule we never heard of', detail: null });
      assert.equal(described.message, 'The gateway refused the request: A rule we never heard of (new_rule, HTTP 400)');
      const bare = gatewayAnswerError(400, { type: 'new_rule' });
      assert.equal(bare.message, 'The gateway refused the request (new_rule, HTTP 400)');
      // An `error` that only repeats the type is not a description.
      assert.equal(
        gatewayAnswerError(400, { type: 'new_rule', error: 'new_rule' }).message,
        'The gateway refused the request (new_rule, HTTP 400)',
      );
      // Nor is one that is not a string.
      assert.equal(
        gatewayAnswerError(400, { type: 'new_rule', error: { text: 'x' } }).message,
        'The gateway refused the request (new_rule, HTTP 400)',
      );
    });

    it('a type that is not an identifier (spaces, an echoed text, too long, not a string) becomes unknown', () => {
      for (const type of ['two words', 'x'.repeat(65), '9lives', 42, undefined]) {
        assert.equal(
          gatewayAnswerError(400, { type, error: 'Not an identifier either' }).code,
          'unknown',
          String(type),
        );
      }
      assert.equal(
        gatewayAnswerError(400, { type: 'a'.repeat(64) }).code,
        'a'.repeat(64),
        '64 characters is still one',
      );
      assert.equal(gatewayAnswerError(400, { type: 'Upper_Case9' }).code, 'Upper_Case9');
      // 1.0's error is an identifier only when it is lower case letters and underscores.
      assert.equal(gatewayAnswerError(400, { error: 'low_credit' }).code, 'low_credit');
      assert.equal(gatewayAnswerError(400, { error: 'Low credit' }).code, 'unknown');
      assert.equal(gatewayAnswerError(400, { error: 'low_credit2' }).code, 'unknown');
      assert.equal(gatewayAnswerError(400, { error: 42 }).code, 'unknown', '1.0: an error that is not a string');
    });

    it('a detail is appended to the sentence and kept; anything but a string is none', () => {
      const error = gatewayAnswerError(400, { type: 'invalid_input_parameters', detail: 'number: too short' });
      assert.equal(
        error.message,
        `${typeSentence('invalid_input_parameters')} (invalid_input_parameters, HTTP 400): number: too short`,
      );
      assert.equal(error.detail, 'number: too short');
      assert.equal(gatewayAnswerError(400, { type: 'x', detail: 5 }).detail, null);
      assert.equal(
        gatewayAnswerError(400, { type: 'x', detail: '' }).message,
        'The gateway refused the request (x, HTTP 400)',
      );
    });

    it('retryable: 429 and 5xx, except what a repeat cannot fix (credentials, credit, a ban, a bad request); never a 4xx', () => {
      assert.equal(gatewayAnswerError(429, { type: 'too_many' }).retryable, true);
      assert.equal(gatewayAnswerError(500, { type: 'server' }).retryable, true);
      assert.equal(gatewayAnswerError(503, { type: 'server' }).retryable, true);
      assert.equal(gatewayAnswerError(499, { type: 'server' }).retryable, false);
      assert.equal(gatewayAnswerError(400, { type: 'server' }).retryable, false);
      for (const type of ['unknown_identity', 'authentication_failed', 'low_credit', 'banned', 'invalid_request']) {
        assert.equal(gatewayAnswerError(500, { type }).retryable, false, type);
        assert.equal(gatewayAnswerError(429, { type }).retryable, false, type);
      }
    });
  });

  describe('the status words', () => {
    it("each type with its own phrase has it, and every phrase is in each language's catalog", () => {
      const languages = ['en-US', 'de', 'cs'].map(catalog);
      for (const [type, key] of Object.entries(OWN_BRIEFS)) {
        assert.deepEqual(briefOf(type, 'anything'), { key }, type);
        for (const { brief } of languages) assert.ok(brief[key], `${key} in the catalog`);
      }
      assert.deepEqual(new GatewayError({ type: 'low_credit', message: 'x' }).brief, { key: 'low-credit' });
    });

    it('a refused request names the field its message starts with; a number, one-of-recipients and a sentence have their own', () => {
      assert.deepEqual(briefOf('invalid_request', 'number[2].number must be a phone number'), {
        key: 'invalid-number',
      });
      assert.deepEqual(briefOf('invalid_request', 'one of number, groups, admins is required'), {
        key: 'no-recipient',
      });
      assert.deepEqual(briefOf('invalid_request', 'schedule must be a Date'), {
        key: 'invalid-field',
        params: { field: 'schedule' },
      });
      assert.deepEqual(briefOf('invalid_request', 'sender_id_value is required'), {
        key: 'invalid-field',
        params: { field: 'sender_id_value' },
      });
      assert.deepEqual(briefOf('invalid_request', 'the text is too long'), { key: 'invalid-request' });
      assert.deepEqual(briefOf('invalid_request', 'The Recipients field is empty'), { key: 'invalid-request' });
      assert.deepEqual(briefOf('invalid_request', '[0] is wrong'), { key: 'invalid-request' });
      assert.deepEqual(invalidRequest('text is required', { key: 'no-text' }).brief, { key: 'no-text' });
      assert.deepEqual(invalidRequest('country must be a code').brief, {
        key: 'invalid-field',
        params: { field: 'country' },
      });
    });

    it('any other type: "gateway: <type>"', () => {
      assert.deepEqual(briefOf('new_rule', 'x'), { key: 'gateway-error', params: { type: 'new_rule' } });
      assert.ok(catalog('en-US').brief['gateway-error']?.includes('__type__'));
    });
  });

  describe('the error itself', () => {
    it('reads as its sentence alone (a Catch node shows toString), carries code, type and a JSON form without the message', () => {
      const error = new GatewayError({
        type: 'timeout',
        message: 'The gateway did not answer within 5 s',
        status: undefined,
        retryable: true,
      });
      assert.equal(String(error), 'The gateway did not answer within 5 s');
      assert.equal(error.name, 'GatewayError');
      assert.ok(error instanceof Error);
      assert.equal(error.type, 'timeout');
      assert.deepEqual(error.toJSON(), { type: 'timeout', status: undefined, detail: null, retryable: true });
      assert.deepEqual(new GatewayError({ type: 'x', message: 'y' }).toJSON(), {
        type: 'x',
        status: undefined,
        detail: null,
        retryable: false,
      });
    });

    it('a cause becomes one readable line: its message and code once, an inner cause when it has none, nothing else it held (a request, a body)', () => {
      const cause = (c: unknown) => new GatewayError({ type: 'network', message: 'x', cause: c }).cause;
      assert.equal(
        cause(Object.assign(new Error('connect refused'), { code: 'ECONNREFUSED' })),
        'connect refused (ECONNREFUSED)',
      );
      assert.equal(
        cause(Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:1'), { code: 'ECONNREFUSED' })),
        'connect ECONNREFUSED 127.0.0.1:1',
      );
      assert.equal(
        cause({ cause: { message: 'socket hang up', code: 'ECONNRESET' }, options: { body: 'secret' } }),
        'socket hang up (ECONNRESET)',
      );
      assert.equal(cause({ message: '', cause: { message: 'inner' } }), 'inner');
      assert.equal(cause({ message: 'outer', code: 7 }), 'outer');
      assert.equal(
        cause({ message: 'outer', cause: { code: 'EPIPE' } }),
        'outer (EPIPE)',
        "the inner cause's code when the outer has none",
      );
      assert.equal(
        cause({ message: 42, cause: { message: 'inner' } }),
        'inner',
        'a message that is not a string is none',
      );
      assert.equal(
        cause({ cause: { message: 42, code: 5 } }),
        '[object Object]',
        'nor an inner one; nor a code that is not a string',
      );
      assert.equal(cause({}), '[object Object]', 'nothing readable in it: its kind');
      assert.equal(cause('plain text'), 'plain text');
      assert.equal(cause(null), 'null');
      assert.equal(new GatewayError({ type: 'network', message: 'x' }).cause, undefined, 'no cause given: none');
    });
  });
});

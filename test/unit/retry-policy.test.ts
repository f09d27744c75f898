/**
 * The retry policy (unit): a Retry-After is waited for as asked, not less and not more than the
 * cap; without one, the wait doubles with each attempt, with jitter in the upper half, up to the
 * longest wait. What an answer or a transport error stands for (the reference's statuses and
 * error bodies), and when another attempt is safe.
 */
import assert from 'node:assert/strict';
import { GatewayError } from '../../gateway';
import { backoffDelay, parseRetryAfter } from '../../gateway/retry-policy';
import { WITHDRAWN_CODE } from '../../gateway/withdrawn';
import { badResponse, classifyAnswer, closedError, mayRetry, transportFailure } from '../../gateway/retry-policy';

const settings = { retryDelay: 500, retryMaxDelay: 30_000 };

describe('retry policy (unit)', () => {
  it('Retry-After: seconds or an HTTP date, in ms; capped by the longest wait; unreadable is absent', () => {
    const now = Date.parse('2026-11-23T12:00:00Z');
    assert.equal(parseRetryAfter('7', now), 7_000);
    assert.equal(parseRetryAfter(['3', '9'], now), 3_000);
    assert.equal(parseRetryAfter('Mon, 23 Nov 2026 12:00:05 GMT', now), 5_000);
    assert.equal(parseRetryAfter('Mon, 23 Nov 2026 11:59:00 GMT', now), 0, 'a date in the past: at once');
    assert.equal(parseRetryAfter('soon', now), undefined);
    assert.equal(parseRetryAfter(undefined, now), undefined);
    // Waited for as asked, whatever the jitter would say; never beyond the cap.
    for (const random of [0, 0.5, 1]) {
      assert.equal(backoffDelay(1, 7_000, settings, random), 7_000);
      assert.equal(backoffDelay(3, 120_000, settings, random), 30_000);
    }
  });

  it('without one: from half the ceiling to the ceiling, the ceiling doubling per attempt up to the longest wait', () => {
    const range = (attempt: number) => [
      backoffDelay(attempt, undefined, settings, 0),
      backoffDelay(attempt, undefined, settings, 1),
    ];
    assert.deepEqual(range(1), [250, 500]);
    assert.deepEqual(range(2), [500, 1000]);
    assert.deepEqual(range(3), [1000, 2000]);
    assert.deepEqual(range(7), [15_000, 30_000], 'capped: 500 x 2^6 would be 32 s');
    assert.deepEqual(range(20), [15_000, 30_000]);
  });

  const send = {
    operation: { kind: 'transactional', api: 'advanced', version: '2.0', method: 'POST', encoding: 'json' },
  } as const;
  const sendV1 = { operation: { ...send.operation, version: '1.0' } } as const;

  it('answers: data is a success; an error body, a 429 or a body that is not JSON a failure, and whether the gateway took it', () => {
    assert.equal(classifyAnswer(send, { status: 200, body: { data: { status: 'accepted' } } }), undefined);
    const invalid = { status: 400, body: { type: 'invalid_phone_number', code: 400, error: 'Invalid phone number' } };
    assert.equal(
      classifyAnswer(send, invalid),
      undefined,
      'the 2.0 transactional invalid number is a rejected recipient, not a failure',
    );
    assert.equal(classifyAnswer(sendV1, invalid)?.error.code, 'invalid_phone_number', 'in 1.0 it is an error answer');
    const busy = classifyAnswer(send, {
      status: 503,
      body: { type: 'unavailable', code: 503, error: 'Try later' },
      retryAfter: 2_000,
    });
    assert.deepEqual(
      [busy?.reached, busy?.retryAfter, busy?.error.retryable],
      [false, 2_000, true],
      '503: not taken, wait as asked',
    );
    const slow = classifyAnswer(send, { status: 429, body: undefined });
    assert.deepEqual([slow?.error.code, slow?.reached, slow?.error.retryable], ['rate_limited', false, true]);
    const broken = classifyAnswer(send, { status: 502, body: undefined });
    assert.deepEqual(
      [broken?.error.code, broken?.reached, broken?.error.retryable],
      ['bad_response', true, true],
      'a 502 may come after the gateway took it',
    );
    assert.equal(
      classifyAnswer(send, { status: 200, body: { ok: true } })?.error.code,
      'bad_response',
      'JSON without data or error',
    );
    assert.equal(classifyAnswer(send, { status: 200, body: { data: 1 } }), undefined);
    assert.equal(
      classifyAnswer(send, { status: 500, body: { data: 1 } })?.error.code,
      'bad_response',
      'data with an error status is not a success',
    );
    const refused = classifyAnswer(send, {
      status: 401,
      body: { type: 'unknown_identity', code: 401, error: 'Unknown identity' },
    });
    assert.deepEqual([refused?.error.code, refused?.error.retryable], ['unknown_identity', false]);
  });

  it('transport errors: refused connections never reached the gateway; a broken one may have; a connect timeout did not', () => {
    const context = { stopped: false, closing: false, baseUrl: 'https://portal.bulkgate.com', timeout: 5_000 };
    const of = (error: unknown, more = {}) => transportFailure(error, { ...context, ...more });
    const refused = of(Object.assign(new Error('connect'), { code: 'ECONNREFUSED' }));
    assert.deepEqual([refused.error.code, refused.reached, refused.error.retryable], ['network', false, true]);
    assert.doesNotMatch(refused.error.message, /broke/);
    const reset = of(Object.assign(new Error('socket'), { code: 'ECONNRESET' }));
    assert.deepEqual([reset.error.code, reset.reached], ['network', true]);
    assert.match(
      reset.error.message,
      /https:\/\/portal\.bulkgate\.com \(ECONNRESET\); the connection broke before an answer/,
    );
    assert.deepEqual(
      [
        of(Object.assign(new Error('t'), { code: 'UND_ERR_CONNECT_TIMEOUT' })).reached,
        of(Object.assign(new Error('t'), { code: 'UND_ERR_HEADERS_TIMEOUT' })).reached,
      ],
      [false, true],
    );
    assert.match(of(Object.assign(new Error('t'), { code: 'UND_ERR_BODY_TIMEOUT' })).error.message, /within 5000 ms/);
    assert.equal(
      of(Object.assign(new Error('withdrawn'), { code: WITHDRAWN_CODE })).reached,
      false,
      'withdrawn by the circuit: never on the wire',
    );
    assert.equal(of(Object.assign(new Error('gone'), { code: 'UND_ERR_DESTROYED' })).error.code, 'closed');
    assert.equal(of(new Error('anything'), { closing: true }).error.code, 'closed');
    assert.equal(
      of(Object.assign(new Error('Request aborted'), { code: 'UND_ERR_ABORTED' }), { stopped: true }).error.code,
      'closed',
    );
    const proxy = of(
      Object.assign(new Error('Proxy response (407) !== 200 when HTTP Tunneling'), { code: 'UND_ERR_ABORTED' }),
    );
    assert.deepEqual([proxy.reached, /HTTP 407 from the proxy/.test(proxy.error.message)], [false, true]);
    const big = of(Object.assign(new Error('too big'), { code: 'UND_ERR_RES_EXCEEDED_MAX_SIZE' }));
    assert.deepEqual([big.error.code, big.error.retryable], ['bad_response', false]);
    const own = new GatewayError({ type: 'bad_response', message: 'x' });
    assert.equal(of(own).error, own, 'an error of its own passes as it is');
  });

  it('another attempt: only for a retryable failure, within the retries, and after one that may have reached the gateway only when copies are dropped', () => {
    const failure = (retryable: boolean, reached: boolean) => ({
      error: new GatewayError({ type: 'network', retryable, message: 'x' }),
      reached,
    });
    assert.equal(mayRetry(failure(true, false), 1, 2, false), true);
    assert.equal(mayRetry(failure(true, false), 2, 2, false), true);
    assert.equal(mayRetry(failure(true, false), 3, 2, false), false, 'two retries: three attempts in all');
    assert.equal(mayRetry(failure(true, false), 1, 0, false), false, 'retries 0: never');
    assert.equal(mayRetry(failure(false, false), 1, 2, false), false, 'not retryable');
    assert.equal(
      mayRetry(failure(true, true), 1, 2, false),
      false,
      'may have reached it, no duplicates check: a second SMS could go',
    );
    assert.equal(mayRetry(failure(true, true), 1, 2, true), true, 'the gateway drops the copy');
  });
  it('the edges: Retry-After digits only, trimmed; a 400 is data only below 400; each reading of an answer says what it saw', () => {
    const now = Date.parse('2026-11-23T12:00:00Z');
    assert.equal(parseRetryAfter(' 4 ', now), 4_000);
    assert.equal(parseRetryAfter('12', now), 12_000, 'two digits');
    assert.equal(parseRetryAfter('5s', now), undefined, 'not a whole number of seconds, not a date');
    assert.equal(parseRetryAfter('0x10', now), undefined);
    assert.equal(parseRetryAfter('', now), undefined);
    assert.equal(classifyAnswer(send, { status: 399, body: { data: 1 } }), undefined);
    assert.equal(
      classifyAnswer(send, { status: 400, body: { data: 1 } })?.error.code,
      'bad_response',
      'data with 400 is no success',
    );
    assert.equal(
      classifyAnswer(send, { status: 502, body: undefined })?.error.message,
      'The gateway answered HTTP 502 with a body that is not JSON, not the documented JSON',
    );
    assert.equal(
      classifyAnswer(send, { status: 200, body: { ok: true } })?.error.message,
      'The gateway answered HTTP 200 with JSON without data or error, not the documented JSON',
    );
    assert.equal(
      classifyAnswer(send, { status: 429, body: undefined })?.error.message,
      'The gateway asked to slow down (HTTP 429)',
    );
    const promotional = { operation: { ...send.operation, kind: 'promotional' } } as const;
    const invalid = { status: 400, body: { type: 'invalid_phone_number', code: 400, error: 'Invalid phone number' } };
    assert.equal(
      classifyAnswer(promotional, invalid)?.error.code,
      'invalid_phone_number',
      'only the transactional 2.0 answer is a rejected recipient',
    );
    assert.equal(
      classifyAnswer(send, { ...invalid, status: 401 })?.error.code,
      'invalid_phone_number',
      'and only with 400',
    );
    assert.equal(
      classifyAnswer(send, { ...invalid, body: { ...invalid.body, type: 'unknown_identity' } })?.error.code,
      'unknown_identity',
    );
    // Busy answers are worth another try; other bad ones are not.
    assert.deepEqual(
      [429, 499, 500, 503, 200].map((status) => badResponse(status, 'not-json').retryable),
      [true, false, true, true, false],
    );
    assert.deepEqual(
      [closedError().code, closedError().retryable, closedError().message],
      ['closed', true, 'The request was stopped because the node was closed (redeploy or shutdown)'],
    );
  });

  it('transport errors, each named: a timeout by name or by code, every way of never reaching the gateway, a proxy that refused', () => {
    const context = { stopped: false, closing: false, baseUrl: 'https://portal.bulkgate.com', timeout: 5_000 };
    const of = (error: unknown, more = {}) => transportFailure(error, { ...context, ...more });
    const byName = of(Object.assign(new Error('The operation was aborted due to timeout'), { name: 'TimeoutError' }));
    assert.deepEqual(
      [byName.error.code, byName.error.retryable, byName.reached, byName.error.message],
      ['timeout', true, true, 'No answer from the gateway at https://portal.bulkgate.com within 5000 ms'],
    );
    assert.equal(of(Object.assign(new Error('t'), { code: 'UND_ERR_HEADERS_TIMEOUT' })).error.code, 'timeout');
    for (const code of ['ECONNREFUSED', 'ENOTFOUND', 'EAI_AGAIN', 'EHOSTUNREACH', 'ENETUNREACH']) {
      const failure = of(Object.assign(new Error('x'), { code }));
      assert.deepEqual(
        [failure.reached, failure.error.message],
        [false, `Could not reach the gateway at https://portal.bulkgate.com (${code})`],
        code,
      );
    }
    const bare = of('a string thrown');
    assert.deepEqual([bare.error.code, bare.reached, bare.error.retryable], ['network', true, true]);
    assert.equal(
      bare.error.message,
      'Could not reach the gateway at https://portal.bulkgate.com; the connection broke before an answer',
    );
    const undefinedThrown = of(undefined);
    assert.equal(undefinedThrown.error.code, 'network');
    const proxy = of(
      Object.assign(new Error('Proxy response (403) !== 200 when HTTP Tunneling'), { code: 'UND_ERR_ABORTED' }),
    );
    assert.deepEqual(
      [proxy.error.code, proxy.error.retryable, proxy.error.message],
      [
        'network',
        true,
        'The proxy would not connect to the gateway at https://portal.bulkgate.com (HTTP 403 from the proxy)',
      ],
    );
    const notProxy = of(Object.assign(new Error('Request aborted; Proxy response (403)'), { code: 'UND_ERR_ABORTED' }));
    assert.equal(notProxy.reached, true, 'a proxy refusal is read from the start of the message only');
    const big = of(Object.assign(new Error('too big'), { code: 'UND_ERR_RES_EXCEEDED_MAX_SIZE' }));
    assert.deepEqual(
      [big.reached, big.error.message],
      [true, 'The gateway answered HTTP 200 with an answer larger than 64 MB, not the documented JSON'],
    );
    const own = new GatewayError({ type: 'bad_response', message: 'x' });
    assert.equal(of(own).reached, true);
    assert.equal(of(Object.assign(new Error('gone'), { code: 'UND_ERR_DESTROYED' })).reached, true);
    assert.equal(of(new Error('stopped'), { stopped: true }).reached, true);
  });
});

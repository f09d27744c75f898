/**
 * The token never leaks through an answer (unit): every string of an answer, keys included,
 * however deep and however often it holds the token, is redacted before anything reads it; an
 * error answer always, a success answer when its text holds the token, escaped or not.
 */
import assert from 'node:assert/strict';
import { redactAnswer } from '../../gateway/errors';
import { readAnswer } from '../../gateway/transport';

const TOKEN = 'tok-3f9a-secret';

describe('redaction (unit)', () => {
  it('a string holding the token several times: every occurrence', () => {
    assert.equal(redactAnswer(`${TOKEN} and ${TOKEN}${TOKEN}`, TOKEN), '*** and ******');
    assert.equal(redactAnswer('nothing here', TOKEN), 'nothing here');
    assert.equal(redactAnswer(TOKEN, ''), TOKEN, 'no token set: nothing to hide');
  });

  it('an answer: strings, keys and arrays at any depth', () => {
    const answer = {
      error: `bad ${TOKEN}`,
      [TOKEN]: { list: [TOKEN, { deep: [`x${TOKEN}y`] }], n: 5, ok: true, none: null },
    };
    const clean = redactAnswer(answer, TOKEN);
    assert.deepEqual(clean, {
      error: 'bad ***',
      '***': { list: ['***', { deep: ['x***y'] }], n: 5, ok: true, none: null },
    });
    assert.equal(JSON.stringify(clean).includes(TOKEN), false);
    assert.equal(JSON.stringify(answer).includes(TOKEN), true, 'the answer itself is not changed');
  });

  it('read off the wire: a success answer that echoes the token (in a record, nested) is redacted; one that does not is passed as it is', () => {
    const echo = readAnswer(
      {
        status: 200,
        text: JSON.stringify({ data: { records: [{ note: `sent by ${TOKEN}`, [TOKEN]: 1 }] } }),
        headers: {},
      },
      TOKEN,
    );
    assert.equal(JSON.stringify(echo.body).includes(TOKEN), false);
    assert.deepEqual(echo.body, { data: { records: [{ note: 'sent by ***', '***': 1 }] } });
    const plain = readAnswer(
      { status: 200, text: '{"data":{"status":"accepted"}}', headers: { 'retry-after': '3' } },
      TOKEN,
    );
    assert.deepEqual(plain, { status: 200, body: { data: { status: 'accepted' } }, retryAfter: 3000 });
  });

  it('an error answer is redacted whatever its text looks like, an escaped token too', () => {
    const escaped = JSON.stringify({ error: 'x', type: 'y', detail: TOKEN.replace('-', '\\u002d') }).replace(
      '\\\\u002d',
      '\\u002d',
    );
    const answer = readAnswer({ status: 400, text: escaped, headers: {} }, TOKEN);
    assert.equal(JSON.stringify(answer.body).includes(TOKEN), false, escaped);
    const notJson = readAnswer({ status: 502, text: `<html>${TOKEN}</html>`, headers: {} }, TOKEN);
    assert.equal(notJson.body, undefined, 'a body that is not JSON is not read at all');
  });
});

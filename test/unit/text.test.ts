/**
 * Text counting's edges (unit), beside test/text.test.ts's agreement with the simulator: what a
 * measure says besides its count (encoding, limit, the characters that need Unicode), the unicode
 * setting against the texts it covers, the bound past which nothing is counted, and the sentence
 * a too long text is refused with.
 */
import assert from 'node:assert/strict';
import { sendOperation } from '../../gateway/operations';
import { prepareSend, type SendFields } from '../../gateway/request';
import {
  TEXT_COUNT_BOUND,
  TEXT_LIMIT_GSM7,
  TEXT_LIMIT_UNICODE,
  measureText,
  needsUnicode,
  resolveUnicode,
} from '../../gateway/text';

/** A transactional send prepared as the client prepares one. */
const prepare = (fields: SendFields) =>
  prepareSend(
    sendOperation('transactional'),
    { number: '420777111222', ...fields },
    { applicationId: '1', applicationToken: 't' },
  );

/** GSM 03.38's basic alphabet and its extension table, as the standard lists them: the expectation. */
const BASIC =
  '@£$¥èéùìòÇ\nØø\rÅåΔ_ΦΓΛΩΠΨΣΘΞÆæßÉ !"#¤%&\'()*+,-./0123456789:;<=>?¡ABCDEFGHIJKLMNOPQRSTUVWXYZÄÖÑÜ§¿abcdefghijklmnopqrstuvwxyzäöñüà';
const EXTENSION = '\f^{}\\[~]|€';

describe('text counting (unit)', () => {
  it("the limits are the reference's: 612 characters, 268 with Unicode; nothing over twice 612 code units is counted", () => {
    assert.deepEqual([TEXT_LIMIT_GSM7, TEXT_LIMIT_UNICODE, TEXT_COUNT_BOUND], [612, 268, 1224]);
    // At the bound a text is counted (a € twice); past it, it is refused by its length alone.
    assert.throws(() => prepare({ text: '€'.repeat(1224) }), /^text is 2448 characters;/);
    assert.throws(
      () => prepare({ text: '€'.repeat(1225) }),
      /^text is 1225 characters;/,
      'uncounted: 1225 units, not 2450',
    );
    assert.throws(() => prepare({ text: '' }), /^text is required/, 'an empty text is no length error');
  });

  it('every character of the basic alphabet counts once, every one of the extension table twice (once in UCS-2); none needs Unicode', () => {
    for (const c of BASIC) {
      assert.equal(measureText(c, false).characters, 1, JSON.stringify(c));
      assert.equal(needsUnicode(c), false, JSON.stringify(c));
    }
    for (const c of EXTENSION) {
      assert.equal(measureText(c, false).characters, 2, JSON.stringify(c));
      assert.equal(measureText(c, true).characters, 1, JSON.stringify(c));
      assert.equal(needsUnicode(c), false, JSON.stringify(c));
    }
    assert.equal(BASIC.length, 127, 'the whole basic table but its escape (0x1B)');
    for (const c of ['č', 'ж', '`', '\t', '😀', '\u0301']) assert.equal(needsUnicode(c), true, JSON.stringify(c));
    assert.equal(needsUnicode(''), false);
    assert.equal(needsUnicode(`${BASIC}${EXTENSION}č`), true, 'the last character decides too');
  });

  it('a measure says its encoding, its limit and which characters need Unicode (each once, a surrogate pair as one)', () => {
    assert.deepEqual(measureText('Door open', false), {
      characters: 9,
      encoding: 'GSM-7',
      parts: 1,
      limit: 612,
      nonGsm: [],
    });
    assert.deepEqual(measureText('Dveře 😀 otevřeny 😀', true), {
      characters: 20,
      encoding: 'UCS-2',
      parts: 1,
      limit: 268,
      nonGsm: ['ř', '😀'],
    });
    // Unicode off: the gateway replaces each character it cannot encode with one, a pair included.
    assert.deepEqual(measureText('ř😀', false), {
      characters: 2,
      encoding: 'GSM-7',
      parts: 1,
      limit: 612,
      nonGsm: ['ř', '😀'],
    });
    assert.deepEqual(measureText('', false), { characters: 0, encoding: 'GSM-7', parts: 0, limit: 612, nonGsm: [] });
  });

  it('a lone high surrogate at the end is one character, not a pair with nothing', () => {
    assert.deepEqual(measureText('a\ud83d', true), {
      characters: 2,
      encoding: 'UCS-2',
      parts: 1,
      limit: 268,
      nonGsm: ['\ud83d'],
    });
    // A low surrogate alone is not the start of a pair.
    assert.equal(measureText('\ude00a', true).characters, 2);
  });

  it('an escape or a surrogate pair never straddles two parts', () => {
    // 152 septets, then € (2) does not fit the 153 of the first part: it opens the second.
    assert.equal(measureText(`${'a'.repeat(152)}€${'a'.repeat(10)}`, false).parts, 2);
    assert.equal(measureText(`${'a'.repeat(152)}€${'a'.repeat(153)}`, false).parts, 3);
    assert.equal(measureText(`${'a'.repeat(153)}€${'a'.repeat(151)}`, false).parts, 2, '153 + 153: two full parts');
    assert.equal(measureText(`${'ж'.repeat(66)}😀${'ж'.repeat(10)}`, true).parts, 2);
    assert.equal(measureText(`${'ж'.repeat(66)}😀${'ж'.repeat(67)}`, true).parts, 3);
    assert.equal(measureText(`${'ж'.repeat(67)}${'ж'.repeat(67)}`, true).parts, 2, '67 + 67: two full parts');
  });

  it('unicode on or off wins over the texts; auto (or nothing) is on when any text needs it', () => {
    assert.equal(resolveUnicode('on', ['plain']), true);
    assert.equal(resolveUnicode(true, ['plain']), true);
    assert.equal(resolveUnicode('off', ['Dveře']), false);
    assert.equal(resolveUnicode(false, ['Dveře']), false);
    assert.equal(resolveUnicode('auto', ['plain', 'Dveře']), true);
    assert.equal(resolveUnicode(undefined, ['plain', 'Dveře']), true);
    assert.equal(resolveUnicode('auto', ['plain', '€ 5']), false);
    assert.equal(resolveUnicode('auto', []), false);
  });

  it('the first and the last high surrogate (U+D800, U+DBFF) each start a pair: one character of two units, not two lone halves', () => {
    for (const pair of ['\uD800\uDC00', '\uDBFF\uDFFF']) {
      const measure = measureText(`a${pair}`, true);
      assert.deepEqual(measure.nonGsm, [pair]);
      assert.equal(measure.characters, 3);
    }
    assert.deepEqual(
      measureText('a\uD7FF\uDC00', true).nonGsm,
      ['\uD7FF', '\uDC00'],
      'below the range: two characters of their own',
    );
  });

  it('a text over the limit is refused with a sentence that names the field, its count and both limits', () => {
    assert.throws(() => prepare({ channel: { sms: { text: 'a'.repeat(700) } } }), {
      message: 'channel.sms.text is 700 characters; the limit is 612 (268 with Unicode)',
    });
  });
});

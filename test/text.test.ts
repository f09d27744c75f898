/**
 * Counting a text two ways that share no code: the client's one-pass GSM 03.38 / UCS-2 counter
 * (gateway/text.ts) and the simulator's, built on a segment library (simulator/counting.ts). On
 * random texts from an alphabet that mixes GSM-7, its escape characters, other Latin letters,
 * Cyrillic, emoji and combining marks, they must agree on characters, parts and whether Unicode
 * is needed: a counting mistake in either shows up as a disagreement.
 */
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { measureText, needsUnicode } from '../gateway';
import { countText } from '../simulator/counting';

const ALPHABET = [
  'a',
  'Z',
  '0',
  ' ',
  '\n',
  '@',
  '£',
  '¥',
  'è',
  'Ä',
  'ß',
  'Δ',
  '€',
  '[',
  ']',
  '^',
  '{',
  '}',
  '\\',
  '|',
  '~',
  'č',
  'ř',
  'ž',
  'ж',
  'é',
  'ç',
  '😀',
  '🎉',
  '\u0301',
  '\u200d',
];
const GSM_ONLY = ALPHABET.slice(0, 21);
const text = fc.oneof(
  fc.array(fc.constantFrom(...GSM_ONLY), { maxLength: 700, size: 'max' }).map((a) => a.join('')),
  fc.array(fc.constantFrom(...ALPHABET), { maxLength: 320, size: 'max' }).map((a) => a.join('')),
);

describe('text counting: the client and the simulator agree', () => {
  it('on 600 random texts: characters and parts with Unicode on and off, and whether Unicode is needed', function () {
    // The simulator's counting (sms-segments-calculator) takes time growing with the square of a text's
    // length: about 9 s of CPU here, which a loaded machine stretched past the default 20 s.
    this.timeout(90_000);
    const samples = fc.sample(text, { numRuns: 600, seed: 20261122 });
    const disagreements: string[] = [];
    for (const t of samples) {
      for (const unicode of [false, true]) {
        const client = measureText(t, unicode);
        const simulator = countText(t, unicode);
        if (client.characters !== simulator.characters || client.parts !== simulator.parts) {
          disagreements.push(
            `${JSON.stringify(t).slice(0, 60)} unicode ${unicode}: client ${client.characters}/${client.parts}, simulator ${simulator.characters}/${simulator.parts}`,
          );
        }
      }
      if (needsUnicode(t) !== countText(t, 'auto').unicode)
        disagreements.push(`${JSON.stringify(t).slice(0, 60)}: needs Unicode?`);
    }
    assert.deepEqual(disagreements.slice(0, 10), [], `${disagreements.length} disagreements`);
    // The samples reach past one part and past the limits, in both encodings.
    assert.ok(samples.some((t) => measureText(t, false).parts >= 4 && !needsUnicode(t)));
    assert.ok(samples.some((t) => measureText(t, true).parts >= 4 && needsUnicode(t)));
  });

  it('on the boundaries: 160/161 and 153 per part in GSM-7, 70/71 and 67 per part in UCS-2, escapes counting twice', () => {
    const cases: [string, boolean, number, number][] = [
      ['a'.repeat(160), false, 160, 1],
      ['a'.repeat(161), false, 161, 2],
      ['a'.repeat(306), false, 306, 2],
      ['a'.repeat(307), false, 307, 3],
      ['€'.repeat(80), false, 160, 1],
      ['€'.repeat(81), false, 162, 2],
      ['ж'.repeat(70), true, 70, 1],
      ['ж'.repeat(71), true, 71, 2],
      ['😀'.repeat(35), true, 70, 1],
      ['😀'.repeat(36), true, 72, 2],
    ];
    for (const [t, unicode, characters, parts] of cases) {
      assert.deepEqual(
        [measureText(t, unicode).characters, measureText(t, unicode).parts],
        [characters, parts],
        `client: ${t.slice(0, 3)}×${t.length}`,
      );
      assert.deepEqual(
        [countText(t, unicode).characters, countText(t, unicode).parts],
        [characters, parts],
        `simulator: ${t.slice(0, 3)}×${t.length}`,
      );
    }
  });
});

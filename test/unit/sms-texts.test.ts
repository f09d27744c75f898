/**
 * The texts the package itself puts into an SMS (the storm notice, the escalation's reply hint and
 * step) are GSM 03.38 in every language: one character outside it makes the whole SMS Unicode, 70
 * characters a part instead of 160, and the gateway charges each part. A Czech hint with its
 * diacritics doubled the price of a short alarm; Czech SMS are written without them for that reason.
 */
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { needsUnicode } from '../../gateway/text';

const LOCALES = join(__dirname, '..', '..', '..', 'locales');

/** Each catalog's texts that go into an SMS: file, then the key paths (a plural's every form). */
const SMS_TEXTS: [string, RegExp][] = [
  ['shared.json', /^storm\.notice(_[a-z]+)?$/],
  ['bulkgate-escalation.json', /^bulkgate-escalation\.sms\.(hint|step)$/],
];

function smsTexts(lang: string): Map<string, string> {
  const found = new Map<string, string>();
  for (const [file, keys] of SMS_TEXTS) {
    const walk = (value: unknown, path: string) => {
      if (typeof value === 'string') {
        if (keys.test(path)) found.set(`${file} ${path}`, value);
      } else if (value && typeof value === 'object')
        for (const [k, v] of Object.entries(value)) walk(v, path ? `${path}.${k}` : k);
    };
    walk(JSON.parse(readFileSync(join(LOCALES, lang, file), 'utf8')), '');
  }
  return found;
}

describe('the texts the package puts into an SMS', () => {
  const langs = readdirSync(LOCALES, { withFileTypes: true })
    .filter((entry) => entry.isDirectory())
    .map((entry) => entry.name);

  it('are found in every language (the storm notice, the reply hint and the step)', () => {
    assert.deepEqual(langs.sort(), ['cs', 'de', 'en-US']);
    for (const lang of langs) {
      const keys = [...smsTexts(lang).keys()].join('\n');
      for (const wanted of ['storm.notice_other', 'sms.hint', 'sms.step'])
        assert.ok(keys.includes(wanted), `${lang}: ${wanted}`);
    }
  });

  for (const lang of ['cs', 'de', 'en-US'])
    it(`${lang}: each is GSM 03.38, so a GSM-7 alarm stays GSM-7 (160 characters a part, not 70)`, () => {
      const unicode = [...smsTexts(lang)].filter(([, text]) => needsUnicode(text));
      assert.deepEqual(unicode, [], 'texts outside GSM 03.38');
    });

  it('the check finds a character outside GSM 03.38 (a Czech one), and passes German umlauts', () => {
    assert.equal(needsUnicode('Pro potvrzení odpovězte 12.'), true);
    assert.equal(needsUnicode('Zum Quittieren zurückgehalten, Größe'), false);
  });
});

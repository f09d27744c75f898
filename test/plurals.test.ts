/**
 * Counts in the language's plural forms: every catalog string with a count has exactly the forms
 * its language has (i18next's `_one`, `_few`, `_many`, `_other` keys, by Intl.PluralRules), and a
 * Node-RED started in Czech and in German (its `lang` from LANG) shows the right form at runtime:
 * an events node's status after 1, 2 and 5 reports. The forms as each Node-RED's own i18next reads
 * them (3.1 and 4.0 another format, which the build derives): counts.test.ts, in the version matrix.
 */
import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { appendLinesNode, nodeRedProcess } from './support/node-red-process';
import { until } from './support/wait';

const LOCALES = join(__dirname, '..', '..', 'locales');
const SECRET = 'plural-secret-51';

describe("counts in the language's plural forms", function () {
  this.timeout(120_000);

  it("every catalog string with a count has its language's forms, and only those", () => {
    const problems: string[] = [];
    for (const lang of readdirSync(LOCALES, { withFileTypes: true })
      .filter((e) => e.isDirectory())
      .map((e) => e.name)) {
      const forms = new Intl.PluralRules(lang)
        .resolvedOptions()
        .pluralCategories.filter((f) => f !== 'zero' && f !== 'two')
        .sort();
      for (const file of readdirSync(join(LOCALES, lang)).filter((f) => f.endsWith('.json'))) {
        const groups = new Map<string, string[]>();
        const walk = (value: unknown, path: string) => {
          if (typeof value === 'string') {
            if (!value.includes('__count__')) return;
            const plural = /^(.*)_(zero|one|two|few|many|other)$/.exec(path);
            if (!plural) return void problems.push(`${lang}/${file} ${path}: a count without plural forms`);
            groups.set(plural[1] as string, [...(groups.get(plural[1] as string) ?? []), plural[2] as string]);
          } else if (value && typeof value === 'object')
            for (const [k, v] of Object.entries(value)) walk(v, path ? `${path}.${k}` : k);
        };
        walk(JSON.parse(readFileSync(join(LOCALES, lang, file), 'utf8')), '');
        for (const [key, found] of groups)
          if (found.sort().join() !== forms.join())
            problems.push(`${lang}/${file} ${key}: ${found.join()} (${lang} has ${forms.join()})`);
      }
    }
    assert.deepEqual(problems, []);
  });

  for (const [locale, expected] of [
    ['cs_CZ.UTF-8', { 1: '1 událost', 2: '2 události', 5: '5 událostí' }],
    ['de_DE.UTF-8', { 1: '1 Ereignis', 2: '2 Ereignisse' }],
  ] as const) {
    it(`Node-RED started with LANG=${locale}: an events node's status after ${Object.keys(expected).join(', ')} reports`, async () => {
      const copy = nodeRedProcess('bulkgate-plurals-');
      const statuses = join(copy.userDir, 'statuses.txt');
      copy.flows(
        [
          { id: 'tab', type: 'tab', label: 'plurals' },
          { id: 'e', z: 'tab', type: 'bulkgate-events', path: '/hook', wires: [[], [], []] },
          { id: 's', z: 'tab', type: 'status', scope: ['e'], wires: [['f']] },
          {
            id: 'f',
            z: 'tab',
            type: 'function',
            func: 'msg.payload = msg.status.text; return msg;',
            outputs: 1,
            wires: [['w']],
          },
          appendLinesNode('w', statuses),
        ],
        { e: { secret: SECRET } },
      );
      try {
        const editor = await copy.start({ env: { LANG: locale, LC_ALL: locale } });
        let sent = 0;
        for (const [count, text] of Object.entries(expected)) {
          while (sent < Number(count)) {
            const res = await fetch(`${editor}/hook?token=${SECRET}&status=1&smsID=plural-${sent++}`);
            assert.equal(res.status, 200);
          }
          const seen = () => (existsSync(statuses) ? readFileSync(statuses, 'utf8').split('\n') : []);
          await until(`"${text}"`, () => seen().includes(text)).catch(() => undefined);
          assert.ok(seen().includes(text), `"${text}" in ${JSON.stringify(seen())}\n${copy.output()}`);
        }
      } finally {
        await copy.remove();
      }
    });
  }
});

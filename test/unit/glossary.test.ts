/**
 * The glossary's banned forms (unit): the table "Banned forms" of locales/GLOSSARY.md, the one list,
 * is read here, and no catalog or help file of a language holds a form banned for it (a whole word,
 * any case; `*` for the word's other endings). A form planted into a real catalog is found, so the
 * check cannot pass by matching nothing.
 */
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

const LOCALES = join(__dirname, '..', '..', '..', 'locales');

interface Banned {
  lang: string;
  form: string;
  instead: string;
  pattern: RegExp;
}

/** The rows of the glossary's "Banned forms" table, one entry per form. */
function bannedForms(): Banned[] {
  const glossary = readFileSync(join(LOCALES, 'GLOSSARY.md'), 'utf8');
  const section = glossary.split(/^## Banned forms$/m)[1];
  assert.ok(section, 'GLOSSARY.md has a section "## Banned forms"');
  const found: Banned[] = [];
  for (const line of section.split('\n')) {
    const cells = /^\|\s*([a-z]{2}(?:-[A-Z]{2})?)\s*\|([^|]+)\|([^|]*)\|\s*$/.exec(line);
    if (!cells || cells[1] === 'lang') continue;
    for (const form of (cells[2] as string).split(';').map((f) => f.trim())) {
      if (!form) continue;
      const body = form
        .split('*')
        .map((part) => part.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'))
        .join('\\p{L}*');
      // A whole word: no letter or digit just before or after it ("Vorwahl" is not in "Ländervorwahl").
      found.push({
        lang: cells[1] as string,
        form,
        instead: (cells[3] as string).trim(),
        pattern: new RegExp(`(?<![\\p{L}\\p{N}])${body}(?![\\p{L}\\p{N}])`, 'iu'),
      });
    }
  }
  return found;
}

/** Each catalog and help file of a language, with its text. */
function files(lang: string): { name: string; text: string }[] {
  return readdirSync(join(LOCALES, lang))
    .filter((f) => f.endsWith('.json') || f.endsWith('.html'))
    .map((name) => ({ name, text: readFileSync(join(LOCALES, lang, name), 'utf8') }));
}

/** "file: line: banned form (use instead)" for every banned form in a language's texts. */
function violations(lang: string, texts: { name: string; text: string }[], banned: Banned[]): string[] {
  const found: string[] = [];
  for (const { name, text } of texts)
    text.split('\n').forEach((line, i) => {
      for (const b of banned)
        if (b.lang === lang) {
          const hit = b.pattern.exec(line);
          if (hit) found.push(`${lang}/${name}:${i + 1}: "${hit[0]}" (${b.form}; use ${b.instead})`);
        }
    });
  return found;
}

describe("the glossary's banned forms", () => {
  const banned = bannedForms();
  const langs = [...new Set(banned.map((b) => b.lang))];

  it('the glossary bans forms in German and in Czech, each language a folder of catalogs', () => {
    assert.deepEqual(langs.sort(), ['cs', 'de']);
    for (const lang of langs) assert.ok(files(lang).length > 0, `locales/${lang} has catalogs`);
  });

  for (const lang of ['de', 'cs'])
    it(`no catalog or help in ${lang} holds a banned form`, () => {
      assert.deepEqual(violations(lang, files(lang), banned), []);
    });

  it('every banned form planted into a real catalog is found (negative control), and only in its own language', () => {
    for (const b of banned) {
      const planted = b.form.replace(/\*/g, 'ě');
      const [first] = files(b.lang);
      const text = `${first?.text ?? ''}\n"planted": "vor ${planted} nach"`;
      const line = text.split('\n').length;
      assert.ok(
        violations(b.lang, [{ name: 'planted.json', text }], [b]).some((v) =>
          v.startsWith(`${b.lang}/planted.json:${line}:`),
        ),
        `${b.lang}: ${b.form} planted`,
      );
      assert.deepEqual(
        violations('en-US', [{ name: 'planted.json', text }], [b]),
        [],
        `${b.form} is not banned in en-US`,
      );
    }
    // A whole word only: a longer word that holds a banned one is not a hit.
    const vorwahl = banned.find((b) => b.form === 'Vorwahl');
    assert.ok(vorwahl && !vorwahl.pattern.test('Nummern ohne Ländervorwahl'));
  });
});

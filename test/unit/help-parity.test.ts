/**
 * The help says the same things in en-US, de and cs (unit): each node's help has the same blocks in
 * the same order (paragraphs, properties and their descriptions, ports, headings) in every language,
 * and each block names the same code (`msg.topic`, `store_unavailable`, ...), so a sentence one
 * language adds or leaves out shows as a block or a name the others lack.
 */
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

const LOCALES = join(__dirname, '..', '..', '..', 'locales');

/** A block's kind and the code it names; placeholders a language translates (`<account id>`, `${ENV_VAR}`) left out. */
type Block = string;

/** Each help (by node type) of a help file: its blocks in order. */
function helps(text: string): Map<string, Block[]> {
  const out = new Map<string, Block[]>();
  for (const [, name, body] of text.matchAll(/data-help-name="([^"]+)">([\s\S]*?)<\/script>/g)) {
    const blocks: Block[] = [];
    for (const [, tag, inner] of (body as string).matchAll(
      /<(p|dt|dd|li|h3)\b[^>]*>([\s\S]*?)(?=<\/?(?:p|dt|dd|li|h3|dl|ol|ul)\b|$)/g,
    )) {
      const codes = [...(inner as string).matchAll(/<code>([\s\S]*?)<\/code>/g)]
        .map((m) => m[1] as string)
        .filter((code) => !/&lt;|\$\{/.test(code));
      blocks.push(`${tag}: ${[...new Set(codes)].sort().join(' ')}`);
    }
    out.set(name as string, blocks);
  }
  return out;
}

/** "file help block: what differs" for each difference of a language's help from en-US's. */
function differences(file: string, english: string, other: string): string[] {
  const found: string[] = [];
  const theirs = helps(other);
  for (const [name, blocks] of helps(english)) {
    const own = theirs.get(name);
    if (!own) {
      found.push(`${file} ${name}: missing`);
      continue;
    }
    if (own.length !== blocks.length) found.push(`${file} ${name}: ${own.length} blocks, en-US ${blocks.length}`);
    blocks.forEach((block, i) => {
      if (own[i] !== block) found.push(`${file} ${name} block ${i + 1}: "${own[i]}", en-US "${block}"`);
    });
  }
  return found;
}

const helpFiles = readdirSync(join(LOCALES, 'en-US')).filter((f) => f.endsWith('.html'));
const read = (lang: string, file: string) => readFileSync(join(LOCALES, lang, file), 'utf8');

describe('the help says the same things in every language', () => {
  for (const lang of ['de', 'cs'])
    it(`${lang}: each help has en-US's blocks, in its order, naming the same code`, () => {
      assert.ok(helpFiles.length >= 7);
      assert.deepEqual(
        helpFiles.flatMap((file) => differences(`${lang}/${file}`, read('en-US', file), read(lang, file))),
        [],
      );
    });

  it('a paragraph left out, or one naming other code, is found (negative control)', () => {
    const english = read('en-US', 'bulkgate-escalation.html');
    const paragraphs = [...english.matchAll(/<p>[\s\S]*?<\/p>\n/g)].map((m) => m[0]);
    const last = paragraphs.at(-1) as string;
    assert.notDeepEqual(differences('x', english, english.replace(last, '')), []);
    assert.notDeepEqual(
      differences('x', english, english.replace('<code>store_unavailable</code>', '<code>store_down</code>')),
      [],
    );
    assert.deepEqual(differences('x', english, english), []);
  });
});

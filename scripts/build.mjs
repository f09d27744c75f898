// One build: compile the TypeScript (runtime, simulator, tests), join the nodes' HTML (with the
// editor code bundled in), catalogs and help into the package's one node set, and put them and
// the icons beside the compiled nodes, where Node-RED looks.
import { execFileSync } from 'node:child_process';
import { createRequire } from 'node:module';
import { createHash } from 'node:crypto';
import { cpSync, existsSync, mkdirSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const out = join(root, 'dist');

// One build per change of the sources: every script that needs dist/ (test, start, bench, pack)
// builds first, and CI runs several of them in a row; they build once. A stamp holds the digest of
// the sources the last build read; a file in dist/ changed since (a hand edit) builds again too.
const stampPath = join(out, '.build-stamp');
const digest = sourceDigest();
if (!process.argv.includes('--force') && upToDate(digest)) {
  console.error('dist/ is up to date with the sources');
  process.exit(0);
}

rmSync(out, { recursive: true, force: true });
// TypeScript 7 (the native compiler, about a second) builds; TypeScript 5.9, the `typescript`
// package, is there for the linter's type information and keeps the code valid for 5.9 too.
// Found as Node finds a package (from here up), not under root: a mutation-testing sandbox has
// no node_modules of its own while it builds.
const tsc = join(dirname(createRequire(import.meta.url).resolve('typescript7/package.json')), 'bin', 'tsc');
execFileSync(tsc, ['-p', root], { stdio: 'inherit', cwd: root });
// The editor code is bundled by esbuild below, which does not type-check: tsc does it here.
execFileSync(tsc, ['-p', join(root, 'nodes', 'editor')], { stdio: 'inherit', cwd: root });
const { DEFINITIONS, NODE_SET, TOP_SECTIONS, registerTypeSource } = await import(join(out, 'nodes', 'definitions.js'));
// The wire-body validators, precompiled: ajv's standalone code with its helpers in one module.
const { validatorsSource } = await import(join(out, 'scripts', 'validators.js'));
const { SCHEMAS, ENDPOINT_SCHEMAS } = await import(join(out, 'gateway', 'schemas.js'));
// Two modules: the send and credit bodies', and the other endpoints' (a flow that only sends never loads those).
const endpointKeys = Object.keys(ENDPOINT_SCHEMAS);
for (const [file, keys] of [
  ['validators.js', Object.keys(SCHEMAS).filter((key) => !endpointKeys.includes(key))],
  ['endpoint-validators.js', endpointKeys],
]) {
  await build({
    stdin: { contents: validatorsSource(keys), resolveDir: root, sourcefile: file, loader: 'js' },
    bundle: true,
    outfile: join(out, 'gateway', file),
    format: 'cjs',
    platform: 'node',
    target: 'node20',
    minify: true,
    legalComments: 'none',
  });
}
chmodExecutable(join(out, 'simulator', 'cli.js'));
// The shared store's Lua scripts, read beside the compiled module that runs them.
cpSync(join(root, 'nodes', 'account', 'lua'), join(out, 'nodes', 'account', 'lua'), { recursive: true });

// The node set's entry, bundled: what Node-RED requires at start (the nine registrations, the
// definitions, the editor's admin endpoints) in one file, not a dozen to find and read (Node-RED's start is measured by the benchmark).
// A require() inside a function (a node's code, the gateway client) loads when a node first needs
// it, so it stays out of the bundle, pointed at the compiled module from the bundle's place.
await build({
  entryPoints: [join(root, 'nodes', `${NODE_SET}.ts`)],
  bundle: true,
  outfile: join(out, 'nodes', `${NODE_SET}.js`),
  format: 'cjs',
  platform: 'node',
  target: 'node20',
  legalComments: 'none',
  plugins: [
    {
      name: 'lazy-requires',
      setup(bundle) {
        bundle.onResolve({ filter: /^\./ }, ({ kind, path: request, resolveDir }) => {
          if (kind !== 'require-call') return undefined;
          const compiled = join(out, relative(root, join(resolveDir, request)));
          const path = relative(join(out, 'nodes'), compiled);
          return { path: path.startsWith('..') ? path : `./${path}`, external: true };
        });
      },
    },
  ],
});

const nodesOut = join(out, 'nodes');
mkdirSync(nodesOut, { recursive: true });
// Each node's sources (nodes/<name>.html, locales/<lang>/<name>.json and .html) are joined into the
// package's one node set (NODE_SET): the account's first, as it carries the editor code the others use.
const sources = readdirSync(join(root, 'nodes'))
  .filter((f) => f.endsWith('.html'))
  .map((f) => f.replace(/\.html$/, ''))
  .sort((a, b) => Number(b === 'bulkgate-account') - Number(a === 'bulkgate-account') || a.localeCompare(b));
const setHtml = [];
for (const name of sources) {
  let html = readFileSync(join(root, 'nodes', `${name}.html`), 'utf8')
    .replace(/<!-- include:([\w.-]+) -->/g, (_, partial) =>
      readFileSync(join(root, 'nodes', 'editor', partial), 'utf8'),
    )
    // The send form is shared; its texts are in each send node's own section of the catalog.
    .replaceAll('@ns@', `node-red-contrib-bulkgate/${NODE_SET}:${name}`)
    // The sections at the catalog's top (TOP_SECTIONS): the node set's namespace alone.
    .replaceAll('@set@', `node-red-contrib-bulkgate/${NODE_SET}`)
    // Each node's registerType block, from its typed definition: a literal call in the HTML,
    // where Node-RED (and the Flow Library scorecard) read it.
    // A source holding several types names its type in each marker (else the source's own).
    .replace(
      /<!-- register-type:(?:(bulkgate-[\w-]+))?[^>]*-->/g,
      (_, type) => `<script type="text/javascript">\n  ${registerTypeSource(DEFINITIONS[type ?? name])}\n</script>`,
    );
  const entry = join(root, 'nodes', 'editor', `${name}.ts`);
  if (existsSync(entry)) {
    const bundle = await build({
      entryPoints: [entry],
      bundle: true,
      write: false,
      format: 'iife',
      target: 'es2020',
      platform: 'browser',
      minify: true,
      legalComments: 'none',
    });
    const code = bundle.outputFiles[0].text.replace(/<\/script/gi, '<\\/script');
    html = html.replace('<!-- editor-bundle -->', `<script type="text/javascript">${code}</script>`);
  }
  setHtml.push(html);
}
writeFileSync(join(nodesOut, `${NODE_SET}.html`), setHtml.join('\n'));
// The set's catalog per language: each node's own catalog (its texts under its type), with the
// shared sections its definition names copied in; and the nodes' help joined into one file.
// Each folder is a language (GLOSSARY.md beside them is for translators).
for (const lang of readdirSync(join(root, 'locales'), { withFileTypes: true })
  .filter((e) => e.isDirectory())
  .map((e) => e.name)) {
  const dir = join(root, 'locales', lang);
  const shared = JSON.parse(readFileSync(join(dir, 'shared.json'), 'utf8'));
  const catalog = {};
  for (const name of sources) Object.assign(catalog, JSON.parse(readFileSync(join(dir, `${name}.json`), 'utf8')));
  for (const def of Object.values(DEFINITIONS)) {
    for (const section of def.shared ?? []) {
      if (!TOP_SECTIONS.has(section)) {
        // A node's own entries of a section (its statuses) are kept beside the shared ones.
        catalog[def.type][section] = { ...shared[section], ...catalog[def.type][section] };
      } else if (catalog[def.type][section]) {
        throw new Error(
          `locales/${lang}/${def.type}.json: "${section}" is read from the catalog's top (TOP_SECTIONS in nodes/definitions.ts); a node has no entries of its own there`,
        );
      }
    }
  }
  for (const section of TOP_SECTIONS) catalog[section] = shared[section];
  addV3Plurals(catalog, lang);
  const outDir = join(nodesOut, 'locales', lang);
  mkdirSync(outDir, { recursive: true });
  // Without indentation: Node-RED reads and parses the catalog at every start (a fifth less to read).
  writeFileSync(join(outDir, `${NODE_SET}.json`), `${JSON.stringify(catalog)}\n`);
  writeFileSync(
    join(outDir, `${NODE_SET}.html`),
    sources.map((name) => readFileSync(join(dir, `${name}.html`), 'utf8')).join('\n'),
  );
}
cpSync(join(root, 'icons'), join(nodesOut, 'icons'), { recursive: true });
writeFileSync(stampPath, digest);
console.error('built dist/');

/**
 * Node-RED 3.1 and 4.0 run i18next 21 with `compatibilityJSON: 'v3'` (in the runtime and in the
 * editor): a count picks `key` or `key_plural` in a language of two forms, `key_0`, `key_1`, ... in
 * one of more, numbered as i18next 21's own rules number them; the `_one`/`_few`/`_many`/`_other`
 * keys of the catalogs (i18next's v4 format, what 4.1 and later read) are raw keys there. The
 * catalogs stay written in the v4 format; each count text gets its v3 keys from it, here, beside
 * the v4 ones (4.1 and later turn `_plural` into `_other` only where `_other` is missing, and ignore
 * the rest). Per language: the sample numbers of i18next 21's rule for it (its `sets`, `nr`), one
 * per form in its order; a sample's form in the v4 catalog is the one Intl.PluralRules gives it.
 */
function addV3Plurals(catalog, lang) {
  const I18NEXT_V3_NUMBERS = { en: [1, 2], de: [1, 2], cs: [1, 2, 5] };
  const numbers = I18NEXT_V3_NUMBERS[lang.split('-')[0]];
  if (!numbers)
    throw new Error(
      `locales/${lang}: add the language's plural numbers of i18next 21 to I18NEXT_V3_NUMBERS in scripts/build.mjs`,
    );
  const rules = new Intl.PluralRules(lang);
  // A language of two forms, the first for 1, gets `key` and `key_plural` (i18next's simplifyPluralSuffix).
  const suffixes = numbers.length === 2 && numbers[0] === 1 ? ['', '_plural'] : numbers.map((_, index) => `_${index}`);
  const walk = (section, path) => {
    for (const [key, value] of Object.entries(section)) {
      if (value && typeof value === 'object') walk(value, `${path}${key}.`);
      const base = /^(.+)_other$/.exec(key)?.[1];
      if (base === undefined || typeof value !== 'string') continue;
      numbers.forEach((sample, index) => {
        const name = `${base}${suffixes[index]}`;
        const text = section[`${base}_${rules.select(sample)}`];
        if (typeof text !== 'string')
          throw new Error(`locales/${lang}: ${path}${base}_${rules.select(sample)} is missing (the form of ${sample})`);
        if (name in section)
          throw new Error(`locales/${lang}: ${path}${name} is taken, it is the i18next 21 form of ${path}${base}`);
        section[name] = text;
      });
    }
  };
  walk(catalog, '');
}

/** The digest of what the build reads: the sources, catalogs, icons, examples and the package's settings. */
function sourceDigest() {
  const hash = createHash('sha256');
  const inputs = [
    'nodes',
    'gateway',
    'simulator',
    'test',
    'bench',
    'scripts',
    'locales',
    'icons',
    'examples',
    'tsconfig.json',
    'package.json',
    'package-lock.json',
  ];
  for (const file of inputs.flatMap((input) => filesUnder(join(root, input))).sort()) {
    hash.update(relative(root, file)).update('\0').update(readFileSync(file)).update('\0');
  }
  return hash.digest('hex');
}

/** Whether dist/ was built from these sources and nothing in it changed since. */
function upToDate(digest) {
  if (!existsSync(stampPath) || readFileSync(stampPath, 'utf8') !== digest) return false;
  const builtAt = statSync(stampPath).mtimeMs;
  return filesUnder(out).every((file) => statSync(file).mtimeMs <= builtAt);
}

function filesUnder(path) {
  if (!existsSync(path)) return [];
  if (!statSync(path).isDirectory()) return [path];
  return readdirSync(path, { recursive: true, withFileTypes: true })
    .filter((entry) => entry.isFile())
    .map((entry) => join(entry.parentPath ?? entry.path, entry.name));
}

function chmodExecutable(path) {
  if (existsSync(path)) execFileSync('chmod', ['+x', path]);
}

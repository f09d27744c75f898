// One build: compile the TypeScript (runtime, simulator, tests), bundle each node's editor code
// into its .html, and put locales/ and icons/ beside the compiled nodes, where Node-RED looks.
import { execFileSync } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const out = join(root, 'dist');

rmSync(out, { recursive: true, force: true });
// TypeScript 7 (the native compiler, about a second) builds; TypeScript 5.9, the `typescript`
// package, is there for the linter's type information and keeps the code valid for 5.9 too.
const tsc = join(root, 'node_modules', 'typescript7', 'bin', 'tsc');
execFileSync(tsc, ['-p', root], { stdio: 'inherit', cwd: root });
// The editor code is bundled by esbuild below, which does not type-check: tsc does it here.
execFileSync(tsc, ['-p', join(root, 'nodes', 'editor')], { stdio: 'inherit', cwd: root });
const { DEFINITIONS, registerTypeSource, setOf } = await import(join(out, 'nodes', 'definitions.js'));
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

const nodesOut = join(out, 'nodes');
mkdirSync(nodesOut, { recursive: true });
for (const file of readdirSync(join(root, 'nodes')).filter((f) => f.endsWith('.html'))) {
  const name = file.replace(/\.html$/, '');
  let html = readFileSync(join(root, 'nodes', file), 'utf8')
    .replace(/<!-- include:([\w.-]+) -->/g, (_, partial) => readFileSync(join(root, 'nodes', 'editor', partial), 'utf8'))
    // The send form is shared; its texts are in each send node's own catalog.
    .replaceAll('@ns@', `node-red-contrib-bulkgate/${name}:${name}`)
    // Each node's registerType block, from its typed definition: a literal call in the HTML,
    // where Node-RED (and the Flow Library scorecard) read it.
    // A node set's file holds several types: each marker names its type (else the file's own).
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
  writeFileSync(join(nodesOut, file), html);
}
cpSync(join(root, 'locales'), join(nodesOut, 'locales'), { recursive: true });
// Each node's catalog gets the shared sections its definition names: a node reads its own
// catalog only (Node-RED namespaces a node's texts by its file name).
for (const lang of readdirSync(join(nodesOut, 'locales'))) {
  const dir = join(nodesOut, 'locales', lang);
  const shared = JSON.parse(readFileSync(join(dir, 'shared.json'), 'utf8'));
  for (const def of Object.values(DEFINITIONS)) {
    const file = join(dir, `${setOf(def.type)}.json`);
    const catalog = JSON.parse(readFileSync(file, 'utf8'));
    // A node's own entries of a section (its statuses) are kept beside the shared ones.
    for (const section of def.shared ?? []) catalog[def.type][section] = { ...shared[section], ...catalog[def.type][section] };
    writeFileSync(file, `${JSON.stringify(catalog, null, 2)}\n`);
  }
  rmSync(join(dir, 'shared.json'));
}
cpSync(join(root, 'icons'), join(nodesOut, 'icons'), { recursive: true });
console.log('built dist/');

function chmodExecutable(path) {
  if (existsSync(path)) execFileSync('chmod', ['+x', path]);
}

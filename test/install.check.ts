/**
 * Installed the way a user installs it: `npm pack`, then `npm install <tarball>` in a fresh
 * Node-RED user directory, a Node-RED started on it, and its admin API asked what loaded.
 * Not part of `npm test` (it installs from the registry); `npm run test:install` runs it.
 */
import assert from 'node:assert/strict';
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { NODE_SET } from '../nodes/definitions';

const ROOT = join(__dirname, '..', '..');
const TYPES = [
  'bulkgate-account',
  'bulkgate-promotional',
  'bulkgate-transactional',
  'bulkgate-balance',
  'bulkgate-events',
  'bulkgate-otp',
  'bulkgate-number-check',
  'bulkgate-blacklist',
  'bulkgate-contacts',
];

function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const server = createServer().listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

describe('installed from the packed tarball', function () {
  this.timeout(300_000);
  const work = mkdtempSync(join(tmpdir(), 'bulkgate-install-'));
  let tarball = '';
  let nodeRed: ChildProcess | undefined;
  let base = '';

  after(() => {
    nodeRed?.kill('SIGKILL');
    rmSync(work, { recursive: true, force: true });
  });

  it('npm pack ships the built package, README, LICENSE and examples, and nothing else', () => {
    const [pack] = JSON.parse(execFileSync('npm', ['pack', '--json', '--ignore-scripts', '--pack-destination', work], { cwd: ROOT, encoding: 'utf8' })) as {
      filename: string;
      size: number;
      unpackedSize: number;
      files: { path: string }[];
    }[];
    assert.ok(pack);
    tarball = join(work, pack.filename);
    const files = pack.files.map((f) => f.path);
    console.log(
      `      ${pack.filename}: ${(statSync(tarball).size / 1024).toFixed(1)} KiB packed, ${(pack.unpackedSize / 1024).toFixed(1)} KiB unpacked, ${files.length} files`,
    );
    const outside = files.filter((f) => !/^(dist\/(gateway|nodes|simulator)\/|examples\/|README\.md$|LICENSE$|package\.json$)/.test(f));
    assert.deepEqual(outside, []);
    assert.deepEqual(
      files.filter((f) => /(^|\/)test\/|\.map$|\.tgz$|node_modules|flows_cred|\.env|\.pem$|\.npmrc|screenshots|\.png$/.test(f)),
      [],
    );
    // Every type ships in the one node set's files; each icon is its type's own.
    for (const f of [
      `dist/nodes/${NODE_SET}.js`,
      `dist/nodes/${NODE_SET}.html`,
      `dist/nodes/locales/en-US/${NODE_SET}.json`,
      `dist/nodes/locales/de/${NODE_SET}.json`,
      `dist/nodes/locales/en-US/${NODE_SET}.html`,
      `dist/nodes/locales/de/${NODE_SET}.html`,
      ...TYPES.map((type) => `dist/nodes/icons/${type}.svg`),
    ]) {
      assert.ok(files.includes(f), `${f} is shipped`);
    }
  });

  it('installs into a fresh Node-RED user directory with npm install <tarball>', () => {
    const userDir = join(work, 'user');
    execFileSync('npm', ['init', '-y'], { cwd: work, stdio: 'ignore' });
    execFileSync('mkdir', ['-p', userDir]);
    execFileSync('npm', ['init', '-y'], { cwd: userDir, stdio: 'ignore' });
    execFileSync('npm', ['install', '--no-audit', '--no-fund', tarball], { cwd: userDir, stdio: 'inherit' });
  });

  it('Node-RED loads all nine types with no error', async () => {
    const port = await freePort();
    base = `http://127.0.0.1:${port}`;
    nodeRed = spawn(process.execPath, [require.resolve('node-red/red.js'), '--userDir', join(work, 'user'), '--port', String(port)], {
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`Node-RED did not start:\n${out}`)), 60_000);
      const onData = (chunk: Buffer) => {
        out += chunk.toString();
        if (/Server now running|Started flows/.test(out)) {
          clearTimeout(timer);
          resolve();
        }
      };
      nodeRed?.stdout?.on('data', onData);
      nodeRed?.stderr?.on('data', onData);
      nodeRed?.once('exit', (code) => reject(new Error(`Node-RED exited with ${code}:\n${out}`)));
    });
    const sets = (await (await fetch(`${base}/nodes`, { headers: { accept: 'application/json' } })).json()) as {
      id: string;
      module: string;
      types: string[];
      enabled: boolean;
      err?: string;
      version: string;
    }[];
    const ours = sets.filter((s) => s.module === 'node-red-contrib-bulkgate');
    assert.deepEqual(ours.flatMap((s) => s.types).sort(), [...TYPES].sort());
    // One node set: Node-RED's start does its per-set work once.
    assert.deepEqual(
      ours.map((s) => s.id),
      [`node-red-contrib-bulkgate/${NODE_SET}`],
    );
    for (const set of ours) {
      assert.equal(set.err, undefined, `${set.id}: ${set.err}`);
      assert.equal(set.enabled, true);
    }
    console.log(`      loaded ${ours.length} node sets of node-red-contrib-bulkgate ${ours[0]?.version}`);
  });

  it("the editor gets each node's .html, catalogs in every language (en-US, de, cs), help and icons", async () => {
    const html = await (await fetch(`${base}/nodes`, { headers: { accept: 'text/html' } })).text();
    for (const type of TYPES) {
      assert.match(html, new RegExp(`RED\\.nodes\\.registerType\\('${type}'`));
      assert.match(html, new RegExp(`data-template-name="${type}"`));
    }
    for (const lng of ['en-US', 'de', 'cs']) {
      const catalog = (await (await fetch(`${base}/locales/node-red-contrib-bulkgate/${NODE_SET}?lng=${lng}`)).json()) as Record<
        string,
        { send?: { label: { text: string } }; brief?: Record<string, string> }
      >;
      for (const type of TYPES) assert.ok(catalog[type], `${type} catalog in ${lng}`);
      // Each node's texts are under its type: the send form's in the send nodes', statuses in every node's.
      for (const type of ['bulkgate-promotional', 'bulkgate-transactional']) assert.equal(catalog[type]?.send?.label.text, 'Text');
      assert.equal(catalog['bulkgate-balance']?.brief?.['no-account'], ({ de: 'kein Konto', cs: 'chybí účet' } as Record<string, string>)[lng] ?? 'no account');
    }
    // The editor asks for the help in the browser's language (Accept-Language).
    for (const [lng, sentence] of [
      ['de', /Sendet eine Benachrichtigung an einen Empfänger/],
      ['cs', /Pošle upozornění jednomu příjemci/],
    ] as const) {
      const help = await (await fetch(`${base}/nodes`, { headers: { accept: 'text/html', 'accept-language': lng } })).text();
      for (const type of TYPES) assert.match(help, new RegExp(`data-help-name="${type}"`), `${type} help in ${lng}`);
      assert.match(help, sentence, `the help in ${lng} is that language's`);
    }
    for (const type of TYPES) {
      const icon = await fetch(`${base}/icons/node-red-contrib-bulkgate/${type}.svg`);
      assert.equal(icon.status, 200, `${type}.svg`);
    }
  });
});

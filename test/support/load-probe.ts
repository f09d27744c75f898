/**
 * A child process for test/lean.test.ts: starts the project's Node-RED embedded with the package
 * installed in a fresh user directory and no flows, reports which of the package's dependencies
 * are loaded; then deploys an account and a transactional node against the gateway URL given,
 * sends one msg, and reports again; then checks a number (another endpoint) and reports. One JSON
 * line per report.
 */
import { mkdirSync, mkdtempSync, realpathSync, rmSync, symlinkSync } from 'node:fs';
import { createServer } from 'node:http';
import { tmpdir } from 'node:os';
import Module from 'node:module';
import { join } from 'node:path';
import { until } from './wait';

const ROOT = join(__dirname, '..', '..', '..');
const [baseUrl, applicationId, applicationToken] = process.argv.slice(2) as [string, string, string];
const DEPENDENCIES = ['undici', 'ajv', 'mustache', 'libphonenumber-js', 'sms-segments-calculator', '@redis/client'];

/** The dependencies the package's own code has required so far (Node-RED's core nodes load ajv and mustache too). */
const required = new Set<string>();
// Module._load is what require() calls: not in Node's types, stable since Node.js 0.x.
type Loader = (this: unknown, request: string, parent: { filename?: string } | undefined, isMain: boolean) => unknown;
const modules = Module as unknown as { _load: Loader };
const load = modules._load;
modules._load = function (request: string, parent: { filename?: string } | undefined, _isMain: boolean) {
  const name = DEPENDENCIES.find((d) => request === d || request.startsWith(`${d}/`));
  if (name && parent?.filename?.startsWith(join(ROOT, 'dist') + '/')) required.add(name);
  // The package's own precompiled validators: the send bodies' and the other endpoints'.
  if (
    (request === './validators' || request === './endpoint-validators') &&
    parent?.filename?.startsWith(join(ROOT, 'dist', 'gateway') + '/')
  ) {
    validatorModules.add(request.slice(2));
  }
  // eslint-disable-next-line prefer-rest-params
  return load.apply(this, arguments as never);
};
const validatorModules = new Set<string>();
const loaded = (): string[] => DEPENDENCIES.filter((d) => required.has(d));
const validators = (): string[] => [...validatorModules].sort();

async function main(): Promise<void> {
  const userDir = mkdtempSync(join(tmpdir(), 'bulkgate-lean-'));
  mkdirSync(join(userDir, 'node_modules'));
  symlinkSync(ROOT, join(userDir, 'node_modules', 'node-red-contrib-bulkgate'), 'dir');
  const RED = require('node-red');
  RED.init(createServer(), {
    userDir,
    httpAdminRoot: false,
    httpNodeRoot: false,
    credentialSecret: false,
    logging: { console: { level: 'off' } },
    telemetry: { enabled: false },
    diagnostics: { enabled: false },
    externalModules: { autoInstall: false },
  });
  // The first (empty) flows load ends after start() resolves; a deploy before it would be undone.
  const started = new Promise((resolve) => RED.events.once('flows:started', resolve));
  await RED.start();
  await started;
  const types = RED.nodes
    .getNodeList()
    .flatMap((set: { types: string[] }) => set.types)
    .filter((t: string) => t.startsWith('bulkgate-'));
  // The package's own files Node-RED has required so far (the user directory's link resolved;
  // this probe, in dist/test, is not shipped).
  const dist = join(realpathSync(ROOT), 'dist') + '/';
  const own = () =>
    Object.keys(require.cache)
      .filter((file) => file.startsWith(dist) && !file.startsWith(`${dist}test/`))
      .map((file) => file.slice(dist.length))
      .sort();
  console.log(JSON.stringify({ stage: 'installed', types, loaded: loaded(), own: own() }));

  await RED.runtime.flows.setFlows({
    flows: {
      flows: [
        { id: 'tab', type: 'tab', label: 'lean' },
        {
          id: 'acc',
          type: 'bulkgate-account',
          baseUrl,
          retries: 0,
          credentials: { application_id: applicationId, application_token: applicationToken },
        },
        {
          id: 'tx',
          z: 'tab',
          type: 'bulkgate-transactional',
          account: 'acc',
          text: 'Door opened',
          wires: [['out'], ['out']],
        },
        { id: 'check', z: 'tab', type: 'bulkgate-number-check', account: 'acc', wires: [['out'], ['out']] },
        { id: 'caught', z: 'tab', type: 'catch', scope: null, uncaught: false, wires: [['out']] },
        { id: 'out', z: 'tab', type: 'debug', active: false, tosidebar: false, console: false, complete: 'true' },
      ],
    },
    deploymentType: 'full',
  });
  // setFlows resolves before the new flows have started.
  await until('the flows started', () => Boolean(RED.nodes.getNode('tx') && RED.nodes.getNode('out')), 60_000, {
    every: 20,
  });
  console.log(JSON.stringify({ stage: 'deployed', loaded: loaded() }));
  const sent = new Promise<Record<string, unknown>>((resolve) => RED.nodes.getNode('out').on('input', resolve));
  RED.nodes.getNode('tx').receive({ number: '420777123456' });
  const msg = await sent;
  const error = (msg.error as { message?: string } | undefined)?.message;
  console.log(
    JSON.stringify({
      stage: 'sent',
      status: (msg.payload as { status?: string } | undefined)?.status,
      error,
      loaded: loaded(),
      validators: validators(),
      own: own(),
    }),
  );
  const checked = new Promise<Record<string, unknown>>((resolve) => RED.nodes.getNode('out').once('input', resolve));
  RED.nodes.getNode('check').receive({ payload: '420777123456' });
  const answer = await checked;
  console.log(
    JSON.stringify({
      stage: 'checked',
      valid: (answer.payload as { valid?: boolean } | undefined)?.valid,
      loaded: loaded(),
      validators: validators(),
    }),
  );
  await RED.stop();
  rmSync(userDir, { recursive: true, force: true });
}

main().then(
  () => process.exit(0),
  (error: Error) => {
    console.error(error);
    process.exit(1);
  },
);

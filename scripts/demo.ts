/**
 * `npm start`: the simulator and a Node-RED (the project's own devDependency) on 127.0.0.1 with
 * this package loaded and the example flows deployed against the simulator.
 *
 *   --port N / PORT                       Node-RED's port (default 1880; 0 = any free port)
 *   --simulator-port N / SIMULATOR_PORT   the simulator's port (default 1881; 0 = any free port)
 *   --user-dir DIR                        Node-RED's user directory (default: .nodered-demo in the clone,
 *                                         git-ignored and kept between runs, so what you build stays)
 *   --fresh                               start over: delete the user directory first
 *   --no-flows                            start with an empty workspace (the editor tests)
 */
import { createCipheriv, createHash, randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { createServer as createNetServer } from 'node:net';
import { join, relative, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import express from 'express';
import { DEMO_ACCOUNT } from '../simulator/accounts';
import { startSimulator } from '../simulator/server';

const ROOT = resolve(__dirname, '..', '..');
/** The demo's webhook secret: the simulator calls Node-RED's events node with it. */
const EVENTS_SECRET = 'demo-webhook-secret';
/** The demo's user directory unless --user-dir names another: in the clone, git-ignored. */
const DEMO_DIR = join(ROOT, '.nodered-demo');
/** Node-RED's credentialSecret for the demo (the flows' credentials file is encrypted with it). */
const CREDENTIAL_SECRET = 'bulkgate-demo';
/** Where the demo remembers the simulator address its flows point at, to follow a port change. */
const STATE_FILE = 'bulkgate-demo.json';

interface FlowNode {
  id: string;
  type: string;
  z?: string;
  [key: string]: unknown;
}

function portOption(value: string | undefined, fallback: number, name: string): number {
  const port = Number(value ?? fallback);
  if (!Number.isInteger(port) || port < 0 || port > 65535)
    throw new Error(`${name} must be a port number (0 to 65535), got "${value}"`);
  return port;
}

function listen(server: Server, port: number, what: string, flag: string): Promise<number> {
  return new Promise((resolvePort, reject) => {
    server.once('error', (error: NodeJS.ErrnoException) => {
      reject(
        error.code === 'EADDRINUSE'
          ? new Error(`${what} cannot use port ${port}: it is busy. Choose another with ${flag}.`)
          : error,
      );
    });
    server.listen(port, '127.0.0.1', () => {
      const address = server.address();
      resolvePort(typeof address === 'object' && address ? address.port : port);
    });
  });
}

/**
 * The example flows, each on its own tab, on accounts that point at the simulator: one per set of
 * account settings the examples document (example 02 keeps its rate limit), so each example runs
 * as it does imported alone. The MQTT example's broker is the demo's own, at `mqttPort`.
 */
export function demoFlows(simulatorUrl: string, mqttPort: number): FlowNode[] {
  const dir = join(ROOT, 'examples');
  const flows: FlowNode[] = [];
  /** Demo accounts by the example settings they carry (without id, name, place and credentials). */
  const demoAccounts = new Map<string, FlowNode>();
  /** The events nodes' paths so far: one path, one events node (a second would only get a warning). */
  const eventPaths = new Set<string>();
  const demoAccountFor = (example: FlowNode): FlowNode => {
    const { id: _id, name, x: _x, y: _y, z: _z, credentials: _credentials, baseUrl: _baseUrl, ...settings } = example;
    const key = JSON.stringify(settings);
    let account = demoAccounts.get(key);
    if (!account) {
      const first = demoAccounts.size === 0;
      account = {
        ...settings,
        id: first ? 'bulkgate-demo-account' : `bulkgate-demo-account-${demoAccounts.size + 1}`,
        type: 'bulkgate-account',
        name: first ? 'Simulator (demo account)' : `Simulator (demo account): ${String(name ?? '')}`,
        baseUrl: simulatorUrl,
        credentials: { application_id: DEMO_ACCOUNT.id, application_token: DEMO_ACCOUNT.token },
      };
      demoAccounts.set(key, account);
      flows.push(account);
    }
    return account;
  };
  for (const file of readdirSync(dir)
    .filter((f) => f.endsWith('.json'))
    .sort()) {
    const nodes = JSON.parse(readFileSync(join(dir, file), 'utf8')) as FlowNode[];
    const tab = `demo-tab-${flows.length}`;
    flows.push({ id: tab, type: 'tab', label: file.replace(/\.json$/, '').replace(/^\d+\s*-?\s*/, '') });
    const accounts = new Map(nodes.filter((n) => n.type === 'bulkgate-account').map((n) => [n.id, demoAccountFor(n)]));
    for (const node of nodes) {
      if (accounts.has(node.id) || node.type === 'tab') continue;
      const copy: FlowNode = { ...node, id: `${tab}-${node.id}`, z: tab };
      if (typeof copy.account === 'string' && accounts.has(copy.account))
        copy.account = (accounts.get(copy.account) as FlowNode).id;
      // The webhook's secret, in the credential store like the account's token.
      if (copy.type === 'bulkgate-events') {
        copy.credentials = { secret: EVENTS_SECRET };
        const path = `/${String(copy.path || '/bulkgate/events').replace(/^\//, '')}`;
        copy.path = eventPaths.has(path) ? `${path}-${tab}` : path;
        eventPaths.add(copy.path as string);
      }
      // Examples point at the simulator's default address; the demo's may differ.
      if (typeof copy.url === 'string') copy.url = copy.url.replace('http://127.0.0.1:1881', simulatorUrl);
      if (copy.type === 'mqtt-broker') Object.assign(copy, { broker: '127.0.0.1', port: String(mqttPort) });
      // An mqtt in or out node names its broker config node by id (on the broker node, `broker` is the host).
      else if (typeof copy.broker === 'string' && nodes.some((n) => n.id === copy.broker))
        copy.broker = `${tab}-${copy.broker}`;
      if (Array.isArray(copy.wires))
        copy.wires = (copy.wires as string[][]).map((port) => port.map((id) => `${tab}-${id}`));
      if (Array.isArray(copy.scope)) copy.scope = (copy.scope as string[]).map((id) => `${tab}-${id}`);
      if (typeof copy.g === 'string') copy.g = `${tab}-${copy.g}`;
      if (Array.isArray(copy.nodes)) copy.nodes = (copy.nodes as string[]).map((id) => `${tab}-${id}`);
      if (Array.isArray(copy.links)) copy.links = (copy.links as string[]).map((id) => `${tab}-${id}`);
      flows.push(copy);
      if (node.type === 'mqtt in') flows.push(...doorSensor(copy, tab));
    }
  }
  return flows;
}

/**
 * The demo's stand-in for the sensor itself: a button that publishes "open" to the broker on the
 * contact's topic, so the SMS takes the whole way a real door event takes (broker, mqtt in, the
 * switch), not the example's inject beside the contact. Below the example's nodes.
 */
function doorSensor(contact: FlowNode, tab: string): FlowNode[] {
  const publish = `${tab}-sensor-publish`;
  return [
    {
      id: `${tab}-sensor-open`,
      type: 'inject',
      z: tab,
      name: 'the sensor: door opens',
      props: [{ p: 'payload' }],
      payload: 'open',
      payloadType: 'str',
      repeat: '',
      once: false,
      x: 150,
      y: 300,
      wires: [[publish]],
    },
    {
      id: publish,
      type: 'mqtt out',
      z: tab,
      name: `publish to ${String(contact.topic)}`,
      topic: contact.topic,
      qos: '1',
      retain: 'false',
      broker: contact.broker,
      x: 420,
      y: 300,
      wires: [],
    },
  ];
}

/**
 * An encrypted, empty credentials file, as Node-RED writes one: without it the first start
 * warns "Encrypted credentials not found", and a demo that prints warnings looks broken.
 */
function ensureCredentialsFile(userDir: string): void {
  const file = join(userDir, 'flows_cred.json');
  if (existsSync(file)) return;
  const key = createHash('sha256').update(CREDENTIAL_SECRET).digest();
  const iv = randomBytes(16);
  const cipher = createCipheriv('aes-256-ctr', key, iv);
  writeFileSync(
    file,
    JSON.stringify({ $: iv.toString('hex') + cipher.update('{}', 'utf8', 'base64') + cipher.final('base64') }),
  );
}

/** Kept flows point at the simulator of the last run: moved to this run's address. */
function followSimulator(userDir: string, simulatorUrl: string): void {
  const stateFile = join(userDir, STATE_FILE);
  const flowsFile = join(userDir, 'flows.json');
  const previous = existsSync(stateFile)
    ? (JSON.parse(readFileSync(stateFile, 'utf8')) as { simulatorUrl?: string }).simulatorUrl
    : undefined;
  if (previous && previous !== simulatorUrl && existsSync(flowsFile)) {
    writeFileSync(flowsFile, readFileSync(flowsFile, 'utf8').split(previous).join(simulatorUrl));
  }
  writeFileSync(stateFile, JSON.stringify({ simulatorUrl }));
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      port: { type: 'string', default: process.env.PORT },
      'simulator-port': { type: 'string', default: process.env.SIMULATOR_PORT },
      'mqtt-port': { type: 'string', default: process.env.MQTT_PORT },
      'user-dir': { type: 'string' },
      fresh: { type: 'boolean', default: false },
      'no-flows': { type: 'boolean', default: false },
    },
  });
  const port = portOption(values.port, 1880, '--port (or PORT)');
  const simulatorPort = portOption(values['simulator-port'], 1881, '--simulator-port (or SIMULATOR_PORT)');
  // Not 1883: a user's own broker (Mosquitto) is often there.
  const mqttPort = portOption(values['mqtt-port'], 1884, '--mqtt-port (or MQTT_PORT)');

  const simulator = await startSimulator({ port: simulatorPort }).catch((error: NodeJS.ErrnoException) => {
    throw error.code === 'EADDRINUSE'
      ? new Error(
          `The simulator cannot use port ${simulatorPort}: it is busy. Choose another with --simulator-port or SIMULATOR_PORT.`,
        )
      : error;
  });

  // An MQTT broker for the door alarm example (aedes, in this process), as a home set-up has one.
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const { Aedes } = require('aedes') as typeof import('aedes');
  const broker = await Aedes.createBroker();
  const mqttServer = createNetServer(broker.handle);
  const mqttAt = await listen(
    mqttServer as unknown as Server,
    mqttPort,
    'The MQTT broker',
    '--mqtt-port (or MQTT_PORT)',
  );

  // A user directory where Node-RED finds this package as if installed with npm. It is kept:
  // what the user builds in the demo is there on the next `npm start`.
  const userDir = values['user-dir'] ? resolve(values['user-dir']) : DEMO_DIR;
  if (values.fresh) rmSync(userDir, { recursive: true, force: true });
  const firstRun = !existsSync(join(userDir, 'flows.json'));
  mkdirSync(join(userDir, 'node_modules'), { recursive: true });
  rmSync(join(userDir, 'node_modules', 'node-red-contrib-bulkgate'), { force: true, recursive: true });
  symlinkSync(ROOT, join(userDir, 'node_modules', 'node-red-contrib-bulkgate'), 'dir');
  ensureCredentialsFile(userDir);
  followSimulator(userDir, simulator.url);

  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const RED = require('node-red');
  const app = express();
  const server = createServer(app);
  RED.init(server, {
    userDir,
    flowFile: 'flows.json',
    credentialSecret: CREDENTIAL_SECRET,
    httpAdminRoot: '/',
    httpNodeRoot: '/',
    uiHost: '127.0.0.1',
    uiPort: port,
    // `projects` present but not enabled: Node-RED then says nothing of projects (it warns
    // "Projects disabled" both when the key is missing and when it is false).
    editorTheme: { tours: false, palette: { catalogues: [] }, projects: {} },
    // No update-check prompt and no call to the internet from the demo.
    telemetry: { enabled: false },
    diagnostics: { enabled: false },
    logging: { console: { level: 'warn', metrics: false, audit: false } },
    // The demo is for one person on this machine; Node-RED listens on loopback only.
    externalModules: { autoInstall: false },
  });
  app.use('/', RED.httpAdmin);
  app.use('/', RED.httpNode);
  const actualPort = await listen(server, port, 'Node-RED', '--port or PORT');
  await RED.start();

  const editorUrl = `http://127.0.0.1:${actualPort}/`;
  if (firstRun && !values['no-flows']) {
    const flows = demoFlows(simulator.url, mqttAt);
    const res = await fetch(`${editorUrl}flows`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'node-red-deployment-type': 'full' },
      body: JSON.stringify(flows),
    });
    if (!res.ok) throw new Error(`Deploying the demo flows failed: HTTP ${res.status} ${await res.text()}`);
    // The deploy call answers before every node has started; the addresses are printed after.
    const ids = flows.filter((n) => n.type !== 'tab').map((n) => n.id);
    for (const end = Date.now() + 15_000; Date.now() < end && !ids.every((id) => RED.nodes.getNode(id));) {
      await new Promise((r) => setTimeout(r, 50));
    }
  }
  // Delivery reports and replies from the simulator go to every events node of the demo, each
  // example's on its own path (the kept flows' too: their secret is the demo's unless the user
  // changed it); the simulator calls each webhook set.
  const deployed = (await (await fetch(`${editorUrl}flows`)).json()) as FlowNode[];
  for (const events of deployed.filter((n) => n.type === 'bulkgate-events')) {
    await fetch(`${simulator.url}/simulator/webhook`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        url: `${editorUrl}${String(events.path || '/bulkgate/events').replace(/^\//, '')}?token=${EVENTS_SECRET}`,
      }),
    });
  }

  const shown = relative(process.cwd(), userDir) || '.';
  console.log(`Node-RED editor:   ${editorUrl}`);
  console.log(`Simulator outbox:  ${simulator.url}/`);
  console.log(`Demo account:      application_id ${DEMO_ACCOUNT.id} (already set in the flows)`);
  console.log(
    `MQTT broker:       mqtt://127.0.0.1:${mqttAt} (the door alarm example's contact listens on home/door/front; its "the sensor: door opens" button publishes there)`,
  );
  console.log(
    `Your flows:        kept in ${shown.startsWith('..') ? userDir : shown} between runs (${firstRun ? 'the examples were deployed' : 'as you left them'}; \`npm start -- --fresh\` starts over)`,
  );
  console.log(
    'Click the button of an inject node; the message appears in the outbox, the results in the debug sidebar. Ctrl-C stops both.',
  );

  let stopping = false;
  const stop = async () => {
    if (stopping) return;
    stopping = true;
    await RED.stop().catch(() => undefined);
    server.closeAllConnections?.();
    await new Promise((r) => server.close(() => r(undefined)));
    await simulator.close();
    await new Promise((r) => broker.close(() => r(undefined)));
    mqttServer.close();
    process.exit(0);
  };
  process.once('SIGINT', () => void stop());
  process.once('SIGTERM', () => void stop());
}

if (require.main === module) {
  main().catch((error: Error) => {
    console.error(`npm start: ${error.message}`);
    process.exit(1);
  });
}

/**
 * Each example file as a user imports it (Import > Examples): alone, into a fresh Node-RED, with
 * only the simulator's address changed (its credentials are the ones the file carries, as the
 * editor's import keeps them), deployed through the admin API; then
 * every inject clicked, with the outputs the example promises and no error it does not show on
 * purpose.
 */
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { createServer as createNetServer, type AddressInfo, type Server as NetServer } from 'node:net';
import { Aedes } from 'aedes';
import { connectAsync } from 'mqtt';
import { join } from 'node:path';
import { DEMO_ACCOUNT } from '../simulator/accounts';
import { startDemo, type DemoProcess } from './support/demo-process';
import { click, EXAMPLE_CLICKS, pressByApi, Sidebar, until } from './support/examples';

const EXAMPLES = join(__dirname, '..', '..', 'examples');
const SECRET = 'examples-test-secret';

type FlowNode = Record<string, unknown> & { id: string; type: string };

/** The file's nodes on one tab, with what the import dialog leaves to the user filled in (and the broker's address). */
function prepare(nodes: FlowNode[], simulatorUrl: string, mqttPort: number): FlowNode[] {
  const config = new Set(['bulkgate-account', 'mqtt-broker']);
  return [
    { id: 'example-tab', type: 'tab', label: 'example' },
    ...nodes.map((n) => {
      const copy: FlowNode = config.has(n.type) ? { ...n } : { ...n, z: 'example-tab' };
      if (n.type === 'bulkgate-account') copy.baseUrl = simulatorUrl;
      if (n.type === 'bulkgate-events') copy.credentials = { secret: SECRET };
      if (n.type === 'mqtt-broker') Object.assign(copy, { broker: '127.0.0.1', port: String(mqttPort) });
      if (typeof n.url === 'string') copy.url = n.url.replace('http://127.0.0.1:1881', simulatorUrl);
      return copy;
    }),
  ];
}

/**
 * Example 02 through a real broker: the door contact publishes "open" twice and "closed" once;
 * two SMS reach the gateway, each with the time in its text (so the gateway's duplicate check
 * does not drop the second), none for "closed".
 */
async function doorEvents(demo: DemoProcess, mqttPort: number): Promise<void> {
  const texts = async () =>
    ((await (await fetch(`${demo.simulatorUrl}/simulator/outbox`)).json()) as { messages: { text: string }[] }).messages
      .map((m) => m.text)
      .filter((t) => t.startsWith('Front door opened'));
  const before = (await texts()).length;
  const sensor = await connectAsync(`mqtt://127.0.0.1:${mqttPort}`);
  try {
    // The flow's mqtt in node is connected and subscribed; "closed" sends nothing.
    await sensor.publishAsync('home/door/front', 'closed', { qos: 1 });
    await sensor.publishAsync('home/door/front', 'open', { qos: 1 });
    await until('the first door SMS', async () => (await texts()).length >= before + 1, 15_000);
    await new Promise((r) => setTimeout(r, 1100)); // the next second: another time in the text
    await sensor.publishAsync('home/door/front', 'open', { qos: 1 });
    await until('the second door SMS', async () => (await texts()).length >= before + 2, 15_000);
  } finally {
    await sensor.endAsync();
  }
  const sent = (await texts()).slice(before);
  assert.equal(sent.length, 2, 'one SMS per "open", none for "closed"');
  for (const text of sent) assert.match(text, /^Front door opened at \d{2}:\d{2}:\d{2} \(home\/door\/front\)\.$/);
  assert.notEqual(sent[0], sent[1], 'the time makes each text its own');
}

/**
 * Example 07's guest link, as a guest's browser meets it: every request answered (400 without a
 * code or with a query that is not one, 403 for a wrong code, 200 "open" for the right one, 410
 * for the same code again), and a query cannot point the check at another OTP id.
 */
async function guestLink(demo: DemoProcess, sidebar: Sidebar): Promise<void> {
  const link = async (query: string) => {
    const res = await fetch(`${demo.editorUrl}/door-code${query}`, { signal: AbortSignal.timeout(10_000) });
    return [res.status, await res.text()];
  };
  assert.deepEqual(await link(''), [400, 'no code in the link']);
  assert.deepEqual(
    await link('?code[id]=otp-1&code[code]=123456'),
    [400, 'no code in the link'],
    'a query object is not a code',
  );
  assert.deepEqual(await link('?code=0000000'), [403, 'wrong code']);
  // A fresh code, as the keypad asks for one; the guest reads it on the phone (the simulator's outbox here).
  const otps = async () =>
    (
      (await (await fetch(`${demo.simulatorUrl}/simulator/outbox`)).json()) as {
        messages: { kind: string; text: string }[];
      }
    ).messages.filter((m) => m.kind === 'otp');
  const before = (await otps()).length;
  const shown = () => sidebar.debug.filter((d) => d.name === 'code sent').length;
  const shownBefore = shown();
  await pressByApi(demo.editorUrl)('ex07-i1');
  let code = '';
  await until('the new code texted', async () => {
    const sent = await otps();
    code = sent.length > before ? (sent.at(-1)?.text.split(' ').pop() ?? '') : '';
    return code !== '';
  });
  // The debug node "code sent" follows the change node that keeps flow.otpId: once it shows, the id is kept.
  await until('the code shown as sent', () => shown() > shownBefore);
  assert.deepEqual(await link(`?code=${code}`), [200, 'open']);
  assert.deepEqual(
    await link(`?code=${code}`),
    [410, 'this code has expired or was already used'],
    'a code opens the door once',
  );
}

describe('each example file, imported alone', function () {
  this.timeout(120_000);
  let demo: DemoProcess;
  const sidebar = new Sidebar();

  /** A real MQTT broker (aedes) for example 02, as a home set-up has one (Mosquitto). */
  let broker: { close(cb: () => void): void };
  let mqttServer: NetServer;
  let mqttPort = 0;

  before(async () => {
    demo = await startDemo(['--no-flows']);
    await sidebar.open(demo.editorUrl);
    const aedes = await Aedes.createBroker();
    broker = aedes;
    mqttServer = createNetServer(aedes.handle);
    await new Promise<void>((r) => mqttServer.listen(0, '127.0.0.1', () => r()));
    mqttPort = (mqttServer.address() as AddressInfo).port;
  });
  after(async () => {
    sidebar.close();
    await demo?.stop();
    await new Promise((r) => broker?.close(() => r(undefined)));
    mqttServer?.close();
  });

  for (const file of readdirSync(EXAMPLES)
    .filter((f) => f.endsWith('.json'))
    .sort()) {
    const prefix = file.slice(0, 2);
    it(`${file}: carries its own account, deploys, and ${EXAMPLE_CLICKS[prefix] ? 'every inject works' : 'starts (it needs an MQTT broker to go further)'}`, async () => {
      // What Node-RED's Import > Examples menu serves (the admin API's examples library) is this file.
      const served = await fetch(
        `${demo.editorUrl}/library/examples/flows/node-red-contrib-bulkgate/${encodeURIComponent(file.replace(/\.json$/, ''))}`,
      );
      assert.equal(served.status, 200);
      const nodes = (await served.json()) as FlowNode[];
      assert.deepEqual(nodes, JSON.parse(readFileSync(join(EXAMPLES, file), 'utf8')));
      const ids = new Set(nodes.map((n) => n.id));
      const missing = nodes.filter((n) => typeof n.account === 'string' && !ids.has(n.account));
      assert.deepEqual(
        missing.map((n) => n.id),
        [],
        "every node's account is in the file",
      );

      // Import and click is enough: the account carries the simulator's public demo account.
      for (const account of nodes.filter((n) => n.type === 'bulkgate-account'))
        assert.deepEqual(
          account.credentials,
          { application_id: DEMO_ACCOUNT.id, application_token: DEMO_ACCOUNT.token },
          `${account.id}'s credentials`,
        );
      // Short enough to stay on the canvas; the comment's help says the rest.
      assert.match(
        String(nodes[0]?.name),
        /^Run first: npx -p node-red-contrib-bulkgate bulkgate-simulator --port 1881$/,
        'the first comment says how to run it installed',
      );
      const flow = prepare(nodes, demo.simulatorUrl, mqttPort);
      const statusFrom = sidebar.statuses.length;
      const res = await fetch(`${demo.editorUrl}/flows`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'node-red-deployment-type': 'full' },
        body: JSON.stringify(flow),
      });
      assert.ok(res.ok, `deploy: HTTP ${res.status} ${await res.text()}`);
      const events = nodes.find((n) => n.type === 'bulkgate-events');
      await fetch(`${demo.simulatorUrl}/simulator/webhook`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ url: events ? `${demo.editorUrl}${String(events.path)}?token=${SECRET}` : '' }),
      });
      // Started: the deployed flow is what was sent, and the admin API answers for each inject.
      await until('the flow to be deployed', async () =>
        ((await (await fetch(`${demo.editorUrl}/flows`)).json()) as FlowNode[]).some((n) => n.z === 'example-tab'),
      );
      const from = sidebar.debug.length;
      const contact = nodes.find((n) => n.type === 'mqtt in')?.id;
      try {
        // The door contact (mqtt in) says "disconnected" (red) as it starts, then "connected" (green)
        // once the broker accepts it: only then is the flow ready, and only then does it subscribe.
        if (contact)
          await until(
            'the door contact connected',
            () => sidebar.statuses.slice(statusFrom).some((s) => s.id === contact && s.fill === 'green'),
            20_000,
          );
        for (const c of EXAMPLE_CLICKS[prefix] ?? []) await click(pressByApi(demo.editorUrl), sidebar, c, (id) => id);
        if (prefix === '07') await guestLink(demo, sidebar);
        if (prefix === '02') {
          // The inject's SMS carries this second's time; a door event in the same second would be
          // the same text, which the gateway's duplicate check drops. The next second, then.
          await new Promise((r) => setTimeout(r, 1100)); // waits for the clock: the next second, another time in the text
          await doorEvents(demo, mqttPort);
        }
      } finally {
        if (contact) {
          // Its mqtt in node says "disconnected" (red) as the next deploy stops it: let that come
          // now, with nothing deployed, not during the next example's clicks.
          const stopFrom = sidebar.statuses.length;
          await fetch(`${demo.editorUrl}/flows`, {
            method: 'POST',
            headers: { 'content-type': 'application/json', 'node-red-deployment-type': 'full' },
            body: '[]',
          });
          await until('the door contact to disconnect', () =>
            sidebar.statuses.slice(stopFrom).some((s) => s.id === contact && s.fill === 'red'),
          ).catch(() => undefined);
        }
      }
      const bulkgateErrors = sidebar.debug
        .slice(from)
        .filter((d) => d.level === 20 && nodes.some((n) => n.id === d.id && n.type.startsWith('bulkgate-')));
      if (!EXAMPLE_CLICKS[prefix]) assert.deepEqual(bulkgateErrors, [], 'no BulkGate node reported an error');
    });
  }
});

/**
 * No example can spend credit in a loop (clicked once, none texts a number again and again with a
 * growing text). Each example file deployed alone as the
 * editor imports it (onto a tab, its own account pointed at the simulator), every inject clicked
 * once, then watched long enough for every report timeout, "give up after" and escalation step in
 * it to pass twice (the test's copy shortens them to a second or two); at the simulator, no number
 * was texted more than 6 times and no text to a number grows out of an earlier one. An escalation
 * runs its whole chain (the injects that acknowledge or resolve are clicked after the watch): each
 * of its numbers texted exactly once per step and round, none more. First without
 * a webhook (as imported: the simulator calls none unless the example sets one up itself), then
 * with every events node's webhook set, as the demo does.
 */
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { startDemo, type DemoProcess } from './support/demo-process';
import { pressByApi, until } from './support/examples';

const EXAMPLES = join(__dirname, '..', '..', 'examples');
const SECRET = 'examples-spend-secret';
/** At most this many SMS to one number after one click of every inject. */
const MOST_PER_NUMBER = 6;

type FlowNode = Record<string, unknown> & { id: string; type: string };
interface Texted {
  number: string;
  text: string;
}

/** Seconds, shortened in the test's copy: a report timeout, a "give up after", an escalation step's wait. */
const SHORT = { reportTimeout: 1, giveUpAfter: 2, wait: 1 };

/**
 * The file's nodes on one tab, as the import dialog leaves them, the simulator's and Node-RED's
 * default addresses made this run's, the events nodes' secret filled in (the import leaves it to
 * the user), and every wait shortened. Returns the flow and the seconds its waits add up to.
 */
function prepare(nodes: FlowNode[], simulatorUrl: string, editorUrl: string): { flow: FlowNode[]; waits: number } {
  let waits = 0;
  const flow: FlowNode[] = [{ id: 'spend-tab', type: 'tab', label: 'example' }];
  for (const node of nodes) {
    // Addresses anywhere in the node: a URL field, a function's code, an inject's payload.
    const text = JSON.stringify(node)
      .split('http://127.0.0.1:1881')
      .join(simulatorUrl)
      .split('http://127.0.0.1:1880')
      .join(editorUrl);
    const copy = JSON.parse(text) as FlowNode;
    if (copy.type !== 'bulkgate-account' && copy.type !== 'mqtt-broker') copy.z = 'spend-tab';
    // Nothing to connect to: the MQTT example's inject stands in for its door contact.
    if (copy.type === 'mqtt-broker') Object.assign(copy, { broker: '127.0.0.1', port: '9' });
    if (copy.type === 'bulkgate-events') copy.credentials = { secret: SECRET };
    for (const key of ['reportTimeout', 'giveUpAfter'] as const) {
      const value = Number(copy[key]);
      if (copy[key] !== '' && value > 0) {
        copy[key] = Math.min(value, SHORT[key]);
        waits += copy[key] as number;
      }
    }
    // An escalation's chain: each step's wait, as many rounds as it repeats.
    if (Array.isArray(copy.steps)) {
      const steps = copy.steps as { wait?: unknown }[];
      for (const step of steps) if (typeof step === 'object' && step && 'wait' in step) step.wait = SHORT.wait;
      waits += steps.length * SHORT.wait * Math.max(1, Number(copy.repeat) || 1);
    }
    flow.push(copy);
  }
  return { flow, waits };
}

/** The nodes `from`'s wires reach, `from` left out. */
function downstream(from: FlowNode, flow: FlowNode[]): FlowNode[] {
  const byId = new Map(flow.map((n) => [n.id, n]));
  const seen = new Set<string>();
  const next = [from];
  for (let node; (node = next.pop());) {
    for (const id of ((node.wires as string[][] | undefined) ?? []).flat()) {
      const target = byId.get(id);
      if (target && !seen.has(id)) {
        seen.add(id);
        next.push(target);
      }
    }
  }
  return [...seen].map((id) => byId.get(id) as FlowNode);
}

/**
 * An inject that ends an escalation's incident: its msg carries `escalation` (the flow resolves or
 * acknowledges), or it posts a reply to the simulator. Clicked after the chains had their time, so
 * that a chain runs its whole course (a chain that never ends would show).
 */
function endsAnIncident(inject: FlowNode, flow: FlowNode[]): boolean {
  const props = (inject.props as { p?: string }[] | undefined) ?? [];
  return (
    props.some((p) => p.p === 'escalation') ||
    downstream(inject, flow).some((n) => n.type === 'http request' && /\/simulator\/incoming$/.test(String(n.url)))
  );
}

/**
 * What each escalation node's chain texts when nobody acknowledges: each number of each step once
 * per round, for each incident its injects raise (one per topic). Its numbers are texted by nothing
 * else in an example, so each is texted exactly this many times.
 */
function chainTexts(flow: FlowNode[], raising: FlowNode[]): Map<string, number> {
  const expected = new Map<string, number>();
  for (const chain of flow.filter((n) => n.type === 'bulkgate-escalation')) {
    const topics = new Set(
      raising.filter((i) => downstream(i, flow).includes(chain)).map((i) => String(i.topic ?? '')),
    );
    const rounds = Math.max(1, Number(chain.repeat) || 1);
    for (const step of chain.steps as { numbers: string }[])
      for (const number of step.numbers
        .split(/[;,]/)
        .map((n) => n.replace(/\D/g, ''))
        .filter((n) => n !== ''))
        expected.set(number, (expected.get(number) ?? 0) + topics.size * rounds);
  }
  return expected;
}

/** Each number's texts in the order the simulator took them. */
function byNumber(sent: Texted[]): Map<string, string[]> {
  const numbers = new Map<string, string[]>();
  for (const { number, text } of sent) numbers.set(number, [...(numbers.get(number) ?? []), text]);
  return numbers;
}

const files = readdirSync(EXAMPLES)
  .filter((f) => f.endsWith('.json'))
  .sort();

for (const webhook of [false, true]) {
  describe(`no example spends credit in a loop, ${webhook ? "with every events node's webhook set" : 'without a webhook'}`, function () {
    this.timeout(90_000);
    let demo: DemoProcess;
    const call = (path: string, method: string, body?: unknown) =>
      fetch(`${demo.simulatorUrl}${path}`, {
        method,
        headers: body === undefined ? undefined : { 'content-type': 'application/json' },
        body: body === undefined ? undefined : JSON.stringify(body),
      });
    const outbox = async () =>
      ((await (await call('/simulator/outbox', 'GET')).json()) as { messages: Texted[] }).messages;
    const deploy = (flow: FlowNode[]) =>
      fetch(`${demo.editorUrl}/flows`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'node-red-deployment-type': 'full' },
        body: JSON.stringify(flow),
      });

    // A Node-RED of its own per round: what the accounts keep in the user directory (tracked
    // sends, the outbox) does not carry over from the round without a webhook.
    before(async () => {
      demo = await startDemo(['--no-flows']);
    });
    after(async () => {
      await demo?.stop();
    });

    for (const file of files) {
      it(`${file}: every inject once, each wait past twice: no number texted more than ${MOST_PER_NUMBER} times, no text grows`, async () => {
        const nodes = JSON.parse(readFileSync(join(EXAMPLES, file), 'utf8')) as FlowNode[];
        const { flow, waits } = prepare(nodes, demo.simulatorUrl, demo.editorUrl);
        // The last example's nodes stopped, the gateway back, no webhook but those this example gets.
        assert.ok((await deploy([])).ok);
        await call('/simulator/faults', 'DELETE');
        await call('/simulator/webhook', 'DELETE');
        const from = (await outbox()).length;
        const res = await deploy(flow);
        assert.ok(res.ok, `deploy: HTTP ${res.status} ${await res.text()}`);
        const hooksSet: string[] = [];
        if (webhook)
          for (const events of flow.filter((n) => n.type === 'bulkgate-events')) {
            hooksSet.push(
              `${demo.editorUrl}/${String(events.path || '/bulkgate/events').replace(/^\//, '')}?token=${SECRET}`,
            );
            assert.equal((await call('/simulator/webhook', 'POST', { url: hooksSet.at(-1) })).status, 200);
          }
        await until('the flow to be deployed', async () =>
          ((await (await fetch(`${demo.editorUrl}/flows`)).json()) as FlowNode[]).some((n) => n.z === 'spend-tab'),
        );
        const injects = flow.filter((n) => n.type === 'inject');
        const last = flow.some((n) => n.type === 'bulkgate-escalation')
          ? injects.filter((inject) => endsAnIncident(inject, flow))
          : [];
        const raising = injects.filter((inject) => !last.includes(inject));
        for (const inject of raising) await pressByApi(demo.editorUrl)(inject.id);
        // Waits for the clock: every timeout and step of the example passes twice (and a report's delay).
        await new Promise((r) => setTimeout(r, Math.max(5, 2 * waits + 3) * 1000));
        for (const inject of last) await pressByApi(demo.editorUrl)(inject.id);
        // A fixed wait: what a late acknowledgement or resolve could still set off (nothing must be sent).
        if (last.length) await new Promise((r) => setTimeout(r, 2000));
        // With the webhook: each events node's was called and answered (the negative control: without one, nothing reaches the flow).
        if (webhook) {
          const hooks = (
            (await (await call('/simulator/webhook', 'GET')).json()) as {
              webhooks: { url: string; answered: number }[];
            }
          ).webhooks;
          for (const url of hooksSet)
            assert.ok(
              (hooks.find((h) => h.url === url)?.answered ?? 0) > 0,
              `the webhook ${url.split('?')[0]} was called and answered`,
            );
        }
        const sent = (await outbox()).slice(from).map(({ number, text }) => ({ number, text }));
        const numbers = byNumber(sent);
        console.log(
          `      ${file}: ${[...numbers].map(([n, texts]) => `${n} ×${texts.length}`).join(', ') || 'no SMS'} in ${Math.max(5, 2 * waits + 3)} s`,
        );
        const often = [...numbers]
          .filter(([, texts]) => texts.length > MOST_PER_NUMBER)
          .map(([n, texts]) => `${n}: ${texts.length} SMS`);
        const grown = [...numbers].flatMap(([n, texts]) =>
          texts.flatMap((later, j) =>
            texts
              .slice(0, j)
              .flatMap((earlier) =>
                later.length > earlier.length && later.includes(earlier) ? [`${n}: "${earlier}" → "${later}"`] : [],
              ),
          ),
        );
        // Every chain raised and run to its end: each of its numbers texted once per step it is in, per round and incident.
        const expected = chainTexts(flow, raising);
        const chains = [...expected].map(([n, count]) => `${n}: ${numbers.get(n)?.length ?? 0} of ${count}`);
        // All at once: a loop shows in any, and the failure says which.
        assert.deepEqual(
          {
            [`more than ${MOST_PER_NUMBER} SMS`]: often,
            'a text grown out of an earlier one': grown.slice(0, 5),
            "a chain's SMS": chains,
          },
          {
            [`more than ${MOST_PER_NUMBER} SMS`]: [],
            'a text grown out of an earlier one': [],
            "a chain's SMS": [...expected].map(([n, count]) => `${n}: ${count} of ${count}`),
          },
        );
      });
    }
  });
}

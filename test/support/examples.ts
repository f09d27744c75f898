/**
 * What each example does when its inject buttons are clicked, against the simulator: the debug
 * output each click must bring, and the only errors it may show (on purpose). Shared by the demo
 * test (all examples on their tabs) and the examples test (each file imported alone).
 */
import assert from 'node:assert/strict';
import WebSocket from 'ws';
import { until } from './wait';

export interface DebugFrame {
  id: string;
  name?: string;
  msg: string;
  format: string;
  /** Set on log entries (node.error/warn): 20 error, 30 warning. */
  level?: number;
}

export interface StatusFrame {
  id: string;
  fill?: string;
  text?: string;
}

export interface Expected {
  /** A debug node's name, what its msg must show, and how many such msgs at least. */
  name: string;
  match?: RegExp;
  count?: number;
}

export interface Click {
  inject: string;
  expect: Expected[];
  /** Node ids (as in the example file) whose red status or error log this click shows on purpose. */
  errorsOnPurpose?: string[];
  /** Debug names that must not show for this click. */
  absent?: string[];
  /** Milliseconds to wait before checking what must not show (past a timeout that must not fire); default 500. */
  settle?: number;
}

/** Example 02's Catch: an alert that did not go out (rate limited, no credit, …). */
export const DOOR_ALERT_FAILED = 'alert failed (rate limited, no credit, ...)';

/** Examples by the number their file name starts with. */
export const EXAMPLE_CLICKS: Record<string, Click[]> = {
  // The inject stands in for the door contact; the tests publish to the broker too.
  '02': [
    {
      inject: 'ex02-i1',
      expect: [{ name: 'door alarm: sent', match: /"status":"accepted"/ }],
      absent: [DOOR_ALERT_FAILED],
    },
  ],
  '01': [
    { inject: 'ex01-i1', expect: [{ name: 'door alert: accepted', match: /"status":"accepted"/ }] },
    {
      inject: 'ex01-i2',
      expect: [
        { name: 'campaign: accepted', match: /"status":"accepted"/, count: 2 },
        { name: 'campaign: rejected', match: /"code":9/ },
        { name: 'campaign: summary', match: /"accepted":2.*"error":1|"error":1.*"accepted":2/ },
      ],
    },
    { inject: 'ex01-i3', expect: [{ name: 'cascade: per recipient', match: /"status":"accepted"/, count: 2 }] },
    // 100 credits, threshold 50: the credit, and no low-credit warning.
    { inject: 'ex01-i4', expect: [{ name: 'credit', match: /"credit":/ }], absent: ['credit is low!'] },
    {
      inject: 'ex01-i5',
      expect: [{ name: 'caught error', match: /schedule must be a Date/ }],
      errorsOnPurpose: ['ex01-t2'],
    },
  ],
  '03': [
    {
      inject: 'ex03-i1',
      expect: [
        { name: 'campaign: results per recipient', match: /"status":"scheduled"/ },
        { name: 'campaign: summary (price, counters)', match: /"scheduled":3/ },
      ],
    },
  ],
  '04': [
    { inject: 'ex04-i1', expect: [{ name: 'daily credit', match: /"credit":/ }], absent: ['top-up reminder sent'] },
  ],
  '05': [
    {
      inject: 'ex05-i1',
      expect: [{ name: 'shipping notice: accepted', match: /"status":"accepted"/ }],
      absent: ['shipping notice: rejected'],
    },
    // The WhatsApp user on WhatsApp (0.04 credits), the other by SMS (0.05): each accepted.
    { inject: 'ex05-i2', expect: [{ name: 'water alarm: result', match: /"status":"accepted".*"price":0.04/ }] },
    { inject: 'ex05-i3', expect: [{ name: 'water alarm: result', match: /"status":"accepted".*"price":0.05/ }] },
  ],
  '06': [
    // The owner answers the kitchen alarm: the reply is matched to it.
    { inject: 'ex06-i3', expect: [{ name: 'alarm accepted', match: /"status":"accepted"/ }] },
    { inject: 'ex06-i4', expect: [{ name: 'acknowledged', match: /"acknowledged":"alarm\/kitchen"/ }] },
    // No report within 5 s for the garage alarm: shown once, and nothing is texted for it (escalation is example 10's).
    {
      inject: 'ex06-i1',
      expect: [{ name: 'alarm not delivered (in time)', match: /"alarm":"alarm\/garage".*"status":"no_report"/ }],
    },
    {
      inject: 'ex06-i2',
      expect: [{ name: 'alarm delivered', match: /"alarm":"alarm\/cellar".*"status":"delivered"/ }],
      absent: ['alarm not delivered (in time)'],
    },
    // A STOP reply puts the number on the opt-out list; the check then finds it there.
    {
      inject: 'ex06-i7',
      expect: [{ name: 'not on the list', match: /"number":"420777000125","listed":false/ }],
      absent: ['on the opt-out list'],
    },
    { inject: 'ex06-i5', expect: [{ name: 'opted out', match: /blacklisted/ }] },
    {
      inject: 'ex06-i6',
      expect: [{ name: 'on the opt-out list', match: /"number":"420777000124","listed":true/ }],
      absent: ['not on the list'],
    },
  ],
  '08': [
    {
      inject: 'ex08-i1',
      expect: [
        { name: 'valid number', match: /"valid":true/, count: 2 },
        { name: 'invalid number', match: /"phone_number":"12ab","valid":false/ },
        { name: 'contact saved', match: /"phone_mobile":"42077700030[12]"/, count: 2 },
      ],
    },
    {
      inject: 'ex08-i2',
      expect: [{ name: 'contact', match: /"phone_mobile":"420777000301".*"note":"number checked"/ }],
    },
    { inject: 'ex08-i3', expect: [{ name: 'consent', match: /"agreement":"20\d\d-/ }] },
  ],
  // The gateway away: the alarm gives up after its 5 s and the siren's stand-in goes; then the gateway is back.
  '09': [
    { inject: 'ex09-i1', expect: [{ name: 'simulator', match: /"ok":true/ }] },
    {
      inject: 'ex09-i2',
      expect: [{ name: 'fallback: siren', match: /Siren on: Alarm: the front door opened \(Not sent within 5 s/ }],
      absent: ['alarm: sent', 'alarm: other failure'],
      errorsOnPurpose: ['ex09-t1'],
    },
    { inject: 'ex09-i3', expect: [{ name: 'simulator', match: /"ok":true/ }] },
  ],
  '07': [
    { inject: 'ex07-i1', expect: [{ name: 'code sent', match: /otp-/ }] },
    { inject: 'ex07-i2', expect: [{ name: 'wrong code', match: /"verified":false/ }], absent: ['door opens'] },
    { inject: 'ex07-i3', expect: [{ name: 'door opens', match: /"verified":true/ }], absent: ['wrong code'] },
  ],
};

/** The editor's websocket: debug msgs, error logs and node statuses as the sidebar gets them. */
export class Sidebar {
  readonly debug: DebugFrame[] = [];
  readonly statuses: StatusFrame[] = [];
  private socket: WebSocket | undefined;

  async open(editorUrl: string): Promise<void> {
    const socket = new WebSocket(`${editorUrl.replace(/^http/, 'ws')}/comms`);
    this.socket = socket;
    await new Promise((resolve, reject) => {
      socket.once('open', resolve);
      socket.once('error', reject);
    });
    socket.send(JSON.stringify({ subscribe: 'debug' }));
    socket.send(JSON.stringify({ subscribe: 'status/#' }));
    socket.on('message', (data) => {
      const frames = JSON.parse(String(data)) as { topic: string; data: Record<string, unknown> }[];
      for (const frame of [frames].flat()) {
        if (frame.topic === 'debug') this.debug.push(frame.data as unknown as DebugFrame);
        else if (frame.topic.startsWith('status/'))
          this.statuses.push({ id: frame.topic.slice(7), ...(frame.data as object) });
      }
    });
  }

  close(): void {
    this.socket?.close();
  }
}

export { until };

/**
 * Clicks one inject (`press`: its button in Chromium, or the admin API call the button makes) and
 * checks what followed: every
 * expected debug msg, none of the absent ones, and no error log or red status but those shown on
 * purpose. `nodeId` maps an id of the example file to the deployed one.
 */
export async function click(
  press: (injectId: string) => Promise<void>,
  sidebar: Sidebar,
  clickSpec: Click,
  nodeId: (id: string) => string,
): Promise<void> {
  const debugFrom = sidebar.debug.length;
  const statusFrom = sidebar.statuses.length;
  await press(nodeId(clickSpec.inject));
  const since = () => sidebar.debug.slice(debugFrom);
  for (const e of clickSpec.expect) {
    const matching = () => since().filter((d) => d.name === e.name && (!e.match || e.match.test(d.msg)));
    await until(
      `${e.count ?? 1} "${e.name}" msg(s)${e.match ? ` matching ${e.match}` : ''} after ${clickSpec.inject}; got:\n${since()
        .map((d) => `${d.name}: ${d.msg.slice(0, 200)}`)
        .join('\n')}`,
      () => matching().length >= (e.count ?? 1),
    );
  }
  // checks that nothing comes late (a second recipient, an error, a timeout's output that must not fire)
  await new Promise((r) => setTimeout(r, clickSpec.settle ?? 500));
  const allowed = new Set((clickSpec.errorsOnPurpose ?? []).map(nodeId));
  const errors = since().filter((d) => d.level === 20 && !allowed.has(d.id));
  assert.deepEqual(
    errors.map((d) => d.msg),
    [],
    `no error but those on purpose after ${clickSpec.inject}`,
  );
  const red = sidebar.statuses.slice(statusFrom).filter((s) => s.fill === 'red' && !allowed.has(s.id));
  assert.deepEqual(red, [], `no red status but those on purpose after ${clickSpec.inject}`);
  const caught = since().filter((d) => d.name === 'caught error');
  if (!clickSpec.expect.some((e) => e.name === 'caught error'))
    assert.deepEqual(
      caught.map((d) => d.msg),
      [],
      'nothing caught',
    );
  for (const name of clickSpec.absent ?? [])
    assert.deepEqual(
      since()
        .filter((d) => d.name === name)
        .map((d) => d.msg),
      [],
      `no "${name}" after ${clickSpec.inject}`,
    );
}

/** The admin API call an inject button makes (repeated while the just-deployed node has not started: 404). */
export const pressByApi =
  (editorUrl: string) =>
  async (injectId: string): Promise<void> => {
    let res: Response | undefined;
    await until(
      `inject ${injectId} to start`,
      async () => (res = await fetch(`${editorUrl}/inject/${injectId}`, { method: 'POST' })).status !== 404,
      5000,
      {
        every: 100,
      },
    ).catch(() => undefined);
    if (!res) throw new Error(`inject ${injectId}: no answer`);
    assert.equal(res.status, 200, `inject ${injectId}: HTTP ${res.status} ${await res.text()}`);
  };

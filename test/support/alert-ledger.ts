/**
 * Every alert once, counted as Jepsen counts a history, in the small: a Node-RED process of its
 * own (restarted, killed) takes alerts over HTTP, each with its own text; every end it sees (port
 * 1, port 2, Catch) is appended to a file with the life of the process it happened in, by the
 * function node the port leads to, before it returns (a kill cannot lose a line the msg reached);
 * the simulator says what it delivered. The ledger then counts, per alert: lost (neither delivered
 * nor at Catch), delivered but never out of a port or Catch, sent twice (delivered twice), ended
 * twice (two ends in one life, a Catch and a delivery, or a second end after a restart that is not
 * a resend the gateway dropped or a msg handed on after a restart), and resent after a crash (a msg
 * the dead process may have emitted, out again marked `resend` or `afterRestart`: allowed).
 */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { NodeRedProcess } from './node-red-process';
import { ACCOUNT_ID, TOKEN, type TestSimulator } from './simulator';
import { until as waitUntil } from './wait';

export const NUMBER = '420777123456';
export const alertText = (id: string) => `Alert ${id}: water on the floor`;

export interface LedgerRow {
  fault: string;
  handedIn: number;
  ended: number;
  atGateway: number;
  lost: number;
  /** Delivered, and out of no port and not at Catch in any life. */
  neverEnded: number;
  sentTwice: number;
  endedTwice: number;
  resentAfterCrash: number;
}

interface End {
  alert: string;
  end: 'port1' | 'port2' | 'catch';
  code?: string;
  duplicate?: string;
  afterRestart?: boolean;
  life: string;
}

export interface FlowOptions {
  api?: 'advanced' | 'simple';
  version?: '2.0' | '1.0';
  /** Extra account settings. */
  account?: Record<string, unknown>;
}

/** The flow: POST /alerts {alerts: [id...]} hands each alert to a transactional node; every end is appended to ends.jsonl. */
export function alertFlow(copy: NodeRedProcess, sim: TestSimulator, options: FlowOptions = {}): void {
  const ends = join(copy.userDir, 'ends.jsonl');
  const record = (end: string) =>
    `const b = msg.bulkgate || {}; global.get('appendLine')(${JSON.stringify(ends)}, JSON.stringify({ alert: msg.alert, end: '${end}', code: msg.error && msg.error.code, duplicate: b.duplicate, afterRestart: b.deferred && b.deferred.afterRestart, life: env.get('LIFE') })); return null;`;
  copy.flows(
    [
      { id: 'tab', type: 'tab', label: 'alerts' },
      {
        id: 'acc',
        type: 'bulkgate-account',
        name: 'faults',
        baseUrl: sim.url,
        retries: 0,
        timeout: 5000,
        outboxDelay: 200,
        outboxSize: 20000,
        ...options.account,
      },
      { id: 'in', z: 'tab', type: 'http in', url: '/alerts', method: 'post', upload: false, wires: [['split']] },
      {
        id: 'split',
        z: 'tab',
        type: 'function',
        outputs: 2,
        func: `for (const alert of msg.payload.alerts) node.send([{ alert, topic: alert, number: '${NUMBER}', payload: 'Alert ' + alert + ': water on the floor' }, null]);
msg.payload = { taken: msg.payload.alerts.length };
return [null, msg];`,
        wires: [['t'], ['res']],
      },
      { id: 'res', z: 'tab', type: 'http response', statusCode: '', headers: {}, wires: [] },
      {
        id: 't',
        z: 'tab',
        type: 'bulkgate-transactional',
        account: 'acc',
        api: options.api ?? 'advanced',
        version: options.version ?? '2.0',
        text: '',
        wires: [['end1'], ['end2']],
      },
      { id: 'c', z: 'tab', type: 'catch', scope: null, uncaught: false, wires: [['endCatch']] },
      { id: 'end1', z: 'tab', type: 'function', func: record('port1'), outputs: 1, wires: [] },
      { id: 'end2', z: 'tab', type: 'function', func: record('port2'), outputs: 1, wires: [] },
      { id: 'endCatch', z: 'tab', type: 'function', func: record('catch'), outputs: 1, wires: [] },
    ],
    { acc: { application_id: ACCOUNT_ID, application_token: TOKEN } },
  );
}

/** Hands alerts in, a few hundred per request; resolves when the flow took them all. */
export async function handIn(editor: string, alerts: string[]): Promise<void> {
  for (let i = 0; i < alerts.length; i += 250) {
    const res = await fetch(`${editor}/alerts`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ alerts: alerts.slice(i, i + 250) }),
    });
    if (res.status !== 200) throw new Error(`handing alerts in: HTTP ${res.status}`);
    await res.arrayBuffer();
  }
}

export const outboxPath = (copy: NodeRedProcess) => join(copy.userDir, 'bulkgate-outbox', 'acc.jsonl');

/** The ids of the entries the outbox's journal holds (whole lines only): waiting, or ended with their msg not yet out of their node. */
export function waitingInJournal(copy: NodeRedProcess): Set<string> {
  const live = new Set<string>();
  const path = outboxPath(copy);
  if (!existsSync(path)) return live;
  const text = readFileSync(path, 'utf8');
  for (const line of text.slice(0, text.lastIndexOf('\n') + 1).split('\n')) {
    try {
      const value = JSON.parse(line) as { id?: string; done?: string; end?: unknown; emitted?: string; node?: string };
      if (typeof value.emitted === 'string') live.delete(value.emitted);
      else if (typeof value.done === 'string') {
        if (value.end === undefined) live.delete(value.done);
      } else if (typeof value.id === 'string' && value.node) live.add(value.id);
    } catch {
      // A damaged line is the journal's to skip.
    }
  }
  return live;
}

/** The ends the process's flow saw, in every life so far. */
export function endsSeen(copy: NodeRedProcess): End[] {
  const path = join(copy.userDir, 'ends.jsonl');
  if (!existsSync(path)) return [];
  const ends: End[] = [];
  for (const line of readFileSync(path, 'utf8').split('\n')) {
    if (!line) continue;
    try {
      ends.push(JSON.parse(line) as End);
    } catch {
      // A line the killed process wrote in part: its end is counted from the gateway's side.
    }
  }
  return ends;
}

/** How many times the simulator delivered each alert's text. */
export function deliveries(sim: TestSimulator): Map<string, number> {
  const count = new Map<string, number>();
  for (const message of sim.sim.gateway.state.outbox) {
    const alert = /^Alert (\S+): water on the floor$/.exec(message.text)?.[1];
    if (alert) count.set(alert, (count.get(alert) ?? 0) + 1);
  }
  return count;
}

/**
 * The ledger of one fault: what was handed in, against what ended (in one process, or in each of
 * several copies, whose `LIFE`s differ) and what the gateway delivered. `strict`: no process
 * crashed, so a second end counts as one even when marked a resend.
 */
export function ledger(
  fault: string,
  handedIn: string[],
  copy: NodeRedProcess | NodeRedProcess[],
  sim: TestSimulator,
  options: { strict?: boolean } = {},
): LedgerRow & { problems: string[] } {
  const delivered = deliveries(sim);
  const byAlert = new Map<string, End[]>();
  for (const end of [copy].flat().flatMap(endsSeen)) {
    const list = byAlert.get(end.alert) ?? [];
    list.push(end);
    byAlert.set(end.alert, list);
  }
  const row: LedgerRow = {
    fault,
    handedIn: handedIn.length,
    ended: 0,
    atGateway: 0,
    lost: 0,
    neverEnded: 0,
    sentTwice: 0,
    endedTwice: 0,
    resentAfterCrash: 0,
  };
  const problems: string[] = [];
  for (const alert of handedIn) {
    const ends = byAlert.get(alert) ?? [];
    const times = delivered.get(alert) ?? 0;
    const caught = ends.some((e) => e.end === 'catch');
    if (ends.length) row.ended++;
    if (times) row.atGateway++;
    if (!times && !caught) {
      row.lost++;
      problems.push(`${alert} lost (ends: ${JSON.stringify(ends)})`);
    }
    if (times && !ends.length) {
      row.neverEnded++;
      problems.push(`${alert} delivered ${times} time(s), never out of a port or Catch`);
    }
    if (times > 1) {
      row.sentTwice++;
      problems.push(`${alert} delivered ${times} times`);
    }
    // Unconfirmed (a simple 1.0 attempt without an answer when Node-RED was killed): it may have been delivered.
    let twice = caught && times > 0 && !ends.some((e) => e.code === 'unconfirmed');
    const lives = new Map<string, number>();
    for (const end of ends) lives.set(end.life, (lives.get(end.life) ?? 0) + 1);
    if ([...lives.values()].some((n) => n > 1)) twice = true;
    // Ends in later lives: a resend the gateway dropped (allowed after a crash), or a second end.
    for (const end of ends.slice(1)) {
      if (end.life === ends[0]?.life) continue;
      // Marked: a resend the gateway dropped, or the same end again, handed on after a restart (the dead process may have handed it on already).
      if (
        !options.strict &&
        ((end.duplicate === 'resend' && ends[0]?.end !== 'catch') || (end.afterRestart && end.end === ends[0]?.end))
      )
        row.resentAfterCrash++;
      else twice = true;
    }
    if (twice) {
      row.endedTwice++;
      problems.push(`${alert} ended twice (delivered ${times}; ends: ${JSON.stringify(ends)})`);
    }
  }
  return { ...row, problems };
}

export const until = (
  what: string,
  check: () => boolean | Promise<boolean>,
  ms: number,
  output: () => string = () => '',
): Promise<void> => waitUntil(what, check, ms, { detail: () => output().slice(-4000) });

/** The rows of every fault run so far, printed as a table when the suite ends. */
export const rows: LedgerRow[] = [];

export function table(): string {
  const head =
    '| fault | handed in | ended | at the gateway | lost | never out of a port or Catch | sent twice | ended twice | resent after a crash |';
  const lines = rows.map(
    (r) =>
      `| ${r.fault} | ${r.handedIn} | ${r.ended} | ${r.atGateway} | ${r.lost} | ${r.neverEnded} | ${r.sentTwice} | ${r.endedTwice} | ${r.resentAfterCrash} |`,
  );
  return [head, '|---|---|---|---|---|---|---|---|---|', ...lines].join('\n');
}

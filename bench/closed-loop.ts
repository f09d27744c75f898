/** The closed loops: the package node beside the core http request flow, the floor node and raw undici, at each concurrency. */
import { Pool } from 'undici';
import {
  CONCURRENCY,
  FlowNode,
  ID,
  ONLY,
  PLAN,
  Sender,
  TOKEN,
  closedLoop,
  describeRatio,
  inRounds,
  median,
  round,
  runtime,
  setRatio,
  settledMs,
} from './harness';

/** The nodes for one server: the package's transactional node, and the function + http request flow. */
export function throughputFlow(key: string, baseUrl: string): FlowNode[] {
  const func = `msg.url = ${JSON.stringify(`${baseUrl}/api/2.0/advanced/transactional`)};
msg.method = 'POST';
msg.headers = { 'content-type': 'application/json', 'cache-control': 'no-cache' };
msg.payload = { application_id: ${JSON.stringify(ID)}, application_token: ${JSON.stringify(TOKEN)}, number: msg.number, text: msg.payload };
return msg;`;
  return [
    {
      id: `${key}-acc`,
      type: 'bulkgate-account',
      baseUrl,
      retries: 0,
      timeout: 15000,
      credentials: { application_id: ID, application_token: TOKEN },
    },
    {
      id: `${key}-package`,
      type: 'bulkgate-transactional',
      account: `${key}-acc`,
      text: '',
      wires: [[`${key}-package-out`], [`${key}-package-out`]],
    },
    { id: `${key}-package-out`, type: 'bench-sink' },
    // What a user builds without the package: a function node and the core http request node.
    { id: `${key}-core`, type: 'function', func, outputs: 1, wires: [[`${key}-http`]] },
    {
      id: `${key}-http`,
      type: 'http request',
      method: 'use',
      ret: 'obj',
      paytoqs: 'ignore',
      url: '',
      tls: '',
      persist: true,
      proxy: '',
      insecureHTTPParser: false,
      authType: '',
      senderr: false,
      headers: [],
      wires: [[`${key}-core-out`]],
    },
    { id: `${key}-core-out`, type: 'bench-sink' },
    // The floor: a node that only sends the body with undici (what any node costs in Node-RED).
    {
      id: `${key}-floor`,
      type: 'bench-undici',
      url: `${baseUrl}/api/2.0/advanced/transactional`,
      body: {
        application_id: ID,
        application_token: TOKEN,
        number: '420777123456',
        text: 'Door opened, bench message',
      },
      wires: [[`${key}-floor-out`]],
    },
    { id: `${key}-floor-out`, type: 'bench-sink' },
  ];
}

export function nodeRedSender(inputId: string): Sender {
  const input = runtime.node(inputId);
  const pending = new Map<number, () => void>();
  runtime.onSink(`${inputId}-out`, (msg) => {
    const done = pending.get(msg.seq as number);
    pending.delete(msg.seq as number);
    done?.();
  });
  return {
    send: (i, done) => {
      pending.set(i, done);
      input.receive({ seq: i, payload: `Door opened, bench message ${i}`, number: '420777123456' });
    },
    close: async () => undefined,
  };
}

/** The fastest a client could be here: undici's pool with the same body. */
export function rawUndiciSender(baseUrl: string): Sender {
  const url = new URL(baseUrl);
  const pool = new Pool(url.origin, { connections: 64 });
  return {
    send: (i, done) => {
      const body = JSON.stringify({
        application_id: ID,
        application_token: TOKEN,
        number: '420777123456',
        text: `Door opened, bench message ${i}`,
      });
      pool
        .request({
          path: '/api/2.0/advanced/transactional',
          method: 'POST',
          headers: { 'content-type': 'application/json', 'cache-control': 'no-cache' },
          body,
        })
        .then((res) => res.body.json())
        .then(
          () => done(),
          () => done(),
        );
    },
    close: () => pool.close(),
  };
}

export const CLIENTS = ['package node', 'core http request', 'node-red floor', 'raw undici'] as const;

/**
 * All clients are deployed at once and measured in rounds (`inRounds`), so a slow moment of this
 * shared machine does not land on one client only.
 */
export async function throughput(servers: Record<string, string>) {
  await runtime.deploy(Object.entries(servers).flatMap(([key, url]) => throughputFlow(key, url)));
  const senders = new Map<string, Sender>();
  for (const [key, url] of Object.entries(servers)) {
    senders.set(`${key}|package node`, nodeRedSender(`${key}-package`));
    senders.set(`${key}|core http request`, nodeRedSender(`${key}-core`));
    senders.set(`${key}|node-red floor`, nodeRedSender(`${key}-floor`));
    senders.set(`${key}|raw undici`, rawUndiciSender(url));
  }
  const chosen = [...senders.keys()].filter((k) => !ONLY || k.endsWith(`|${ONLY}`));
  // The package node and the floor of each server are compared (a target for the fixed server):
  // they run back to back; the others once per round.
  const units = Object.keys(servers).flatMap((server) => {
    const compared = [`${server}|package node`, `${server}|node-red floor`].filter((k) => chosen.includes(k));
    const others = chosen.filter((k) => k.startsWith(`${server}|`) && !compared.includes(k));
    return [...(compared.length > 1 ? [compared] : compared), ...others];
  });
  const rows: Record<string, unknown>[] = [];
  for (const concurrency of CONCURRENCY) {
    const messages = (key: string) => {
      const count = PLAN.messages[concurrency] as number;
      // The core flow is about a sixth as fast: a quarter of the msgs still makes its runs the
      // longest, and keeps them from being most of the benchmark's time.
      return key.endsWith('|core http request') ? Math.ceil(count / 4) : count;
    };
    const sender = (key: string) => senders.get(key) as Sender;
    for (const key of chosen) await closedLoop(Math.ceil(messages(key) / 2), concurrency, sender(key).send); // warm-up
    const { runs, sets } = await inRounds(units, (key) => closedLoop(messages(key), concurrency, sender(key).send));
    for (const [key, list] of runs) {
      const [server, client] = key.split('|') as [string, string];
      const row: Record<string, unknown> = {
        server,
        client,
        concurrency,
        msgsPerSec: round(median(list.map((x) => x.msgsPerSec)), 0),
        p50ms: round(median(list.map((x) => x.p50))),
        p99ms: round(median(list.map((x) => x.p99))),
        cpuUsPerMsg: round(median(list.map((x) => x.cpuUsPerMsg)), 0),
        runs: list.length,
      };
      if (client === 'package node') {
        const vsFloor = setRatio(sets, key, `${server}|node-red floor`);
        if (vsFloor) row.vsFloor = vsFloor;
        console.log(
          `closed loop c=${concurrency} ${server}: package node vs node-red floor, back to back ${describeRatio(vsFloor)}`,
        );
      }
      rows.push(row);
    }
  }
  rows.sort(
    (a, b) =>
      `${a.server}${CLIENTS.indexOf(a.client as never)}`.localeCompare(
        `${b.server}${CLIENTS.indexOf(b.client as never)}`,
      ) || (a.concurrency as number) - (b.concurrency as number),
  );
  for (const row of rows) {
    console.log(
      `${String(row.server).padEnd(10)} ${String(row.client).padEnd(18)} c=${String(row.concurrency).padEnd(3)} ${String(row.msgsPerSec).padStart(6)} msg/s  p50 ${row.p50ms} ms  p99 ${row.p99ms} ms  cpu ${row.cpuUsPerMsg} µs/msg`,
    );
  }
  console.log(`closed loops: waited ${round(settledMs / 1000, 1)} s in all for the servers to go idle before the runs`);
  for (const sender of senders.values()) await sender.close();
  return rows;
}

/** Bursts (every msg handed over at once) and promotional campaigns of 10,000 and 100,000 recipients. */
import { performance } from 'node:perf_hooks';
import { GatewayClient, sendOperation } from '../gateway';
import {
  FlowNode,
  ID,
  ONLY,
  PLAN,
  QUICK,
  TOKEN,
  describeRatio,
  gc,
  inRounds,
  median,
  round,
  runtime,
  setRatio,
} from './harness';

/**
 * The burst shapes: every msg handed over at once, as an alarm storm or a flow that
 * splits a list does, into one node (10,000 msgs) and into 100 nodes (100 msgs each), the
 * package's transactional node beside the floor node, measured in turns. msgs/s counts from the
 * first msg handed over to the last output. A second package row has the account's outbox off
 * (outboxMinutes 0): the two side by side show what the outbox costs when every send is taken at
 * once (nothing: it writes no file then).
 */
export const BURST_SHAPES = QUICK
  ? [
      { nodes: 1, each: 2000 },
      { nodes: 20, each: 100 },
    ]
  : [
      { nodes: 1, each: 10_000 },
      { nodes: 100, each: 100 },
    ];
/** A burst shape's name, as the rows, the back-to-back line and the targets print it. */
export const burstShape = ({ nodes, each }: { nodes: number; each: number }) =>
  `${nodes} node${nodes > 1 ? 's' : ''} x ${each}`;

export const BURST_CLIENTS = {
  package: 'package node',
  nooutbox: 'package node, outbox off',
  floor: 'node-red floor',
} as const;
export type BurstClient = keyof typeof BURST_CLIENTS;

export function burstFlow(baseUrl: string, nodes: number): FlowNode[] {
  const account = {
    type: 'bulkgate-account',
    baseUrl,
    retries: 0,
    timeout: 60000,
    credentials: { application_id: ID, application_token: TOKEN },
  };
  const flow: FlowNode[] = [
    { id: 'burst-acc', ...account },
    { id: 'burst-acc-nooutbox', ...account, outboxMinutes: 0 },
    { id: 'burst-package-out', type: 'bench-sink' },
    { id: 'burst-nooutbox-out', type: 'bench-sink' },
    { id: 'burst-floor-out', type: 'bench-sink' },
  ];
  for (let n = 0; n < nodes; n++) {
    for (const [client, acc] of [
      ['package', 'burst-acc'],
      ['nooutbox', 'burst-acc-nooutbox'],
    ]) {
      flow.push({
        id: `burst-${client}-${n}`,
        type: 'bulkgate-transactional',
        account: acc,
        text: '',
        wires: [[`burst-${client}-out`], [`burst-${client}-out`]],
      });
    }
    flow.push({
      id: `burst-floor-${n}`,
      type: 'bench-undici',
      url: `${baseUrl}/api/2.0/advanced/transactional`,
      body: {
        application_id: ID,
        application_token: TOKEN,
        number: '420777123456',
        text: 'Door opened, bench message',
      },
      wires: [['burst-floor-out']],
    });
  }
  return flow;
}

export async function burstRun(
  client: BurstClient,
  nodes: number,
  each: number,
): Promise<{ msgsPerSec: number; cpuUsPerMsg: number }> {
  const total = nodes * each;
  const inputs = Array.from({ length: nodes }, (_, n) => runtime.node(`burst-${client}-${n}`));
  const cpu0 = process.cpuUsage();
  const t0 = performance.now();
  await new Promise<void>((resolve) => {
    let outputs = 0;
    runtime.onSink(`burst-${client}-out`, () => {
      if (++outputs === total) resolve();
    });
    for (let i = 0; i < each; i++) {
      for (const input of inputs) input.receive({ payload: `Door opened, bench message ${i}`, number: '420777123456' });
    }
  });
  const elapsed = performance.now() - t0;
  const cpu = process.cpuUsage(cpu0);
  return { msgsPerSec: (total / elapsed) * 1000, cpuUsPerMsg: (cpu.user + cpu.system) / total };
}

export async function burst(fixedUrl: string) {
  const rows: Record<string, unknown>[] = [];
  for (const { nodes, each } of BURST_SHAPES) {
    const shape = burstShape({ nodes, each });
    await runtime.deploy(burstFlow(fixedUrl, nodes));
    const clients = (Object.keys(BURST_CLIENTS) as BurstClient[]).filter((c) => !ONLY || ONLY === BURST_CLIENTS[c]);
    for (const client of clients) await burstRun(client, nodes, Math.ceil(each / 2)); // warm-up
    // The three are compared with each other (the package node with the floor, and with its
    // outbox off): back to back, in sets.
    const { runs, sets } = await inRounds(clients.length > 1 ? [clients] : clients, (client) =>
      burstRun(client as BurstClient, nodes, each),
    );
    const vsFloor = setRatio(sets, 'package', 'floor');
    const vsOutboxOff = setRatio(sets, 'package', 'nooutbox');
    for (const [client, list] of runs) {
      const row: Record<string, unknown> = {
        shape,
        client: BURST_CLIENTS[client as BurstClient],
        msgsPerSec: round(median(list.map((x) => x.msgsPerSec)), 0),
        cpuUsPerMsg: round(median(list.map((x) => x.cpuUsPerMsg)), 0),
        runs: list.length,
        ...(client === 'package' && vsFloor ? { vsFloor } : {}),
        ...(client === 'package' && vsOutboxOff ? { vsOutboxOff } : {}),
      };
      rows.push(row);
      console.log(
        `burst ${shape.padEnd(16)} ${String(row.client).padEnd(25)} ${String(row.msgsPerSec).padStart(6)} msg/s  cpu ${row.cpuUsPerMsg} µs/msg`,
      );
    }
    if (runs.has('package')) {
      console.log(
        `burst ${shape}: back to back, package node vs node-red floor ${describeRatio(vsFloor)}, outbox on vs off ${describeRatio(vsOutboxOff)}`,
      );
    }
  }
  return rows;
}

export async function promotional(fixedUrl: string) {
  const results: Record<string, unknown>[] = [];
  const client = new GatewayClient({ baseUrl: fixedUrl, applicationId: ID, applicationToken: TOKEN });
  for (const recipients of PLAN.recipients) {
    const number = Array.from({ length: recipients }, (_, i) => ({
      number: `420777${String(i).padStart(6, '0')}`,
      variables: { first_name: `Name${i}`, code: i },
    }));
    const fields = { number, text: 'Hi <first_name>, your code is <code>.' };
    const build: number[] = [];
    for (let r = 0; r < PLAN.runs; r++) {
      const t = performance.now();
      client.prepareOperation(sendOperation('promotional'), fields);
      build.push(performance.now() - t);
    }
    await runtime.deploy([
      {
        id: 'acc',
        type: 'bulkgate-account',
        baseUrl: fixedUrl,
        retries: 0,
        timeout: 60000,
        credentials: { application_id: ID, application_token: TOKEN },
      },
      {
        id: 'p',
        type: 'bulkgate-promotional',
        account: 'acc',
        text: 'Hi <first_name>, your code is <code>.',
        wires: [['out'], ['out'], ['sum']],
      },
      { id: 'out', type: 'bench-sink' },
      { id: 'sum', type: 'bench-sink' },
    ]);
    const p = runtime.node('p');
    const runs: { ms: number; rssMB: number; heapMB: number }[] = [];
    for (let r = 0; r < PLAN.runs + 1; r++) {
      gc();
      const base = process.memoryUsage();
      let peakRss = base.rss;
      let peakHeap = base.heapUsed;
      const sampler = setInterval(() => {
        const m = process.memoryUsage();
        peakRss = Math.max(peakRss, m.rss);
        peakHeap = Math.max(peakHeap, m.heapUsed);
      }, 5);
      const t0 = performance.now();
      await new Promise<void>((resolve) => {
        let outputs = 0;
        const count = () => {
          outputs++;
          if (outputs === recipients + 1) resolve();
        };
        runtime.onSink('out', count);
        runtime.onSink('sum', count);
        p.receive({ payload: { number } });
      });
      const ms = performance.now() - t0;
      clearInterval(sampler);
      const m = process.memoryUsage();
      peakRss = Math.max(peakRss, m.rss);
      peakHeap = Math.max(peakHeap, m.heapUsed);
      if (r > 0) runs.push({ ms, rssMB: (peakRss - base.rss) / 2 ** 20, heapMB: (peakHeap - base.heapUsed) / 2 ** 20 }); // run 0 warms up
    }
    const row = {
      recipients,
      inputToLastOutputMs: round(median(runs.map((x) => x.ms)), 0),
      buildAndValidateMs: round(median(build), 1),
      peakRssGrowthMB: round(median(runs.map((x) => x.rssMB)), 1),
      peakHeapGrowthMB: round(median(runs.map((x) => x.heapMB)), 1),
    };
    results.push(row);
    console.log(
      `promotional ${recipients} recipients: input → last of ${recipients + 1} outputs ${row.inputToLastOutputMs} ms, build+validate ${row.buildAndValidateMs} ms, peak RSS +${row.peakRssGrowthMB} MB, heap +${row.peakHeapGrowthMB} MB`,
    );
  }
  await client.close();
  return results;
}

/**
 * The outbox at scale, against the fixed-answer server (its `/control/down` and `/control/up`
 * switch an outage: every API request answered 503, and counted):
 * - an alarm storm during an outage: how many requests reach the failing gateway;
 * - the backlog it leaves, drained when the gateway returns: msgs/s from the first to the last
 *   that leaves, and the event loop's delay meanwhile (p99), which is what another route of the
 *   same Node-RED waits on top of its own work;
 * - 100,000 numbers through a number check: the event loop's delay meanwhile (p99);
 * - three promotional lists of 10,000 numbers each, sent at once, live and from the outbox after
 *   an outage: the event loop's delay meanwhile (p99), what another route waits on.
 */
import { readFileSync } from 'node:fs';
import { monitorEventLoopDelay, performance } from 'node:perf_hooks';

type FlowNode = Record<string, unknown> & { id: string; type: string };
export interface ScaleRuntime {
  deploy(flow: FlowNode[]): Promise<void>;
  node(id: string): { receive(msg: unknown): void };
  onSink(id: string, listener: (msg: Record<string, unknown>) => void): void;
}

export interface ScalePlan {
  /** Alerts raised during the outage. */
  storm: number;
  outageSeconds: number;
  numbers: number;
}

const control = async (fixedUrl: string, what: 'down' | 'up') =>
  (await (await fetch(`${fixedUrl}/control/${what}`, { method: 'POST' })).json()) as { down: boolean; failed: number };

/** The main thread's time on a CPU so far, in ms (Linux: /proc/self/task/<pid>/schedstat); undefined elsewhere. */
function threadCpuMs(): number | undefined {
  try {
    return Number(readFileSync(`/proc/self/task/${process.pid}/schedstat`, 'utf8').split(' ')[0]) / 1e6;
  } catch {
    return undefined;
  }
}

/**
 * The event loop's delay while `work` runs, p99 and max in ms; and the main thread's CPU time
 * between two probes 5 ms apart (p99, max): on a machine that other processes share, the delay
 * also counts the time the thread waited for a core, which no code here can shorten; the CPU time
 * is what the loop itself held (at most one turn's work more than the delay an idle machine shows).
 */
async function loopDelayDuring<T>(
  work: () => Promise<T>,
): Promise<{ result: T; p99Ms: number; maxMs: number; cpuP99Ms?: number; cpuMaxMs?: number }> {
  const histogram = monitorEventLoopDelay({ resolution: 5 });
  const busy: number[] = [];
  let last = threadCpuMs();
  const probe =
    last === undefined
      ? undefined
      : setInterval(() => {
          const now = threadCpuMs() as number;
          busy.push(now - (last as number));
          last = now;
        }, 5);
  histogram.enable();
  try {
    const result = await work();
    busy.sort((a, b) => a - b);
    const cpu = busy.length
      ? {
          cpuP99Ms: round(busy[Math.min(busy.length - 1, Math.floor(0.99 * busy.length))] as number),
          cpuMaxMs: round(busy.at(-1) as number),
        }
      : {};
    return { result, p99Ms: round(histogram.percentile(99) / 1e6), maxMs: round(histogram.max / 1e6), ...cpu };
  } finally {
    histogram.disable();
    clearInterval(probe);
  }
}

const round = (n: number, digits = 1) => Math.round(n * 10 ** digits) / 10 ** digits;

export async function outboxScale(
  runtime: ScaleRuntime,
  fixedUrl: string,
  credentials: { application_id: string; application_token: string },
  plan: ScalePlan,
) {
  await runtime.deploy([
    // The account's defaults: 3 retries, a 15 s timeout, the outbox on (60 minutes), no rate limit.
    { id: 'scale-acc', type: 'bulkgate-account', baseUrl: fixedUrl, credentials },
    {
      id: 'scale-t',
      type: 'bulkgate-transactional',
      account: 'scale-acc',
      text: '',
      wires: [['scale-out'], ['scale-out']],
    },
    // Simple API 1.0: an attempt line is written before each of its resends (it cannot be sent twice).
    {
      id: 'scale-t1',
      type: 'bulkgate-transactional',
      account: 'scale-acc',
      api: 'simple',
      version: '1.0',
      text: '',
      wires: [['scale-out'], ['scale-out']],
    },
    { id: 'scale-out', type: 'bench-sink' },
    {
      id: 'scale-check',
      type: 'bulkgate-number-check',
      account: 'scale-acc',
      wires: [['scale-checked'], ['scale-checked']],
    },
    { id: 'scale-checked', type: 'bench-sink' },
  ]);
  let left = 0;
  let firstOut = 0;
  let lastOut = 0;
  let allOut: () => void = () => undefined;
  runtime.onSink('scale-out', () => {
    const now = performance.now();
    firstOut ||= now;
    lastOut = now;
    if (--left === 0) allOut();
  });

  // The storm: every alert during the outage, as a split node or a flapping sensor hands them over.
  const stormAndDrain = async (nodeId: string, outageSeconds: number) => {
    await control(fixedUrl, 'down');
    left = plan.storm;
    firstOut = 0;
    const drained = new Promise<void>((resolve) => (allOut = resolve));
    const node = runtime.node(nodeId);
    for (let i = 0; i < plan.storm; i++)
      node.receive({ payload: `Smoke in the hall ${i}`, number: '420777123456', seq: i });
    await new Promise((r) => setTimeout(r, outageSeconds * 1000));
    const { failed } = await control(fixedUrl, 'up');
    const back = performance.now();
    const delay = await loopDelayDuring(() => drained);
    return { failed, back, delay, msgsPerSec: round(plan.storm / ((lastOut - firstOut) / 1000), 0) };
  };
  const {
    failed,
    back,
    delay: drain,
    msgsPerSec: drainMsgsPerSec,
  } = await stormAndDrain('scale-t', plan.outageSeconds);
  // The same backlog on simple 1.0, whose drain records an attempt before each send: a short outage (the drain is measured).
  const simple = await stormAndDrain('scale-t1', Math.min(plan.outageSeconds, 3));

  // 100,000 numbers through one number check, after a warm-up of 10 (its first use loads the
  // endpoint's code, once per process: not what a list's size costs).
  let checked = 0;
  let expected = 10;
  let allChecked: () => void = () => undefined;
  runtime.onSink('scale-checked', () => {
    if (++checked === expected) allChecked();
  });
  await new Promise<void>((resolve) => {
    allChecked = resolve;
    runtime
      .node('scale-check')
      .receive({ payload: Array.from({ length: 10 }, (_, i) => `4207770000${String(i).padStart(2, '0')}`) });
  });
  checked = 0;
  expected = plan.numbers;
  const numbers = Array.from({ length: plan.numbers }, (_, i) => `420777${String(i).padStart(6, '0')}`);
  const started = performance.now();
  const check = await loopDelayDuring(
    () =>
      new Promise<void>((resolve) => {
        allChecked = resolve;
        runtime.node('scale-check').receive({ payload: numbers });
      }),
  );
  const lists = await bigLists(runtime, fixedUrl, credentials);
  return {
    storm: { alerts: plan.storm, outageSeconds: plan.outageSeconds, requestsToFailingGateway: failed },
    drain: {
      backlog: plan.storm,
      firstLeftAfterMs: round(firstOut - back, 0),
      msgsPerSec: drainMsgsPerSec,
      loopDelayP99Ms: drain.p99Ms,
      loopDelayMaxMs: drain.maxMs,
      loopCpuP99Ms: drain.cpuP99Ms,
    },
    drainSimple: { backlog: plan.storm, msgsPerSec: simple.msgsPerSec, loopDelayP99Ms: simple.delay.p99Ms },
    numberCheck: {
      numbers: plan.numbers,
      inputToLastOutputMs: round(performance.now() - started, 0),
      loopDelayP99Ms: check.p99Ms,
      loopDelayMaxMs: check.maxMs,
    },
    lists,
  };
}

/** Three promotional msgs of this many numbers each, sent at once (the probe). */
export const LISTS = { count: 3, numbers: 10_000 };

/**
 * Three lists at once, live, then the same three kept through a short outage and sent from the
 * outbox: the event loop's delay from the first msg in to the last summary out (p99, max).
 */
export async function bigLists(
  runtime: ScaleRuntime,
  fixedUrl: string,
  credentials: { application_id: string; application_token: string },
) {
  await runtime.deploy([
    // No retry: a 503 is kept at once (the outbox decides when the lists go again).
    {
      id: 'lists-acc',
      type: 'bulkgate-account',
      baseUrl: fixedUrl,
      retries: 0,
      timeout: 60_000,
      outboxDelay: 200,
      credentials,
    },
    {
      id: 'lists-p',
      type: 'bulkgate-promotional',
      account: 'lists-acc',
      text: 'Hi <first_name>, the water is off on Monday.',
      wires: [[], [], ['lists-sum']],
    },
    { id: 'lists-sum', type: 'bench-sink' },
  ]);
  let summaries = 0;
  let allSummed: () => void = () => undefined;
  runtime.onSink('lists-sum', () => {
    if (++summaries === LISTS.count) allSummed();
  });
  const lists = Array.from({ length: LISTS.count }, (_, l) =>
    Array.from({ length: LISTS.numbers }, (_, i) => ({
      number: `42077${l}${String(i).padStart(6, '0')}`,
      variables: { first_name: `Name${i}` },
    })),
  );
  const sendAll = () =>
    new Promise<void>((resolve) => {
      summaries = 0;
      allSummed = resolve;
      for (const number of lists) runtime.node('lists-p').receive({ payload: { number } });
    });
  // A warm-up list of 10 (the first use loads the send's code once per process).
  await new Promise<void>((resolve) => {
    summaries = LISTS.count - 1;
    allSummed = resolve;
    runtime.node('lists-p').receive({ payload: { number: lists[0]?.slice(0, 10) } });
  });
  let started = performance.now();
  const live = await loopDelayDuring(sendAll);
  const liveMs = round(performance.now() - started, 0);
  // From the outbox: the lists fail with 503 and are kept; the gateway back, the outbox sends them.
  await control(fixedUrl, 'down');
  const kept = sendAll();
  await new Promise((r) => setTimeout(r, 2000));
  await control(fixedUrl, 'up');
  started = performance.now();
  const fromOutbox = await loopDelayDuring(() => kept);
  return {
    lists: LISTS.count,
    numbers: LISTS.numbers,
    live: {
      inputToLastSummaryMs: liveMs,
      loopDelayP99Ms: live.p99Ms,
      loopDelayMaxMs: live.maxMs,
      loopCpuP99Ms: live.cpuP99Ms,
      loopCpuMaxMs: live.cpuMaxMs,
    },
    fromOutbox: {
      upToLastSummaryMs: round(performance.now() - started, 0),
      loopDelayP99Ms: fromOutbox.p99Ms,
      loopDelayMaxMs: fromOutbox.maxMs,
      loopCpuP99Ms: fromOutbox.cpuP99Ms,
      loopCpuMaxMs: fromOutbox.cpuMaxMs,
    },
  };
}

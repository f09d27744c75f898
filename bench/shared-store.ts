/**
 * The shared store's cost on the happy path: the same transactional node on an account with the
 * Redis store and on one with the default store (this Node-RED's memory and files), back to back
 * in a closed loop at concurrency 16, each account with a rate limit and an events node tracking
 * it, so every part of the state a send touches is in play; and per alert at concurrency 1, the
 * difference the store makes to its time from input to answer, paired run by run. Then the round trips to Redis a happy
 * send makes, counted by the server (MONITOR), by script.
 */
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { createClient } from '@redis/client';
import { SCRIPT_NAMES, scriptPath } from '../nodes/account/store-scripts';
import { startRedis } from '../test/support/redis';
import {
  ID,
  PLAN,
  TOKEN,
  closedLoop,
  describeRatio,
  inRounds,
  median,
  round,
  runtime,
  serverProcesses,
  setRatio,
  type FlowNode,
} from './harness';
import { nodeRedSender } from './closed-loop';

const CONCURRENCY = 16;

function storeFlow(key: string, baseUrl: string, store: Record<string, unknown>): FlowNode[] {
  return [
    {
      id: `${key}-acc`,
      type: 'bulkgate-account',
      baseUrl,
      retries: 0,
      timeout: 15000,
      // A limit no run reaches: the window is consulted on every send, and never holds one back.
      rateLimit: 1_000_000,
      rateWindow: 1,
      ...store,
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
    {
      id: `${key}-events`,
      type: 'bulkgate-events',
      path: `/bench/${key}/events`,
      account: `${key}-acc`,
      reportTimeout: 3600,
      wires: [[], [], []],
    },
  ];
}

/** What each script call is for, by its script's name. */
const PARTS: Record<string, string> = {
  claim: 'the cross-copy claim of the alert',
  reserve: 'the shared rate window',
  record: "tracking's record of the send",
};

/** The store's scripts by the SHA1 their EVALSHA names. */
const BY_SHA = new Map(
  SCRIPT_NAMES.map((name) => [
    createHash('sha1')
      .update(readFileSync(scriptPath(name), 'utf8'))
      .digest('hex'),
    name,
  ]),
);

/**
 * One MONITOR line of a command this process sent (the lines of the commands a script runs say
 * `lua`): the script it calls, by name.
 */
function calls(line: string): string[] | undefined {
  if (/\[\d+ lua\]/.test(line)) return undefined;
  const sha = /"evalsha" "([0-9a-f]{40})"/i.exec(line)?.[1];
  if (!sha) return undefined;
  const name = BY_SHA.get(sha) ?? sha;
  return [PARTS[name] ?? name];
}

async function countRoundTrips(url: string, concurrency: number, send: Parameters<typeof closedLoop>[2]) {
  const monitor = createClient({ url });
  await monitor.connect();
  const counted = new Map<string, number>();
  let commands = 0;
  await monitor.monitor((line: string) => {
    const names = calls(line);
    if (!names) return;
    commands++;
    for (const name of names) counted.set(name, (counted.get(name) ?? 0) + 1);
  });
  const sends = 400;
  await closedLoop(sends, concurrency, send);
  await new Promise((resolve) => setTimeout(resolve, 200));
  await monitor.close();
  return {
    roundTrips: round(commands / sends, 2),
    callsPerSend: Object.fromEntries([...counted].map(([name, n]) => [name, round(n / sends, 2)])),
  };
}

export async function sharedStore(fixedUrl: string) {
  const redis = await startRedis();
  const pid = redis.pid();
  // The benchmark waits for every server to go idle before a run: Redis is one of them now.
  const child = { pid } as never;
  serverProcesses.push(child);
  try {
    await runtime.deploy([
      ...storeFlow('file', fixedUrl, {}),
      ...storeFlow('redis', fixedUrl, { store: 'redis', storeUrl: redis.url }),
    ]);
    // The account connects to Redis when it starts: wait until a send goes out through it.
    const redisSender = nodeRedSender('redis-package');
    const fileSender = nodeRedSender('file-package');
    const count = PLAN.messages[CONCURRENCY] as number;
    for (const sender of [fileSender, redisSender]) await closedLoop(Math.ceil(count / 2), CONCURRENCY, sender.send); // warm-up
    const units = [['file store', 'redis store']];
    const senders: Record<string, typeof fileSender> = { 'file store': fileSender, 'redis store': redisSender };
    const { runs, sets } = await inRounds(units, (client) =>
      closedLoop(count, CONCURRENCY, (senders[client] as typeof fileSender).send),
    );
    const rate = (client: string) => round(median((runs.get(client) ?? []).map((r) => r.msgsPerSec)), 0);
    const ratio = setRatio(sets, 'redis store', 'file store');
    console.log(
      `shared store c=${CONCURRENCY}: redis store ${rate('redis store')} msg/s, file store ${rate('file store')} msg/s; redis vs file, back to back ${describeRatio(ratio)}`,
    );

    const at16 = (client: string, field: 'p50' | 'p99') =>
      round(median((runs.get(client) ?? []).map((r) => r[field])), 3);
    console.log(
      `shared store c=${CONCURRENCY}, per alert: file p50 ${at16('file store', 'p50')} ms p99 ${at16('file store', 'p99')} ms, redis p50 ${at16('redis store', 'p50')} ms p99 ${at16('redis store', 'p99')} ms`,
    );

    // What a user feels: per alert, one at a time, the time from input to the gateway's answer
    // routed, with each store; the runs alternate, and each set's pair gives one difference.
    const one = PLAN.messages[1] as number;
    const paired = await inRounds([['file store', 'redis store']], (client) =>
      closedLoop(one, 1, (senders[client] as typeof fileSender).send),
    );
    const differences = (field: 'p50' | 'p99') => {
      const ds = paired.sets
        .map((set) => (set.get('redis store')?.[field] ?? 0) - (set.get('file store')?.[field] ?? 0))
        .sort((a, b) => a - b);
      return {
        ms: round(median(ds), 3),
        lowest: round(ds[0] ?? 0, 3),
        highest: round(ds.at(-1) ?? 0, 3),
        sets: ds.length,
      };
    };
    const latency = {
      p50: differences('p50'),
      p99: differences('p99'),
      fileP50: round(median((paired.runs.get('file store') ?? []).map((r) => r.p50)), 3),
      redisP50: round(median((paired.runs.get('redis store') ?? []).map((r) => r.p50)), 3),
      fileP99: round(median((paired.runs.get('file store') ?? []).map((r) => r.p99)), 3),
      redisP99: round(median((paired.runs.get('redis store') ?? []).map((r) => r.p99)), 3),
    };
    console.log(
      `shared store c=1, per alert: file p50 ${latency.fileP50} ms p99 ${latency.fileP99} ms, redis p50 ${latency.redisP50} ms p99 ${latency.redisP99} ms; redis - file, paired: p50 ${latency.p50.ms} ms (${latency.p50.lowest} to ${latency.p50.highest}), p99 ${latency.p99.ms} ms (${latency.p99.lowest} to ${latency.p99.highest}), ${latency.p50.sets} sets`,
    );

    // Round trips per happy send: the server's own account of what it was asked, while 400 sends go,
    // one at a time and 16 at a time (each call its own EVALSHA).
    const roundTrips = {
      1: await countRoundTrips(redis.url, 1, redisSender.send),
      [CONCURRENCY]: await countRoundTrips(redis.url, CONCURRENCY, redisSender.send),
    };
    for (const [concurrency, counted] of Object.entries(roundTrips)) {
      console.log(
        `shared store c=${concurrency}: round trips to Redis per happy send ${counted.roundTrips}, carrying ${JSON.stringify(counted.callsPerSend)}`,
      );
    }
    await fileSender.close();
    await redisSender.close();
    return {
      concurrency: CONCURRENCY,
      redisMsgsPerSec: rate('redis store'),
      fileMsgsPerSec: rate('file store'),
      vsFile: ratio,
      latency,
      roundTrips,
    };
  } finally {
    await runtime.deploy([]);
    serverProcesses.splice(serverProcesses.indexOf(child), 1);
    await redis.stop();
  }
}

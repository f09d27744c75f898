/**
 * The benchmark's harness: the plan (`--quick` or full), a real Node-RED embedded with the package
 * installed, the servers it sends to, the closed loop, and the statistics (medians, ratios of runs
 * back to back). Each scenario (closed-loop.ts, burst.ts, soak.ts, install-cost.ts, outbox-scale.ts)
 * uses it; run.ts runs them and checks the targets.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync } from 'node:fs';
import { createServer } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';

export const ROOT = join(__dirname, '..', '..');
export const QUICK = process.argv.includes('--quick');
// The closed loops and bursts compare clients whose runs move by ±15% from one to the next on a
// shared machine (a client's CPU per msg by more); nine rounds each keep one slow minute from
// deciding a ratio, which five did not (BENCHMARKS.md, runs 9 and 10). Within a round the clients
// a target compares run back to back, `backToBack` times (`inRounds`).
export const PLAN = QUICK
  ? {
      // CI's run: it proves every scenario still runs, in about a minute and a half; too short for the ratios.
      runs: 2,
      comparisonRuns: 2,
      backToBack: 1,
      messages: { 1: 40, 16: 300, 64: 400 } as Record<number, number>,
      recipients: [10_000],
      soakSeconds: 4,
      startPairs: 3,
      scale: { storm: 1000, outageSeconds: 3, numbers: 10_000 },
    }
  : {
      runs: 5,
      comparisonRuns: 9,
      backToBack: 3,
      messages: { 1: 1000, 16: 8000, 64: 10_000 } as Record<number, number>,
      recipients: [10_000, 100_000],
      soakSeconds: 60,
      startPairs: 30,
      scale: { storm: 10_000, outageSeconds: 60, numbers: 100_000 },
    };
/** `--concurrency 64` measures the closed loop at that concurrency only (for a profile). */
export const CONCURRENCY = process.argv.includes('--concurrency')
  ? [Number(process.argv[process.argv.indexOf('--concurrency') + 1])]
  : [1, 16, 64];
export const ID = 'bench';
export const TOKEN = 'bench-token-0123456789';
export const gc = (globalThis as { gc?: () => void }).gc ?? (() => undefined);

export type FlowNode = Record<string, unknown> & { id: string; type: string };
export interface RuntimeNode {
  receive(msg: unknown): void;
}

/**
 * A real Node-RED (the project's devDependency), embedded, with this package installed in its
 * user directory as a user would have it. Not the test helper: its spies record every call and
 * would be most of what is measured.
 */
export class Runtime {
  private readonly RED = require('node-red');
  private readonly userDir = mkdtempSync(join(tmpdir(), 'bulkgate-bench-'));
  private sinks = new Map<string, (msg: Record<string, unknown>) => void>();

  async start(): Promise<void> {
    mkdirSync(join(this.userDir, 'node_modules'));
    symlinkSync(ROOT, join(this.userDir, 'node_modules', 'node-red-contrib-bulkgate'), 'dir');
    (globalThis as { benchSink?: unknown }).benchSink = (id: string, msg: Record<string, unknown>) =>
      this.sinks.get(id)?.(msg);
    this.RED.init(createServer(), {
      userDir: this.userDir,
      httpAdminRoot: false,
      httpNodeRoot: false,
      nodesDir: [join(ROOT, 'bench', 'nodes')],
      credentialSecret: false,
      logging: { console: { level: 'error' } },
      telemetry: { enabled: false },
      diagnostics: { enabled: false },
      externalModules: { autoInstall: false },
    });
    // The first (empty) flows load ends after start() resolves; a deploy before it would be undone.
    const started = new Promise((resolve) => this.RED.events.once('flows:started', resolve));
    await this.RED.start();
    await started;
  }

  async deploy(flow: FlowNode[]): Promise<void> {
    this.sinks.clear();
    await this.RED.runtime.flows.setFlows({
      flows: {
        flows: [
          { id: 'bench-tab', type: 'tab', label: 'bench' },
          ...flow.map((n) => (n.type === 'bulkgate-account' ? n : { z: 'bench-tab', ...n })),
        ],
      },
      deploymentType: 'full',
    });
    await new Promise((r) => setTimeout(r, 200));
  }

  node(id: string): RuntimeNode {
    return this.RED.nodes.getNode(id) as RuntimeNode;
  }

  /** Files in the user directory's outbox folder (none while every send is taken: a happy send writes nothing). */
  outboxFiles(): number {
    const dir = join(this.userDir, 'bulkgate-outbox');
    return existsSync(dir) ? readdirSync(dir).length : 0;
  }

  onSink(id: string, listener: (msg: Record<string, unknown>) => void): void {
    this.sinks.set(id, listener);
  }

  async stop(): Promise<void> {
    await this.deploy([]);
    await this.RED.stop();
    rmSync(this.userDir, { recursive: true, force: true });
  }
}

export const runtime = new Runtime();

export const median = (values: number[]) => {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? (sorted[mid] as number) : ((sorted[mid - 1] as number) + (sorted[mid] as number)) / 2;
};
export const percentile = (sorted: number[], p: number) =>
  sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] as number;
/** Two clients' msgs/s compared set by set (`inRounds`): the median ratio, and the lowest and highest. */
export interface SetRatio {
  ratio: number;
  lowest: number;
  highest: number;
  sets: number;
}
export function setRatio<R extends { msgsPerSec: number }>(
  sets: Map<string, R>[],
  client: string,
  against: string,
): SetRatio | undefined {
  const ratios = sets
    .filter((set) => set.has(client) && set.has(against))
    .map((set) => (set.get(client) as R).msgsPerSec / (set.get(against) as R).msgsPerSec)
    .sort((a, b) => a - b);
  if (!ratios.length) return undefined;
  return { ratio: median(ratios), lowest: ratios[0] as number, highest: ratios.at(-1) as number, sets: ratios.length };
}
export const describeRatio = (r: SetRatio | undefined) =>
  r ? `${round(r.ratio)}x (${round(r.lowest)} to ${round(r.highest)}, ${r.sets} sets)` : 'n/a';
/**
 * Run `run`'s order of the clients: each once, starting with another one each run and, where the
 * count allows, after other neighbours (a stride coprime with the count: 1, 3, 5, 7 for eight
 * clients). Rotating alone kept each client after the same one in every run, so the work one
 * client leaves behind (its sockets closing, its garbage) fell on the same next client each time.
 */
export const ordered = <T>(list: readonly T[], run: number): T[] => {
  const n = list.length;
  const gcd = (a: number, b: number): number => (b ? gcd(b, a % b) : a);
  const strides = Array.from({ length: n }, (_, s) => s).filter((s) => s > 0 && gcd(s, n) === 1);
  const stride = strides[run % strides.length] ?? 1;
  return list.map((_, i) => list[(run + i * stride) % n] as T);
};
export const round = (n: number, digits = 2) => Math.round(n * 10 ** digits) / 10 ** digits;

/**
 * Runs each client in `units` once per round for `PLAN.comparisonRuns` rounds, in `ordered` order,
 * each run after a garbage collection and with the servers idle. A unit that is a list is the
 * clients a target compares: they run back to back, `PLAN.backToBack` times per round, in another
 * order each time, and each time is a set. Their ratio is read set by set, between runs seconds
 * apart, each side as often first as second: a client's msgs/s moved from 6,300 to 10,800 within
 * one run, and runs up to a round apart, each after other neighbours, read the package node at
 * 0.89x and 0.88x the floor at c=16 round by round where, back to back, it read 1.00x and 1.12x
 * (BENCHMARKS.md, run 13).
 */
export async function inRounds<R>(
  units: (string | string[])[],
  run: (client: string) => Promise<R>,
): Promise<{ runs: Map<string, R[]>; sets: Map<string, R>[] }> {
  const runs = new Map<string, R[]>(units.flat().map((client) => [client, []]));
  const sets: Map<string, R>[] = [];
  const measure = async (client: string) => {
    gc(); // the previous client's garbage is not this one's cost
    await settle(); // nor the servers' work after it
    const result = await run(client);
    runs.get(client)?.push(result);
    return result;
  };
  for (let r = 0; r < PLAN.comparisonRuns; r++) {
    for (const unit of ordered(units, r)) {
      if (typeof unit === 'string') {
        await measure(unit);
        continue;
      }
      for (let b = 0; b < PLAN.backToBack; b++) {
        const set = new Map<string, R>();
        for (const client of ordered(unit, r * PLAN.backToBack + b)) set.set(client, await measure(client));
        sets.push(set);
      }
    }
  }
  return { runs, sets };
}

/** The servers' processes, for `settle`. */
export const serverProcesses: ChildProcess[] = [];

/** The CPU time a process has used so far, in clock ticks (/proc on Linux; undefined elsewhere). */
export function cpuTicks(pid: number | undefined): number | undefined {
  try {
    // After the command name (in parentheses), utime and stime are the 12th and 13th fields.
    const fields = (readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1] as string).split(' ');
    return Number(fields[11]) + Number(fields[12]);
  } catch {
    return undefined;
  }
}

/** How long `settle` waited in all, for the report. */
export let settledMs = 0;

/**
 * Waits (at most 10 s) until the servers have used no CPU for 200 ms: the simulator keeps working
 * after a run (it keeps what it was sent and releases scheduled messages each second), and with
 * two cores that work would land on whichever client is measured next. Found when the package
 * node, measured right after the simulator's clients in most rounds, read 0.72x the floor at
 * c=16 with them and 1.00x without them.
 */
export async function settle(): Promise<void> {
  const t0 = performance.now();
  const ticks = () => serverProcesses.reduce((sum, child) => sum + (cpuTicks(child.pid) ?? 0), 0);
  let last = ticks();
  while (performance.now() - t0 < 10_000) {
    await new Promise((resolve) => setTimeout(resolve, 200));
    const now = ticks();
    if (now === last) break;
    last = now;
  }
  settledMs += performance.now() - t0;
}

export function startServer(args: string[], pattern: RegExp): Promise<{ url: string; child: ChildProcess }> {
  const child = spawn(process.execPath, args, { cwd: ROOT, stdio: ['ignore', 'pipe', 'inherit'] });
  serverProcesses.push(child);
  return new Promise((resolve, reject) => {
    let out = '';
    child.stdout?.on('data', (chunk: Buffer) => {
      out += chunk.toString();
      const m = pattern.exec(out);
      if (m?.[1]) resolve({ url: m[1], child });
    });
    child.once('exit', (code) => reject(new Error(`server exited with ${code}: ${out}`)));
  });
}

export interface RunResult {
  msgsPerSec: number;
  p50: number;
  p99: number;
  cpuUsPerMsg: number;
}

/** Sends `count` messages keeping `concurrency` in flight; `send(i, done)` starts one. */
export async function closedLoop(
  count: number,
  concurrency: number,
  send: (i: number, done: () => void) => void,
): Promise<RunResult> {
  // A loop of no messages would never finish: a plan that asks for one is a mistake in this file.
  if (!(count >= 1)) throw new Error(`closedLoop: ${count} messages`);
  const latencies: number[] = [];
  const cpu0 = process.cpuUsage();
  const t0 = performance.now();
  await new Promise<void>((resolve) => {
    let started = 0;
    let finished = 0;
    const next = () => {
      if (started >= count) return;
      const i = started++;
      const begin = performance.now();
      send(i, () => {
        latencies.push(performance.now() - begin);
        finished++;
        if (finished === count) resolve();
        else next();
      });
    };
    for (let k = 0; k < Math.min(concurrency, count); k++) next();
  });
  const elapsed = performance.now() - t0;
  const cpu = process.cpuUsage(cpu0);
  latencies.sort((a, b) => a - b);
  return {
    msgsPerSec: (count / elapsed) * 1000,
    p50: percentile(latencies, 50),
    p99: percentile(latencies, 99),
    cpuUsPerMsg: (cpu.user + cpu.system) / count,
  };
}

export type Sender = { send: (i: number, done: () => void) => void; close: () => Promise<void> };

/** `--only "package node"` measures one client (for a profile with --cpu-prof). */
export const ONLY = process.argv.includes('--only') ? process.argv[process.argv.indexOf('--only') + 1] : undefined;
/** `--burst` measures the burst shapes only, `--closed` the closed loops only, both the two in order (for a profile). */
export const ONLY_BURST = process.argv.includes('--burst');
export const ONLY_CLOSED = process.argv.includes('--closed');
/** `--start` measures what having the package installed costs, only; `--tracking` the tracking soak only. */
export const ONLY_START = process.argv.includes('--start');
export const ONLY_TRACKING = process.argv.includes('--tracking');
/** `--scale` measures the outbox at scale (a storm during an outage, its drain, 100,000 numbers) only. */
export const ONLY_SCALE = process.argv.includes('--scale');
/** `--lists`: of the scale row, the three 10,000-number promotional lists only (for a profile). */
export const ONLY_LISTS = process.argv.includes('--lists');
/** `--redis`: the shared store (Redis) against the default one, and its round trips per send. */
export const ONLY_REDIS = process.argv.includes('--redis');

/**
 * One Node-RED in a process of its own, for the benchmark's memory and start-time figures.
 *
 * `start <userDir>`: starts the project's Node-RED embedded on the user directory (with or
 * without the package in its node_modules, no flows), then prints the start time and the memory
 * after a garbage collection: what having the package installed costs.
 *
 * `add <userDir> <packageDir>`: starts Node-RED on the user directory without the package, then
 * moves the package (a copy laid out as npm installs it) into its node_modules and has Node-RED's registry load it (`addModule`: the
 * same scan and `loadModuleFiles` its start runs for every module it finds), and prints the time
 * and CPU time of that step and the memory it added: the package's share of a start, measured in
 * one process, where another process's moment on the machine does not land on one side only.
 *
 * `use <userDir> <gatewayUrl> <recipients>`: then deploys an account, a transactional and a
 * promotional node against the gateway, sends 10,000 msgs at once, then one campaign of
 * `recipients` recipients, and prints the memory after each (after a garbage collection): what
 * using it costs.
 */
import { renameSync } from 'node:fs';
import { createServer } from 'node:http';
import { dirname, join } from 'node:path';
import { performance } from 'node:perf_hooks';

const gc = (globalThis as { gc?: () => void }).gc ?? (() => undefined);
const memory = () => {
  gc();
  const { rss, heapUsed } = process.memoryUsage();
  return { rss, heapUsed };
};

async function main(): Promise<void> {
  const [mode, userDir, gatewayUrl, recipients] = process.argv.slice(2) as [
    string,
    string,
    string | undefined,
    string | undefined,
  ];
  const packageDir = gatewayUrl;
  const t0 = performance.now();
  const RED = require('node-red');
  RED.init(createServer(), {
    userDir,
    // The editor on, as a user has it (Node-RED then reads each package's HTML at start); off for `use`.
    httpAdminRoot: mode === 'use' ? false : '/',
    httpNodeRoot: false,
    credentialSecret: false,
    logging: { console: { level: 'off' } },
    telemetry: { enabled: false },
    diagnostics: { enabled: false },
    externalModules: { autoInstall: false },
  });
  const started = new Promise((resolve) => RED.events.once('flows:started', resolve));
  await RED.start();
  const startMs = performance.now() - t0;
  await started;
  // CPU time is steadier than the wall clock on a shared machine: another process's moment on
  // the cores lengthens the one, not the other.
  const cpu = process.cpuUsage();
  const cpuMs = (cpu.user + cpu.system) / 1000;
  const types: string[] = RED.nodes.getNodeList().flatMap((set: { types: string[] }) => set.types);
  const report: Record<string, unknown> = {
    startMs,
    cpuMs,
    ...memory(),
    bulkgateTypes: types.filter((t) => t.startsWith('bulkgate-')).length,
  };

  if (mode === 'add' && packageDir) {
    // Node-RED's own registry, the instance its runtime uses.
    const registryDir = dirname(
      require.resolve('@node-red/registry', { paths: [dirname(require.resolve('node-red'))] }),
    );
    const registry = require(registryDir);
    // Two steps of addModule timed apart, as a start does them once for all packages: finding the
    // package (a scan of every node_modules folder Node-RED looks in, which a start makes with or
    // without the package) and saving the node list (which a start does only when the list
    // changed: the first start after an install).
    const phases = { findMs: 0, saveListMs: 0 };
    const timed = (module: Record<string, unknown>, name: string, phase: keyof typeof phases) => {
      const original = module[name] as (...args: unknown[]) => unknown;
      module[name] = function (this: unknown, ...args: unknown[]) {
        const t = performance.now();
        const result = original.apply(this, args);
        const done = () => (phases[phase] += performance.now() - t);
        if (result instanceof Promise) return result.finally(done);
        done();
        return result;
      };
    };
    const localfilesystem = require(join(registryDir, 'localfilesystem'));
    timed(localfilesystem, 'getModuleFiles', 'findMs');
    timed(require(join(registryDir, 'registry')), 'saveNodeList', 'saveListMs');
    renameSync(packageDir, join(userDir, 'node_modules', 'node-red-contrib-bulkgate'));
    const before = memory();
    const cpu0 = process.cpuUsage();
    const t1 = performance.now();
    await registry.addModule('node-red-contrib-bulkgate');
    const addMs = performance.now() - t1;
    const addCpu = process.cpuUsage(cpu0);
    const after = memory();
    const steps = { ...phases }; // the load's own, before the search below
    // The scan a start makes whether the package is there or not: the same folders searched for a
    // name that is in none of them (after the load, so the scan runs warm: if anything, it is
    // undercounted, and the package's share overcounted).
    const t2 = performance.now();
    try {
      localfilesystem.getModuleFiles('node-red-contrib-bulkgate-absent');
    } catch {
      // MODULE_NOT_FOUND, as expected
    }
    const scanMs = performance.now() - t2;
    const sets = registry.getNodeList().filter((set: { module: string }) => set.module === 'node-red-contrib-bulkgate');
    Object.assign(report, {
      addMs,
      ...steps,
      scanMs,
      addCpuMs: (addCpu.user + addCpu.system) / 1000,
      addRss: after.rss - before.rss,
      addHeap: after.heapUsed - before.heapUsed,
      sets: sets.length,
      bulkgateTypes: sets.flatMap((set: { types: string[] }) => set.types).length,
      errors: sets.filter((set: { err?: string }) => set.err).map((set: { err?: string }) => set.err),
    });
  }

  if (mode === 'use' && gatewayUrl) {
    const outputs: Record<string, number> = { tx: 0, promo: 0 };
    let waiter: (() => void) | undefined;
    (globalThis as { benchSink?: unknown }).benchSink = undefined;
    await RED.runtime.flows.setFlows({
      flows: {
        flows: [
          { id: 'tab', type: 'tab', label: 'use' },
          {
            id: 'acc',
            type: 'bulkgate-account',
            baseUrl: gatewayUrl,
            retries: 0,
            timeout: 60000,
            credentials: { application_id: 'bench', application_token: 'bench-token' },
          },
          {
            id: 'tx',
            z: 'tab',
            type: 'bulkgate-transactional',
            account: 'acc',
            text: '',
            wires: [['tx-out'], ['tx-out']],
          },
          {
            id: 'promo',
            z: 'tab',
            type: 'bulkgate-promotional',
            account: 'acc',
            text: 'Hi <first_name>, your code is <code>.',
            wires: [[], [], ['promo-out']],
          },
          { id: 'tx-out', z: 'tab', type: 'debug', active: false, tosidebar: false, console: false, complete: 'false' },
          {
            id: 'promo-out',
            z: 'tab',
            type: 'debug',
            active: false,
            tosidebar: false,
            console: false,
            complete: 'false',
          },
        ],
      },
      deploymentType: 'full',
    });
    while (!RED.nodes.getNode('tx-out') || !RED.nodes.getNode('promo-out'))
      await new Promise((resolve) => setTimeout(resolve, 20));
    for (const id of ['tx', 'promo'] as const) {
      RED.nodes.getNode(`${id}-out`).on('input', () => {
        outputs[id]++;
        waiter?.();
      });
    }
    const until = (check: () => boolean) =>
      new Promise<void>((resolve) => {
        waiter = () => check() && resolve();
      });
    report.deployed = memory();
    const tx = RED.nodes.getNode('tx');
    const sent = until(() => outputs.tx === 10_000);
    for (let i = 0; i < 10_000; i++) tx.receive({ payload: `Door opened, bench message ${i}`, number: '420777123456' });
    await sent;
    report.after10000Sends = memory();
    const number = Array.from({ length: Number(recipients) }, (_, i) => ({
      number: `420777${String(i).padStart(6, '0')}`,
      variables: { first_name: `Name${i}`, code: i },
    }));
    const campaign = until(() => outputs.promo === 1);
    RED.nodes.getNode('promo').receive({ payload: { number } });
    await campaign;
    number.length = 0;
    report.afterCampaign = memory();
    report.recipients = Number(recipients);
  }
  process.stdout.write(`${JSON.stringify(report)}\n`);
  await RED.stop();
}

main().then(
  () => process.exit(0),
  (error: Error) => {
    console.error(error);
    process.exit(1);
  },
);

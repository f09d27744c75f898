/**
 * One Node-RED start, for the benchmark's "installed but unused" figures: starts the project's
 * Node-RED embedded on the user directory given (with or without the package in its
 * node_modules, no flows), then prints the start time and the memory after a garbage collection.
 */
import { createServer } from 'node:http';
import { performance } from 'node:perf_hooks';

async function main(): Promise<void> {
  const userDir = process.argv[2] as string;
  const t0 = performance.now();
  const RED = require('node-red');
  RED.init(createServer(), {
    userDir,
    httpAdminRoot: false,
    httpNodeRoot: false,
    credentialSecret: false,
    logging: { console: { level: 'off' } },
    telemetry: { enabled: false },
    diagnostics: { enabled: false },
    externalModules: { autoInstall: false },
  });
  await RED.start();
  const startMs = performance.now() - t0;
  const types: string[] = RED.nodes.getNodeList().flatMap((set: { types: string[] }) => set.types);
  (globalThis as { gc?: () => void }).gc?.();
  const { rss, heapUsed } = process.memoryUsage();
  process.stdout.write(`${JSON.stringify({ startMs, rss, heapUsed, bulkgateTypes: types.filter((t) => t.startsWith('bulkgate-')).length })}\n`);
  await RED.stop();
}

main().then(
  () => process.exit(0),
  (error: Error) => {
    console.error(error);
    process.exit(1);
  },
);

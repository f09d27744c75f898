/**
 * The processes a test started (Node-REDs, redis-servers) end with the test run: a test that failed
 * before its cleanup would otherwise leave them running, holding ports and a core, and keeping the
 * run from ending where mocha waits for its event loop to empty.
 */
import type { ChildProcess } from 'node:child_process';

const running = new Set<ChildProcess>();
process.on('exit', () => {
  for (const child of running) child.kill('SIGKILL');
});

/** `child`, killed when this process exits if it still runs then. */
export function endsWithRun<T extends ChildProcess>(child: T): T {
  running.add(child);
  child.once('exit', () => running.delete(child));
  return child;
}

/**
 * The processes a test started (Node-REDs, redis-servers, the demo, a simulator) end with the test run: a
 * test that failed before its cleanup would otherwise leave them running, holding ports and a core. This acts
 * when the run exits, so it helps the suites mocha ends with `--exit` (test:faults, test:scale, test:install); in a suite
 * without it a leftover child keeps the run from exiting at all, as the leftover would.
 */
import type { ChildProcess } from 'node:child_process';

const running = new Map<ChildProcess, { group: boolean }>();
process.on('exit', () => {
  for (const [child, { group }] of running) {
    try {
      // A detached child leads a process group of its own (npm and the demo under it): all of it goes.
      if (group && child.pid) process.kill(-child.pid, 'SIGKILL');
      else child.kill('SIGKILL');
    } catch {
      // Gone already.
    }
  }
});

/** `child`, killed (with its process group when `group`: a detached child) if it still runs when this process exits. */
export function endsWithRun<T extends ChildProcess>(child: T, options: { group?: boolean } = {}): T {
  running.set(child, { group: options.group ?? false });
  child.once('exit', () => running.delete(child));
  return child;
}

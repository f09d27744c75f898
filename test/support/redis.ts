/**
 * A real redis-server for the shared-store tests, on a free port, without persistence. The tests
 * fail (never skip) when it is missing: `.ci/run` installs Debian's `redis-server`.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { createServer } from 'node:net';
import { endsWithRun } from './children';

export interface TestRedis {
  url: string;
  port: number;
  /** The server's process id while it runs (the benchmark waits for it to go idle). */
  pid(): number | undefined;
  /** Stops the server (as an outage would: SIGKILL, or SIGTERM as `systemctl stop` does, which writes an append-only file out first); `start` brings it back on the same port. */
  stop(signal?: 'SIGKILL' | 'SIGTERM'): Promise<void>;
  start(): Promise<void>;
}

function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const server = createServer().listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

/** `options`: more redis-server arguments (an ACL user, say); `port`: where (a free one by default). */
export async function startRedis(options: string[] = [], port?: number): Promise<TestRedis> {
  port ??= await freePort();
  let child: ChildProcess | undefined;
  const start = () =>
    new Promise<void>((resolve, reject) => {
      let output = '';
      child = endsWithRun(
        spawn(
          'redis-server',
          ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', ...options],
          {
            stdio: ['ignore', 'pipe', 'pipe'],
          },
        ),
      );
      child.once('error', (error) =>
        reject(new Error(`redis-server did not start (apt-get install redis-server): ${error.message}`)),
      );
      child.stdout?.on('data', (chunk: Buffer) => {
        output += chunk.toString();
        if (/Ready to accept connections/.test(output)) resolve();
      });
      child.once('exit', (code) => reject(new Error(`redis-server exited with ${code}:\n${output}`)));
    });
  const stop = (signal: 'SIGKILL' | 'SIGTERM' = 'SIGKILL') =>
    new Promise<void>((resolve) => {
      if (!child || child.exitCode !== null) return resolve();
      child.removeAllListeners('exit');
      child.once('exit', () => resolve());
      child.kill(signal);
    });
  await start();
  return { url: `redis://127.0.0.1:${port}`, port, pid: () => child?.pid, stop, start };
}

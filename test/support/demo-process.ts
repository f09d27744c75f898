/** Runs the demo (Node-RED with this package, and the simulator) as a child process, on free ports. */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { endsWithRun } from './children';

export interface DemoProcess {
  editorUrl: string;
  /** Node-RED's user directory: a new temporary one unless the args name one with --user-dir. */
  userDir: string;
  simulatorUrl: string;
  child: ChildProcess;
  output: () => string;
  stop(signal?: NodeJS.Signals): Promise<number | null>;
}

const ROOT = join(__dirname, '..', '..', '..');

/** Starts `command args` (the demo script by default) and waits for both addresses it prints. */
export function startDemo(
  args: string[] = [],
  command: string[] = [process.execPath, join(ROOT, 'dist', 'scripts', 'demo.js')],
  timeoutMs = 60_000,
): Promise<DemoProcess> {
  const [cmd, ...cmdArgs] = command as [string, ...string[]];
  // Tests never touch the clone's own demo directory (.nodered-demo): each run gets its own.
  const given = args.indexOf('--user-dir');
  const userDir = given >= 0 ? (args[given + 1] as string) : mkdtempSync(join(tmpdir(), 'bulkgate-demo-test-'));
  const temporary = given < 0;
  const demoArgs = given >= 0 ? args : [...args, '--user-dir', userDir];
  // npm passes arguments to the script only after `--`.
  const child = endsWithRun(
    spawn(cmd, [...cmdArgs, ...(cmd === 'npm' ? ['--'] : []), ...demoArgs], {
      cwd: ROOT,
      env: { ...process.env, PORT: '0', SIMULATOR_PORT: '0', MQTT_PORT: '0' },
      stdio: ['ignore', 'pipe', 'pipe'],
      detached: true,
    }),
    { group: true },
  );
  let out = '';
  const exited = new Promise<number | null>((resolve) =>
    child.once('exit', (code) => {
      if (temporary) rmSync(userDir, { recursive: true, force: true });
      resolve(code);
    }),
  );
  return new Promise((resolve, reject) => {
    const timer = setTimeout(
      () => reject(new Error(`the demo did not print its addresses within ${timeoutMs} ms:\n${out}`)),
      timeoutMs,
    );
    const onData = (chunk: Buffer) => {
      out += chunk.toString();
      const editor = /Node-RED editor:\s+(http\S+)/.exec(out);
      const simulator = /Simulator outbox:\s+(http\S+?)\/?\s/.exec(out);
      if (editor?.[1] && simulator?.[1]) {
        clearTimeout(timer);
        resolve({
          editorUrl: editor[1].replace(/\/$/, ''),
          userDir,
          simulatorUrl: simulator[1].replace(/\/$/, ''),
          child,
          output: () => out,
          stop: async (signal = 'SIGINT') => {
            if (child.exitCode === null && child.signalCode === null) child.kill(signal);
            return exited;
          },
        });
      }
    };
    child.stdout?.on('data', onData);
    child.stderr?.on('data', onData);
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`the demo exited with ${code} before it was ready:\n${out}`));
    });
  });
}

/**
 * A Node-RED process with the package installed in its own user directory (a symlink to this
 * checkout), started as a user starts it: for restarts, crashes and several copies on one store.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { endsWithRun } from './children';

const ROOT = join(__dirname, '..', '..', '..');
/** The Node-RED to start: the project's own, or the install NODE_RED_HOME names (the version matrix), as in red.ts. */
const RED_JS = require.resolve(
  'node-red/red.js',
  process.env.NODE_RED_HOME ? { paths: [process.env.NODE_RED_HOME] } : undefined,
);

export function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const server = createServer().listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

export interface NodeRedProcess {
  userDir: string;
  url: string;
  output(): string;
  /** Writes flows.json and flows_cred.json (credentials in plain JSON: no secret). */
  flows(flows: unknown[], credentials: Record<string, unknown>): void;
  /**
   * Starts Node-RED; `env` is added to its environment, `fileSizeKb` limits the size of every
   * file it writes (`ulimit -f`: a write beyond it fails with EFBIG, as on a full disk),
   * `hostname` runs it under that host name (a UTS namespace of its own, as a new container or
   * pod gets: `unshare --uts`, as root in CI).
   */
  start(options?: { env?: Record<string, string>; fileSizeKb?: number; hostname?: string }): Promise<string>;
  kill(): Promise<void>;
  /** SIGTERM, as `docker stop` and Kubernetes send: Node-RED stops its flows and exits. */
  stop(): Promise<void>;
  remove(): Promise<void>;
}

/** `userDir`: another process's (two Node-REDs on one user directory). */
export function nodeRedProcess(prefix = 'bulkgate-copy-', existing?: string): NodeRedProcess {
  const userDir = existing ?? mkdtempSync(join(tmpdir(), prefix));
  if (!existing) {
    mkdirSync(join(userDir, 'node_modules'));
    symlinkSync(ROOT, join(userDir, 'node_modules', 'node-red-contrib-bulkgate'), 'dir');
    writeFileSync(
      join(userDir, 'settings.js'),
      // appendLine: a function node's way to record a line before the msg goes on (a kill right after cannot lose it).
      `module.exports = { flowFile: 'flows.json', credentialSecret: false, logging: { console: { level: 'info' } }, editorTheme: { projects: { enabled: false } }, functionGlobalContext: { appendLine: (path, line) => require('fs').appendFileSync(path, line + '\\n') } };\n`,
    );
  }
  let child: ChildProcess | undefined;
  let output = '';
  const self: NodeRedProcess = {
    userDir,
    url: '',
    output: () => output,
    flows(flows, credentials) {
      writeFileSync(join(userDir, 'flows.json'), JSON.stringify(flows));
      writeFileSync(join(userDir, 'flows_cred.json'), JSON.stringify(credentials));
    },
    async start(options = {}) {
      const port = await freePort();
      output = '';
      const args = [RED_JS, '--userDir', userDir, '--port', String(port), '--settings', join(userDir, 'settings.js')];
      const env = { ...process.env, ...options.env };
      const stdio: ['ignore', 'pipe', 'pipe'] = ['ignore', 'pipe', 'pipe'];
      if (options.hostname !== undefined) {
        // A plain user gets one too where user namespaces are allowed (as root inside it, only there).
        const namespace = process.getuid?.() === 0 ? ['--uts'] : ['--uts', '--map-root-user'];
        child = spawn(
          'unshare',
          [...namespace, 'sh', '-c', 'hostname "$0" && exec "$@"', options.hostname, process.execPath, ...args],
          { stdio, env },
        );
      } else if (options.fileSizeKb === undefined) child = spawn(process.execPath, args, { stdio, env });
      else
        child = spawn('bash', ['-c', `ulimit -f ${options.fileSizeKb} && exec "$0" "$@"`, process.execPath, ...args], {
          stdio,
          env,
        });
      endsWithRun(child);
      await new Promise<void>((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`Node-RED did not start:\n${output}`)), 60_000);
        const onData = (chunk: Buffer) => {
          output += chunk.toString();
          // Node-RED logs in its own language (LANG): English, or German for the plural tests.
          if (/Started flows|Flows sind gestartet/.test(output)) {
            clearTimeout(timer);
            resolve();
          }
        };
        child?.stdout?.on('data', onData);
        child?.stderr?.on('data', onData);
        child?.once('exit', (code) => reject(new Error(`Node-RED exited with ${code}:\n${output}`)));
      });
      self.url = `http://127.0.0.1:${port}`;
      return self.url;
    },
    async kill() {
      if (!child || child.exitCode !== null || child.signalCode !== null) return;
      const exited = new Promise((r) => child?.once('exit', r));
      child.kill('SIGKILL');
      await exited;
    },
    async stop() {
      if (!child || child.exitCode !== null || child.signalCode !== null) return;
      const exited = new Promise((r) => child?.once('exit', r));
      child.kill('SIGTERM');
      // Node-RED gives its nodes 15 s to close; one that is still there long after is killed (and
      // says so in its output), so that a test fails on what it checks, not on a stop that never ends.
      const late = setTimeout(() => {
        output += '\n[the test killed it: still running 45 s after SIGTERM]\n';
        child?.kill('SIGKILL');
      }, 45_000);
      await exited;
      clearTimeout(late);
    },
    async remove() {
      await self.kill();
      rmSync(userDir, { recursive: true, force: true });
    },
  };
  return self;
}

/** A core `file` node that appends each msg's payload to `path` as a line (how a test flow records what it saw). */
export function appendLinesNode(id: string, path: string): Record<string, unknown> {
  return {
    id,
    z: 'tab',
    type: 'file',
    filename: path,
    filenameType: 'str',
    appendNewline: true,
    createDir: true,
    overwriteFile: 'false',
    encoding: 'none',
    wires: [],
  };
}

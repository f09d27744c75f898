/**
 * The simulator as a user starts it: `bulkgate-simulator` with its flags, in a process of its own.
 * `--account ID:TOKEN[:CREDIT]`: the id is before the first colon, a credit (a number, or empty for
 * the default) after the last; a token may hold colons. A flag it cannot use stops it with one line
 * naming the flag and the rule. An `offline` outage in `refuse` mode whose port is taken meanwhile
 * does not end it: it says so and listens again once the port is free.
 */
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { createServer, type Server } from 'node:net';
import path from 'node:path';
import { parseAccountFlag } from '../simulator/accounts';

const CLI = path.join(__dirname, '..', 'simulator', 'cli.js');

/** Starts the CLI; resolves with its base URL once it listens, or rejects with what it printed when it ends. */
function startCli(args: string[]): { child: ChildProcess; ready: Promise<string>; stderr: () => string } {
  const child = spawn(process.execPath, [CLI, '--port', '0', ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  let err = '';
  child.stderr?.on('data', (chunk: Buffer) => (err += chunk.toString()));
  const ready = new Promise<string>((resolve, reject) => {
    child.stdout?.on('data', (chunk: Buffer) => {
      out += chunk.toString();
      const url = /listening on (\S+)/.exec(out)?.[1];
      if (url) resolve(url);
    });
    child.on('exit', (code) => reject(new Error(`exited with ${code}: ${err}`)));
  });
  return { child, ready, stderr: () => err };
}

/** Runs the CLI to its end; its exit code and what it printed on stderr. */
function runCli(args: string[]): Promise<{ code: number | null; stderr: string }> {
  const { child, ready, stderr } = startCli(args);
  ready.then(
    () => child.kill(),
    () => undefined,
  );
  return new Promise((resolve) => child.on('exit', (code) => resolve({ code, stderr: stderr() })));
}

describe('bulkgate-simulator --account', () => {
  it('ID:TOKEN and ID:TOKEN: take the default credit; ID:TOKEN:CREDIT takes CREDIT', () => {
    assert.deepEqual(parseAccountFlag('7:tok'), { id: '7', token: 'tok', credit: undefined });
    assert.deepEqual(parseAccountFlag('7:tok:'), { id: '7', token: 'tok', credit: undefined });
    assert.deepEqual(parseAccountFlag('7:tok:12.5'), { id: '7', token: 'tok', credit: 12.5 });
    assert.deepEqual(parseAccountFlag('7:tok:0'), { id: '7', token: 'tok', credit: 0 });
  });

  it('a token may hold colons: the id is before the first, a numeric credit after the last', () => {
    assert.deepEqual(parseAccountFlag('7:a:b:c'), { id: '7', token: 'a:b:c', credit: undefined });
    assert.deepEqual(parseAccountFlag('7:a:b:40'), { id: '7', token: 'a:b', credit: 40 });
    assert.deepEqual(parseAccountFlag('7:a:b:'), { id: '7', token: 'a:b', credit: undefined });
  });

  for (const [flag, rule] of [
    ['7', /--account must be ID:TOKEN\[:CREDIT\]/],
    [':tok', /--account must be ID:TOKEN\[:CREDIT\]/],
    ['7::5', /--account must be ID:TOKEN\[:CREDIT\]/],
    ['7:tok:-5', /--account credit must be a number 0 or more/],
    ['7:tok:1.2.3', /--account credit must be a number 0 or more/],
  ] as const) {
    it(`"${flag}" is refused with a message naming the flag and the rule`, () => {
      assert.throws(() => parseAccountFlag(flag), rule);
    });
  }

  it('the CLI: ID:TOKEN: gets the default credit, a token with colons signs in', async function () {
    const { child, ready } = startCli(['--account', '7:tok:', '--account', '8:a:b:c:30']);
    try {
      const url = await ready;
      const outbox = (await (await fetch(`${url}/simulator/outbox`)).json()) as {
        accounts: { id: string; credit: number }[];
      };
      assert.equal(outbox.accounts.find((a) => a.id === '7')?.credit, 100);
      assert.equal(outbox.accounts.find((a) => a.id === '8')?.credit, 30);
      const res = await fetch(`${url}/api/1.0/simple/info`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ application_id: '8', application_token: 'a:b:c' }),
      });
      assert.equal(res.status, 200, await res.text());
    } finally {
      child.kill();
    }
  });

  it('the CLI: an unusable --account ends it with one line naming the flag and the rule, no stack', async () => {
    const { code, stderr } = await runCli(['--account', '7:tok:-5']);
    assert.equal(code, 1);
    assert.match(stderr, /^bulkgate-simulator: --account credit must be a number 0 or more, got "-5"\n$/);
  });
});

/** Polls `attempt` until it returns a value; fails after `tries` tries, 100 ms apart. */
async function until<T>(what: string, attempt: () => Promise<T | undefined>, tries = 100): Promise<T> {
  for (let i = 0; i < tries; i++) {
    const value = await attempt().catch(() => undefined);
    if (value !== undefined) return value;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error(`gave up waiting for ${what}`);
}

describe('bulkgate-simulator offline in refuse mode', () => {
  it('the port taken during the outage: it stays up, says so, and listens again when the port is free', async function () {
    this.timeout(60_000);
    const { child, ready, stderr } = startCli([]);
    const exited = new Promise<string>((resolve) => child.on('exit', (code) => resolve(`exited with ${code}`)));
    let blocker: Server | undefined;
    try {
      const url = await ready;
      const port = Number(new URL(url).port);
      const res = await fetch(`${url}/simulator/faults`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ offline: { seconds: 2, mode: 'refuse' } }),
      });
      assert.equal(res.status, 200);
      // Another program takes the port as soon as the simulator lets it go.
      blocker = await until('the simulator to let its port go', async () => {
        const server = createServer();
        await new Promise<void>((resolve, reject) => {
          server.once('error', reject);
          server.listen(port, '127.0.0.1', resolve);
        });
        return server;
      });
      const said = until('the simulator to say it cannot listen again', async () =>
        /cannot listen again on port \d+ of 127\.0\.0\.1 \(EADDRINUSE/.test(stderr()) ? 'said' : undefined,
      );
      assert.equal(await Promise.race([said, exited]), 'said', stderr());
      await new Promise((resolve) => blocker?.close(resolve));
      blocker = undefined;
      const back = await until('the simulator to answer again', async () => {
        const answer = await fetch(`${url}/simulator/outbox`);
        return answer.status === 200 ? answer.status : undefined;
      });
      assert.equal(back, 200);
      assert.equal(child.exitCode, null, stderr());
    } finally {
      child.kill();
      blocker?.close();
    }
  });
});

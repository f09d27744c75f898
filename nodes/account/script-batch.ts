// A command costs far more than its script: the calls made while a batch is at the server go in the
// next as one EVALSHA, each in its own `pcall` (it fails alone), as atomic as alone. Kept over
// pipelining for the CPU: 32 to 48 µs per send against 55 to 80 (`npm run bench -- --redis`).
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';

/** The smallest client surface the store uses (so tests can tell what is sent). */
export interface RedisLike {
  eval(script: string, options: { keys: string[]; arguments: string[] }): Promise<unknown>;
}

export interface ScriptClient extends RedisLike {
  evalSha(sha: string, options: { keys: string[]; arguments: string[] }): Promise<unknown>;
}

interface Call {
  name: string;
  keys: string[];
  args: string[];
  resolve(value: unknown): void;
  reject(error: Error): void;
}

// Far past a healthy answer (ms, tens when busy), and what a hung store costs an alert stays near a
// second. One timer per batch: a timeout per command cost more CPU than a round trip.
export const BATCH_TIMEOUT_MS = 1500;

/** So a backlog never holds the server long. */
const MAX_CALLS = 64;

export class ScriptBatch {
  readonly #byText = new Map<string, string>();
  readonly #runner: string;
  readonly #sha: string;
  #queue: Call[] = [];
  #scheduled = false;
  /** One batch at the server at a time: 0.22 round trips per send at 16 at a time, 0.5 with four. */
  #inFlight = false;
  /** Hung (connected, silent): the batch on the wire is the probe; other calls fail at once. */
  #hung = false;

  constructor(
    private readonly client: ScriptClient,
    scripts: Record<string, string>,
    private readonly timeoutMs = BATCH_TIMEOUT_MS,
    /** Told when the store stops answering in time (true) and when it answers again (false). */
    private readonly onHung: (hung: boolean) => void = () => undefined,
  ) {
    for (const [name, body] of Object.entries(scripts)) this.#byText.set(body, name);
    // Every script as a function of `(KEYS, ARGV, B)`, then lua/batch.lua. The calls go as one JSON
    // argument, not dozens: the client's cost is per argument written; the server's decoder is native.
    const functions = Object.entries(scripts).map(([name, body]) => `S[${JSON.stringify(name)}] = function(KEYS, ARGV, B)\n${body}\nend`);
    this.#runner = `local S = {}\n${functions.join('\n')}\n${readFileSync(join(__dirname, 'lua', 'batch.lua'), 'utf8')}`;
    this.#sha = createHash('sha1').update(this.#runner).digest('hex');
  }

  /** The same call as the client's `eval`; a script the batch does not hold goes alone. */
  eval(script: string, options: { keys: string[]; arguments: string[] }): Promise<unknown> {
    const name = this.#byText.get(script);
    if (name === undefined) return this.client.eval(script, options);
    // Text not well-formed (a lone surrogate in a report's id) would fail the whole batch.
    const malformed = (text: string) => !text.isWellFormed();
    if (options.keys.some(malformed) || options.arguments.some(malformed))
      return Promise.reject(new Error('a key or argument is not well-formed Unicode (a lone surrogate)'));
    if (this.#hung && this.#inFlight) return Promise.reject(this.#hungError());
    return new Promise((resolve, reject) => {
      this.#queue.push({ name, keys: options.keys, args: options.arguments, resolve, reject });
      this.#schedule();
    });
  }

  #schedule(): void {
    if (this.#scheduled || this.#inFlight) return;
    this.#scheduled = true;
    // The calls made in this turn of the event loop go with it (the answers that came in it too).
    setImmediate(() => {
      this.#scheduled = false;
      if (this.#queue.length && !this.#inFlight) void this.#send(this.#queue.splice(0, MAX_CALLS));
    });
  }

  async #send(calls: Call[]): Promise<void> {
    this.#inFlight = true;
    try {
      const options = { keys: [], arguments: [JSON.stringify(calls.map((call) => [call.name, call.keys, call.args]))] };
      const run = this.client.evalSha(this.#sha, options).catch((error: Error) => {
        // A server that restarted (or flushed its scripts) has forgotten the runner: send it whole.
        if (!/NOSCRIPT/.test(error.message)) throw error;
        return this.client.eval(this.#runner, options);
      });
      const answers = (await this.#within(run)) as [number, unknown][];
      calls.forEach((call, i) => {
        const [ok, value] = answers[i] ?? [0, 'no answer'];
        if (ok === 1) call.resolve(value);
        else call.reject(new Error(String(value)));
      });
    } catch (error) {
      for (const call of calls) call.reject(error as Error);
      if (error instanceof LateError) {
        // What waits behind it would wait as long: it fails now, and so does what comes while no answer does.
        this.#setHung(true);
        for (const call of this.#queue.splice(0)) call.reject(this.#hungError());
      }
    }
    this.#inFlight = false;
    if (this.#queue.length) this.#schedule();
  }

  #setHung(hung: boolean): void {
    if (this.#hung === hung) return;
    this.#hung = hung;
    this.onHung(hung);
  }

  #hungError(): Error {
    return new Error(`the store did not answer within ${this.timeoutMs / 1000} s, and has not answered since`);
  }

  #within(answer: Promise<unknown>): Promise<unknown> {
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new LateError(`the store did not answer within ${this.timeoutMs / 1000} s`)), this.timeoutMs);
    });
    // Any answer, in time or after it (its calls have failed already), says the store answers again.
    answer.then(
      () => this.#setHung(false),
      () => undefined,
    );
    return Promise.race([answer, late]).finally(() => clearTimeout(timer));
  }
}

class LateError extends Error {}

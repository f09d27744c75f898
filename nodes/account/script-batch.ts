/**
 * The store's Lua scripts, run in batches: a command costs both sides far more than its script, and
 * a send makes three (claim, window, record). The calls made while one batch is at the server go
 * together in the next, as one EVALSHA of a script holding every script of the store as a function,
 * each call in its own `pcall` (a failing call fails only its own promise). Kept over pipelining
 * for the CPU: 32 to 48 µs per send against 55 to 80 at 16 sends at a time, at about the same
 * sends/s (`npm run bench -- --redis`, four runs of 27 sets). A batch runs as one script, so it is
 * as atomic as each of its calls was; a script may leave work for the batch's end (`B.atEnd`),
 * done once however many calls ask for it.
 */
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';

export interface ScriptClient {
  eval(script: string, options: { keys: string[]; arguments: string[] }): Promise<unknown>;
  evalSha(sha: string, options: { keys: string[]; arguments: string[] }): Promise<unknown>;
}

interface Call {
  name: string;
  keys: string[];
  args: string[];
  resolve(value: unknown): void;
  reject(error: Error): void;
}

/**
 * How long a batch may take before its calls fail (the callers fall back to this copy's memory):
 * far past any healthy answer (milliseconds, tens when busy), and keeps what a hung store costs an
 * alert near a second. One timer per batch: a timeout per command cost more CPU than a round trip.
 */
export const BATCH_TIMEOUT_MS = 1500;

export class ScriptBatch {
  readonly #byText = new Map<string, string>();
  readonly #runner: string;
  readonly #sha: string;
  #queue: Call[] = [];
  #scheduled = false;
  #inFlight = 0;
  /**
   * A batch went unanswered: the store is hung (connected, silent). Until an answer comes, the
   * batch on the wire is the probe and every other call fails at once: one timeout, once.
   */
  #hung = false;

  constructor(
    private readonly client: ScriptClient,
    scripts: Record<string, string>,
    /** Batches at the server at once; one: 0.22 round trips per send at 16 at a time, against 0.5 with four and 3 without batches. */
    private readonly maxInFlight = 1,
    private readonly timeoutMs = BATCH_TIMEOUT_MS,
    /** Told when the store stops answering in time (true) and when it answers again (false). */
    private readonly onHung: (hung: boolean) => void = () => undefined,
    /** Calls per batch at most, so a backlog never holds the server long (1: pipelining, the benchmark's comparison). */
    private readonly maxCalls = 64,
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
    // A call whose text is not well-formed Unicode (a lone surrogate from a report's id) would fail
    // the decoding of the whole batch on the server, and every other call in it: it fails alone.
    const malformed = (text: string) => !text.isWellFormed();
    if (options.keys.some(malformed) || options.arguments.some(malformed))
      return Promise.reject(new Error('a key or argument is not well-formed Unicode (a lone surrogate)'));
    if (this.#hung && this.#inFlight >= this.maxInFlight) return Promise.reject(this.#hungError());
    return new Promise((resolve, reject) => {
      this.#queue.push({ name, keys: options.keys, args: options.arguments, resolve, reject });
      this.#schedule();
    });
  }

  #schedule(): void {
    if (this.#scheduled || this.#inFlight >= this.maxInFlight) return;
    this.#scheduled = true;
    // The calls made in this turn of the event loop go with it (the answers that came in it too).
    setImmediate(() => this.#flush());
  }

  #flush(): void {
    this.#scheduled = false;
    while (this.#queue.length && this.#inFlight < this.maxInFlight) void this.#send(this.#queue.splice(0, this.maxCalls));
  }

  async #send(calls: Call[]): Promise<void> {
    this.#inFlight++;
    const batch = JSON.stringify(calls.map((call) => [call.name, call.keys, call.args]));
    try {
      const answers = (await this.#within(this.#run({ keys: [], arguments: [batch] }))) as [number, unknown][];
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
    this.#inFlight--;
    // What queued meanwhile is the next batch.
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

  /** The answer, or an error once the batch has been at the server for `timeoutMs`. */
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

  async #run(options: { keys: string[]; arguments: string[] }): Promise<unknown> {
    try {
      return await this.client.evalSha(this.#sha, options);
    } catch (error) {
      // A server that restarted (or flushed its scripts) has forgotten the runner: send it whole.
      if (!/NOSCRIPT/.test((error as Error).message)) throw error;
      return this.client.eval(this.#runner, options);
    }
  }
}

/** A batch the store did not answer within its time. */
class LateError extends Error {}

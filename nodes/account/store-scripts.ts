// The store's Lua scripts, each a file in lua/ that runs alone (`redis-cli --eval`): every key it
// touches is in KEYS or built from the account's prefix given there, all under the account's hash
// tag (one Cluster slot). The client sends each as EVALSHA, and whole once the server lacks it.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { defineScript } from '@redis/client';

export const SCRIPT_NAMES = [
  // The rate window, the alert claims, the tracker's.
  'reserve',
  'refund',
  'claim',
  'collectHeld',
  'record',
  'overdue',
  'get',
  'markFinal',
  'claimLate',
  // The shared outbox's.
  'keep',
  'attempt',
  'back',
  'done',
  'emitted',
  'adopt',
  'renew',
  // The escalation's incidents (escalation-redis.ts).
  'escalationRaise',
  'escalationStep',
  'escalationEnd',
  'escalationAnswered',
  'escalationLook',
  'escalationWanted',
] as const;
export type ScriptName = (typeof SCRIPT_NAMES)[number];

/** lua/collect-held.lua is `collectHeld`. */
export const scriptPath = (name: ScriptName): string =>
  join(__dirname, 'lua', `${name.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`)}.lua`);

/** What the store asks of its connection: one of its scripts, by name. */
export interface StoreCalls {
  run(name: ScriptName, keys: string[], args: string[]): Promise<unknown>;
}

/** The scripts as the client's own (`createClient({ scripts })`), each called `(keys, args)`. */
export function scriptDefinitions(define: typeof defineScript) {
  return Object.fromEntries(
    SCRIPT_NAMES.map((name) => [
      name,
      define({
        SCRIPT: readFileSync(scriptPath(name), 'utf8'),
        parseCommand(parser, keys: string[], args: string[]) {
          parser.pushKeysLength(keys);
          parser.push(...args);
        },
        transformReply: (reply: unknown) => reply,
      }),
    ]),
  ) as Record<ScriptName, ReturnType<typeof define>>;
}

// Far past a healthy answer (ms, tens when busy): what a store that keeps the connection but stops
// answering costs an alert stays near a second. A timer of the package's own per call, not the
// client's `timeout` (an `AbortSignal.timeout` per command, dearer in CPU than the round trip).
export const ANSWER_TIMEOUT_MS = 1000;

/** A wait for the store that ran out, coded as the socket's own timeout (`ETIMEDOUT`) for storeFailure's wording. */
export const timedOut = (message: string): Error => Object.assign(new Error(message), { code: 'ETIMEDOUT' });

/**
 * The calls made through `call`, each failed once the server has not answered it in `timeoutMs`.
 * The first that times out marks the store hung: every call waiting fails with it, and every new
 * one fails at once while the late one is still unanswered (it is the probe); an answer ends it.
 */
export class TimedCalls implements StoreCalls {
  readonly #waiting = new Set<{ reject(error: Error): void; timer: NodeJS.Timeout }>();
  /** The late call, while the server has not answered it. */
  #probe: Promise<unknown> | undefined;
  /** Told hung, and not told it answers again yet. */
  #told = false;

  constructor(
    private readonly call: (name: ScriptName, keys: string[], args: string[]) => Promise<unknown>,
    readonly timeoutMs = ANSWER_TIMEOUT_MS,
    /** Told when the store stops answering in time (true) and when it answers again (false). */
    private readonly onHung: (hung: boolean) => void = () => undefined,
  ) {}

  run(name: ScriptName, keys: string[], args: string[]): Promise<unknown> {
    if (this.#probe)
      return Promise.reject(
        timedOut(`the store did not answer within ${this.timeoutMs / 1000} s, and has not answered since`),
      );
    // The client's script calls are async functions: a failure rejects, never throws here.
    const answer = this.call(name, keys, args);
    return new Promise((resolve, reject) => {
      const waiter = { reject, timer: setTimeout(() => this.#late(answer), this.timeoutMs) };
      this.#waiting.add(waiter);
      answer.then(
        (value) => {
          clearTimeout(waiter.timer);
          this.#waiting.delete(waiter);
          if (this.#told && !this.#probe) this.#answered();
          resolve(value);
        },
        (error: Error) => {
          clearTimeout(waiter.timer);
          this.#waiting.delete(waiter);
          reject(error);
        },
      );
    });
  }

  #late(answer: Promise<unknown>): void {
    if (this.#probe) return;
    this.#probe = answer;
    // What waits beside it would wait as long: it fails now, the first with its own reason.
    const late = timedOut(`the store did not answer within ${this.timeoutMs / 1000} s`);
    for (const waiter of this.#waiting) {
      clearTimeout(waiter.timer);
      waiter.reject(late);
    }
    this.#waiting.clear();
    if (!this.#told) {
      this.#told = true;
      this.onHung(true);
    }
    answer.then(
      () => {
        this.#probe = undefined;
        this.#answered();
      },
      () => (this.#probe = undefined),
    );
  }

  #answered(): void {
    this.#told = false;
    this.onHung(false);
  }
}

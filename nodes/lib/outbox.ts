/**
 * The account's outbox (issue 13): a message the gateway could not be reached for, or that was
 * still waiting or on the wire when its node closed, is kept here instead of failing, and sent
 * again until it is taken or `outboxMinutes` have passed.
 *
 * Kept in a file per account in Node-RED's user directory, one JSON entry per line, rewritten
 * whole (temporary file, flushed, renamed) before the msg's `done`; several changes at once are
 * written together. An entry holds what is needed to send it again and to route its result: the
 * wire body without the credentials, the msg's serialisable properties, the node's id, when it
 * was first tried and how often. A line that cannot be read is skipped with a warning.
 *
 * The outbox outlives a redeploy of its account (one per file, kept by this module); the account
 * node that is running sends it.
 */
import { readFileSync } from 'node:fs';
import { mkdir, open, rename } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { checksDuplicates, GatewayError, type Operation, type PromotionalResult, type RejectedRecipient, type TransactionalResult } from '../../gateway';
import type { Msg } from './runtime';

export interface OutboxEntry {
  /** Unique within the outbox. */
  id: string;
  /** The send node that took the msg. */
  node: string;
  operation: Operation;
  /** The wire body without application_id, application_token and application_product. */
  body: Record<string, unknown>;
  /** Recipients the checks set aside before the first attempt (they are part of the answer). */
  rejected: RejectedRecipient[];
  /** Messages the request sends, for the account's rate limit. */
  messages: number;
  /** The msg's serialisable properties. */
  msg: Record<string, unknown>;
  /** First attempt (when its node took the msg), ms since the epoch. */
  since: number;
  /** Which msg came first among those taken in the same millisecond (this process's count). */
  order: number;
  attempts: number;
  /** The last failure's sentence. */
  reason: string;
}

export type SendResult = TransactionalResult | PromotionalResult;
/** Reports a problem of the outbox: a catalog key under `warnings.` and its parameters. */
export type Warn = (key: string, params: Record<string, string | number>) => void;
export type Outcome = { result: SendResult } | { error: GatewayError };

/** What the running account node does for its outbox. */
export interface OutboxWorker {
  /** Sends a kept message again, through the rate limit; throws a GatewayError. */
  send(entry: OutboxEntry): Promise<SendResult>;
  /** Hands a message that left the outbox to its node: out of its ports, or to Catch. */
  settle(entry: OutboxEntry, msg: Msg, outcome: Outcome): void;
  /** Whether an error is one a later attempt may get past (the gateway unreachable, busy, closing). */
  transient(error: unknown, entry: OutboxEntry): boolean;
  /** The error a message ends with when `outboxMinutes` have passed. */
  expired(entry: OutboxEntry): GatewayError;
  /** Minutes a message is kept; 0: none is. */
  minutes: number;
  /** First wait between rounds, ms (it doubles up to MAX_ROUND_DELAY). */
  firstDelay: number;
}

/** The longest wait between two rounds of sending the outbox again. */
export const MAX_ROUND_DELAY = 5 * 60_000;
const FILE_HEADER = { bulkgateOutbox: 1 };

/** Writes the outbox file: whole, atomically, flushed; changes made during a write go in the next one. */
class OutboxFile {
  #current: Promise<void> = Promise.resolve();
  #next: Promise<void> | undefined;

  constructor(
    readonly path: string,
    private readonly snapshot: () => OutboxEntry[],
  ) {}

  /** Reads the entries a file holds; lines that cannot be read are reported and skipped. */
  static read(path: string, warn: Warn): OutboxEntry[] {
    let text: string;
    try {
      text = readFileSync(path, 'utf8');
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'ENOENT') warn('outbox-unreadable', { path, reason: (error as Error).message });
      return [];
    }
    const entries: OutboxEntry[] = [];
    let bad = 0;
    for (const line of text.split('\n')) {
      if (!line.trim()) continue;
      try {
        const entry = JSON.parse(line) as OutboxEntry;
        if ((entry as unknown as Record<string, unknown>).bulkgateOutbox !== undefined) continue;
        if (typeof entry.id !== 'string' || typeof entry.node !== 'string' || typeof entry.body !== 'object' || typeof entry.since !== 'number')
          throw new Error();
        entries.push({ ...entry, rejected: entry.rejected ?? [], attempts: entry.attempts ?? 1, msg: entry.msg ?? {}, order: entry.order ?? 0 });
      } catch {
        bad++;
      }
    }
    if (bad) warn('outbox-bad-lines', { path, bad, kept: entries.length });
    return entries;
  }

  /** Resolves once a write that includes every change made before this call is on disk. */
  save(): Promise<void> {
    if (this.#next) return this.#next;
    const run = this.#current.then(() => {
      this.#next = undefined;
      return this.#write(this.snapshot());
    });
    this.#next = run;
    this.#current = run.catch(() => undefined);
    return run;
  }

  async #write(entries: OutboxEntry[]): Promise<void> {
    // Made with the first message kept: a Node-RED whose sends all succeed never writes here.
    await mkdir(dirname(this.path), { recursive: true, mode: 0o700 });
    const text = [FILE_HEADER, ...entries].map((e) => JSON.stringify(e)).join('\n') + '\n';
    const temporary = `${this.path}.${process.pid}.tmp`;
    const file = await open(temporary, 'w', 0o600);
    try {
      await file.writeFile(text, 'utf8');
      await file.sync();
    } finally {
      await file.close();
    }
    await rename(temporary, this.path);
    // The rename itself is made durable by flushing the directory (where the system allows it).
    try {
      const directory = await open(dirname(this.path), 'r');
      await directory.sync().finally(() => directory.close());
    } catch {
      // Not every file system can flush a directory; the rename is atomic either way.
    }
  }
}

export class Outbox {
  readonly #entries: OutboxEntry[] = [];
  /** The msgs themselves, for entries kept by this process (an http in node's res survives). */
  readonly #live = new Map<string, Msg>();
  readonly #file: OutboxFile | undefined;
  readonly #listeners = new Set<() => void>();
  #worker: OutboxWorker | undefined;
  #timer: NodeJS.Timeout | undefined;
  #running: Promise<void> | undefined;
  /** Rounds in a row that ended on a failure, and when the last one did. */
  #rounds = 0;
  #lastFailure = 0;
  #dueAt = 0;
  #nextId = 0;

  /** Who hears of its problems: the account node running now. */
  warn: Warn;
  #warnedMemoryOnly = false;

  /** An outbox kept in `path`, or in memory only when there is no path. */
  constructor(path: string | undefined, warn: Warn) {
    this.warn = warn;
    if (path) {
      this.#entries.push(...OutboxFile.read(path, warn));
      this.#file = new OutboxFile(path, () => this.#entries);
    }
  }

  get waiting(): number {
    return this.#entries.length;
  }

  get persistent(): boolean {
    return this.#file !== undefined;
  }

  get path(): string | undefined {
    return this.#file?.path;
  }

  /** Called on every change of `waiting`; returns the function that stops it. */
  watch(listener: () => void): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }

  /** Keeps a message; resolves once it is on disk. The worker tries it soon. */
  async keep(entry: Omit<OutboxEntry, 'id'>, msg: Msg): Promise<void> {
    const id = `${entry.since.toString(36)}-${process.pid.toString(36)}-${(this.#nextId++).toString(36)}`;
    const kept: OutboxEntry = { ...entry, id };
    if (!this.#file && !this.#warnedMemoryOnly) {
      this.#warnedMemoryOnly = true;
      this.warn('outbox-memory-only', {});
    }
    // In the order the msgs were taken, not the order their sends failed in (concurrent sends
    // to an unreachable gateway fail in any order).
    let at = this.#entries.length;
    while (at > 0 && before(kept, this.#entries[at - 1] as OutboxEntry)) at--;
    this.#entries.splice(at, 0, kept);
    this.#live.set(id, msg);
    this.#changed();
    try {
      await this.#file?.save();
    } catch (error) {
      this.#remove(kept);
      throw error;
    }
    // A new message is tried soon, but not more often than the first backoff delay while the
    // gateway keeps failing: an alarm storm during an outage is not a storm of connections.
    const firstDelay = this.#worker?.firstDelay ?? 0;
    this.#schedule(this.#rounds ? Math.max(0, this.#lastFailure + firstDelay - Date.now()) : 0);
  }

  /** The running account sends the outbox from now on (at once, when something waits). */
  attach(worker: OutboxWorker): void {
    this.#worker = worker;
    this.#rounds = 0;
    this.#schedule(worker.firstDelay);
  }

  /** The account closed: no new round starts; the one running ends with its current message. */
  async detach(worker: OutboxWorker): Promise<void> {
    if (this.#worker !== worker) return;
    this.#worker = undefined;
    clearTimeout(this.#timer);
    this.#timer = undefined;
    await this.#running;
  }

  /** Empties the outbox; each message ends with `error` (Catch). Returns how many there were. */
  async empty(error: (entry: OutboxEntry) => GatewayError): Promise<number> {
    const entries = this.#entries.splice(0);
    for (const entry of entries) {
      const msg = this.#msgOf(entry);
      this.#live.delete(entry.id);
      if (this.#worker) settle(this.#worker, entry, msg, { error: error(entry) });
    }
    this.#changed();
    await this.#file?.save();
    return entries.length;
  }

  #msgOf(entry: OutboxEntry): Msg {
    return this.#live.get(entry.id) ?? (structuredClone(entry.msg) as Msg);
  }

  #remove(entry: OutboxEntry): void {
    const at = this.#entries.indexOf(entry);
    if (at >= 0) this.#entries.splice(at, 1);
    this.#live.delete(entry.id);
    this.#changed();
  }

  #changed(): void {
    for (const listener of this.#listeners) listener();
  }

  /** The next round in `ms`, unless one is due sooner or running. */
  #schedule(ms: number): void {
    if (!this.#worker || this.#running || this.#entries.length === 0) return;
    const at = Date.now() + ms;
    if (this.#timer && this.#dueAt <= at) return;
    clearTimeout(this.#timer);
    this.#dueAt = at;
    this.#timer = setTimeout(() => {
      this.#timer = undefined;
      this.#running = this.#round().finally(() => {
        this.#running = undefined;
        this.#reschedule();
      });
    }, ms);
  }

  /** After a round: the next one with backoff (doubling, at most MAX_ROUND_DELAY), or at the first expiry. */
  #reschedule(): void {
    const worker = this.#worker;
    if (!worker || this.#entries.length === 0) return;
    const backoff = this.#rounds ? Math.min(MAX_ROUND_DELAY, worker.firstDelay * 2 ** (this.#rounds - 1)) : 0;
    const expiry = Math.min(...this.#entries.map((e) => e.since + worker.minutes * 60_000)) - Date.now();
    this.#schedule(Math.max(0, Math.min(backoff, expiry + 1)));
  }

  /**
   * One round: every expired message ends; then oldest first, each is sent again until one
   * fails for a reason a later round may get past, which ends the round (order is kept).
   */
  async #round(): Promise<void> {
    const worker = this.#worker;
    if (!worker) return;
    let failed = false;
    try {
      while (this.#entries.length && this.#worker === worker) {
        if (this.#expire(worker)) await this.#file?.save().catch(() => undefined);
        const entry = this.#entries[0];
        if (!entry) break;
        let outcome: Outcome;
        entry.attempts++;
        try {
          outcome = { result: await worker.send(entry) };
        } catch (error) {
          if (worker.transient(error, entry)) {
            entry.reason = (error as Error)?.message ?? String(error);
            failed = true;
            await this.#file?.save().catch(() => undefined);
            break;
          }
          outcome = { error: error as GatewayError };
        }
        const msg = this.#msgOf(entry);
        this.#remove(entry);
        await this.#file?.save().catch(() => undefined);
        settle(worker, entry, msg, outcome);
      }
    } finally {
      this.#rounds = failed ? this.#rounds + 1 : 0;
      if (failed) this.#lastFailure = Date.now();
    }
  }

  /** Ends every message kept longer than the account's outbox time; returns how many. */
  #expire(worker: OutboxWorker): number {
    const now = Date.now();
    let expired = 0;
    for (const entry of [...this.#entries]) {
      if (now - entry.since < worker.minutes * 60_000) continue;
      const msg = this.#msgOf(entry);
      this.#remove(entry);
      settle(worker, entry, msg, { error: worker.expired(entry) });
      expired++;
    }
    return expired;
  }
}

/** Whether `a` was taken before `b`. */
function before(a: OutboxEntry, b: OutboxEntry): boolean {
  return a.since < b.since || (a.since === b.since && a.order < b.order);
}

/** Hands a message on; whatever its node does with it, the round goes on. */
function settle(worker: OutboxWorker, entry: OutboxEntry, msg: Msg, outcome: Outcome): void {
  try {
    worker.settle(entry, msg, outcome);
  } catch {
    // The node's failure path already reports; an outbox round never stops for it.
  }
}

/** The outboxes of this runtime, by file (or by account id where there is no user directory). */
const outboxes = new Map<string, Outbox>();

/**
 * The outbox of an account: in `<userDir>/bulkgate-outbox/<account id>.jsonl`, or in memory when
 * Node-RED has no user directory (with a warning when the first message is kept).
 */
export function outboxFor(userDir: string | undefined, accountId: string, warn: Warn): Outbox {
  const path = userDir ? join(userDir, 'bulkgate-outbox', `${accountId.replace(/[^\w.-]/g, '_')}.jsonl`) : undefined;
  const key = path ?? `memory:${accountId}`;
  let outbox = outboxes.get(key);
  if (outbox) outbox.warn = warn;
  else outboxes.set(key, (outbox = new Outbox(path, warn)));
  return outbox;
}

/**
 * The properties of a msg an outbox file can hold: JSON, without an http in node's req and res
 * (they cannot outlive the process), functions, or a second visit to the same object.
 */
export function storableMsg(msg: Msg): Record<string, unknown> {
  const seen = new WeakSet<object>();
  return JSON.parse(
    JSON.stringify(msg, function (this: unknown, key: string, value: unknown) {
      if (this === msg && (key === 'req' || key === 'res')) return undefined;
      if (typeof value === 'function') return undefined;
      if (typeof value === 'object' && value !== null) {
        if (seen.has(value)) return undefined;
        seen.add(value);
      }
      return value;
    }) ?? '{}',
  ) as Record<string, unknown>;
}

/**
 * Whether a failed send goes to the outbox: the gateway could not be reached, was busy (429,
 * 5xx) or did not answer, after the account's retries, or the node closed while the msg waited
 * or was on the wire. Sent again only where a second copy cannot be sent: the body takes
 * duplicates_check, or the request never reached the gateway. Never an error a repeat cannot fix
 * (authentication, a failed check, low_credit, banned: those are not retryable), nor the
 * account's own rate limit refusing a msg because its queue is full.
 */
export function deferrable(error: unknown, operation: Operation): boolean {
  if (!(error instanceof GatewayError) || !error.retryable) return false;
  if (error.code === 'rate_limited' && error.status === undefined) return false;
  return checksDuplicates(operation) || error.mayHaveReached === false;
}

/** The error a message ends with when it waited `minutes` in the outbox. */
export function expiredError(entry: OutboxEntry, minutes: number): GatewayError {
  return new GatewayError({
    type: 'expired',
    message: `Not sent: the gateway could not be reached for ${minutes} minute${minutes === 1 ? '' : 's'} (the account's outbox time; ${entry.attempts} attempt${entry.attempts === 1 ? '' : 's'}). Last: ${entry.reason}`,
    brief: { key: 'expired' },
  });
}

/**
 * The account's outbox: a message the gateway could not be reached for (or still waiting when its
 * node closed) is kept in its log before the msg's `done`, and sent again until it is taken or its
 * time has passed; results come out in the order the msgs came. In memory an entry is its order,
 * its routing and its line (a kept message is not held in several copies).
 */
import { randomBytes } from 'node:crypto';
import { GatewayError, resendable, type Operation, type PromotionalResult, type RejectedRecipient, type TransactionalResult } from '../../gateway';
import type { Circuit } from './circuit';
import { lockedError, type Warn } from './outbox-journal';
import { keptOnce } from './registry';
import type { AccountStore, OutboxFile, OutboxLog } from './store';
import type { Msg } from '../plumbing/msg';

export type { Warn } from './outbox-journal';

export interface OutboxEntry {
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
  /** When its node took the msg, ms since the epoch. */
  since: number;
  /** Which msg came first among those taken in the same millisecond (the taking process's count). */
  order: number;
  attempts: number;
  /** The last failure's sentence. */
  reason: string;
  /** Its node's `giveUpAfter` as ms since the epoch; the account's time applies too. */
  deadline?: number;
  /** The copy of Node-RED that claimed it (a shared store; a file has one writer). */
  owner?: string;
}

export type NewEntry = Omit<OutboxEntry, 'id'>;

export type SendResult = TransactionalResult | PromotionalResult;
export type Outcome = { result: SendResult } | { error: GatewayError };

export interface OutboxWorker {
  /** Sends a kept message again, without the account's retries; a probe goes out whatever the circuit says. */
  send(entry: OutboxEntry, probe: boolean): Promise<SendResult>;
  /** Hands a message that left the outbox to its node: out of its ports, or to Catch. */
  settle(entry: OutboxEntry, msg: Msg, outcome: Outcome): void;
  /** Whether an error is one a later attempt may get past (the gateway unreachable, busy, closing). */
  transient(error: unknown, entry: OutboxEntry): boolean;
  expired(entry: OutboxEntry): GatewayError;
  /** Minutes a message is kept; 0: none is. */
  minutes: number;
  /** First wait between rounds, ms (it doubles up to MAX_PROBE_DELAY). */
  firstDelay: number;
  size: number;
  /** The account's name, for the sentence an `outbox_full` error says. */
  account: string;
  concurrency: number;
  /** Opened by the first failure kept and by a failed probe, closed by one that got through. */
  circuit: Circuit;
}

// An id is unique by this process's tag (a pid comes back after a restart) and a count over every
// outbox it holds (two outboxes of one file in one process must not give the same id twice).
const PROCESS_TAG = randomBytes(4).toString('hex');
let nextId = 0;

export const MAX_PROBE_DELAY = 15_000;
export const DEFAULT_OUTBOX_SIZE = 10_000;

// `wire`: on the wire, or its answer not yet handed on. The only moves: waiting -> wire -> waiting
// (a failure a later round may get past), waiting or wire -> ended. So no round attempts a message
// on the wire or one that ended, however its list is tidied meanwhile.
type KeptState = 'waiting' | 'wire' | 'ended';

interface Kept extends Pick<OutboxEntry, 'id' | 'node' | 'since' | 'order' | 'deadline' | 'attempts' | 'reason'> {
  /** The whole entry as JSON, as first kept. */
  line: string;
  state: KeptState;
}

type Attempted = { kept: Kept; entry: OutboxEntry; outcome: Outcome } | { kept: Kept; transient: unknown };

export class Outbox {
  /** Entries in the order their msgs came; ended ones are skipped and swept out now and then. */
  #list: Kept[] = [];
  #head = 0;
  /** Where the current round looks for the next message to send. */
  #cursor = 0;
  #live = 0;
  #gone = 0;
  readonly #byNode = new Map<string, number>();
  /** The msgs themselves, for entries kept by this process whose msg a file cannot hold (an http in node's req and res). */
  readonly #msgs = new Map<string, Msg>();
  readonly #journal: OutboxLog | undefined;
  readonly #listeners = new Set<() => void>();
  #worker: OutboxWorker | undefined;
  #timer: NodeJS.Timeout | undefined;
  #dueAt = 0;
  #expiryTimer: NodeJS.Timeout | undefined;
  /** A shared log: the timer that looks for entries another copy left. */
  #adoptTimer: NodeJS.Timeout | undefined;
  #expiryAt = Infinity;
  #running: Promise<void> | undefined;
  /** Results handed on in the order the msgs came, each after its `done` line is on disk. */
  #settling: Promise<void> = Promise.resolve();
  #rounds = 0;

  #warn: Warn;
  #warnedMemoryOnly = false;

  constructor(log: OutboxLog | undefined, warn: Warn) {
    this.#warn = warn;
    this.#journal = log;
    if (log?.kind === 'file') log.warn = warn;
    // A file left by an earlier run is sent, unless another living Node-RED holds it: then it is
    // that one's to send. (A shared log's entries come by adoption, once the account runs.)
    if (log?.kind !== 'file' || !log.exists()) return;
    try {
      if (log.lock()) this.#adopt();
      else warn('outbox-locked', { path: log.where });
    } catch (error) {
      warn('outbox-unreadable', { path: log.where, reason: (error as Error).message });
    }
  }

  /** Reads the journal (the lock just taken); gives the lock back when nothing waits. */
  #adopt(): void {
    const journal = this.#journal as OutboxFile;
    for (const { entry, line } of journal.load(this.warn).values()) this.#insert(entry as unknown as OutboxEntry, line);
    if (this.#live === 0) void journal.release();
    else this.#changed();
  }

  /** Who hears of its problems: the account node running now. */
  get warn(): Warn {
    return this.#warn;
  }

  set warn(warn: Warn) {
    this.#warn = warn;
    if (this.#journal?.kind === 'file') this.#journal.warn = warn;
  }

  get waiting(): number {
    return this.#live;
  }

  waitingFor(node: string): number {
    return this.#byNode.get(node) ?? 0;
  }

  get persistent(): boolean {
    return this.#journal !== undefined;
  }

  get path(): string | undefined {
    return this.#journal?.where;
  }

  /** Called on every change of `waiting`; returns the function that stops it. */
  watch(listener: () => void): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }

  /** Resolves once it is on disk; refused (a GatewayError) when full, held by another Node-RED, or not written. */
  async keep(entry: NewEntry, msg: Msg, failure?: unknown): Promise<void> {
    // The first failure the outbox keeps marks the gateway unreachable, at once: what waits for a
    // connection, a retry or the rate limit is withdrawn (and kept) instead of trying it too.
    if (failure !== undefined) this.#worker?.circuit.trip(failure);
    const size = this.#worker?.size ?? DEFAULT_OUTBOX_SIZE;
    if (this.#live >= size) throw fullError(size, this.#worker?.account);
    const journal = this.#journal;
    if (journal?.kind === 'file' && !journal.locked) {
      let held: boolean;
      try {
        held = journal.lock();
      } catch (error) {
        throw unavailableError(journal.where, error);
      }
      if (!held) throw lockedError(journal.where);
      // Taken over from a process that is gone: what it kept waits here too.
      this.#adopt();
    }
    if (!journal && !this.#warnedMemoryOnly) {
      this.#warnedMemoryOnly = true;
      this.warn('outbox-memory-only', {});
    }
    const id = `${entry.since.toString(36)}-${PROCESS_TAG}-${(nextId++).toString(36)}`;
    const line = JSON.stringify({ id, ...entry });
    const kept = this.#insert({ id, ...entry }, line);
    if (msg.req !== undefined || msg.res !== undefined) this.#msgs.set(id, msg);
    this.#changed();
    try {
      await journal?.keep(line, size);
    } catch (error) {
      this.#drop(kept);
      this.#changed();
      throw error instanceof GatewayError ? error : unavailableError(journal?.where ?? '', error);
    }
    // A round already due keeps its time (a timer is only ever brought forward): an alarm storm
    // during an outage is not a storm of probes.
    if (this.#worker) this.#schedule(this.#probeDelay(this.#worker));
    // Only a message that runs out before the armed time moves the timer: a storm of keeps does
    // not go through every waiting message each time.
    if (this.#worker && giveUpAt(kept, this.#worker) < this.#expiryAt) this.#armExpiry(giveUpAt(kept, this.#worker));
  }

  attach(worker: OutboxWorker): void {
    this.#worker = worker;
    this.#rounds = 0;
    this.#schedule(worker.firstDelay);
    this.#armExpiry();
    const journal = this.#journal;
    if (journal?.kind === 'shared') {
      clearInterval(this.#adoptTimer);
      this.#adoptTimer = setInterval(() => void this.#adoptShared(), journal.adoptEveryMs);
      this.#adoptTimer.unref?.();
    }
  }

  /**
   * Renews this copy's claims, writes back what the store lost of them (a flush, a restart without
   * persistence, an eviction: this copy still holds them), and takes what a copy that is gone left.
   */
  async #adoptShared(): Promise<void> {
    const journal = this.#journal;
    if (journal?.kind !== 'shared' || !this.#worker) return;
    try {
      const live = new Map(this.#kept().map((kept) => [kept.id, kept]));
      const lost = await journal.renew([...live.keys()]);
      // Not one that ended meanwhile: its done was sent after this renew, or it is skipped here.
      const back = lost.map((id) => live.get(id)).filter((kept): kept is Kept => kept !== undefined && kept.state !== 'ended');
      if (back.length) {
        this.warn('store-entries-lost', { count: back.length });
        const size = this.#worker?.size ?? DEFAULT_OUTBOX_SIZE;
        // One that cannot be written back now is found lost again at the next look.
        await Promise.all(back.map((kept) => journal.keep(kept.line, size).catch(() => undefined)));
      }
      const found = await journal.adoptable((id) => live.has(id));
      for (const { entry, line } of found) this.#insert(entry as unknown as OutboxEntry, line);
      if (found.length) {
        this.#changed();
        this.#schedule(0);
        this.#armExpiry();
      }
    } catch {
      // The store does not answer: the next look may.
    }
  }

  /** The account closed: no new round starts; the one running ends with the messages on the wire. */
  async detach(worker: OutboxWorker): Promise<void> {
    if (this.#worker !== worker) return;
    this.#worker = undefined;
    clearTimeout(this.#timer);
    this.#timer = undefined;
    clearInterval(this.#adoptTimer);
    this.#armExpiry();
    await this.#running;
    await this.#settling;
  }

  /** A test's outbox; a runtime's lives as long as its process. */
  close(): Promise<void> {
    return this.#journal?.kind === 'file' ? this.#journal.close() : Promise.resolve();
  }

  /** Each waiting message ends with `error` (Catch). Returns how many there were. */
  async empty(error: (entry: OutboxEntry) => GatewayError): Promise<number> {
    const ended = this.#kept().filter((kept) => kept.state === 'waiting');
    await Promise.all(ended.map((kept) => this.#end(kept, (entry) => ({ error: error(entry) }))));
    return ended.length;
  }

  #kept(): Kept[] {
    return this.#list.slice(this.#head).filter((kept) => kept.state !== 'ended');
  }

  /** After every msg that came before it (concurrent sends fail in any order); a line read back was checked by its log. */
  #insert({ id, node, since, order, deadline, attempts, reason }: OutboxEntry, line: string): Kept {
    const kept: Kept = { id, node, since, order, deadline, attempts, reason, line, state: 'waiting' };
    const list = this.#list;
    let at = list.length;
    while (at > this.#head && before(kept, list[at - 1] as Kept)) at--;
    list.splice(at, 0, kept);
    if (at < this.#cursor) this.#cursor = at;
    this.#live++;
    this.#byNode.set(kept.node, (this.#byNode.get(kept.node) ?? 0) + 1);
    return kept;
  }

  /** Takes an entry out for good (its `done` line is the caller's). */
  #drop(kept: Kept): void {
    if (kept.state === 'ended') return;
    kept.state = 'ended';
    this.#live--;
    this.#gone++;
    const left = (this.#byNode.get(kept.node) ?? 1) - 1;
    if (left > 0) this.#byNode.set(kept.node, left);
    else this.#byNode.delete(kept.node);
    this.#msgs.delete(kept.id);
    while (this.#head < this.#list.length && (this.#list[this.#head] as Kept).state === 'ended') this.#head++;
    if (this.#gone > 1024 && this.#gone > this.#live) {
      // The round's cursor starts over: what it passed is on the wire or ended, and is skipped.
      this.#list = this.#list.filter((k) => k.state !== 'ended');
      this.#head = this.#cursor = 0;
      this.#gone = 0;
    }
  }

  #entryOf(kept: Kept): OutboxEntry {
    const entry = JSON.parse(kept.line) as OutboxEntry;
    entry.rejected ??= [];
    entry.msg ??= {};
    entry.attempts = kept.attempts;
    entry.reason = kept.reason;
    return entry;
  }

  /** Ends an entry: its `done` line appended, then (in the order the msgs came, once that line is on disk) its msg handed on. */
  #end(kept: Kept, outcome: (entry: OutboxEntry) => Outcome, read?: OutboxEntry): Promise<void> {
    const entry = read ?? this.#entryOf(kept);
    const msg = this.#msgs.get(kept.id) ?? (entry.msg as Msg);
    this.#drop(kept);
    // Nothing waits any more: the circuit closes, so the next msg tries the gateway itself instead
    // of waiting for a probe that nothing would schedule.
    if (this.#live === 0 && this.#worker) {
      this.#rounds = 0;
      this.#worker.circuit.reset();
    }
    this.#changed();
    const written =
      this.#journal?.done(kept.id).then(
        () => this.#tidy(),
        // The message went (or failed) all the same; it may be sent again after a restart, with
        // duplicates_check, so the gateway drops the copy.
        () => undefined,
      ) ?? Promise.resolve();
    const settled = this.#settling
      .then(() => written)
      .then(() => {
        try {
          this.#worker?.settle(entry, msg, outcome(entry));
        } catch {
          // The node's failure path already reports; an outbox round never stops for it.
        }
      });
    this.#settling = settled;
    return settled;
  }

  /** After `done` lines: the file removed when nothing waits, rewritten when it is mostly spent. */
  #tidy(): void {
    const journal = this.#journal;
    if (journal?.kind !== 'file') return;
    if (this.#live === 0) void journal.release();
    else if (journal.wantsCompaction(this.#live)) {
      journal
        .compact(() => this.#kept().map((kept) => kept.line))
        .catch((error: unknown) => this.warn('outbox-unreadable', { path: journal.where, reason: (error as Error).message }));
    }
  }

  #changed(): void {
    for (const listener of this.#listeners) listener();
  }

  /** The first delay, doubled for each round in a row that failed, at most MAX_PROBE_DELAY. */
  #probeDelay(worker: OutboxWorker): number {
    return Math.min(MAX_PROBE_DELAY, worker.firstDelay * 2 ** Math.min(this.#rounds, 30));
  }

  /** The next round in `ms`, unless one is due sooner or running. */
  #schedule(ms: number): void {
    if (!this.#worker || this.#running || this.#live === 0) return;
    const at = Date.now() + ms;
    if (this.#timer && this.#dueAt <= at) return;
    clearTimeout(this.#timer);
    this.#dueAt = at;
    this.#timer = setTimeout(() => {
      this.#timer = undefined;
      this.#running = this.#round().finally(() => {
        this.#running = undefined;
        if (this.#worker) this.#schedule(this.#probeDelay(this.#worker));
        this.#armExpiry();
      });
    }, ms);
  }

  /** A timer of its own for the first message whose time runs out: it ends on time, and no probe goes early for it. */
  #armExpiry(sooner?: number): void {
    const worker = this.#worker;
    let first = sooner ?? Infinity;
    if (sooner === undefined && worker) {
      for (const kept of this.#kept()) first = Math.min(first, giveUpAt(kept, worker));
    }
    if (first === this.#expiryAt) return;
    clearTimeout(this.#expiryTimer);
    this.#expiryTimer = undefined;
    this.#expiryAt = first;
    if (first === Infinity) return;
    // setTimeout's longest wait is about 24.8 days; the timer is armed again when it fires.
    this.#expiryTimer = setTimeout(
      () => {
        this.#expiryTimer = undefined;
        this.#expiryAt = Infinity;
        if (this.#worker) this.#expire(this.#worker);
        this.#armExpiry();
      },
      Math.min(2 ** 31 - 1, Math.max(0, first - Date.now() + 1)),
    );
  }

  /** The oldest probes the gateway; when it got through, the rest follow until one fails for a reason a later round may get past. */
  async #round(): Promise<void> {
    const worker = this.#worker;
    if (!worker) return;
    this.#expire(worker);
    this.#cursor = this.#head;
    let failed = false;
    try {
      const probe = this.#next();
      if (!probe) return;
      const first = await this.#attempt(worker, probe, true);
      if ('transient' in first) {
        failed = true;
        worker.circuit.trip(first.transient);
        return;
      }
      worker.circuit.reset();
      void this.#end(first.kept, () => first.outcome, first.entry);
      failed = await this.#drain(worker);
    } finally {
      this.#rounds = failed ? this.#rounds + 1 : 0;
    }
  }

  /** After a probe got through: the rest, `concurrency` at a time. Resolves whether one failed. */
  async #drain(worker: OutboxWorker): Promise<boolean> {
    const inFlight: Promise<Attempted>[] = [];
    let failed = false;
    for (;;) {
      while (!failed && inFlight.length < worker.concurrency && this.#worker === worker) {
        const kept = this.#next();
        if (!kept) break;
        inFlight.push(this.#attempt(worker, kept, false));
      }
      const oldest = inFlight.shift();
      if (!oldest) return failed;
      const done = await oldest;
      if ('transient' in done) failed = true;
      else void this.#end(done.kept, () => done.outcome, done.entry);
    }
  }

  #next(): Kept | undefined {
    const list = this.#list;
    if (this.#cursor < this.#head) this.#cursor = this.#head;
    while (this.#cursor < list.length) {
      const kept = list[this.#cursor++] as Kept;
      if (kept.state === 'waiting') return kept;
    }
    return undefined;
  }

  /** It stays on the wire until its end is handed on (#end), or, after a failure a later round may get past, waits again. */
  async #attempt(worker: OutboxWorker, kept: Kept, probe: boolean): Promise<Attempted> {
    if (kept.state !== 'waiting') throw new Error(`outbox: an entry ${kept.state} was attempted`);
    kept.state = 'wire';
    kept.attempts++;
    const entry = this.#entryOf(kept);
    try {
      return { kept, entry, outcome: { result: await worker.send(entry, probe) } };
    } catch (error) {
      if (worker.transient(error, entry)) {
        kept.reason = (error as Error)?.message ?? String(error);
        kept.state = 'waiting';
        return { kept, transient: error };
      }
      return { kept, entry, outcome: { error: error as GatewayError } };
    }
  }

  #expire(worker: OutboxWorker): void {
    const now = Date.now();
    const due = this.#kept().filter((kept) => kept.state === 'waiting' && now >= giveUpAt(kept, worker));
    for (const kept of due) void this.#end(kept, () => ({ error: worker.expired(this.#entryOf(kept)) }));
  }
}

function giveUpAt(kept: Kept, worker: OutboxWorker): number {
  const account = kept.since + worker.minutes * 60_000;
  return kept.deadline === undefined ? account : Math.min(account, kept.deadline);
}

function before(a: Kept, b: Kept): boolean {
  return a.since < b.since || (a.since === b.since && a.order < b.order);
}

/** A full disk, a permission: the msg cannot wait. */
export function unavailableError(where: string, cause: unknown): GatewayError {
  return new GatewayError({
    type: 'outbox_unavailable',
    message: `Not kept: the outbox file ${where} could not be written (${(cause as Error)?.message ?? String(cause)}); this message could not wait for the gateway`,
    brief: { key: 'outbox-unavailable' },
    cause,
  });
}

export function fullError(size: number, account?: string): GatewayError {
  return new GatewayError({
    type: 'outbox_full',
    message: `Not kept: the outbox${account ? ` of the BulkGate account "${account}"` : ''} already holds ${size} messages waiting for the gateway (the account's "outbox size" setting)`,
    brief: { key: 'outbox-full' },
  });
}

/** One per log (or account id, in memory) in this process: it outlives redeploys. */
export function outboxFor(store: AccountStore, accountId: string, warn: Warn): Outbox {
  const log = store.outboxLog(accountId);
  const outbox = keptOnce('outbox', log ?? `memory:${accountId}`, () => new Outbox(log, warn));
  outbox.warn = warn;
  return outbox;
}

/** JSON, without an http in node's req and res (they cannot outlive the process), functions, or a second visit to an object. */
export function storableMsg(msg: Msg): Record<string, unknown> {
  const seen = new WeakSet<object>();
  return JSON.parse(
    JSON.stringify(msg, function (this: unknown, key: string, value: unknown) {
      if ((this === msg && (key === 'req' || key === 'res')) || typeof value === 'function') return undefined;
      if (typeof value === 'object' && value !== null) {
        if (seen.has(value)) return undefined;
        seen.add(value);
      }
      return value;
    }) ?? '{}',
  ) as Record<string, unknown>;
}

/**
 * A retryable failure, sent again only where a duplicate cannot be sent (the body takes
 * duplicates_check, or it never reached the gateway); never the account's own rate limit's full queue.
 */
export function deferrable(error: unknown, operation: Operation): boolean {
  if (!(error instanceof GatewayError) || !error.retryable) return false;
  if (error.code === 'rate_limited' && error.status === undefined) return false;
  return resendable(operation, error.mayHaveReached);
}

export function expiredError(entry: OutboxEntry, minutes: number): GatewayError {
  const tries = `${entry.attempts} attempt${entry.attempts === 1 ? '' : 's'}`;
  if (entry.deadline !== undefined && entry.deadline < entry.since + minutes * 60_000) {
    return giveUpError(Math.round((entry.deadline - entry.since) / 1000), `the gateway could not be reached in time (${tries}). Last: ${entry.reason}`);
  }
  return new GatewayError({
    type: 'expired',
    message: `Not sent: the gateway could not be reached for ${minutes} minute${minutes === 1 ? '' : 's'} (the account's outbox time; ${tries}). Last: ${entry.reason}`,
    brief: { key: 'expired' },
  });
}

/** `seconds`: its node's `giveUpAfter`. */
export function giveUpError(seconds: number, why: string): GatewayError {
  return new GatewayError({
    type: 'expired',
    message: `Not sent within ${seconds} s (the node's "give up after"): ${why}`,
    brief: { key: 'expired' },
  });
}

// The account's outbox: a message the gateway could not take is logged before the msg's `done` and
// sent again until taken or out of time; results come out in the order the msgs came.
import { randomBytes } from 'node:crypto';
import { GatewayError, resendable, timerDelay, type Operation, type PromotionalResult, type RejectedRecipient, type TransactionalResult } from '../../gateway';
import { monotonicAt, monotonicNow } from '../../gateway/clock';
import { withdrawnError } from '../../gateway/withdrawn';
import { unwritableError, type Warn } from './outbox-journal';
import { keptOnce } from './registry';
import type { AccountStore, LoggedEntry, OutboxLog } from './store';
import type { Msg } from '../plumbing/msg';
import { nodeError, nodeWording } from '../plumbing/wording';
import type { Wording } from '../../gateway/wording';

export type { Warn } from './outbox-journal';

export interface OutboxEntry {
  id: string;
  node: string;
  operation: Operation;
  /** The wire body without application_id, application_token and application_product. */
  body: Record<string, unknown>;
  /** Set aside by the checks before the first attempt (they are part of the answer). */
  rejected: RejectedRecipient[];
  messages: number;
  msg: Record<string, unknown>;
  since: number;
  /** Which msg came first among those taken in the same millisecond. */
  order: number;
  attempts: number;
  reason: string;
  /** Its node's `giveUpAfter`, ms since the epoch; the account's time applies too. */
  deadline?: number;
}

export type NewEntry = Omit<OutboxEntry, 'id'>;

export type SendResult = TransactionalResult | PromotionalResult;
export type Outcome = { result: SendResult } | { error: GatewayError };

/**
 * What the outbox saw of the gateway, told to the account, which alone decides whether the gateway
 * is unreachable: a probe that failed, one that got through, or nothing left waiting.
 */
// `empty`: nothing waits any more; `answered` when the gateway answered the last one (else it gave up or was discarded).
export type OutboxReport = { kind: 'probe-failed'; failure: unknown } | { kind: 'probe-through' } | { kind: 'empty'; answered: boolean };

export interface OutboxWorker {
  /** Without the account's retries; a probe goes out whatever the account thinks of the gateway. */
  send(entry: OutboxEntry, probe: boolean): Promise<SendResult>;
  settle(entry: OutboxEntry, msg: Msg, outcome: Outcome): void;
  /** Whether a later attempt may get past it (the gateway unreachable, busy, closing). */
  transient(error: unknown, entry: OutboxEntry): boolean;
  /** 0: none is kept. */
  minutes: number;
  /** ms; it doubles up to MAX_PROBE_DELAY. */
  firstDelay: number;
  size: number;
  account: string;
  concurrency: number;
  report(report: OutboxReport): void;
}

// Unique by this process's tag (a pid comes back after a restart) and a count over its outboxes.
const PROCESS_TAG = randomBytes(4).toString('hex');
let nextId = 0;

export const MAX_PROBE_DELAY = 15_000;
export const DEFAULT_OUTBOX_SIZE = 10_000;

/** Not the whole entry: a kept message is held once, as its line (JSON, as first kept). */
interface Kept extends Pick<OutboxEntry, 'id' | 'node' | 'since' | 'order' | 'deadline' | 'attempts' | 'reason'> {
  line: string;
  /** `since` on this process's monotonic clock, fixed when it was kept or loaded: what its age and give-up time count from (a step of the wall clock later moves neither). */
  startedAt: number;
  // Only waiting -> wire -> waiting, or -> ended: no round attempts one on the wire or ended.
  state: 'waiting' | 'wire' | 'ended';
  /** Its node withdrew it while it was on the wire: if that attempt did not get it to the gateway, it ends rather than waits again. */
  withdrawn?: true;
}

type Attempted = { kept: Kept; entry: OutboxEntry; outcome: Outcome } | { kept: Kept; transient: unknown };

export class Outbox {
  /** In the order the msgs came; ended ones are skipped and swept out now and then. */
  #list: Kept[] = [];
  #head = 0;
  #cursor = 0;
  #live = 0;
  #gone = 0;
  readonly #byNode = new Map<string, number>();
  /** Msgs a file cannot hold (an http in node's req and res), kept by this process. */
  readonly #msgs = new Map<string, Msg>();
  readonly #journal: OutboxLog | undefined;
  readonly #listeners = new Set<() => void>();
  #worker: OutboxWorker | undefined;
  #timer: NodeJS.Timeout | undefined;
  #dueAt = 0;
  #expiryTimer: NodeJS.Timeout | undefined;
  #expiryAt = Infinity;
  #running: Promise<void> | undefined;
  /** Results handed on in the order the msgs came, each after its `done` line is on disk. */
  #settling: Promise<void> = Promise.resolve();
  #rounds = 0;
  /** Results that ended while no worker was attached (a redeploy's detach): the next one hands them on. */
  #unsettled: { entry: OutboxEntry; msg: Msg; outcome: Outcome }[] = [];
  #handOnTimer: NodeJS.Timeout | undefined;

  /** The account node running now. */
  warn: Warn;
  #warnedMemoryOnly = false;

  constructor(log: OutboxLog | undefined, warn: Warn) {
    this.warn = warn;
    this.#journal = log;
    log?.open({
      warn: (key, params) => this.warn(key, params),
      adopt: (found) => this.#adopt(found),
      lost: () => {
        for (const kept of this.#kept()) if (kept.state === 'waiting') this.#drop(kept);
        this.#changed();
      },
      held: () => this.#kept().map(({ id, line }) => ({ id, line })),
      size: () => this.#worker?.size ?? DEFAULT_OUTBOX_SIZE,
    });
  }

  /** What its log found this process's now: sent soon, ended on time. */
  #adopt(found: LoggedEntry[]): number {
    for (const { entry, line, attempted } of found) {
      const kept = this.#insert(entry as unknown as OutboxEntry, line);
      // Its attempt had no answer (a crash, a kill): the gateway may have it. Where it cannot drop a
      // copy (simple 1.0), it ends once in Catch, never sent blind; else it goes again with duplicates_check.
      if (attempted && !resendable((entry as unknown as OutboxEntry).operation, true)) {
        void this.#end(kept, () => ({ error: unconfirmedError() }));
      }
    }
    if (found.length) {
      this.#changed();
      this.#schedule(0);
      this.#armExpiry();
    }
    return this.#live;
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

  watch(listener: () => void): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }

  /** Resolves once on disk; a GatewayError when full, locked by another Node-RED, or unwritten. */
  async keep(entry: NewEntry, msg: Msg): Promise<void> {
    const size = this.#worker?.size ?? DEFAULT_OUTBOX_SIZE;
    if (this.#live >= size) throw fullError(size, this.#worker?.account);
    const journal = this.#journal;
    if (journal && !journal.writable) {
      await journal.whenWritable((held) => (this.#live + held >= size ? fullError(size, this.#worker?.account) : undefined));
      if (this.#live >= size) throw fullError(size, this.#worker?.account);
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
      throw error instanceof GatewayError ? error : unwritableError(journal?.where ?? '', error);
    }
    // A timer is only brought forward: an alarm storm during an outage is not a storm of probes.
    if (this.#worker) this.#schedule(this.#probeDelay(this.#worker));
    // Not a scan of every waiting message at each keep of a storm.
    if (this.#worker && giveUpAt(kept, this.#worker) < this.#expiryAt) this.#armExpiry(giveUpAt(kept, this.#worker));
  }

  attach(worker: OutboxWorker): void {
    this.#worker = worker;
    this.#rounds = 0;
    this.#schedule(worker.firstDelay);
    this.#armExpiry();
    // After the first delay, as a round: by then the redeployed nodes are there to take their msgs.
    if (this.#unsettled.length) this.#handOnTimer = setTimeout(() => this.#handOnUnsettled(worker), worker.firstDelay);
    this.#journal?.attach();
  }

  async detach(worker: OutboxWorker): Promise<void> {
    if (this.#worker !== worker) return;
    this.#worker = undefined;
    clearTimeout(this.#timer);
    this.#timer = undefined;
    this.#journal?.detach();
    clearTimeout(this.#handOnTimer);
    this.#armExpiry();
    await this.#running;
    await this.#settling;
  }

  async empty(error: (entry: OutboxEntry) => GatewayError): Promise<number> {
    const ended = this.#kept().filter((kept) => kept.state === 'waiting');
    await Promise.all(ended.map((kept) => this.#end(kept, (entry) => ({ error: error(entry) }))));
    return ended.length;
  }

  /**
   * Its node withdrew them (an escalation acknowledged or resolved): the entries of `node` that
   * `which` picks by their msg end as withdrawn (they never reached the gateway), through the node
   * as any end does. One on the wire now ends so if that attempt fails; one the gateway took cannot
   * be called back. Resolves with how many ended now.
   */
  async withdraw(node: string, which: (msg: Record<string, unknown>) => boolean): Promise<number> {
    const ended: Promise<void>[] = [];
    for (const kept of this.#kept()) {
      if (kept.node !== node || !which(this.#entryOf(kept).msg)) continue;
      if (kept.state === 'wire') kept.withdrawn = true;
      else ended.push(this.#end(kept, () => ({ error: withdrawnError() })));
    }
    await Promise.all(ended);
    return ended.length;
  }

  #kept(): Kept[] {
    return this.#list.slice(this.#head).filter((kept) => kept.state !== 'ended');
  }

  /** After every msg that came before it: concurrent sends fail in any order. */
  #insert({ id, node, since, order, deadline, attempts, reason }: OutboxEntry, line: string): Kept {
    const kept: Kept = { id, node, since, order, deadline, attempts, reason, line, startedAt: monotonicAt(since), state: 'waiting' };
    const list = this.#list;
    let at = list.length;
    while (at > this.#head && before(kept, list[at - 1] as Kept)) at--;
    list.splice(at, 0, kept);
    if (at < this.#cursor) this.#cursor = at;
    this.#live++;
    this.#byNode.set(kept.node, (this.#byNode.get(kept.node) ?? 0) + 1);
    return kept;
  }

  /** Its `done` line is the caller's. */
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

  /** `read`: the entry an attempt read, so the gateway answered it; without, the entry gave up or was discarded. */
  #end(kept: Kept, outcome: (entry: OutboxEntry) => Outcome, read?: OutboxEntry): Promise<void> {
    const entry = read ?? this.#entryOf(kept);
    const msg = this.#msgs.get(kept.id) ?? (entry.msg as Msg);
    this.#drop(kept);
    // No round probes now: the account hears that nothing waits.
    if (this.#live === 0 && this.#worker) {
      this.#rounds = 0;
      this.#worker.report({ kind: 'empty', answered: read !== undefined });
    }
    this.#changed();
    const written =
      this.#journal?.done(kept.id).then(
        () => this.#journal?.spent(this.#live, () => this.#kept().map((kept) => kept.line)),
        // Sent again after a restart at worst, with duplicates_check: the gateway drops the copy.
        () => undefined,
      ) ?? Promise.resolve();
    const settled = this.#settling.then(() => written).then(() => this.#handOn(entry, msg, outcome(entry)));
    this.#settling = settled;
    return settled;
  }

  #handOn(entry: OutboxEntry, msg: Msg, outcome: Outcome): void {
    const worker = this.#worker;
    if (!worker) return void this.#unsettled.push({ entry, msg, outcome });
    try {
      worker.settle(entry, msg, outcome);
    } catch {
      // The node's failure path already reports; an outbox round never stops for it.
    }
  }

  #handOnUnsettled(worker: OutboxWorker): void {
    if (this.#worker !== worker) return;
    const unsettled = this.#unsettled;
    this.#unsettled = [];
    for (const { entry, msg, outcome } of unsettled) this.#handOn(entry, msg, outcome);
  }

  #changed(): void {
    for (const listener of this.#listeners) listener();
  }

  // No jitter, unlike a request's retries (retry-policy.ts): an account probes with one request at a
  // time and the rest wait for it, so there is no herd to spread; the cap (15 s) bounds how late the
  // kept alerts leave once the gateway is back.
  #probeDelay(worker: OutboxWorker): number {
    return Math.min(MAX_PROBE_DELAY, worker.firstDelay * 2 ** Math.min(this.#rounds, 30));
  }

  #schedule(ms: number): void {
    if (!this.#worker || this.#running || this.#live === 0) return;
    const at = monotonicNow() + ms;
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

  /** Its own timer: a message ends on time, and no probe goes early for it. */
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
    // Within setTimeout's longest wait; the timer is armed again when it fires.
    this.#expiryTimer = setTimeout(
      () => {
        this.#expiryTimer = undefined;
        this.#expiryAt = Infinity;
        if (this.#worker) this.#expire(this.#worker);
        this.#armExpiry();
      },
      timerDelay(first - monotonicNow() + 1),
    );
  }

  /** The oldest probes; when it got through, the rest follow until a transient failure. */
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
        worker.report({ kind: 'probe-failed', failure: first.transient });
        return;
      }
      worker.report({ kind: 'probe-through' });
      void this.#end(first.kept, () => first.outcome, first.entry);
      failed = await this.#drain(worker);
    } finally {
      this.#rounds = failed ? this.#rounds + 1 : 0;
    }
  }

  /** Resolves whether one failed. */
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

  async #attempt(worker: OutboxWorker, kept: Kept, probe: boolean): Promise<Attempted> {
    if (kept.state !== 'waiting') throw new Error(`outbox: an entry ${kept.state} was attempted`);
    kept.state = 'wire';
    kept.attempts++;
    const entry = this.#entryOf(kept);
    // Where the gateway cannot drop a copy (simple 1.0), on disk before the request: after a crash the
    // entry is known to be possibly at the gateway. An advanced one is sent again with duplicates_check
    // either way, so it costs no write. A disk that refuses the line does not hold the send.
    const recorded = this.#journal && !resendable(entry.operation, true);
    try {
      if (recorded) await this.#journal?.attempt(kept.id).catch(() => undefined);
      return { kept, entry, outcome: { result: await worker.send(entry, probe) } };
    } catch (error) {
      if (worker.transient(error, entry)) {
        kept.reason = (error as Error)?.message ?? String(error);
        kept.state = 'waiting';
        if (recorded) this.#journal?.back(kept.id);
        if (kept.withdrawn) void this.#end(kept, () => ({ error: withdrawnError() }));
        return { kept, transient: error };
      }
      // Cut off by a redeploy (its account detached while it was on the wire) where the gateway cannot drop a copy.
      const cutOff = this.#worker !== worker && error instanceof GatewayError && error.retryable && error.mayHaveReached !== false;
      return { kept, entry, outcome: { error: cutOff ? unconfirmedError() : (error as GatewayError) } };
    }
  }

  #expire(worker: OutboxWorker): void {
    const now = monotonicNow();
    const due = this.#kept().filter((kept) => kept.state === 'waiting' && now >= giveUpAt(kept, worker));
    for (const kept of due) void this.#end(kept, () => ({ error: expiredError(this.#entryOf(kept), worker.minutes) }));
  }
}

/** On the monotonic clock: the account's outbox time, or its node's give-up time (stored as a wall-clock deadline, counted as a duration from `since`). */
function giveUpAt(kept: Kept, worker: OutboxWorker): number {
  return kept.startedAt + Math.min(worker.minutes * 60_000, (kept.deadline ?? Infinity) - kept.since);
}

// By `startedAt`, not `since`: an alert kept after the wall clock stepped back goes behind the older ones.
function before(a: Kept, b: Kept): boolean {
  return a.startedAt < b.startedAt || (a.startedAt === b.startedAt && a.order < b.order);
}

export function fullError(size: number, account?: string): GatewayError {
  return account
    ? nodeError({ type: 'outbox_full', key: 'outbox-full-of', params: { account, size }, brief: { key: 'outbox-full' } })
    : nodeError({ type: 'outbox_full', key: 'outbox-full', params: { size }, brief: { key: 'outbox-full' } });
}

/** One per log (or account id, in memory) in this process: it outlives redeploys. */
export function outboxFor(store: AccountStore, accountId: string, warn: Warn): Outbox {
  const log = store.outboxLog(accountId);
  const outbox = keptOnce('outbox', log ?? `memory:${accountId}`, () => new Outbox(log, warn));
  outbox.warn = warn;
  return outbox;
}

/** Without req and res (they cannot outlive the process), functions, or an object seen twice. */
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

// Retryable, where no duplicate can be sent (duplicates_check, or it never reached the gateway);
// never the account's own rate limit's full queue.
export function deferrable(error: unknown, operation: Operation): boolean {
  if (!(error instanceof GatewayError) || !error.retryable) return false;
  if (error.code === 'rate_limited' && error.status === undefined) return false;
  return resendable(operation, error.mayHaveReached);
}

export function expiredError(entry: OutboxEntry, minutes: number): GatewayError {
  const tries = nodeWording(entry.attempts === 1 ? 'count.attempt-one' : 'count.attempts', { n: entry.attempts });
  if (entry.deadline !== undefined && entry.deadline < entry.since + minutes * 60_000) {
    return giveUpError(Math.round((entry.deadline - entry.since) / 1000), nodeWording('reason.unreached', { tries, last: entry.reason }));
  }
  const spent = nodeWording(minutes === 1 ? 'count.minute-one' : 'count.minutes', { n: minutes });
  return nodeError({ type: 'expired', key: 'expired', params: { minutes: spent, tries, last: entry.reason }, brief: { key: 'expired' } });
}

/** A send whose attempt had no answer before a crash or a redeploy, where the gateway cannot drop a copy: it may have been delivered. */
export function unconfirmedError(): GatewayError {
  return nodeError({ type: 'unconfirmed', key: 'unconfirmed', brief: { key: 'unconfirmed' } });
}

export function giveUpError(seconds: number, why: string | Wording): GatewayError {
  return nodeError({ type: 'expired', key: 'gave-up', params: { seconds, why }, brief: { key: 'expired' } });
}

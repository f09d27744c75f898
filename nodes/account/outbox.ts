// The account's outbox: a message the gateway could not take is logged before the msg's `done` and
// sent again until taken or out of time; results come out in the order the msgs came.
import { randomBytes } from 'node:crypto';
import {
  GatewayError,
  resendable,
  timerDelay,
  type Operation,
  type PromotionalResult,
  type RejectedRecipient,
  type TransactionalResult,
} from '../../gateway';
import { monotonicAt, monotonicNow } from '../../gateway/clock';
import { errorRecord, revivedError } from '../../gateway/errors';
import { holdsLongList, parseInSteps, stringifyInSteps } from '../../gateway/json-steps';
import { inTurns } from '../../gateway/steps';
import { withdrawnError } from '../../gateway/withdrawn';
import { unwritableError, type Warn } from './outbox-journal';
import { keptOnce } from './registry';
import { endsUnconfirmed, rememberNewest, type AttemptAnswer, type RecordedEnd } from './outbox-log';
import type { AccountStore, LoggedEntry, OutboxLog } from './store';
import type { Msg } from '../plumbing/msg';
import { causeOf, nodeError, nodeWording } from '../plumbing/wording';
import type { Wording, WordingParam } from '../../gateway/wording';

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
  /** Why it waits: the last failure's wording (a plain string in a line an older version kept). */
  reason: WordingParam;
  /** Its node's `giveUpAfter`, ms since the epoch; the account's time applies too. */
  deadline?: number;
}

export type NewEntry = Omit<OutboxEntry, 'id'>;

export type SendResult = TransactionalResult | PromotionalResult;
export type Outcome = { result: SendResult } | { error: GatewayError };

/**
 * What the outbox saw of the gateway, for the account, which alone decides whether it is unreachable. `empty`: nothing
 * waits any more; `answered` when the gateway answered the last one (else it gave up or was discarded).
 */
export type OutboxReport =
  { kind: 'probe-failed'; failure: unknown } | { kind: 'probe-through' } | { kind: 'empty'; answered: boolean };

export interface OutboxWorker {
  /** Without the account's retries; a probe goes out whatever the account thinks of the gateway. */
  send(entry: OutboxEntry, probe: boolean): Promise<SendResult>;
  /**
   * To the msg's node; a promise it returns resolves once the msg left (a long list's last port).
   * `afterRestart`: it ended before a stop or a crash, and left no trace of leaving then.
   */
  settle(entry: OutboxEntry, msg: Msg, outcome: Outcome, afterRestart: boolean): void | Promise<void>;
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
  /**
   * Whether its node still wants it sent, asked before each attempt (an escalation acknowledged at
   * another copy, or while this process was down, no longer does): no, it ends withdrawn, unsent.
   */
  wanted?(entry: OutboxEntry): boolean | Promise<boolean>;
}

// Unique by this process's tag (a pid comes back after a restart) and a count over its outboxes.
const PROCESS_TAG = randomBytes(4).toString('hex');
let nextId = 0;

export const MAX_PROBE_DELAY = 15_000;
export const DEFAULT_OUTBOX_SIZE = 10_000;

/** A longer line is held parsed too: parsing 10,000 numbers again at each attempt (15 ms) held every other flow. */
const PARSED_OVER = 64 * 1024;

/** Not the whole entry: a kept message is held once, as its line (JSON, as first kept); a long one parsed too. */
interface Kept extends Pick<OutboxEntry, 'id' | 'node' | 'since' | 'order' | 'deadline' | 'attempts' | 'reason'> {
  line: string;
  /** The entry as kept or loaded, for a line over PARSED_OVER. */
  parsed?: OutboxEntry;
  /** `since` on this process's monotonic clock, fixed when kept or loaded: a later wall-clock step moves neither. */
  startedAt: number;
  // Only waiting -> wire -> waiting, or -> ended: no round attempts one on the wire or ended.
  state: 'waiting' | 'wire' | 'ended';
  /** Its node withdrew it while on the wire: if that attempt did not reach the gateway, it ends rather than waits. */
  withdrawn?: true;
}

// `withheld`: not sent, by its log's answer (`wait`: it waits again; `gone`: another process's now; `ended`:
// unconfirmed), or its node's (`ended`: no longer wanted).
type Attempted =
  | { kept: Kept; entry: OutboxEntry; outcome: Outcome }
  | { kept: Kept; transient: unknown }
  | { kept: Kept; withheld: 'wait' | 'gone' | 'ended' };

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
  /** Results handed on in the order the msgs came, each after its `done` line is on disk and the one before left. */
  #settling: Promise<void> = Promise.resolve();
  #rounds = 0;
  /** Results that ended while no worker was attached (a redeploy's detach, a start): the next one hands them on. */
  #unsettled: Ended[] = [];
  /** Msgs handed on in this process's life that ended `unconfirmed` (maybe delivered): the account panel shows it. */
  #unconfirmed = 0;
  #handOnTimer: NodeJS.Timeout | undefined;
  /**
   * The ids it ended itself (not let go to another process), the newest as many as it holds: its end is this process's
   * to record and hand on. Not the ended entries of #list: those are swept out now and then.
   */
  readonly #endedHere = new Set<string>();

  /** The account node running now. */
  warn: Warn;
  #warnedMemoryOnly = false;

  constructor(log: OutboxLog | undefined, warn: Warn) {
    this.warn = warn;
    this.#journal = log;
    log?.open({
      warn: (key, params) => this.warn(key, params),
      adopt: (found) => this.#adopt(found),
      lost: (ids) => {
        const only = ids && new Set(ids);
        for (const kept of this.#kept()) if (kept.state === 'waiting' && (!only || only.has(kept.id))) this.#drop(kept);
        this.#changed();
      },
      held: () => this.#kept().map(({ id, line }) => ({ id, line })),
      size: () => this.#worker?.size ?? DEFAULT_OUTBOX_SIZE,
    });
  }

  /** What its log found this process's now: sent soon, ended on time; one ended whose msg did not leave, handed on. */
  #adopt(found: LoggedEntry[]): number {
    // Its log can give back entries it lost (a lock file removed, a claim that lapsed, then taken again): one this
    // process still sends, or ended itself, is never attempted or handed on twice. One its log let go while it waited
    // (to another process) has no end here: adopted again like any other.
    const onWire = new Set(
      found.length ? this.#list.filter((kept) => kept.state === 'wire').map((kept) => kept.id) : [],
    );
    for (const { entry: logged, line, attempted, attemptAgeMs, ended } of found) {
      const entry = logged as unknown as OutboxEntry;
      if (onWire.has(entry.id)) continue;
      const endedHere = this.#endedHere.has(entry.id);
      if (ended) {
        const read = withDefaults({ ...entry, attempts: ended.attempts });
        if (endedHere) this.#retaken(read, ended);
        else this.#handOnLater({ id: entry.id, entry: read, outcome: revived(ended), afterRestart: true });
        continue;
      }
      // Its done line is written: a log retries one it could not write.
      if (endedHere) continue;
      const kept = this.#insert(entry, line);
      // Its attempt had no answer (a crash, a kill): the gateway may have it. Where it cannot drop a copy (simple 1.0),
      // or no longer will, it ends once in Catch, never sent blind; else it goes again with duplicates_check.
      if (attempted && endsUnconfirmed(resendable(entry.operation, true), attemptAgeMs)) {
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

  /**
   * One it ended that its log gives back as ended, its msg not left. After this process's own hand-on, its log hears
   * that the msg left; unless its done answered meanwhile that another copy ended it: then that copy's end, found here,
   * is the msg's one end.
   */
  #retaken(entry: OutboxEntry, ended: RecordedEnd): void {
    const journal = this.#journal;
    if (!journal) return;
    this.#settling = this.#settling.then(() => {
      if (!this.#endedHere.has(entry.id))
        return this.#handOn({ id: entry.id, entry, outcome: revived(ended), afterRestart: true });
      journal.emitted(entry.id, this.#live);
    });
  }

  get waiting(): number {
    return this.#live;
  }

  /** Ended `unconfirmed` in this process's life (after a crash, or cut off by a redeploy). */
  get unconfirmed(): number {
    return this.#unconfirmed;
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
    const id = `${entry.since.toString(36)}-${PROCESS_TAG}-${(nextId++).toString(36)}`;
    // A list's entry (its numbers twice, in the body and the msg) is written in steps, before the
    // checks below look at the outbox; any other at once.
    const longLine = holdsLongList(entry) ? ((await inTurns(stringifyInSteps({ id, ...entry }))) as string) : undefined;
    const size = this.#worker?.size ?? DEFAULT_OUTBOX_SIZE;
    const full = () => fullError(size, this.#worker?.account);
    if (this.#live >= size) throw full();
    const journal = this.#journal;
    if (journal && !journal.writable) {
      await journal.whenWritable((held) => (this.#live + held >= size ? full() : undefined));
      if (this.#live >= size) throw full();
    }
    if (!journal && !this.#warnedMemoryOnly) {
      this.#warnedMemoryOnly = true;
      this.warn('outbox-memory-only', {});
    }
    const line = longLine ?? JSON.stringify({ id, ...entry });
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
    this.#handOnTimer = undefined;
    if (this.#unsettled.length) this.#handOnLater();
    this.#journal?.attach();
  }

  async detach(worker: OutboxWorker): Promise<void> {
    if (this.#worker !== worker) return;
    this.#worker = undefined;
    clearTimeout(this.#timer);
    this.#timer = undefined;
    this.#journal?.detach();
    clearTimeout(this.#handOnTimer);
    this.#handOnTimer = undefined;
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
   * Its node withdrew them (an escalation acknowledged or resolved): the entries of `node` that `which` picks by their
   * msg end as withdrawn, through the node as any end does. One on the wire ends so if that attempt fails; one the
   * gateway took cannot be called back. Resolves with how many ended now.
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
  #insert(entry: OutboxEntry, line: string): Kept {
    const { id, node, since, order, deadline, attempts, reason } = entry;
    const kept: Kept = {
      id,
      node,
      since,
      order,
      deadline,
      attempts,
      reason,
      line,
      startedAt: monotonicAt(since),
      state: 'waiting',
    };
    if (line.length > PARSED_OVER) kept.parsed = entry;
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
    kept.parsed = undefined;
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
    const entry = withDefaults(kept.parsed ? { ...kept.parsed } : (JSON.parse(kept.line) as OutboxEntry));
    entry.attempts = kept.attempts;
    entry.reason = kept.reason;
    return entry;
  }

  /** `read`: the entry an attempt read, so the gateway answered it; without, the entry gave up or was discarded. */
  #end(kept: Kept, outcome: (entry: OutboxEntry) => Outcome, read?: OutboxEntry): Promise<void> {
    const entry = read ?? this.#entryOf(kept);
    const msg = this.#msgs.get(kept.id);
    const ended = outcome(entry);
    this.#drop(kept);
    rememberNewest(this.#endedHere, kept.id, this.#worker?.size ?? DEFAULT_OUTBOX_SIZE);
    // No round probes now: the account hears that nothing waits.
    if (this.#live === 0 && this.#worker) {
      this.#rounds = 0;
      this.#worker.report({ kind: 'empty', answered: read !== undefined });
    }
    this.#changed();
    // With how it ended: a restart before its msg leaves hands it on from its line and this.
    const written =
      this.#journal?.done(kept.id, kept.line, recorded(ended, entry.attempts)).then(
        (ours) => {
          // Another copy's end: if that copy dies first, its entry is this one's again, to send or hand on.
          if (!ours) this.#endedHere.delete(kept.id);
          this.#journal?.spent(this.#live, () => this.#kept().map((kept) => kept.line));
          return ours;
        },
        // Sent again after a restart at worst, with duplicates_check: the gateway drops the copy.
        () => true,
      ) ?? Promise.resolve(true);
    // Not ours (another copy of a shared store took the entry over): that copy's end is the msg's one end.
    const settled = this.#settling
      .then(() => written)
      .then((ours) =>
        ours ? this.#handOn({ id: kept.id, entry, msg, outcome: ended, afterRestart: false }) : undefined,
      );
    this.#settling = settled;
    return settled;
  }

  /**
   * To its node; once the msg left, its log hears so (a stop that waits for this leaves nothing to hand on again). A
   * throw or a refusal of the node's is the node's to report: an outbox round never stops for it.
   */
  async #handOn(ended: Ended): Promise<void> {
    const worker = this.#worker;
    if (!worker) return void this.#unsettled.push(ended);
    const { id, entry, msg, outcome, afterRestart } = ended;
    if ('error' in outcome && outcome.error.code === 'unconfirmed') this.#unconfirmed++;
    try {
      await worker.settle(entry, msg ?? (entry.msg as Msg), outcome, afterRestart);
    } catch {
      // Its node's failure path reports.
    }
    this.#journal?.emitted(id, this.#live);
  }

  /** After the first delay, as a round: by then the redeployed or started nodes are there to take their msgs. */
  #handOnLater(ended?: Ended): void {
    if (ended) this.#unsettled.push(ended);
    const worker = this.#worker;
    if (!worker || this.#handOnTimer) return;
    this.#handOnTimer = setTimeout(() => {
      this.#handOnTimer = undefined;
      if (this.#worker !== worker) return;
      const unsettled = this.#unsettled;
      this.#unsettled = [];
      for (const one of unsettled) this.#settling = this.#settling.then(() => this.#handOn(one));
    }, worker.firstDelay);
  }

  #changed(): void {
    for (const listener of this.#listeners) listener();
  }

  // No jitter, unlike a request's retries: an account probes with one request at a time and the rest wait for it, so
  // there is no herd to spread; the cap bounds how late the kept alerts leave once the gateway is back.
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
      let first: Attempted;
      do {
        const probe = this.#next();
        if (!probe) return;
        first = await this.#attempt(worker, probe, true);
      } while ('withheld' in first && first.withheld !== 'wait');
      // Its log cannot let it go now (the shared store does not answer, or this copy's claim was not renewed in time):
      // the round stops, and says nothing of the gateway.
      if ('withheld' in first) {
        failed = true;
        return;
      }
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
      if ('transient' in done || ('withheld' in done && done.withheld === 'wait')) failed = true;
      else if ('outcome' in done) void this.#end(done.kept, () => done.outcome, done.entry);
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
    const entry = this.#entryOf(kept);
    const wanted = askWanted(worker, entry);
    if (wanted !== true && !(await wanted)) {
      void this.#end(kept, () => ({ error: withdrawnError() }));
      return { kept, withheld: 'ended' };
    }
    entry.attempts = ++kept.attempts;
    // Recorded before the request (a file line for simple 1.0, a shared store's claim checked with it): after a crash
    // the entry is known to be possibly at the gateway.
    const dropsCopies = resendable(entry.operation, true);
    const answer: AttemptAnswer = this.#journal
      ? await this.#journal.attempt(kept.id, dropsCopies).catch(() => 'wait' as const)
      : 'go';
    if (answer === 'unconfirmed') {
      void this.#end(kept, () => ({ error: unconfirmedError() }));
      return { kept, withheld: 'ended' };
    }
    if (answer !== 'go') {
      kept.attempts--;
      kept.state = 'waiting';
      if (answer === 'gone') {
        this.#drop(kept);
        this.#changed();
      }
      return { kept, withheld: answer };
    }
    try {
      return { kept, entry, outcome: { result: await worker.send(entry, probe) } };
    } catch (error) {
      if (worker.transient(error, entry)) {
        kept.reason = causeOf(error);
        kept.state = 'waiting';
        if (!dropsCopies || (error as GatewayError | undefined)?.mayHaveReached === false) this.#journal?.back(kept.id);
        if (kept.withdrawn) void this.#end(kept, () => ({ error: withdrawnError() }));
        return { kept, transient: error };
      }
      // Cut off by a redeploy (its account detached while it was on the wire) where the gateway cannot drop a copy.
      const cutOff =
        this.#worker !== worker && error instanceof GatewayError && error.retryable && error.mayHaveReached !== false;
      return { kept, entry, outcome: { error: cutOff ? unconfirmedError() : (error as GatewayError) } };
    }
  }

  #expire(worker: OutboxWorker): void {
    const now = monotonicNow();
    const due = this.#kept().filter((kept) => kept.state === 'waiting' && now >= giveUpAt(kept, worker));
    for (const kept of due) void this.#end(kept, () => ({ error: expiredError(this.#entryOf(kept), worker.minutes) }));
  }
}

/**
 * Its node's answer: `true` at once for a node that does not ask (no wait added to its attempt); one that cannot answer
 * (its store does not) lets it go, as the outbox would without asking.
 */
function askWanted(worker: OutboxWorker, entry: OutboxEntry): boolean | Promise<boolean> {
  try {
    const wanted = worker.wanted?.(entry) ?? true;
    return typeof wanted === 'boolean' ? wanted : wanted.catch(() => true);
  } catch {
    return true;
  }
}

/** Monotonic: the account's outbox time, or its node's give-up time (stored as a wall-clock deadline, from `since`). */
function giveUpAt(kept: Kept, worker: OutboxWorker): number {
  return kept.startedAt + Math.min(worker.minutes * 60_000, (kept.deadline ?? Infinity) - kept.since);
}

// By `startedAt`, not `since`: an alert kept after the wall clock stepped back goes behind the older ones.
function before(a: Kept, b: Kept): boolean {
  return a.startedAt < b.startedAt || (a.startedAt === b.startedAt && a.order < b.order);
}

/** One that ended, on its way to its node. `msg`: the one this process holds (an http in node's req and res). */
interface Ended {
  id: string;
  entry: OutboxEntry;
  msg?: Msg;
  outcome: Outcome;
  afterRestart: boolean;
}

/** An entry as read: a line `isEntry` takes may lack its rejected recipients and its msg. */
function withDefaults(entry: OutboxEntry): OutboxEntry {
  entry.rejected ??= [];
  entry.msg ??= {};
  return entry;
}

/** What a done line records of an outcome: the gateway's answer, or the error as Catch gets it. */
function recorded(outcome: Outcome, attempts: number): RecordedEnd {
  return 'result' in outcome ? { attempts, result: outcome.result } : { attempts, error: errorRecord(outcome.error) };
}

/** An outcome from its done line: the answer as it came, or the error with its type, sentence and wording. */
function revived(end: RecordedEnd): Outcome {
  return 'result' in end ? { result: end.result as SendResult } : { error: revivedError(end.error) };
}

export function fullError(size: number, account?: string): GatewayError {
  const [key, params] = account
    ? (['outbox-full-of', { account, size }] as const)
    : (['outbox-full', { size }] as const);
  return nodeError({ type: 'outbox_full', key, params, brief: { key: 'outbox-full' } });
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
  return JSON.parse(JSON.stringify(msg, storable(msg)) ?? '{}') as Record<string, unknown>;
}

/** storableMsg; a msg holding a long list (a promotional one's numbers) is written and read in steps. */
export async function storableMsgInSteps(msg: Msg): Promise<Record<string, unknown>> {
  if (!holdsLongList(msg)) return storableMsg(msg);
  const text = await inTurns(stringifyInSteps(msg, storable(msg)));
  return (await inTurns(parseInSteps(text ?? '{}'))) as Record<string, unknown>;
}

/** What storableMsg keeps of a msg: a replacer for JSON.stringify. */
function storable(msg: Msg): (this: unknown, key: string, value: unknown) => unknown {
  const seen = new WeakSet<object>();
  return function (key, value) {
    if ((this === msg && (key === 'req' || key === 'res')) || typeof value === 'function') return undefined;
    if (typeof value === 'object' && value !== null) {
      if (seen.has(value)) return undefined;
      seen.add(value);
    }
    return value;
  };
}

// Retryable, where no duplicate can be sent (duplicates_check, or it never reached the gateway); never the account's
// own rate limit's full queue.
export function deferrable(error: unknown, operation: Operation): boolean {
  if (!(error instanceof GatewayError) || !error.retryable) return false;
  if (error.code === 'rate_limited' && error.status === undefined) return false;
  return resendable(operation, error.mayHaveReached);
}

export function expiredError(entry: OutboxEntry, minutes: number): GatewayError {
  const tries = nodeWording(entry.attempts === 1 ? 'count.attempt-one' : 'count.attempts', { n: entry.attempts });
  if (entry.deadline !== undefined && entry.deadline < entry.since + minutes * 60_000) {
    return giveUpError(
      Math.round((entry.deadline - entry.since) / 1000),
      nodeWording('reason.unreached', { tries, last: entry.reason }),
    );
  }
  const spent = nodeWording(minutes === 1 ? 'count.minute-one' : 'count.minutes', { n: minutes });
  return nodeError({
    type: 'expired',
    key: 'expired',
    params: { minutes: spent, tries, last: entry.reason },
    brief: { key: 'expired' },
  });
}

/** An attempt with no answer before a crash or a redeploy, where the gateway cannot drop a copy: maybe delivered. */
function unconfirmedError(): GatewayError {
  return nodeError({ type: 'unconfirmed', key: 'unconfirmed', brief: { key: 'unconfirmed' } });
}

export function giveUpError(seconds: number, why: string | Wording): GatewayError {
  return nodeError({ type: 'expired', key: 'gave-up', params: { seconds, why }, brief: { key: 'expired' } });
}

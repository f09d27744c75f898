/**
 * Delivery tracking: what an account's send nodes had accepted, by `sms_id`, so that
 * the events node can put the original msg beside its delivery report (`msg.sent`), say when a
 * final report did not come in time (output 3, `no_report`), and tell which alert a reply
 * answers (`msg.inReplyTo`).
 *
 * Bounded in number and age (the last 10,000 messages, 24 hours): the oldest is forgotten first.
 * It lives as long as the Node-RED process, per account id, so a redeploy of the send nodes, the
 * events node or the account itself keeps it; with a {@link TrackingLog} (the user directory's
 * file) it outlives a restart too. It remembers only while an events node with that account runs:
 * a user without one pays nothing, and nothing is written.
 */
import { Fifo } from '../../gateway/fifo';

/** A tracked send as the copies share it. */
export interface SharedRecord {
  smsId: string;
  number: string;
  sent: SentRef;
  acceptedAt: number;
  countsFrom: number;
}

/** Tracking shared by several copies of Node-RED (redis-store.ts's SharedTracking). */
export interface SharedTrackingLike {
  record(record: SharedRecord): Promise<unknown>;
  lookup(smsId: string): Promise<SharedRecord | undefined>;
  lastTo(number: string): Promise<SharedRecord | undefined>;
  markFinal(smsId: string): Promise<unknown>;
  claimLate(smsId: string): Promise<boolean>;
  overdue(timeoutMs: number, graceMs: number): Promise<SharedRecord[]>;
}

/** Where an account's tracked sends are kept beside this process's memory. */
export type TrackingBacking =
  /** Nowhere else (Node-RED has no user directory). */
  | { kind: 'memory' }
  /** A file in the user directory: matching survives a restart. */
  | { kind: 'file'; log: TrackingLog }
  /** The store the copies share: a report reaching any copy is matched. */
  | { kind: 'shared'; shared: SharedTrackingLike };

/**
 * How often a copy looks for the overdue sends of a copy that stopped, and how long after their
 * timeout: a quarter of the timeout, between 1 s and 30 s; the sending copy's own watch fires
 * first when it runs.
 */
export function sweepEvery(timeoutMs: number): number {
  return Math.min(30_000, Math.max(1000, Math.floor(timeoutMs / 4)));
}

/** What `msg.sent` carries: the original msg's topic and payload, and the node that sent it. */
export interface SentRef {
  topic: unknown;
  payload: unknown;
  node: string;
}

export interface Tracked {
  smsId: string;
  /** The recipient's digits (no `+`, no spaces): how a reply's `from` is matched. */
  number: string;
  sent: SentRef;
  /** When the gateway accepted it, ms since the epoch. */
  acceptedAt: number;
  /** What the report timeout counts from: the schedule of a scheduled message, else acceptedAt. */
  countsFrom: number;
  /** A final report (delivered or not delivered) came. */
  final: boolean;
  /** Forgotten (older than the bounds): nothing fires for it any more. */
  forgotten: boolean;
  /** Output 3 fired for it: an events node that starts later (a redeploy, a restart) does not fire it again. */
  late?: boolean;
}

/** A tracked send as a log writes it: without its flags (final and late are marks of their own; forgotten is memory's). */
export type TrackedRecord = Omit<Tracked, 'final' | 'forgotten' | 'late'>;

/**
 * Where a tracker keeps its sends across restarts (tracking-file.ts's TrackingFile). Declared by
 * the tracker, which says what it needs of a log: the file imports the tracker's types, not the
 * other way round.
 */
export interface TrackingLog {
  /** The sends remembered, oldest first, with their final and late marks. */
  load(): { records: TrackedRecord[]; final: Set<string>; late: Set<string> };
  sent(record: TrackedRecord): void;
  final(smsId: string): void;
  late(smsId: string): void;
  /** Rewrites the file with the remembered sends (and their marks) when most of its lines are spent. */
  compactIfSpent(remembered: number, live: () => Tracked[]): void;
}

/** Final statuses: after one of these, no report is awaited. Buffered and seen are not final. */
export const FINAL_STATUSES: ReadonlySet<string> = new Set(['delivered', 'not_delivered']);

export const TRACK_LIMIT = 10_000;
export const TRACK_HOURS = 24;
/** setTimeout's ceiling; a report timeout beyond the 24 hours of memory could never fire anyway. */
const MAX_TIMEOUT_MS = TRACK_HOURS * 3600 * 1000;

/** A number's digits: `+420 777 000 123`, `420777000123` and `00420777000123` are one number. */
export function numberKey(value: unknown): string {
  const digits = String(value ?? '').replace(/\D/g, '');
  return digits.replace(/^00/, '');
}

/**
 * One events node's report timeout: tracked messages in the order their time runs out. Most
 * count from their acceptance, so they arrive in order and a queue keeps them; a scheduled one
 * goes to a short list sorted by its schedule.
 */
class ReportWatch {
  readonly #queue = new Fifo<Tracked>();
  #scheduled: Tracked[] = [];
  #timer: NodeJS.Timeout | undefined;
  #timerAt = Infinity;

  constructor(
    readonly timeoutMs: number,
    private readonly onNoReport: (tracked: Tracked) => void,
    private readonly now: () => number,
  ) {}

  add(tracked: Tracked): void {
    if (tracked.countsFrom > tracked.acceptedAt) {
      let i = this.#scheduled.length;
      while (i > 0 && (this.#scheduled[i - 1] as Tracked).countsFrom > tracked.countsFrom) i--;
      this.#scheduled.splice(i, 0, tracked);
    } else this.#queue.push(tracked);
    this.#arm();
  }

  /** Drops what was forgotten from the front (the oldest are forgotten first). */
  prune(): void {
    while (this.#queue.peek()?.forgotten) this.#queue.shift();
    if (this.#scheduled.some((t) => t.forgotten)) this.#scheduled = this.#scheduled.filter((t) => !t.forgotten);
  }

  stop(): void {
    clearTimeout(this.#timer);
    this.#timer = undefined;
    this.#timerAt = Infinity;
    this.#queue.clear();
    this.#scheduled = [];
  }

  #due(tracked: Tracked): number {
    return tracked.countsFrom + this.timeoutMs;
  }

  #fire(): void {
    this.#timer = undefined;
    this.#timerAt = Infinity;
    const now = this.now();
    const late: Tracked[] = [];
    for (let first = this.#queue.peek(); first && this.#due(first) <= now; first = this.#queue.peek()) late.push(this.#queue.shift() as Tracked);
    while (this.#scheduled.length && this.#due(this.#scheduled[0] as Tracked) <= now) late.push(this.#scheduled.shift() as Tracked);
    this.#arm();
    for (const tracked of late) {
      if (tracked.final || tracked.forgotten) continue;
      try {
        this.onNoReport(tracked);
      } catch {
        // An events node's output must not stop the others.
      }
    }
  }

  #arm(): void {
    const first = this.#queue.peek();
    const next = Math.min(first ? this.#due(first) : Infinity, this.#scheduled[0] ? this.#due(this.#scheduled[0]) : Infinity);
    if (next === Infinity || next >= this.#timerAt) return;
    clearTimeout(this.#timer);
    this.#timerAt = next;
    this.#timer = setTimeout(() => this.#fire(), Math.min(MAX_TIMEOUT_MS, Math.max(0, next - this.now())));
  }
}

export interface TrackerLimits {
  count: number;
  ageMs: number;
}

export class DeliveryTracker {
  #bySmsId = new Map<string, Tracked>();
  /** The same sends oldest first (a replaced or forgotten one stays until passed): the bounds forget from here. */
  readonly #byAge = new Fifo<Tracked>();
  /** The last message to each number, for replies. */
  #byNumber = new Map<string, Tracked>();
  #watches = new Map<object, ReportWatch>();
  /** With a shared store: each events node's look for overdue sends of other copies. */
  #sweeps = new Map<object, NodeJS.Timeout>();
  #listeners = new Set<object>();
  #loaded = false;

  /** The file that keeps the sends across a restart (the file store with a user directory). */
  private readonly log: TrackingLog | undefined;
  /** The store the copies of Node-RED share. */
  private readonly shared: SharedTrackingLike | undefined;

  constructor(
    backing: TrackingBacking,
    private readonly limits: TrackerLimits = { count: TRACK_LIMIT, ageMs: TRACK_HOURS * 3600 * 1000 },
    private readonly now: () => number = Date.now,
  ) {
    this.log = backing.kind === 'file' ? backing.log : undefined;
    this.shared = backing.kind === 'shared' ? backing.shared : undefined;
  }

  /** Whether an events node listens: only then are sends remembered. */
  get listening(): boolean {
    return this.#listeners.size > 0;
  }

  get size(): number {
    return this.#bySmsId.size;
  }

  /**
   * An events node starts listening; with a timeout, `onNoReport` is called for each remembered
   * message whose final report has not come `timeoutMs` after it counts from (the ones sent
   * before it started, across a redeploy or a restart, too), once per message.
   */
  listen(owner: object, timeoutMs: number, onNoReport: (tracked: Tracked) => void): void {
    this.#load();
    this.#listeners.add(owner);
    this.#stopWatching(owner);
    if (timeoutMs <= 0) return;
    const fire = (tracked: Tracked) => {
      if (!tracked.late) {
        tracked.late = true;
        this.log?.late(tracked.smsId);
      }
      onNoReport(tracked);
    };
    const shared = this.shared;
    const watch = new ReportWatch(
      timeoutMs,
      // Shared: not when a final report came at another copy, and on one copy only.
      shared
        ? (tracked) =>
            void shared.claimLate(tracked.smsId).then(
              (ours) => ours && !tracked.final && fire(tracked),
              () => fire(tracked),
            )
        : fire,
      this.now,
    );
    this.#watches.set(owner, watch);
    for (const tracked of this.#bySmsId.values()) if (!tracked.final && !tracked.late) watch.add(tracked);
    if (shared) this.#sweep(owner, shared, timeoutMs, fire);
  }

  /** Stops an events node's watch for reports and its sweep for other copies' overdue sends. */
  #stopWatching(owner: object): void {
    clearInterval(this.#sweeps.get(owner));
    this.#sweeps.delete(owner);
    this.#watches.get(owner)?.stop();
    this.#watches.delete(owner);
  }

  /** Output 3 for the sends of a copy that stopped: claimed in the shared store, so once in all. */
  #sweep(owner: object, shared: SharedTrackingLike, timeoutMs: number, fire: (tracked: Tracked) => void): void {
    const every = sweepEvery(timeoutMs);
    let busy = false;
    const timer = setInterval(() => {
      if (busy) return;
      busy = true;
      shared.overdue(timeoutMs, every).then(
        (records) => {
          busy = false;
          for (const record of records) {
            const tracked = this.#bySmsId.get(record.smsId) ?? { ...record, final: false, forgotten: false };
            if (tracked.final || tracked.late) continue;
            try {
              fire(tracked);
            } catch {
              // An events node's output must not stop the others.
            }
          }
        },
        () => {
          // The store does not answer: the next look tries again.
          busy = false;
        },
      );
    }, every);
    timer.unref();
    this.#sweeps.set(owner, timer);
  }

  /** What the log kept from an earlier run, within the bounds. */
  #load(): void {
    if (this.#loaded || !this.log) return;
    this.#loaded = true;
    const { records, final, late } = this.log.load();
    for (const record of records) {
      const tracked: Tracked = { ...record, final: final.has(record.smsId), forgotten: false, late: late.has(record.smsId) };
      const before = this.#bySmsId.get(record.smsId);
      if (before) this.#forget(before);
      this.#bySmsId.set(record.smsId, tracked);
      this.#byAge.push(tracked);
      if (tracked.number) this.#byNumber.set(tracked.number, tracked);
    }
    this.#trim();
  }

  unlisten(owner: object): void {
    this.#listeners.delete(owner);
    this.#stopWatching(owner);
  }

  /** A message the gateway accepted (or scheduled for `scheduledAt`, ms). */
  track(smsId: string, number: unknown, sent: SentRef, scheduledAt?: number): void {
    if (!this.listening || !smsId) return;
    const acceptedAt = this.now();
    const tracked: Tracked = {
      smsId,
      number: numberKey(number),
      sent,
      acceptedAt,
      countsFrom: scheduledAt !== undefined && scheduledAt > acceptedAt ? scheduledAt : acceptedAt,
      final: false,
      forgotten: false,
    };
    const before = this.#bySmsId.get(smsId);
    if (before) this.#forget(before);
    this.#bySmsId.set(smsId, tracked);
    this.#byAge.push(tracked);
    if (tracked.number) this.#byNumber.set(tracked.number, tracked);
    for (const watch of this.#watches.values()) watch.add(tracked);
    this.log?.sent({ smsId, number: tracked.number, sent, acceptedAt, countsFrom: tracked.countsFrom });
    this.shared?.record({ smsId, number: tracked.number, sent, acceptedAt, countsFrom: tracked.countsFrom }).catch(() => undefined);
    this.#trim();
    this.log?.compactIfSpent(this.#bySmsId.size, () => [...this.#bySmsId.values()]);
  }

  /**
   * The tracked message a report is about (its final status noted at once), or undefined; with a
   * shared store, one another copy sent is looked up there.
   */
  async report(smsId: unknown, status: string): Promise<Tracked | undefined> {
    this.#trim();
    const tracked = typeof smsId === 'string' ? this.#bySmsId.get(smsId) : undefined;
    const final = FINAL_STATUSES.has(status);
    if (final && typeof smsId === 'string') this.shared?.markFinal(smsId).catch(() => undefined);
    if (tracked && final && !tracked.final) {
      tracked.final = true;
      this.log?.final(tracked.smsId);
    }
    if (tracked || !this.shared || typeof smsId !== 'string' || !this.listening) return tracked;
    const record = await this.shared.lookup(smsId).catch(() => undefined);
    return record ? { ...record, final, forgotten: false } : undefined;
  }

  /** The last message the account sent to a number, within the bounds; with a shared store, the last any copy sent. */
  async lastTo(number: unknown): Promise<Tracked | undefined> {
    this.#trim();
    const key = numberKey(number);
    const own = key ? this.#byNumber.get(key) : undefined;
    if (own || !key || !this.shared || !this.listening) return own;
    const record = await this.shared.lastTo(key).catch(() => undefined);
    return record ? { ...record, final: false, forgotten: false } : undefined;
  }

  /** Forgets the oldest beyond the bounds (insertion order is acceptance order). */
  #trim(): void {
    const oldest = this.now() - this.limits.ageMs;
    let forgot = false;
    for (let tracked = this.#byAge.peek(); tracked; tracked = this.#byAge.peek()) {
      if (!tracked.forgotten) {
        if (this.#bySmsId.size <= this.limits.count && tracked.acceptedAt >= oldest) break;
        this.#forget(tracked);
        forgot = true;
      }
      this.#byAge.shift();
    }
    if (forgot) for (const watch of this.#watches.values()) watch.prune();
  }

  #forget(tracked: Tracked): void {
    tracked.forgotten = true;
    this.#bySmsId.delete(tracked.smsId);
    if (this.#byNumber.get(tracked.number) === tracked) this.#byNumber.delete(tracked.number);
  }
}

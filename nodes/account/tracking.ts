// Sends accepted, by sms_id, for the events node (`msg.sent`, output 3, `msg.inReplyTo`); bounded,
// and only while an events node of the account runs (a user without one pays nothing).
import { monotonicAt, monotonicNow } from '../../gateway/clock';
import { Fifo } from '../../gateway/fifo';

/** As a log writes it and the copies share it. */
export interface TrackedRecord {
  smsId: string;
  /** The recipient's digits (no `+`, no spaces): how a reply's `from` is matched. */
  number: string;
  /** What `msg.sent` carries. */
  sent: { topic: unknown; payload: unknown; node: string };
  acceptedAt: number;
  /** What the report timeout counts from: a scheduled message's schedule, else acceptedAt. */
  countsFrom: number;
}

export interface Tracked extends TrackedRecord {
  final: boolean;
  /** Older than the bounds: nothing fires for it any more. */
  forgotten: boolean;
  /** Output 3 fired: an events node started later (redeploy, restart) does not fire it again. */
  late?: boolean;
  /**
   * `acceptedAt` on this process's monotonic clock, fixed when tracked or loaded: the report timeout and the 24 hours
   * count from it.
   */
  startedAt?: number;
}

/** Where a send's age counts from in this process (see monotonicAt): set at the first look. */
function startedAt(tracked: Tracked): number {
  return (tracked.startedAt ??= monotonicAt(tracked.acceptedAt));
}

export interface SharedTrackingLike {
  record(record: TrackedRecord): Promise<unknown>;
  lookup(smsId: string): Promise<TrackedRecord | undefined>;
  lastTo(number: string): Promise<TrackedRecord | undefined>;
  markFinal(smsId: string): Promise<unknown>;
  claimLate(smsId: string): Promise<boolean>;
  overdue(timeoutMs: number, graceMs: number): Promise<TrackedRecord[]>;
}

/**
 * Where tracked sends are kept beside this process's memory: nowhere (no user directory: `{}`), a file
 * (tracking-file.ts), or the store the copies share ({@link SharedTrackingState}); each does only what it has a part
 * in. Declared here, not in tracking-file.ts: that file imports the tracker's types.
 */
export interface TrackingState {
  /** What an earlier run left. */
  load?(): { records: TrackedRecord[]; final: Set<string>; late: Set<string> };
  sent?(record: TrackedRecord): void;
  /** A final report; `here`: for a send this process remembers. */
  final?(smsId: string, here: boolean): void;
  /** Whether output 3 is this process's to fire: `fire` is called at once, when the copies agreed, or never. */
  ownsLate?(smsId: string, fire: () => void): void;
  /** Output 3 fired. */
  late?(smsId: string): void;
  compactIfSpent?(remembered: number, live: () => Tracked[]): void;
  /** A send this process does not remember (another copy's). */
  lookup?(smsId: string): Promise<TrackedRecord | undefined>;
  lastTo?(number: string): Promise<TrackedRecord | undefined>;
  /** What a copy that stopped left unwatched, handed to `overdue` until the answer is called. */
  watchOverdue?(timeoutMs: number, overdue: (record: TrackedRecord) => void): () => void;
}

const NOTHING_LEFT = { records: [], final: new Set<string>(), late: new Set<string>() };

/** In this process's memory only. */
export function memoryTracking(): TrackingState {
  return {};
}

/**
 * The store the copies share: a final report or output 3 counts for all, and each looks after the sends of a copy that
 * stopped.
 */
export class SharedTrackingState implements TrackingState {
  constructor(private readonly shared: SharedTrackingLike) {}

  sent(record: TrackedRecord): void {
    this.shared.record(record).catch(() => undefined);
  }

  /** At any copy: no copy fires output 3 for it. */
  final(smsId: string): void {
    this.shared.markFinal(smsId).catch(() => undefined);
  }

  // Not when a final report came at another copy, and on one copy only; a store that does not answer: here.
  ownsLate(smsId: string, fire: () => void): void {
    void this.shared.claimLate(smsId).then(
      (ours) => ours && fire(),
      () => fire(),
    );
  }

  lookup(smsId: string): Promise<TrackedRecord | undefined> {
    return this.shared.lookup(smsId);
  }

  lastTo(number: string): Promise<TrackedRecord | undefined> {
    return this.shared.lastTo(number);
  }

  /** Output 3 for the sends of a copy that stopped: claimed in the shared store, so once in all. */
  watchOverdue(timeoutMs: number, overdue: (record: TrackedRecord) => void): () => void {
    // That long after the timeout: the sending copy's own watch fires first when it runs.
    const every = Math.min(30_000, Math.max(1000, Math.floor(timeoutMs / 4)));
    let busy = false;
    const timer = setInterval(() => {
      if (busy) return;
      busy = true;
      void this.shared
        .overdue(timeoutMs, every)
        .then((records) => records.forEach(overdue))
        // The store does not answer: the next look tries again.
        .catch(() => undefined)
        .finally(() => (busy = false));
    }, every);
    timer.unref();
    return () => clearInterval(timer);
  }
}

/** Buffered and seen are not final. */
const FINAL_STATUSES: ReadonlySet<string> = new Set(['delivered', 'not_delivered']);

/** What tracking remembers, in this process's memory and in the shared store alike: this many sends, this long. */
export const TRACK_LIMIT = 10_000;
export const TRACK_AGE_MS = 24 * 3600 * 1000;

/** A number's digits: `+420 777 000 123`, `420777000123` and `00420777000123` are one number. */
export function numberKey(value: unknown): string {
  const digits = String(value ?? '').replace(/\D/g, '');
  return digits.replace(/^00/, '');
}

// One events node's report timeouts: most come in acceptance order (a queue), scheduled ones go to
// a short list sorted by their schedule.
class ReportWatch {
  readonly #queue = new Fifo<Tracked>();
  #scheduled: Tracked[] = [];
  #timer: NodeJS.Timeout | undefined;
  #timerAt = Infinity;

  constructor(
    readonly timeoutMs: number,
    private readonly onNoReport: (tracked: Tracked) => void,
  ) {}

  add(tracked: Tracked): void {
    if (tracked.countsFrom > tracked.acceptedAt) {
      let i = this.#scheduled.length;
      while (i > 0 && this.#due(this.#scheduled[i - 1] as Tracked) > this.#due(tracked)) i--;
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
  }

  /** On the monotonic clock: a step of the wall clock neither fires it early nor holds it back. */
  #due(tracked: Tracked): number {
    return startedAt(tracked) + (tracked.countsFrom - tracked.acceptedAt) + this.timeoutMs;
  }

  #fire(): void {
    this.#timer = undefined;
    this.#timerAt = Infinity;
    const now = monotonicNow();
    const late: Tracked[] = [];
    for (let first = this.#queue.peek(); first && this.#due(first) <= now; first = this.#queue.peek())
      late.push(this.#queue.shift() as Tracked);
    while (this.#scheduled.length && this.#due(this.#scheduled[0] as Tracked) <= now)
      late.push(this.#scheduled.shift() as Tracked);
    this.#arm();
    for (const tracked of late) if (!tracked.final && !tracked.forgotten) this.onNoReport(tracked);
  }

  #arm(): void {
    const first = this.#queue.peek();
    const next = Math.min(
      first ? this.#due(first) : Infinity,
      this.#scheduled[0] ? this.#due(this.#scheduled[0]) : Infinity,
    );
    if (next === Infinity || next >= this.#timerAt) return;
    clearTimeout(this.#timer);
    this.#timerAt = next;
    // setTimeout's ceiling: a report timeout beyond what is remembered could never fire anyway.
    this.#timer = setTimeout(() => this.#fire(), Math.min(TRACK_AGE_MS, Math.max(0, next - monotonicNow())));
  }
}

export class DeliveryTracker {
  #bySmsId = new Map<string, Tracked>();
  /** The same sends oldest first (a replaced or forgotten one stays until passed): the bounds forget from here. */
  readonly #byAge = new Fifo<Tracked>();
  #byNumber = new Map<string, Tracked>();
  #watches = new Map<object, ReportWatch>();
  #sweeps = new Map<object, () => void>();
  #listeners = new Set<object>();
  #loaded = false;

  constructor(
    private readonly state: TrackingState,
    private readonly limits: { count: number; ageMs: number } = { count: TRACK_LIMIT, ageMs: TRACK_AGE_MS },
    private readonly now: () => number = Date.now,
  ) {}

  /** Only then are sends remembered. */
  get listening(): boolean {
    return this.#listeners.size > 0;
  }

  get size(): number {
    return this.#bySmsId.size;
  }

  /** `onNoReport` once per message (sent before it started too) without a final report in time. */
  listen(owner: object, timeoutMs: number, onNoReport: (tracked: Tracked) => void): void {
    this.#load();
    this.unlisten(owner);
    this.#listeners.add(owner);
    if (timeoutMs <= 0) return;
    const fire = (tracked: Tracked) => {
      try {
        if (!tracked.late) {
          tracked.late = true;
          this.state.late?.(tracked.smsId);
        }
        onNoReport(tracked);
      } catch {
        // An events node's output must not stop the others.
      }
    };
    const watch = new ReportWatch(timeoutMs, (tracked) => {
      const ours = () => !tracked.final && fire(tracked);
      if (this.state.ownsLate) this.state.ownsLate(tracked.smsId, ours);
      else ours();
    });
    this.#watches.set(owner, watch);
    for (const tracked of this.#bySmsId.values()) if (!tracked.final && !tracked.late) watch.add(tracked);
    const sweep = this.state.watchOverdue?.(timeoutMs, (record) => {
      const tracked = this.#bySmsId.get(record.smsId) ?? { ...record, final: false, forgotten: false };
      if (!tracked.final && !tracked.late) fire(tracked);
    });
    if (sweep) this.#sweeps.set(owner, sweep);
  }

  #load(): void {
    if (this.#loaded) return;
    this.#loaded = true;
    const { records, final, late } = this.state.load?.() ?? NOTHING_LEFT;
    for (const record of records)
      this.#remember({ ...record, final: final.has(record.smsId), forgotten: false, late: late.has(record.smsId) });
    this.#trim();
  }

  #remember(tracked: Tracked): void {
    const before = this.#bySmsId.get(tracked.smsId);
    if (before) this.#forget(before);
    this.#bySmsId.set(tracked.smsId, tracked);
    this.#byAge.push(tracked);
    if (tracked.number) this.#byNumber.set(tracked.number, tracked);
  }

  unlisten(owner: object): void {
    this.#listeners.delete(owner);
    this.#sweeps.get(owner)?.();
    this.#sweeps.delete(owner);
    this.#watches.get(owner)?.stop();
    this.#watches.delete(owner);
  }

  track(smsId: string, number: unknown, sent: TrackedRecord['sent'], scheduledAt?: number): void {
    if (!this.listening || !smsId) return;
    const acceptedAt = this.now();
    const countsFrom = scheduledAt !== undefined && scheduledAt > acceptedAt ? scheduledAt : acceptedAt;
    const record: TrackedRecord = { smsId, number: numberKey(number), sent, acceptedAt, countsFrom };
    const tracked: Tracked = { ...record, final: false, forgotten: false, startedAt: monotonicNow() };
    this.#remember(tracked);
    for (const watch of this.#watches.values()) watch.add(tracked);
    this.state.sent?.(record);
    this.#trim();
    this.state.compactIfSpent?.(this.#bySmsId.size, () => [...this.#bySmsId.values()]);
  }

  /** With a shared store, one another copy sent too. */
  async report(smsId: unknown, status: string): Promise<Tracked | undefined> {
    this.#trim();
    const tracked = typeof smsId === 'string' ? this.#bySmsId.get(smsId) : undefined;
    const final = FINAL_STATUSES.has(status);
    if (final && typeof smsId === 'string') this.state.final?.(smsId, tracked !== undefined && !tracked.final);
    if (tracked && final) tracked.final = true;
    if (tracked || typeof smsId !== 'string' || !this.listening) return tracked;
    const record = await this.state.lookup?.(smsId).catch(() => undefined);
    return record ? { ...record, final, forgotten: false } : undefined;
  }

  /** With a shared store, the last any copy sent. */
  async lastTo(number: unknown): Promise<Tracked | undefined> {
    this.#trim();
    const key = numberKey(number);
    const own = key ? this.#byNumber.get(key) : undefined;
    if (own || !key || !this.listening) return own;
    const record = await this.state.lastTo?.(key).catch(() => undefined);
    return record ? { ...record, final: false, forgotten: false } : undefined;
  }

  /** Insertion order is acceptance order; the age on the monotonic clock (a step forward of a day forgets nothing). */
  #trim(): void {
    const oldest = monotonicNow() - this.limits.ageMs;
    let forgot = false;
    for (let tracked = this.#byAge.peek(); tracked; tracked = this.#byAge.peek()) {
      if (!tracked.forgotten) {
        if (this.#bySmsId.size <= this.limits.count && startedAt(tracked) >= oldest) break;
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
